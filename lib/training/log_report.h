#pragma once
// LogReport: averages the observations over each interval and appends one entry per interval to a
// JSON log file (Chainer's LogReport).

#include <functional>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/training/dict_summary.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Settings of a LogReport.
struct KUSARI_API LogReportOptions {
  std::vector<std::string> keys{};  // the observed keys to log; empty logs every key
  Trigger trigger = {1, "epoch"};   // when an entry is made
  std::string filename = "log";     // the file under the trainer's out directory; empty writes none
  // Called on each entry before it is kept and written (Chainer's postprocess): values derived from the
  // means, such as a rate over the interval from its mean time; none by default.
  std::function<void(Observation&)> postprocess{};
};

// Logs the means of the observations, interval by interval.
class KUSARI_API LogReport : public Extension {
 public:
  // Logs as `options` say.
  explicit LogReport(LogReportOptions options = {});
  // Adds the iteration's observation; when the interval ends, appends an entry holding each key's mean
  // and "epoch", "iteration" and "elapsed_time", and rewrites the file (a JSON list of the entries,
  // written to a temporary name and renamed).
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "LogReport"; }
  // Saves or loads the interval trigger, the running summary and the entries so far.
  void serialize(Serializer& serializer) override;
  // The entries so far.
  const std::vector<Observation>& log() const { return log_; }

 private:
  LogReportOptions options_;
  DictSummary summary_;
  std::vector<Observation> log_;
};

// The entries as Chainer writes its log: a JSON list of objects with 4-space indentation, keys sorted,
// numbers in their shortest round-trip form and non-finite ones as NaN, Infinity and -Infinity.
KUSARI_API std::string log_to_json(const std::vector<Observation>& log);
// The entries of a log in that format (any JSON list of flat objects of numbers, NaN and ±Infinity
// allowed), e.g. to plot or tabulate finished runs; throws ValueError naming the offset, what was
// expected there and what came.
KUSARI_API std::vector<Observation> log_from_json(const std::string& text);

}  // namespace kusari::training
