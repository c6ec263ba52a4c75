#include <kusari/training/progress_bar.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>

#include <kusari/core/error.h>
#include <kusari/training/trainer.h>

namespace kusari::training {
namespace {

// Timings kept for the speed estimate.
constexpr size_t kRecentTimings = 100;

// `[####......]` filled to `fraction` (clamped to [0, 1]).
std::string bar(double fraction, int64_t length) {
  const double clamped = std::isfinite(fraction) ? std::min(1.0, std::max(0.0, fraction)) : 0.0;
  // The small allowance keeps fractions like 1.2 - 1 (0.19999...) from losing a mark.
  const auto marks = static_cast<int64_t>(clamped * static_cast<double>(length) + 1e-9);
  std::string drawn = "[";
  drawn.append(static_cast<size_t>(marks), '#');
  drawn.append(static_cast<size_t>(length - marks), '.');
  return drawn + "]";
}

// printf-style formatting into a string.
template <class... Args>
std::string format(const char* pattern, Args... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, pattern, args...);
  return buffer;
}

// A duration as H:MM:SS, or "unknown" when it cannot be estimated.
std::string clock_time(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "unknown";
  const auto total = static_cast<int64_t>(std::round(seconds));
  return format("%lld:%02lld:%02lld", static_cast<long long>(total / 3600), static_cast<long long>(total / 60 % 60),
                static_cast<long long>(total % 60));
}

}  // namespace

ProgressBar::ProgressBar(ProgressBarOptions options)
    : options_(std::move(options)), out_(options_.out ? options_.out : &std::cout) {
  if (options_.update_interval < 1) {
    throw ValueError(cat("ProgressBar: expected update_interval >= 1, got ", options_.update_interval));
  }
  if (options_.bar_length < 1) {
    throw ValueError(cat("ProgressBar: expected bar_length >= 1, got ", options_.bar_length));
  }
  terminal_ = options_.terminal.value_or(out_ == &std::cout && ::isatty(STDOUT_FILENO) == 1);
}

void ProgressBar::initialize(Trainer& trainer) {
  std::optional<TrainingLength> length = options_.training_length;
  if (!length) length = trainer.stop_trigger().training_length();
  if (!length) {
    throw ValueError("ProgressBar: the stop trigger has no known length; give ProgressBarOptions::training_length");
  }
  if (!(length->length > 0) || (length->unit != "iteration" && length->unit != "epoch")) {
    throw ValueError(cat("ProgressBar: expected a training length > 0 in \"iteration\" or \"epoch\", got ",
                         length->length, " \"", length->unit, "\""));
  }
  length_ = *length;
  recent_.clear();
  const Updater& updater = trainer.updater();
  recent_.push_back({updater.iteration(), updater.epoch_detail(), trainer.elapsed_time()});
}

void ProgressBar::operator()(Trainer& trainer) {
  const Updater& updater = trainer.updater();
  const double now = trainer.elapsed_time();
  recent_.push_back({updater.iteration(), updater.epoch_detail(), now});
  if (recent_.size() > kRecentTimings) recent_.pop_front();
  if (updater.iteration() % options_.update_interval == 0) draw(trainer, now);
}

void ProgressBar::draw(const Trainer& trainer, double now) {
  const Updater& updater = trainer.updater();
  const Timing& oldest = recent_.front();
  const double span = now - oldest.seconds;
  const double iterations_per_second = static_cast<double>(updater.iteration() - oldest.iteration) / span;
  const double epochs_per_second = (updater.epoch_detail() - oldest.epoch_detail) / span;
  const bool by_epoch = length_.unit == "epoch";
  const double done = by_epoch ? updater.epoch_detail() : static_cast<double>(updater.iteration());
  const double fraction = done / length_.length;
  const double remaining = (length_.length - done) / (by_epoch ? epochs_per_second : iterations_per_second);
  const std::string counts =
      format("%lld iterations, epoch %lld, of %g %ss", static_cast<long long>(updater.iteration()),
             static_cast<long long>(updater.epoch()), length_.length, length_.unit.c_str());
  const std::string speed =
      format("%.4g iterations/sec, estimated time left %s", iterations_per_second, clock_time(remaining).c_str());
  std::ostream& out = *out_;
  if (!terminal_) {
    out << format("%6.2f%% ", 100 * fraction) << counts << ", " << speed << '\n';
    out.flush();
    return;
  }
  const double in_epoch = updater.epoch_detail() - std::floor(updater.epoch_detail());
  out << "\r\033[J"
      << "     total " << bar(fraction, options_.bar_length) << format(" %6.2f%%", 100 * fraction) << '\n'
      << "this epoch " << bar(in_epoch, options_.bar_length) << format(" %6.2f%%", 100 * in_epoch) << '\n'
      << counts << '\n'
      << speed << '\n'
      << "\033[4A";
  out.flush();
}

void ProgressBar::finalize(Trainer&) {
  if (!terminal_) return;
  *out_ << "\r\033[J";
  out_->flush();
}

}  // namespace kusari::training
