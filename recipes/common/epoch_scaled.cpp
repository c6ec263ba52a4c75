#include "epoch_scaled.h"

#include <sstream>

#include "flags.h"

namespace kusari::recipes {
namespace {

std::string join(const std::vector<double>& values) {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  return out.str();
}

}  // namespace

void EpochScaled::add_to(CLI::App& app, const std::string& flag, const std::string& what) {
  std::ostringstream help;
  help << what << " (default " << join(paper_) << " of " << paper_epochs_ << " epochs, scaled to --epoch)";
  option_ = app.add_option(flag, values_, help.str())->check(nonnegative_number());
  if (list_) option_->delimiter(',');
  else option_->expected(1);
}

void EpochScaled::resolve(double epochs) {
  if (option_ && option_->count() > 0) return;
  values_.clear();
  for (double paper : paper_) values_.push_back(paper * epochs / paper_epochs_);
  if (option_) option_->default_str(join(values_));
}

}  // namespace kusari::recipes
