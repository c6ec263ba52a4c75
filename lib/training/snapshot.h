#pragma once
// Snapshots: the whole trainer (model, optimizer, iterator position, extensions, counters) or one
// object saved as NPZ under the out directory, written atomically, optionally pruned to the newest n
// and reloaded automatically when training restarts (Chainer's snapshot and snapshot_object).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/serializers/npz.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Settings of a snapshot.
struct KUSARI_API SnapshotOptions {
  // The file name under the out directory; "{iteration}" and "{epoch}" are replaced by the updater's.
  std::string filename = "snapshot_iter_{iteration}";
  // How many of the newest files matching `filename` to keep (older ones are removed); -1 keeps all.
  int64_t n_retains = -1;
  // Whether run() first loads the newest matching file that loads without error.
  bool autoload = false;
  // Whether to deflate the archive.
  bool compress = false;
  // Whether autoload fails on a key the file lacks (true), or leaves that value as it is (false: a
  // trainer resumed with extra extensions starts them fresh).
  bool strict = true;
};

// Writes its target to an NPZ file each time it runs (by default once per epoch, after every other
// extension). Files match `filename` with each placeholder standing for a number; "newest" means the
// largest numbers, compared in the order the placeholders appear.
class KUSARI_API Snapshot : public Extension {
 public:
  // Saves the whole trainer when `target` is empty, else what `target` serializes. Throws ValueError
  // for an empty filename or one with a directory part.
  explicit Snapshot(serializers::SerializeFunction target = {}, SnapshotOptions options = {},
                    std::string name = "snapshot");
  // Writes the file (complete or not at all), then removes the oldest files beyond n_retains.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return name_; }
  Trigger default_trigger() const override { return {1, "epoch"}; }
  int priority() const override { return kPrioritySnapshot; }
  // Removes the temporary files of writes that a killed process left unfinished (saying so on stderr);
  // with autoload, loads the newest matching file that loads (a corrupt or mismatched newer one is
  // skipped, with a warning on stderr naming each and why); throws the errors of every candidate when
  // files exist but none loads.
  void restore(Trainer& trainer) override;
  // The file autoload loaded, if any.
  const std::optional<std::string>& autoloaded() const { return autoloaded_; }
  // The paths of the files in `directory` matching the filename pattern, newest first.
  std::vector<std::string> find_snapshots(const std::string& directory) const;

 private:
  // The target's serialize function (the trainer's when no target was given).
  serializers::SerializeFunction target_for(Trainer& trainer) const;

  serializers::SerializeFunction target_;
  SnapshotOptions options_;
  std::string name_;
  std::optional<std::string> autoloaded_;
};

// A snapshot of the whole trainer: `trainer.extend(snapshot({.n_retains = 3, .autoload = true}))`.
KUSARI_API std::shared_ptr<Snapshot> snapshot(SnapshotOptions options = {});

// A snapshot of one object (a model, an optimizer): `snapshot_object(model, "model_epoch_{epoch}")`.
template <serializers::Serializable T>
std::shared_ptr<Snapshot> snapshot_object(std::shared_ptr<T> target, std::string filename,
                                          SnapshotOptions options = {}) {
  options.filename = std::move(filename);
  return std::make_shared<Snapshot>(
      serializers::SerializeFunction([target](Serializer& serializer) { target->serialize(serializer); }),
      std::move(options), "snapshot_object");
}

}  // namespace kusari::training
