#include "command_line.h"

#include <kusari/kernels/cuda/runtime.h>
#include <kusari/version.h>

#include "flags.h"

namespace kusari::recipes {
namespace {

// The environment variables a run reads, listed at the end of --help.
constexpr const char* kEnvironmentHelp = R"(Environment:
  KUSARI_STALL_WARNING=S   seconds a collective may wait before the ranks missing from it are named (default 60, 0 off)
  KUSARI_STALL_TIMEOUT=S   seconds after which a stalled collective ends the job (default: never)
  KUSARI_RANKS_PER_NODE=K  treat every K consecutive ranks as one node (the node-aware all-reduces)
  KUSARI_TIMELINE=PATH     every rank writes its spans (forward, backward, update, data, communication) as a Chrome trace
  KUSARI_PROFILE=1         profile the whole process and print the report at exit (--profile N: a window)
  KUSARI_POISON=1          the CUDA caching allocator hands out memory filled with NaN (finds reads of unwritten memory)
  KUSARI_CUDNN_BENCHMARK=1 time cuDNN's convolution algorithms for each shape (--cudnn-benchmark's default)
  OMP_NUM_THREADS          ignored by the recipes: --threads sets the compute threads)";

}  // namespace

std::optional<CommandLine> parse_command_line(int argc, char** argv, Recipe& recipe) {
  const std::string default_preset = recipe.default_preset() == Preset::imagenet ? "imagenet" : "fashion_mnist";
  const Preset preset = preset_from_name(prescan_flag(argc, argv, "--preset", default_preset));
  CommandLine line{recipe.defaults(preset, prescan_flag(argc, argv, "--model", "")), ""};
  CLI::App app(recipe.description(), recipe.name());
  app.get_formatter()->column_width(34);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a repeated flag: the last wins
  app.set_version_flag("--version", "kusari " + kusari::version() + " (" + recipe.name() + ")",
                       "print kusari's version and exit");
  app.footer(kEnvironmentHelp);
  try {
    line.settings.cudnn_benchmark = cuda::cudnn_benchmark();  // KUSARI_CUDNN_BENCHMARK, shown as the default
  } catch (const ValueError& e) {
    throw FlagError{e.what()};
  }
  add_common_flags(app, line.settings);
  app.option_defaults()->group("Optimizer");
  recipe.add_flags(app);
  if (!parse_flags(app, argc, argv)) return std::nullopt;
  // On GPUs akiba2017's ring (kusari's point-to-point engine) is NCCL's own ring: unless --communicator
  // asks for kusari's (refused below), the default becomes nccl.
  const bool on_gpu = line.settings.device.rfind("cuda", 0) == 0;
  if (on_gpu && app.get_option("--communicator")->count() == 0 && line.settings.communicator == "ring") {
    line.settings.communicator = "nccl";
  }
  line.settings.preset = preset;
  check_settings(line.settings);
  recipe.resolve(line.settings);
  line.args_json = flags_to_json(app);
  return line;
}

}  // namespace kusari::recipes
