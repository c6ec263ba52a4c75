#include <kusari/training/multi_node_snapshot.h>

#include <string_view>

#include <kusari/serializers/array_dict.h>
#include <kusari/serializers/filtered_serializer.h>
#include <kusari/training/trainer.h>

namespace kusari::training {
namespace {

const std::string kRankStates = "rank_states";

// Whether `key` is not rank-local.
bool is_shared_key(const std::string& key) { return !is_rank_local_key(key); }

// This rank's rank-local values of `trainer`, as bytes.
std::string rank_local_bytes(Trainer& trainer) {
  serializers::DictSerializer values;
  serializers::FilteredSerializer filtered(values, is_rank_local_key);
  trainer.serialize(filtered);
  return serializers::pack_array_dict(values.values());
}

// The message of the exception being handled.
std::string current_error() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

}  // namespace

bool is_rank_local_key(const std::string& key) {
  const std::string_view view(key);
  for (size_t begin = 0, slash = view.find('/'); slash != std::string_view::npos;
       begin = slash + 1, slash = view.find('/', begin)) {
    if (view.substr(begin, slash - begin).starts_with("iterator:")) return true;
  }
  return false;
}

MultiNodeSnapshot::MultiNodeSnapshot(distributed::Communicator comm, SnapshotOptions options)
    : comm_(std::move(comm)), options_(std::move(options)) {
  files();  // checks the options
}

Snapshot MultiNodeSnapshot::files(serializers::SerializeFunction target) const {
  SnapshotOptions options = options_;
  options.autoload = false;
  return Snapshot(std::move(target), std::move(options));
}

void MultiNodeSnapshot::operator()(Trainer& trainer) {
  const std::vector<std::string> states = comm_.gather_obj(rank_local_bytes(trainer));
  std::string error;
  if (comm_.rank() == 0) {
    Snapshot writer = files([&](Serializer& serializer) {
      trainer.serialize(serializer);
      Serializer& ranks = serializer[kRankStates];
      auto size = static_cast<int64_t>(states.size());
      ranks("size", size);
      for (size_t r = 0; r < states.size(); ++r) {
        for (auto [key, value] : serializers::unpack_array_dict(states[r], cat("the state of rank ", r))) {
          ranks[std::to_string(r)](key, value);
        }
      }
    });
    try {
      writer(trainer);
    } catch (...) {
      error = current_error();
    }
  }
  error = comm_.bcast_obj(error);
  if (!error.empty()) throw IOError(cat("multi_node_snapshot: rank 0 could not write the snapshot: ", error));
}

void MultiNodeSnapshot::load_here(Trainer& trainer, const std::string& path) const {
  int64_t size = -1;
  serializers::load_npz(path, [&](Serializer& serializer) { serializer[kRankStates]("size", size); });
  if (size != comm_.size()) {
    throw ValueError(cat("multi_node_snapshot: '", path, "' holds the state of ", size, " ranks; this job has ",
                         comm_.size()));
  }
  serializers::load_npz(path, [&](Serializer& serializer) {
    serializers::FilteredSerializer shared(serializer, is_shared_key);
    trainer.serialize(shared);
    serializers::FilteredSerializer own(serializer[kRankStates][std::to_string(comm_.rank())], is_rank_local_key);
    trainer.serialize(own);
  }, options_.strict);
}

void MultiNodeSnapshot::agree_on_errors(const std::string& error, const std::string& what) const {
  const std::vector<std::string> errors = comm_.gather_obj(error);
  std::string all;
  for (size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r].empty()) all += cat("\n  rank ", r, ": ", errors[r]);
  }
  all = comm_.bcast_obj(all);
  if (!all.empty()) throw IOError(cat("multi_node_snapshot: ", what, ":", all));
}

void MultiNodeSnapshot::load(Trainer& trainer, const std::string& path) {
  std::string error;
  try {
    load_here(trainer, path);
  } catch (...) {
    error = current_error();
  }
  agree_on_errors(error, cat("cannot load '", path, "'"));
}

void MultiNodeSnapshot::restore(Trainer& trainer) {
  if (!options_.autoload) return;
  std::string chosen, failures;
  if (comm_.rank() == 0) {
    for (const std::string& path : files().find_snapshots(trainer.out())) {
      try {
        load_here(trainer, path);
        chosen = path;
        break;
      } catch (...) {
        failures += cat("\n  ", path, ": ", current_error());
      }
    }
  }
  chosen = comm_.bcast_obj(chosen);
  if (chosen.empty()) {
    failures = comm_.bcast_obj(failures);
    if (!failures.empty()) throw IOError(cat("multi_node_snapshot: no snapshot in '", trainer.out(), "' loads:", failures));
    return;
  }
  std::string error;
  if (comm_.rank() != 0) {
    try {
      load_here(trainer, chosen);
    } catch (...) {
      error = current_error();
    }
  }
  agree_on_errors(error, cat("cannot resume from '", chosen, "'"));
  autoloaded_ = chosen;
}

std::shared_ptr<MultiNodeSnapshot> multi_node_snapshot(const distributed::Communicator& comm, SnapshotOptions options) {
  return std::make_shared<MultiNodeSnapshot>(comm, std::move(options));
}

}  // namespace kusari::training
