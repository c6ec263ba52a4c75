// plot_logs: draws one key of several training logs (Chainer's JSON, as LogReport writes them) by
// epoch into one SVG with kusari's own plot code, e.g. the validation accuracy of every run of a study:
//   plot_logs accuracy.svg validation/main/accuracy docs/large_batch/*/log
// Each series is named after the directory holding its log.

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <kusari/core/error.h>
#include <kusari/serializers/atomic_file.h>
#include <kusari/training/log_report.h>
#include <kusari/training/svg_plot.h>

namespace {

namespace T = kusari::training;

// The series of `key` by epoch in the log at `path` (entries without the key are left out).
T::PlotSeries read_series(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) throw kusari::IOError(kusari::cat("plot_logs: cannot read '", path, "'"));
  std::stringstream text;
  text << in.rdbuf();
  T::PlotSeries series{std::filesystem::path(path).parent_path().filename().string(), {}, {}};
  for (const T::Observation& entry : T::log_from_json(text.str())) {
    const auto value = entry.find(key);
    const auto epoch = entry.find("epoch");
    if (value == entry.end() || epoch == entry.end()) continue;
    series.xs.push_back(epoch->second);
    series.ys.push_back(value->second);
  }
  return series;
}

}  // namespace

int main(int argc, char** argv) {
  std::string output, key;
  std::vector<std::string> logs;
  CLI::App app{"Draws one key of several training logs by epoch into one SVG.", "plot_logs"};
  app.add_option("OUT.svg", output, "the plot to write")->required();
  app.add_option("KEY", key, "the logged key, e.g. validation/main/accuracy")->required();
  app.add_option("LOG", logs, "the logs (each series named after its log's directory)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  try {
    std::vector<T::PlotSeries> series;
    for (const std::string& log : logs) series.push_back(read_series(log, key));
    kusari::serializers::AtomicFile out(output);
    out.write(T::svg_line_plot(series, "epoch"));
    out.commit();
  } catch (const std::exception& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
  return 0;
}
