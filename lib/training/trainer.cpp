#include <kusari/training/trainer.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace kusari::training {

Trainer::Trainer(std::shared_ptr<Updater> updater, Trigger stop_trigger, std::string out)
    : updater_(std::move(updater)), stop_trigger_(std::move(stop_trigger)), out_(std::move(out)) {
  if (!updater_) throw ValueError("Trainer: expected an updater, got null");
  if (!stop_trigger_) throw ValueError("Trainer: expected a stop trigger, got an empty one");
}

void Trainer::extend(std::shared_ptr<Extension> extension, Trigger trigger, std::optional<int> priority,
                     const std::string& name) {
  if (!extension) throw ValueError("Trainer::extend: expected an extension, got null");
  if (running_) throw ValueError("Trainer::extend: cannot add extensions while the trainer runs");
  const std::string base = name.empty() ? extension->default_name() : name;
  auto taken = [this](const std::string& candidate) {
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == candidate; });
  };
  std::string unique = base;
  for (int suffix = 1; taken(unique); ++suffix) unique = cat(base, "_", suffix);
  Trigger chosen = trigger ? std::move(trigger) : extension->default_trigger();
  const int chosen_priority = priority.value_or(extension->priority());
  entries_.push_back({unique, std::move(extension), std::move(chosen), chosen_priority});
}

std::vector<Trainer::Entry*> Trainer::ordered_entries() {
  std::vector<Entry*> ordered;
  for (Entry& entry : entries_) ordered.push_back(&entry);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Entry* a, const Entry* b) { return a->priority > b->priority; });
  return ordered;
}

void Trainer::finalize(const std::vector<Entry*>& entries, bool after_error) {
  for (Entry* entry : entries) {
    if (!after_error) {
      entry->extension->finalize(*this);
      continue;
    }
    try {
      entry->extension->finalize(*this);
    } catch (...) {  // the error that ended training is the one to report
    }
  }
}

void Trainer::run() {
  if (running_) throw ValueError("Trainer::run: the trainer is already running");
  std::error_code error;
  std::filesystem::create_directories(out_, error);
  if (error) throw IOError(cat("Trainer: cannot create the output directory '", out_, "': ", error.message()));
  const std::vector<Entry*> entries = ordered_entries();
  running_ = true;
  started_ = Clock::now();
  auto stop_clock = [this] {
    elapsed_before_ = elapsed_time();
    started_.reset();
    running_ = false;
  };
  try {
    for (Entry* entry : entries) entry->extension->restore(*this);
    for (Entry* entry : entries) entry->extension->initialize(*this);
    while (!stop_trigger_(*this)) {
      reporter_.clear();
      auto scope = reporter_.scope();
      updater_->update();
      for (Entry* entry : entries) {
        if (entry->trigger(*this)) (*entry->extension)(*this);
      }
    }
  } catch (...) {
    stop_clock();
    finalize(entries, true);
    throw;
  }
  stop_clock();
  finalize(entries, false);
}

double Trainer::elapsed_time() const {
  if (!started_) return elapsed_before_;
  return elapsed_before_ + std::chrono::duration<double>(Clock::now() - *started_).count();
}

Extension& Trainer::get_extension(const std::string& name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) return *entry.extension;
  }
  std::string names;
  for (const Entry& entry : entries_) names += cat(names.empty() ? "" : ", ", "'", entry.name, "'");
  throw ValueError(cat("Trainer: no extension named '", name, "'; registered: ", names.empty() ? "none" : names));
}

void Trainer::serialize(Serializer& serializer) {
  updater_->serialize(serializer["updater"]);
  for (Entry& entry : entries_) {
    entry.extension->serialize(serializer["extensions"][entry.name]);
    entry.trigger.serialize(serializer["extension_triggers"][entry.name]);
  }
  stop_trigger_.serialize(serializer["stop_trigger"]);
  double elapsed = elapsed_time();
  serialize_at_least(serializer, "elapsed_time", elapsed, 0, "Trainer");
  if (!serializer.is_loading()) return;
  elapsed_before_ = elapsed;
  if (started_) started_ = Clock::now();
}

}  // namespace kusari::training
