#include "settings.h"

#include <kusari/distributed/communicator.h>

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
  s.eval_batchsize = 1000;
  return s;
}

void add_common_flags(CLI::App& app, Settings& s) {
  const std::vector<std::string> dtypes{"float32", "float16", "bfloat16"};
  app.add_option("--preset", s.preset_name, "imagenet (the paper's setting) or fashion_mnist (a small one)")
      ->check(one_of({"imagenet", "fashion_mnist"}))->capture_default_str();
  app.add_option("-b,--batchsize", s.batchsize, "global minibatch B (split evenly over the ranks)")
      ->check(positive_integer())->capture_default_str();
  app.add_option("-e,--epoch", s.epoch, "epochs of training (fractions allowed)")
      ->check(positive_number())->capture_default_str();
  app.add_option("--max-iterations", s.max_iterations,
                 "stop after N iterations (0: run every epoch; the schedules still follow --epoch)")
      ->check(nonnegative_integer())->capture_default_str();
  app.add_option("-o,--out", s.out, "output directory (log, plots, snapshots, args.json)")->capture_default_str();
  app.add_option("--resume", s.resume, "continue from this snapshot");
  app.add_flag("--autoload", s.autoload, "continue from the newest snapshot under --out, if any");
  app.add_option("-f,--frequency", s.frequency, "a snapshot every N epochs")
      ->check(positive_number())->capture_default_str();
  app.add_option("--seed", s.seed, "seed of parameters, shards, shuffling and augmentation")
      ->check(nonnegative_integer())->capture_default_str();
  app.add_option("--threads", s.threads, "compute threads per rank (0: the node's cores less the loaders)")
      ->check(nonnegative_integer())->capture_default_str();
  app.add_option("--loaders", s.loaders, "image decoding threads per rank (-1: chosen from the cores)")
      ->capture_default_str();
  app.add_option("--device", s.device, "cpu, or cuda:N")->capture_default_str();
  app.add_option("--dtype", s.dtype, "compute dtype (float32 master weights)")->check(one_of(dtypes))
      ->capture_default_str();
  app.add_option("--wire-dtype", s.wire_dtype, "dtype gradients are all-reduced in")->check(one_of(dtypes))
      ->capture_default_str();
  app.add_option("--communicator", s.communicator, "all-reduce algorithm")
      ->check(one_of(distributed::allreduce_algorithm_names()))->capture_default_str();
  app.add_option("--colors", s.colors, "multi_color: rings running at once")->check(positive_integer())
      ->capture_default_str();
  app.add_option("--hybrid-threshold", s.hybrid_threshold, "hybrid: ring from this many wire bytes up")
      ->check(positive_integer())->capture_default_str();
  app.add_option("--bucket-bytes", s.bucket_bytes, "gradients fused per all-reduce (tensor fusion θ, bytes)")
      ->check(positive_integer())->capture_default_str();
  add_switch(app, "double-buffering", s.double_buffering,
             "apply the previous step's averaged gradients while this step's travel");
  app.add_option("--loss-scale", s.loss_scale, "none, dynamic, or a fixed loss scale")->capture_default_str();
  app.add_option("--train", s.train_list, "training list file of 'path label' lines (ImageNet format)");
  app.add_option("--val", s.val_list, "validation list file");
  app.add_option("--root", s.root, "directory the list paths are relative to")->capture_default_str();
  app.add_option("--dataset", s.dataset, "directory of IDX files (used when --train is not given)")
      ->capture_default_str();
  app.add_option("--in-memory", s.in_memory, "keep each rank's shard in RAM: off, compressed or decoded")
      ->check(one_of({"off", "compressed", "decoded"}))->capture_default_str();
  app.add_option("--cache-decoded", s.cache_decoded, "in-memory images decoded at this shorter side")
      ->check(nonnegative_integer())->capture_default_str();
  app.add_option("--on-bad-image", s.on_bad_image, "an undecodable image stops the run (error) or is skipped")
      ->check(one_of({"error", "skip"}))->capture_default_str();
  app.add_option("--classes", s.classes, "output classes")->check(positive_integer())->capture_default_str();
  app.add_option("--model", s.model, "network")
      ->check(one_of({"mlp", "resnet20", "resnet32", "resnet56", "resnet50", "alexnet_bn", "alexnet_pool5_bn"}))
      ->capture_default_str();
  app.add_option("--unit", s.unit, "hidden units of the MLP")->check(positive_integer())->capture_default_str();
  app.add_option("--bn", s.bn, "batch-normalization statistics over each rank's batch or the global batch")
      ->check(one_of({"local", "multi_node"}))->capture_default_str();
  app.add_option("--bn-batch", s.bn_batch, "examples per batch-normalization group (0: the whole local batch)")
      ->check(nonnegative_integer())->capture_default_str();
  app.add_option("--bn-eps", s.bn_eps, "batch normalization's eps")->check(positive_number())->capture_default_str();
  app.add_option("--bn-decay", s.bn_decay, "weight of the old running averages")->check(unit_interval())
      ->capture_default_str();
  add_switch(app, "bn-running-average", s.bn_running_average,
             "evaluate with running averages (else with the last training batch's statistics)");
  add_switch(app, "zero-gamma", s.zero_gamma,
             "start the last batch normalization of every residual branch at gamma = 0");
  app.add_option("--label-smoothing", s.label_smoothing, "label smoothing epsilon")->check(unit_interval())
      ->capture_default_str();
  app.add_option("--eval-batchsize", s.eval_batchsize, "examples per rank per evaluation batch")
      ->check(positive_integer())->capture_default_str();
  app.add_option("--eval-interval", s.eval_interval, "evaluate every N epochs (and at the end)")
      ->check(positive_number())->capture_default_str();
  add_switch(app, "progress", s.progress, "draw a progress bar");
}

void check_settings(const Settings& s) {
  if (s.device != "cpu") {
    if (s.device.rfind("cuda:", 0) == 0) {
      throw FlagError{"--device: expected cpu (this build has no CUDA backend yet), got '" + s.device + "'"};
    }
    throw FlagError{"--device: expected cpu or cuda:N, got '" + s.device + "'"};
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
  if (s.preset == Preset::imagenet && s.train_list.empty() && s.dataset.empty()) {
    throw FlagError{"--preset imagenet: expected --train LIST --val LIST [--root DIR] (or --dataset DIR), got neither"};
  }
  if (s.bn == "multi_node" && s.bn_batch != 0) {
    throw FlagError{"--bn multi_node: expected --bn-batch 0 (groups are local), got " + std::to_string(s.bn_batch)};
  }
  if (s.model == "mlp" && s.preset == Preset::imagenet) {
    throw FlagError{"--model mlp: expected the fashion_mnist preset, got imagenet"};
  }
}

}  // namespace kusari::recipes
