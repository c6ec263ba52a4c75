#pragma once
// Settings: what every recipe takes on its command line besides the paper's own hyperparameters
// (data, model, batch, precision, communication, output), with the defaults of a preset.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace kusari::recipes {

// The two scales every recipe runs at: the paper's ImageNet setting and a small one on Fashion-MNIST.
enum class Preset { imagenet, fashion_mnist };

// Iterations run before --profile's window opens (cuDNN's algorithm choice, the allocator's growth).
constexpr int64_t kProfileWarmup = 3;

// The preset named `name` ("imagenet" or "fashion_mnist"); throws FlagError otherwise.
Preset preset_from_name(const std::string& name);

// The common flags of a run; a recipe's defaults() fills them for a preset, the command line overrides.
struct Settings {
  Preset preset = Preset::imagenet;
  std::string preset_name = "imagenet";
  int64_t batchsize = 256;           // global minibatch B, split evenly over the ranks
  double epoch = 90;                 // passes over the training set (fractions allowed)
  int64_t max_iterations = 0;        // > 0: stop after this many iterations (schedules still follow epoch)
  int64_t log_interval = 0;          // > 0: a log entry every this many iterations (else every epoch)
  int64_t profile = 0;               // > 0: profile this many iterations after kProfileWarmup
  std::string out = "result";        // rank 0 writes log, plots, snapshots and args.json here
  std::string resume;                // a snapshot to continue from
  std::string initmodel;             // weights to start from: a model file or a trainer snapshot
  bool evaluate = false;             // evaluate the model of initmodel or resume, train nothing
  bool autoload = false;             // continue from the newest snapshot under out, if any
  double frequency = 1;              // a snapshot every this many epochs
  int64_t seed = 0;                  // parameters, shards, shuffling and augmentation
  int64_t threads = 0;               // compute threads per rank; 0: the node's cores less the loaders
  int64_t loaders = -1;              // image decoding threads per rank; -1: chosen from the cores
  std::string device = "cpu";        // cpu, cuda (the rank's local index), cuda:N or loopback:N
  std::string dtype = "float32";     // compute dtype (float32 master weights for half)
  bool cudnn_benchmark = false;      // cuDNN's convolution algorithms by timing (KUSARI_CUDNN_BENCHMARK's default)
  std::string memory_order = "auto";  // images before the model: auto, channels_last or row_major
  std::string wire_dtype = "float32";  // what gradients travel as
  std::string communicator = "hybrid"; // the all-reduce algorithm
  int64_t colors = 4;                // multi_color: rings at once
  int64_t ranks_per_node = 0;        // > 0: pretend nodes of this many ranks (hierarchical groups of k)
  int64_t chunk_bytes = 1 << 20;     // pipelining unit of the ring algorithms (wire bytes)
  int64_t pipeline_depth = 4;        // messages each ring keeps in flight
  int64_t hybrid_threshold = 1 << 20;  // hybrid: ring from this many wire bytes up
  int64_t bucket_bytes = 25 << 20;   // gradients fused per all-reduce (float32 bytes)
  bool double_buffering = false;     // apply the previous step's gradients while this step's travel
  std::string loss_scale = "none";   // none, dynamic, or a fixed scale
  double loss_scale_initial = 65536;     // dynamic: S at the start (2^16)
  int64_t loss_scale_interval = 2000;    // dynamic: clean steps before S doubles
  double loss_scale_max = 16777216;      // dynamic: S never grows past this (2^24)
  std::string train_list, val_list, root;  // ImageNet-format data: "path label" lists under root
  std::string dataset;               // IDX data: {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
  std::string in_memory = "off";     // off, compressed (file bytes in RAM) or decoded
  int64_t cache_decoded = 0;         // decoded in-memory images' shorter side (implies decoded)
  int64_t crop_size = 224;           // list images become crop_size x crop_size (cropped, or resized and cropped)
  std::string on_bad_image = "error";  // error or skip
  int64_t classes = 1000;            // output classes
  std::string model = "resnet50";
  int64_t unit = 1000;               // hidden units of the MLP
  std::string bn = "local";          // local (each rank's batch) or multi_node (the global batch)
  int64_t bn_batch = 32;             // examples per batch-normalization group (0: the local batch)
  double bn_eps = 2e-5;              // added to the variance
  double bn_decay = 0.9;             // weight of the old running averages
  bool bn_running_average = true;    // evaluation with running averages (else the last batch's)
  bool zero_gamma = false;           // the last BN of every residual branch starts at γ = 0
  double label_smoothing = 0;        // ε of the smoothed targets
  int64_t eval_batchsize = 250;      // examples per rank per evaluation batch
  double eval_interval = 1;          // evaluate every this many epochs (and at the end)
  std::string progress = "auto";     // bar, lines, off, or auto (a bar on a terminal, lines elsewhere)
  int64_t progress_interval = 100;   // iterations between the progress display's updates
};

// The settings both presets start from: ResNet-50 on ImageNet lists with 1000 classes, or ResNet-20 on
// Fashion-MNIST's IDX files (/usr/share/datasets/fashion-mnist) with 10 classes, 15 epochs, B = 4096;
// batch normalization over groups of 32 either way (the papers' 32 images per GPU).
Settings preset_settings(Preset preset);
// Binds the common flags to `settings` (whose current values become the defaults shown by --help), in
// the help groups Run, Data, Model, Device, Distributed and Output.
void add_common_flags(CLI::App& app, Settings& settings);
// Checks what single flags cannot (a flag pair that contradicts); throws FlagError.
void check_settings(const Settings& settings);

}  // namespace kusari::recipes
