#include "data.h"

#include <algorithm>
#include <iostream>

#include <kusari/data/in_memory_labeled_image_dataset.h>
#include <kusari/data/labeled_image_dataset.h>
#include <kusari/data/memory_info.h>
#include <kusari/data/mnist.h>
#include <kusari/data/multithread_iterator.h>
#include <kusari/data/serial_iterator.h>
#include <kusari/data/shard_entries.h>
#include <kusari/distributed/scatter_dataset.h>

namespace kusari::recipes {
namespace {

namespace D = kusari::data;

// ImageNet's per-channel mean and standard deviation of pixels in [0, 1].
constexpr std::array<float, 3> kImagenetMean = {0.485f, 0.456f, 0.406f};
constexpr std::array<float, 3> kImagenetStddev = {0.229f, 0.224f, 0.225f};

D::BadImagePolicy bad_image_policy(const Settings& s) {
  return s.on_bad_image == "skip" ? D::BadImagePolicy::skip : D::BadImagePolicy::error;
}

// The papers' augmentation at --crop-size, 224 by default (training: random-resized-crop and flip,
// drawn from a stream of this rank's own; evaluation: shorter side 256 for 224, centre crop), or for the
// small preset one channel, the shorter side resized to --crop-size (28) and the centre square kept, so
// images of any size, aspect and colour model make the model's input.
D::ImageOptions image_options(const Settings& s, bool train, int rank) {
  D::ImageOptions options;
  options.on_bad_image = bad_image_policy(s);
  if (s.preset == Preset::fashion_mnist) {
    options.channels = 1;
    options.resize_shorter = options.crop_height = options.crop_width = s.crop_size;
    return options;
  }
  options.crop_height = options.crop_width = s.crop_size;
  options.mean = kImagenetMean;
  options.stddev = kImagenetStddev;
  if (train) {
    options.random_resized_crop = true;
    options.random_flip = true;
    // Shards index their examples from 0: without the rank every rank would draw the same crops.
    options.seed = static_cast<uint64_t>(s.seed) * 1000003 + static_cast<uint64_t>(rank);
  } else {
    options.resize_shorter = (s.crop_size * 256 + 112) / 224;  // 256 for 224, rounded to nearest
  }
  return options;
}

// This rank's part of the list `list_file`: shuffled equal-length shards for training, disjoint
// in-order parts for validation.
std::vector<D::LabeledPath> list_shard(const Settings& s, const std::string& list_file, bool train,
                                       const distributed::Communicator& comm) {
  return D::shard_entries(D::read_label_list(list_file, s.root), comm.rank(), comm.size(),
                          static_cast<uint64_t>(s.seed), train, train);
}

// Kumar et al.'s in-memory shard (the rank's files in RAM; the node's memory shared by its ranks), or
// images read from disk on every get().
D::DatasetPtr image_dataset(const Settings& s, std::vector<D::LabeledPath> entries, bool train,
                            const distributed::Communicator& comm) {
  const bool leader = comm.rank() == 0;
  D::ImageOptions options = image_options(s, train, comm.rank());
  if (s.in_memory == "off" && s.cache_decoded == 0) {
    return std::make_shared<D::LabeledImageDataset>(std::move(entries), options);
  }
  D::InMemoryOptions memory;
  const bool compressed = s.in_memory == "compressed" && s.cache_decoded == 0;
  memory.storage = compressed ? D::ImageStorage::compressed : D::ImageStorage::decoded;
  memory.shorter_side = s.cache_decoded;
  memory.available_bytes = D::available_memory_bytes() / comm.intra_size();  // every rank of the node loads at once
  const int64_t bytes = D::InMemoryLabeledImageDataset::estimate_bytes(entries, options, memory);
  memory.estimated_bytes = bytes;  // the constructor need not read every header again
  if (leader) {
    std::cout << (train ? "training" : "validation") << " shard in memory (" << (compressed ? "compressed" : "decoded")
              << "): " << bytes / (1 << 20) << " MiB on rank 0\n" << std::flush;
  }
  return std::make_shared<D::InMemoryLabeledImageDataset>(std::move(entries), options, memory);
}

// A repeating shuffled iterator (training) or one in-order pass (validation), fed by loader threads
// when there are any.
std::shared_ptr<D::Iterator> make_iterator(D::DatasetPtr dataset, int64_t batch, bool train, uint64_t seed,
                                           int64_t loaders) {
  if (loaders > 0) {
    return std::make_shared<D::MultithreadIterator>(std::move(dataset), batch, train, train, seed,
                                                    static_cast<int>(loaders));
  }
  return std::make_shared<D::SerialIterator>(std::move(dataset), batch, train, train, seed);
}

}  // namespace

ThreadPlan plan_threads(const Settings& s, int ranks_on_node, int64_t cores) {
  const int64_t share = std::max<int64_t>(1, cores / std::max(1, ranks_on_node));
  const bool images = !s.train_list.empty();
  ThreadPlan plan;
  const int64_t spare = s.threads > 0 ? std::max<int64_t>(0, share - s.threads) : share - 1;
  plan.loaders = s.loaders >= 0 ? s.loaders : (images ? std::min(spare, std::max<int64_t>(1, share / 4)) : 0);
  plan.compute = s.threads > 0 ? s.threads : std::max<int64_t>(1, share - plan.loaders);
  return plan;
}

RunData load_data(const Settings& s, const distributed::Communicator& comm, const ThreadPlan& threads) {
  RunData out;
  if (!s.train_list.empty()) {
    out.train = image_dataset(s, list_shard(s, s.train_list, true, comm), true, comm);
    out.val = image_dataset(s, list_shard(s, s.val_list, false, comm), false, comm);
    out.channels = s.preset == Preset::fashion_mnist ? 1 : 3;
  } else {
    out.train = distributed::scatter_dataset(D::mnist(s.dataset, true), comm, true, static_cast<uint64_t>(s.seed));
    out.val = distributed::scatter_dataset(D::mnist(s.dataset, false), comm, false, {}, false);
    out.channels = 1;
  }
  const int64_t local_batch = s.batchsize / comm.size();
  out.train_iter = make_iterator(out.train, local_batch, true, static_cast<uint64_t>(s.seed) + comm.rank(),
                                 threads.loaders);
  out.val_iter = make_iterator(out.val, s.eval_batchsize, false, 0, threads.loaders);
  return out;
}

}  // namespace kusari::recipes
