#include "command_line.h"

#include "flags.h"

namespace kusari::recipes {

std::optional<CommandLine> parse_command_line(int argc, char** argv, Recipe& recipe) {
  const std::string default_preset = recipe.default_preset() == Preset::imagenet ? "imagenet" : "fashion_mnist";
  const Preset preset = preset_from_name(prescan_flag(argc, argv, "--preset", default_preset));
  CommandLine line{recipe.defaults(preset, prescan_flag(argc, argv, "--model", "")), ""};
  CLI::App app(recipe.description(), recipe.name());
  app.get_formatter()->column_width(34);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a repeated flag: the last wins
  add_common_flags(app, line.settings);
  recipe.add_flags(app);
  if (!parse_flags(app, argc, argv)) return std::nullopt;
  line.settings.preset = preset;
  check_settings(line.settings);
  recipe.resolve(line.settings);
  line.args_json = flags_to_json(app);
  return line;
}

}  // namespace kusari::recipes
