// libFuzzer target: a trainer snapshot from a killed, truncated or tampered job, autoloaded by a
// trainer that then trains on from it. The load is refused with a kusari::Error, or the loaded state
// trains; a crash, a hang or another exception is a finding. Each input is tried twice: as the file
// itself (the archive layer: a flipped bit fails its CRC), and read as entries (a name, '\0', a 4-byte
// little-endian size, that many bytes; repeated) written into an archive with valid CRCs, so that
// tampered arrays, counters and iterator orders reach the trainer.
// With KUSARI_FUZZ_WRITE_SEEDS=DIR the target instead writes valid snapshots of that trainer into DIR,
// in both forms (scripts/fuzz.sh makes the seed corpus so), and exits.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <kusari/kusari.h>
#include <kusari/serializers/zip.h>

#include "fuzz_input.h"

using namespace kusari;
namespace T = kusari::training;

namespace {

// A classifier with batch normalization (persistent statistics) trained by momentum SGD (velocity
// state) on 12 examples in shuffled batches of 4 (the iterator's order), logged every 2 iterations,
// until iteration `stop`, under `out`; its snapshot extension (autoload) writes every `snapshot_every`.
std::unique_ptr<T::Trainer> make_trainer(const std::string& out, int64_t stop, int64_t snapshot_every,
                                         bool compress) {
  auto net = std::make_shared<L::Sequential>();
  net->append(std::make_shared<L::Linear>(4, 8)).append(std::make_shared<L::BatchNormalization>(8));
  net->append(F::relu).append(std::make_shared<L::Linear>(8, 3));
  auto model = std::make_shared<L::Classifier>(net);
  auto optimizer = std::make_shared<optimizers::MomentumSGD>(0.1);
  optimizer->setup(model);
  std::vector<int32_t> labels;
  for (int32_t i = 0; i < 12; ++i) labels.push_back(i % 3);
  auto examples = std::make_shared<data::TupleDataset>(
      std::vector<Array>{Array::uniform({12, 4}, -1, 1, 5), Array::from_vector(labels, {12})});
  auto updater = std::make_shared<T::StandardUpdater>(
      std::make_shared<data::SerialIterator>(examples, 4, true, true, 3), optimizer, model);
  auto trainer = std::make_unique<T::Trainer>(updater, T::Trigger{static_cast<double>(stop), "iteration"}, out);
  trainer->extend(std::make_shared<T::LogReport>(T::LogReportOptions{.trigger = {2, "iteration"}, .filename = ""}));
  trainer->extend(T::snapshot({.autoload = true, .compress = compress}),
                  {static_cast<double>(snapshot_every), "iteration"});
  return trainer;
}

// The directory `name` of this process, emptied.
std::string fresh_directory(const std::string& name) {
  const std::filesystem::path dir = fuzz::process_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// The archive's entries in the input form of the second try.
std::string entries_of(const std::string& archive) {
  const serializers::ZipReader reader(archive);
  std::string out;
  for (const std::string& name : reader.names()) {
    const std::string data = reader.read(name);
    const auto size = static_cast<uint32_t>(data.size());
    out += name + '\0';
    for (int shift = 0; shift < 32; shift += 8) out += static_cast<char>((size >> shift) & 0xff);
    out += data;
  }
  return out;
}

// Writes the entries `input` holds (see the top of the file) as a zip archive at `path`.
void write_entries(const uint8_t* data, size_t size, const std::string& path) {
  serializers::ZipWriter writer(path);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  while (at < input.size()) {
    const size_t end = input.find('\0', at);
    if (end == std::string_view::npos || input.size() - end - 1 < 4) break;
    const std::string name(input.substr(at, end - at));
    uint32_t length = 0;
    for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(static_cast<uint8_t>(input[end + 1 + i])) << (8 * i);
    at = end + 5;
    const size_t taken = std::min<size_t>(length, input.size() - at);
    writer.add(name, input.substr(at, taken));
    at += taken;
  }
  writer.finish();
}

// Writes snapshots after 1 to 5 iterations (mid-epoch, at an epoch's end, past it), stored and
// deflated, into `seeds`, each also as its entries.
void write_seeds(const std::string& seeds) {
  std::filesystem::create_directories(seeds);
  for (bool compress : {false, true}) {
    const std::string out = fresh_directory("seeds");
    make_trainer(out, 5, 1, compress)->run();
    for (const auto& file : std::filesystem::directory_iterator(out)) {
      const std::filesystem::path seed =
          std::filesystem::path(seeds) / (file.path().filename().string() + (compress ? "_deflated" : "_stored"));
      std::filesystem::copy_file(file.path(), seed, std::filesystem::copy_options::overwrite_existing);
      if (!compress) std::ofstream(seed.string() + "_entries", std::ios::binary) << entries_of(file.path());
    }
  }
}

// Resumes the trainer from the snapshot in `out` and trains to iteration 8 (its own snapshots would
// come at 1000); a run that ends early without an error trained less than it was asked to: a finding.
void train_to_the_end(const std::string& out) {
  const std::unique_ptr<T::Trainer> trainer = make_trainer(out, 8, 1000, false);
  trainer->run();
  if (trainer->updater().iteration() < 8) {
    std::fprintf(stderr, "the resumed run stopped at iteration %lld of 8 without an error\n",
                 static_cast<long long>(trainer->updater().iteration()));
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  set_num_threads(1);
  if (const char* seeds = std::getenv("KUSARI_FUZZ_WRITE_SEEDS")) {
    write_seeds(seeds);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw = fresh_directory("trainer");
  std::ofstream(raw + "/snapshot_iter_1", std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  fuzz::expect_kusari_error_or_success([&] { train_to_the_end(raw); });
  const std::string rebuilt = fresh_directory("rebuilt");
  fuzz::expect_kusari_error_or_success([&] {
    write_entries(data, size, rebuilt + "/snapshot_iter_1");
    train_to_the_end(rebuilt);
  });
  return 0;
}
