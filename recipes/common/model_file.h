#pragma once
// Model files: the weights a run starts from (--initmodel, --evaluate) and the best model it keeps
// (model_best.npz), in Chainer's key layout either way.

#include <string>

#include <kusari/links/link.h>

namespace kusari::recipes {

// Where a trainer snapshot keeps the model (StandardUpdater's "model:main" under "updater").
inline constexpr const char* kSnapshotModelPrefix = "updater/model:main/";
// The best model's file under --out: the model alone, kept whenever validation top-1 improves.
inline constexpr const char* kBestModelFile = "model_best.npz";

// Loads the weights and batch statistics of `model` (shaped already) from `path`: a model file (keys
// as the model's own, e.g. "res2/a/conv1/W") or a trainer snapshot (the same under
// kSnapshotModelPrefix). Throws IOError for an unreadable file and ValueError or ShapeError, naming the
// file and the key, for weights of another model; the model is unchanged then.
void load_model_weights(links::Link& model, const std::string& path);

}  // namespace kusari::recipes
