#include <kusari/training/profile_report.h>

#include <iostream>

#include <kusari/core/profiler.h>
#include <kusari/serializers/atomic_file.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

ProfileReport::ProfileReport(int64_t warmup, int64_t iterations, std::string filename, bool print)
    : warmup_(warmup), iterations_(iterations), filename_(std::move(filename)), print_(print) {
  if (warmup < 0 || iterations < 1) {
    throw ValueError(cat("ProfileReport: expected warmup >= 0 and iterations >= 1, got warmup ", warmup,
                         " and iterations ", iterations));
  }
}

void ProfileReport::initialize(Trainer& trainer) { start_if_due(trainer.updater().iteration()); }

void ProfileReport::operator()(Trainer& trainer) {
  const int64_t iteration = trainer.updater().iteration();
  if (recording_ && iteration - started_at_ >= iterations_) {
    report(trainer);
  } else {
    start_if_due(iteration);
  }
}

void ProfileReport::finalize(Trainer& trainer) {
  if (recording_) report(trainer);
}

void ProfileReport::start_if_due(int64_t iteration) {
  if (recording_ || done_ || iteration < warmup_) return;
  profiler::start();
  recording_ = true;
  started_at_ = iteration;
}

void ProfileReport::report(Trainer& trainer) {
  profiler::stop();
  recording_ = false;
  done_ = true;
  const std::string text =
      cat("iterations ", started_at_ + 1, " to ", trainer.updater().iteration(), "\n", profiler::report());
  serializers::AtomicFile file(trainer.out() + "/" + filename_);
  file.write(text);
  file.commit();
  if (print_) std::cout << text << std::flush;
}

}  // namespace kusari::training
