// run_recipe: the run loop every recipe shares — flags, communicator, threads, seed, data shards,
// model, precision, multi-node optimizer, evaluator, log, plots, report, progress bar, snapshots.

#include <filesystem>
#include <iostream>
#include <thread>

#include <kusari/core/allocator.h>
#include <kusari/core/json_text.h>
#include <kusari/core/memory_order.h>
#include <kusari/core/parallel.h>
#include <kusari/core/random.h>
#include <kusari/distributed/abort_on_exception.h>
#include <kusari/distributed/mpi_session.h>
#include <kusari/distributed/multi_node_optimizer.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/optimizers/loss_scaler.h>
#include <kusari/serializers/atomic_file.h>
#include <kusari/training/training.h>

#include "command_line.h"
#include "data.h"
#include "flags.h"
#include "metrics.h"
#include "model.h"
#include "model_file.h"
#include "period_or_end_trigger.h"
#include "recipe.h"

namespace kusari::recipes {
namespace {

namespace T = kusari::training;
namespace O = kusari::optimizers;

// How often the parameters are checked for NaN and infinity (a NaN stays in a parameter once there).
constexpr int64_t kDivergenceCheckIterations = 50;

// Refuses a global batch the ranks cannot share evenly, or a local batch the BN groups cannot split
// (on every rank alike, before any data is read).
void check_batch(const Settings& s, const distributed::Communicator& comm) {
  if (s.batchsize % comm.size() != 0) {
    throw FlagError{"--batchsize: expected a multiple of the " + std::to_string(comm.size()) +
                    " ranks (each takes B / P), got " + std::to_string(s.batchsize)};
  }
  const int64_t local = s.batchsize / comm.size();
  if (s.bn_batch > 0 && local > s.bn_batch && local % s.bn_batch != 0) {
    throw FlagError{"--bn-batch: expected a divisor of the local batch " + std::to_string(local) + " (B / P), got " +
                    std::to_string(s.bn_batch)};
  }
}

// The device this rank trains on: --device, with "cuda" meaning the GPU of the rank's index on its node
// (ranks beyond the node's GPUs share them round-robin).
Device training_device(const Settings& s, const distributed::Communicator& comm) {
  if (s.device == "cuda") return Device::cuda(comm.intra_rank() % cuda::device_count());
  const Device device = Device::parse(s.device);
  if (device.type == DeviceType::cuda && device.index >= cuda::device_count()) {
    throw FlagError{"--device " + s.device + ": this process sees " + std::to_string(cuda::device_count()) +
                    " CUDA device(s)"};
  }
  return device;
}

// The memory order image batches go to the model in: --memory-order's (auto: channels-last on a GPU in
// half precision).
MemoryOrder image_order(const Settings& s) {
  const bool on_gpu = s.device.rfind("cuda", 0) == 0, half = s.dtype == "float16" || s.dtype == "bfloat16";
  const bool channels_last = s.memory_order == "auto" ? on_gpu && half : s.memory_order == "channels_last";
  return channels_last ? MemoryOrder::channels_last : MemoryOrder::row_major;
}

// Half precision: parameters in the compute dtype with float32 master weights, and the loss scale.
void set_up_precision(const Settings& s, links::Link& model, O::Optimizer& optimizer, const RunData& data,
                      const Device& device) {
  const Dtype dtype = dtype_from_name(s.dtype);
  if (dtype != Dtype::float32) {
    cast_parameters(model, data.train->get(0).at(0), dtype, device);
    optimizer.use_fp32_update();
  }
  if (s.loss_scale == "dynamic") {
    optimizer.set_loss_scaler(O::LossScaler::dynamic({.initial_scale = s.loss_scale_initial,
                                                      .growth_interval = s.loss_scale_interval,
                                                      .max_scale = s.loss_scale_max}));
  } else if (s.loss_scale != "none") {
    optimizer.set_loss_scaler(O::LossScaler::fixed(std::stod(s.loss_scale)));
  }
}

distributed::Communicator make_communicator(const Settings& s) {
  distributed::CommunicatorOptions options;
  options.wire_dtype = dtype_from_name(s.wire_dtype);
  options.colors = static_cast<int>(s.colors);
  options.ranks_per_node = static_cast<int>(s.ranks_per_node);
  options.chunk_bytes = s.chunk_bytes;
  options.pipeline_depth = static_cast<int>(s.pipeline_depth);
  options.hybrid_threshold_bytes = s.hybrid_threshold;
  return distributed::create_communicator(s.communicator, options);
}

void print_plan(const Settings& s, const distributed::Communicator& comm, const ThreadPlan& threads,
                const RunData& data) {
  const int64_t cores = std::thread::hardware_concurrency();
  if (comm.intra_size() * (threads.compute + threads.loaders) > cores) {
    std::cout << "warning: " << comm.intra_size() << " ranks x (" << threads.compute << " threads + "
              << threads.loaders << " loaders) exceed this node's " << cores << " cores\n";
  }
  std::cout << "ranks: " << comm.size() << " on " << comm.inter_size() << (comm.inter_size() == 1 ? " node" : " nodes")
            << " (" << distributed::mpi_library() << "), communicator: " << comm.algorithm() << " (" << s.wire_dtype
            << " wire), compute threads per rank: " << threads.compute << ", loaders per rank: " << threads.loaders
            << "\nbatch: " << s.batchsize << " in all, " << s.batchsize / comm.size() << " per rank"
            << (s.bn_batch > 0 ? ", batch normalization over groups of " + std::to_string(s.bn_batch) : "")
            << "; dtype " << s.dtype << ", images "
            << (image_order(s) == MemoryOrder::channels_last ? "channels_last" : "row_major")
            << (s.device.rfind("cuda", 0) == 0 ? s.cudnn_benchmark ? "; cuDNN algorithms: timed (--cudnn-benchmark)"
                                                                   : "; cuDNN algorithms: heuristics"
                                               : "")
            << "\ntraining examples per rank: " << data.train->size()
            << ", validation examples on rank 0: " << data.val->size() << "\n" << std::flush;
}

// The leader's reports: JSON log, plots, printed columns and the progress bar.
void extend_reports(T::Trainer& trainer, const Settings& s) {
  const TrainingEnd end{s.epoch, s.max_iterations};
  const T::Trigger every_epoch = PeriodOrEndTrigger({1, "epoch"}, end);
  const T::Trigger log_trigger =
      s.log_interval > 0 ? PeriodOrEndTrigger({static_cast<double>(s.log_interval), "iteration"}, end) : every_epoch;
  trainer.extend(std::make_shared<T::LogReport>(T::LogReportOptions{
      .trigger = log_trigger,
      .postprocess = [batchsize = s.batchsize](T::Observation& entry) { add_images_per_second(entry, batchsize); }}));
  const auto plot = [&trainer, &every_epoch](std::vector<std::string> keys, std::string file) {
    trainer.extend(std::make_shared<T::PlotReport>(std::move(keys),
                                                   T::PlotReportOptions{.trigger = every_epoch, .filename = file}));
  };
  plot({"main/loss", "validation/main/loss"}, "loss.svg");
  plot({"main/accuracy", "validation/main/accuracy"}, "accuracy.svg");
  plot({"lr"}, "lr.svg");
  std::vector<std::string> columns{"epoch", "iteration", "main/loss", "validation/main/loss", "main/accuracy",
                                   "validation/main/accuracy"};
  if (s.classes > 5) columns.push_back("validation/main/accuracy_top5");
  for (const char* key : {"lr", "data_time", "time_per_iteration", "images_per_second", "elapsed_time"}) {
    columns.push_back(key);
  }
  trainer.extend(std::make_shared<T::PrintReport>(columns));
  if (s.profile > 0) trainer.extend(std::make_shared<T::ProfileReport>(kProfileWarmup, s.profile));
  if (s.progress != "off") {
    T::ProgressBarOptions progress{.update_interval = s.progress_interval};
    if (s.progress != "auto") progress.terminal = s.progress == "bar";
    trainer.extend(std::make_shared<T::ProgressBar>(progress));
  }
}

// --evaluate: the validation loss, top-1 and top-5 of the loaded model over every rank's shard, printed
// by the leader and kept in evaluation.json under --out.
void evaluate_only(const Settings& s, T::MultiNodeEvaluator& evaluator, const std::string& weights, bool leader) {
  const T::Observation means = evaluator.evaluate();
  if (!leader) return;
  std::string json = "{\n  \"model\": " + json_string(weights);
  std::cout << "evaluated " << weights << "\n";
  for (const auto& [key, mean] : means) {
    std::cout << "  " << key << ": " << json_number(mean) << "\n";
    json += ",\n  " + json_string(key) + ": " + json_number(mean);
  }
  std::cout << std::flush;
  serializers::AtomicFile file(s.out + "/evaluation.json");
  file.write(json + "\n}\n");
  file.commit();
}

void train(Recipe& recipe, const CommandLine& line) {
  const Settings& s = line.settings;
  const distributed::Communicator comm = make_communicator(s);
  if (!s.evaluate) check_batch(s, comm);  // an evaluation takes no training batch
  const bool leader = comm.rank() == 0;
  const ThreadPlan threads = plan_threads(s, comm.intra_size(), std::thread::hardware_concurrency());
  set_num_threads(static_cast<int>(threads.compute));
  if (leader) std::filesystem::create_directories(s.out);
  if (leader && !s.evaluate) {  // an evaluation writes evaluation.json beside a training run's args.json
    serializers::AtomicFile args(s.out + "/args.json");
    args.write(line.args_json);
    args.commit();
  }
  // The same seed on every rank gives every rank the same initial parameters.
  manual_seed(static_cast<uint64_t>(s.seed));
  const RunData data = load_data(s, comm, threads);
  if (leader) print_plan(s, comm, threads, data);

  const Device device = training_device(s, comm);
  cuda::set_cudnn_benchmark(s.cudnn_benchmark);
  const DeviceScope on_device(device);  // parameters made lazily, and every array of this thread, go there
  const std::shared_ptr<links::Link> model = make_model(s, data.channels, comm);
  model->to_device(device);
  // --initmodel's weights, or for --evaluate those of the snapshot --resume names.
  const std::string weights = !s.initmodel.empty() ? s.initmodel : s.evaluate ? s.resume : "";
  if (!weights.empty()) {
    shape_parameters(*model, data.train->get(0).at(0), device);
    load_model_weights(*model, weights);
  }
  const T::LossFunction loss =
      T::classification_loss(model, {.compute_dtype = dtype_from_name(s.dtype),
                                     .memory_order = image_order(s),
                                     .label_smoothing = s.label_smoothing});
  const auto evaluator = T::create_multi_node_evaluator(
      std::make_shared<T::Evaluator>(data.val_iter, loss, model, T::EvaluatorOptions{.device = device}), comm);
  if (s.evaluate) {
    cast_parameters(*model, data.train->get(0).at(0), dtype_from_name(s.dtype), device);
    evaluate_only(s, *evaluator, weights, leader);
    return;
  }
  std::shared_ptr<O::Optimizer> optimizer = recipe.make_optimizer(model);
  set_up_precision(s, *model, *optimizer, data, device);
  optimizer = distributed::create_multi_node_optimizer(
      optimizer, comm, {.bucket_bytes = s.bucket_bytes, .double_buffering = s.double_buffering});

  auto updater = std::make_shared<T::StandardUpdater>(data.train_iter, optimizer, loss, device);
  comm.barrier();  // the output directory exists before any rank's trainer looks for it
  const TrainingEnd end{s.epoch, s.max_iterations};
  T::Trainer trainer(updater, StopTrigger(end), s.out);
  const T::Trigger evaluation = PeriodOrEndTrigger({s.eval_interval, "epoch"}, end);
  recipe.extend(trainer);
  observe_iteration(trainer);
  // A diverged run stops within kDivergenceCheckIterations iterations, naming the iteration and the
  // parameter, and before an epoch's snapshot keeps it (each check reads the device once).
  trainer.extend(std::make_shared<T::FailOnNonNumber>(T::FailOnNonNumberOptions{kDivergenceCheckIterations}));
  trainer.extend(evaluator, evaluation);
  auto snapshot = T::multi_node_snapshot(comm, {.n_retains = 2, .autoload = s.autoload});
  const T::Trigger snapshot_trigger{s.frequency, "epoch"};
  trainer.extend(snapshot, snapshot_trigger);
  // Every rank evaluates, and the snapshot keeps, the batch statistics of all ranks together.
  trainer.extend(T::average_batch_statistics(model, comm), EitherTrigger(evaluation, snapshot_trigger));
  if (leader) {
    extend_reports(trainer, s);
    // The model alone whenever validation top-1 is the best so far (after the evaluation and the
    // statistics' averaging; before the trainer's snapshot, which so keeps its trigger's latest state).
    trainer.extend(T::snapshot_object(model, kBestModelFile),
                   T::MaxValueTrigger("validation/main/accuracy", evaluation), T::kPrioritySnapshot + 1);
  }
  if (!s.resume.empty()) snapshot->load(trainer, s.resume);
  trainer.run();
  // The device's peak memory: what a run on a GPU held (the caching allocator's, as PyTorch's
  // max_memory_reserved), shown so that a run can be seen to have used its device.
  if (leader && device.type != DeviceType::cpu) {
    std::cout << device << " peak memory: " << (allocator_for(device.type).stats().peak_bytes_held >> 20)
              << " MiB\n" << std::flush;
  }
}

}  // namespace

int run_recipe(int argc, char** argv, Recipe& recipe) {
  std::optional<CommandLine> line;
  try {
    line = parse_command_line(argc, argv, recipe);
  } catch (const FlagError& error) {
    std::cerr << error.message << "\n";
    return 2;
  }
  if (!line) return 0;
  int status = 0;
  // An error on one rank ends the whole job (status 1) instead of leaving the others waiting.
  distributed::abort_on_exception([&] {
    try {
      train(recipe, *line);
    } catch (const FlagError& error) {  // found once the ranks are known: every rank finds it alike
      if (distributed::world_rank() == 0) std::cerr << error.message << "\n";
      status = 2;
    }
  });
  return status;
}

}  // namespace kusari::recipes
