#include "settings.h"

#include <vector>

#include <kusari/distributed/communicator.h>
#include <kusari/kernels/cuda/runtime.h>

#include "flags.h"

namespace kusari::recipes {

Preset preset_from_name(const std::string& name) {
  if (name == "imagenet") return Preset::imagenet;
  if (name == "fashion_mnist") return Preset::fashion_mnist;
  throw FlagError{"--preset: expected one of imagenet|fashion_mnist, got '" + name + "'"};
}

Settings preset_settings(Preset preset) {
  Settings s;
  s.preset = preset;
  if (preset == Preset::imagenet) return s;
  s.preset_name = "fashion_mnist";
  s.batchsize = 4096;
  s.epoch = 15;
  s.dataset = "/usr/share/datasets/fashion-mnist";
  s.classes = 10;
  s.model = "resnet20";
  s.crop_size = 28;
  s.eval_batchsize = 1000;
  return s;
}

namespace {

const std::vector<std::string> kDtypes{"float32", "float16", "bfloat16"};

// What is run: preset, batch, length, seed, and evaluation instead of training.
void add_run_flags(CLI::App& app, Settings& s) {
  app.option_defaults()->group("Run");
  add_value(app, "--preset", s.preset_name, "imagenet (the paper's setting) or fashion_mnist (a small one)",
            one_of({"imagenet", "fashion_mnist"}));
  add_value(app, "-b,--batchsize", s.batchsize, "global minibatch B (split evenly over the ranks)", positive_integer());
  add_value(app, "-e,--epoch", s.epoch, "epochs of training (fractions allowed)", positive_number());
  add_value(app, "--max-iterations", s.max_iterations,
            "stop after N iterations (0: run every epoch; the schedules still follow --epoch)", nonnegative_integer());
  add_value(app, "--seed", s.seed, "seed of parameters, shards, shuffling and augmentation", nonnegative_integer());
  add_switch(app, "evaluate", s.evaluate,
             "train nothing: print the validation loss, top-1 and top-5 of the model in --initmodel or --resume");
}

// What a run writes and where it starts from.
void add_output_flags(CLI::App& app, Settings& s) {
  app.option_defaults()->group("Output");
  app.add_option("-o,--out", s.out, "output directory (log, plots, snapshots, model_best.npz, args.json)")
      ->capture_default_str();
  app.add_option("--resume", s.resume, "continue from this snapshot (written by the same number of ranks)");
  add_switch(app, "autoload", s.autoload, "continue from the newest snapshot under --out, if any");
  add_value(app, "-f,--frequency", s.frequency, "a snapshot every N epochs", positive_number());
  add_value(app, "--log-interval", s.log_interval, "a log entry every N iterations (0: every epoch)",
            nonnegative_integer());
  add_value(app, "--profile", s.profile,
            "profile N iterations after " + std::to_string(kProfileWarmup) +
                " of warm-up: GPU kernels and host time by kusari function, into profile.txt (0: off)",
            nonnegative_integer());
  CLI::Option* progress = add_value(app, "--progress", s.progress,
            "bar (redrawn in place, through mpiexec's pipe too), lines (a plain line each time), off, or auto (a "
            "bar on a terminal, lines elsewhere); --no-progress is --progress off",
            one_of({"auto", "bar", "lines", "off"}));
  add_value(app, "--progress-interval", s.progress_interval, "iterations between the progress display's updates",
            positive_integer());
  // An alias of --progress off, left out of --help and of args.json (group ""), where --progress says "off".
  app.add_flag_callback("--no-progress", [&s, progress] {
    s.progress = "off";
    progress->add_result("off");
  })->group("");
}

// Where each rank computes, in what precision, with how many threads.
void add_device_flags(CLI::App& app, Settings& s) {
  app.option_defaults()->group("Device");
  app.add_option("--device", s.device,
                 "cpu, cuda (each rank the GPU of its local index), cuda:N, or loopback:N (host memory through the "
                 "device seam, for tests)")
      ->capture_default_str();
  add_value(app, "--dtype", s.dtype, "compute dtype (float32 master weights)", one_of(kDtypes));
  add_switch(app, "cudnn-benchmark", s.cudnn_benchmark,
             "GPUs: choose each convolution shape's cuDNN algorithm by timing the candidates, not by cuDNN's "
             "heuristics (KUSARI_CUDNN_BENCHMARK=1 turns the default on)");
  add_value(app, "--memory-order", s.memory_order,
            "the memory order of image batches before the model: channels_last (NHWC), row_major (NCHW), or auto "
            "(channels_last on a GPU in float16 and bfloat16, where cuDNN's fastest kernels take NHWC; row_major "
            "otherwise)",
            one_of({"auto", "channels_last", "row_major"}));
  app.add_option("--loss-scale", s.loss_scale, "none, dynamic, or a fixed loss scale")->capture_default_str();
  add_value(app, "--loss-scale-initial", s.loss_scale_initial, "dynamic loss scaling: the first scale",
            positive_number());
  add_value(app, "--loss-scale-interval", s.loss_scale_interval, "dynamic loss scaling: clean steps before it doubles",
            positive_integer());
  add_value(app, "--loss-scale-max", s.loss_scale_max, "dynamic loss scaling: the largest scale", positive_number());
  add_value(app, "--threads", s.threads, "compute threads per rank (0: the node's cores less the loaders)",
            nonnegative_integer());
  app.add_option("--loaders", s.loaders, "image decoding threads per rank (-1: chosen from the cores)")
      ->capture_default_str();
}

// How gradients travel between the ranks.
void add_communication_flags(CLI::App& app, Settings& s) {
  app.option_defaults()->group("Distributed");
  add_value(app, "--wire-dtype", s.wire_dtype, "dtype gradients are all-reduced in", one_of(kDtypes));
  add_value(app, "--communicator", s.communicator, "all-reduce algorithm",
            one_of(distributed::allreduce_algorithm_names()));
  add_value(app, "--colors", s.colors, "multi_color: rings running at once", positive_integer());
  add_value(app, "--ranks-per-node", s.ranks_per_node,
            "ranks grouped as one node by the node-aware algorithms (0: the real nodes)", nonnegative_integer());
  add_value(app, "--hybrid-threshold", s.hybrid_threshold, "hybrid: ring from this many wire bytes up",
            positive_integer());
  add_value(app, "--chunk-bytes", s.chunk_bytes, "ring algorithms: wire bytes per pipelined message",
            positive_integer());
  add_value(app, "--pipeline-depth", s.pipeline_depth, "ring algorithms: messages in flight", positive_integer());
  add_value(app, "--bucket-bytes", s.bucket_bytes, "gradients fused per all-reduce (tensor fusion θ, bytes)",
            positive_integer());
  add_switch(app, "double-buffering", s.double_buffering,
             "apply the previous step's averaged gradients while this step's travel");
}

// Where the images come from and how they are kept.
void add_data_flags(CLI::App& app, Settings& s) {
  app.option_defaults()->group("Data");
  app.add_option("--train", s.train_list, "training list file of 'path label' lines (ImageNet format)");
  app.add_option("--val", s.val_list, "validation list file");
  app.add_option("--root", s.root, "directory the list paths are relative to")->capture_default_str();
  app.add_option("--dataset", s.dataset, "directory of IDX files (fashion_mnist, when --train is not given)")
      ->capture_default_str();
  add_value(app, "--in-memory", s.in_memory, "keep each rank's shard in RAM: off, compressed or decoded",
            one_of({"off", "compressed", "decoded"}));
  add_value(app, "--cache-decoded", s.cache_decoded, "in-memory images decoded at this shorter side",
            nonnegative_integer());
  add_value(app, "--on-bad-image", s.on_bad_image, "an undecodable image stops the run (error) or is skipped",
            one_of({"error", "skip"}));
  add_value(app, "--crop-size", s.crop_size,
            "list images become N x N: imagenet preset: random-resized crops in training, centre crops of the "
            "shorter side resized to N x 256 / 224 in evaluation; fashion_mnist preset: the shorter side resized "
            "to N, then the centre crop (IDX images stay 28 x 28)",
            positive_integer());
  add_value(app, "--eval-batchsize", s.eval_batchsize, "examples per rank per evaluation batch", positive_integer());
  add_value(app, "--eval-interval", s.eval_interval, "evaluate every N epochs (and at the end)", positive_number());
}

// The network, its starting weights and its batch normalization.
void add_model_flags(CLI::App& app, Settings& s) {
  app.option_defaults()->group("Model");
  add_value(app, "--model", s.model, "network",
            one_of({"mlp", "resnet20", "resnet32", "resnet56", "resnet50", "alexnet_bn", "alexnet_pool5_bn"}));
  app.add_option("--initmodel", s.initmodel,
                 "start from these weights: a model file (model_best.npz) or a trainer snapshot (a snapshot "
                 "that --resume or --autoload loads replaces them)");
  add_value(app, "--classes", s.classes, "output classes", positive_integer());
  add_value(app, "--unit", s.unit, "hidden units of the MLP", positive_integer());
  add_value(app, "--label-smoothing", s.label_smoothing, "label smoothing epsilon", unit_interval());
  add_value(app, "--bn", s.bn, "batch-normalization statistics over each rank's batch or the global batch",
            one_of({"local", "multi_node"}));
  add_value(app, "--bn-batch", s.bn_batch, "examples per batch-normalization group (0: the whole local batch)",
            nonnegative_integer());
  add_value(app, "--bn-eps", s.bn_eps, "batch normalization's eps", positive_number());
  add_value(app, "--bn-decay", s.bn_decay, "weight of the old running averages", unit_interval());
  add_switch(app, "bn-running-average", s.bn_running_average,
             "evaluate with running averages (else with the last training batch's statistics)");
  add_switch(app, "zero-gamma", s.zero_gamma,
             "start the last batch normalization of every residual branch at gamma = 0");
}

}  // namespace

void add_common_flags(CLI::App& app, Settings& s) {
  add_run_flags(app, s);
  add_data_flags(app, s);
  add_model_flags(app, s);
  add_device_flags(app, s);
  add_communication_flags(app, s);
  add_output_flags(app, s);
}

void check_settings(const Settings& s) {
  if (s.device != "cuda") {
    try {
      Device::parse(s.device);
    } catch (const ValueError&) {
      throw FlagError{"--device: expected cpu, cuda (the rank's local index), cuda:N or loopback:N, got '" +
                      s.device + "'"};
    }
  }
  if (s.device.rfind("cuda", 0) == 0) {
    try {
      distributed::check_cuda_communicator(s.communicator, {.chunk_bytes = s.chunk_bytes,
                                                            .pipeline_depth = static_cast<int>(s.pipeline_depth)});
    } catch (const ValueError& e) {
      throw FlagError{"--communicator " + s.communicator + " with --device " + s.device + ": " + e.what()};
    }
  }
  if (s.device.rfind("cuda", 0) == 0 && cuda::device_count() == 0) {
    throw FlagError{"--device " + s.device + ": " + cuda::unavailable_reason()};
  }
  if (s.loaders < -1) {
    throw FlagError{"--loaders: expected -1 (automatic) or an integer >= 0, got " + std::to_string(s.loaders)};
  }
  if (s.loss_scale != "none" && s.loss_scale != "dynamic") {
    char* end = nullptr;
    const double scale = std::strtod(s.loss_scale.c_str(), &end);
    if (end == s.loss_scale.c_str() || *end != '\0' || !(scale > 0)) {
      throw FlagError{"--loss-scale: expected none, dynamic or a number > 0, got '" + s.loss_scale + "'"};
    }
  }
  if (s.train_list.empty() != s.val_list.empty()) {
    throw FlagError{"--train and --val: expected both list files or neither, got only " +
                    std::string(s.train_list.empty() ? "--val" : "--train")};
  }
  if (s.preset == Preset::imagenet && s.train_list.empty()) {
    throw FlagError{"--preset imagenet: expected --train LIST --val LIST [--root DIR] (ImageNet lists), got none"};
  }
  if (s.bn == "multi_node" && s.bn_batch != 0) {
    throw FlagError{"--bn multi_node: expected --bn-batch 0 (groups are local), got " + std::to_string(s.bn_batch)};
  }
  const bool needs_imagenet = s.model == "resnet50" || s.model.rfind("alexnet", 0) == 0;
  if (needs_imagenet && s.preset != Preset::imagenet) {
    throw FlagError{"--model " + s.model + ": expected the imagenet preset (224 x 224 RGB input), got fashion_mnist"};
  }
  if (s.preset == Preset::fashion_mnist && s.train_list.empty() && s.crop_size != 28) {
    throw FlagError{"--crop-size " + std::to_string(s.crop_size) +
                    ": expected 28, the size of the IDX files' images (list images of --train and --val are "
                    "resized to --crop-size)"};
  }
  if (s.evaluate && s.initmodel.empty() && s.resume.empty()) {
    throw FlagError{"--evaluate: expected the model to evaluate in --initmodel FILE or --resume SNAPSHOT, got neither"};
  }
  if (s.model == "mlp" && s.preset != Preset::fashion_mnist) {
    throw FlagError{"--model mlp: expected the fashion_mnist preset (28 x 28 input), got imagenet"};
  }
}

}  // namespace kusari::recipes
