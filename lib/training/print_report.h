#pragma once
// PrintReport: prints the entries of a LogReport as aligned columns, one line per entry (Chainer's
// PrintReport).

#include <iostream>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Prints chosen keys of each new LogReport entry.
class KUSARI_API PrintReport : public Extension {
 public:
  // Prints the columns `entries` (e.g. {"epoch", "main/loss", "validation/main/loss", "elapsed_time"})
  // of the LogReport registered as `log_report` to `out` (which must outlive the extension).
  explicit PrintReport(std::vector<std::string> entries, std::string log_report = "LogReport",
                       std::ostream& out = std::cout);
  // Prints the header at the first call, then a line for every log entry not printed yet: each column
  // max(10, name length) wide and left-aligned, two spaces apart, blank where the entry lacks the key.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "PrintReport"; }
  // Saves or loads how many entries have been printed.
  void serialize(Serializer& serializer) override { serializer("printed", printed_); }

 private:
  std::vector<std::string> entries_;
  std::vector<size_t> widths_;
  std::string log_report_;
  std::ostream* out_;
  bool header_printed_ = false;
  int64_t printed_ = 0;
};

}  // namespace kusari::training
