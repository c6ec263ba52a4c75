#pragma once
// BatchNormalization: batch normalization with learned scale and shift and running statistics.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/functions/normalization.h>
#include <kusari/links/link.h>

namespace kusari::links {

class BatchNormalization;

// Options of BatchNormalization, set fluently: BatchNormalizationOptions(64).decay(0.9).zero_gamma().
class KUSARI_API BatchNormalizationOptions {
 public:
  // Normalisation of `size` channels (axis 1 of the input).
  explicit BatchNormalizationOptions(int64_t size) : size_(size) {}
  // Weight of the old running averages in each update (default 0.9).
  BatchNormalizationOptions& decay(double value) { decay_ = value; return *this; }
  // Added to the variance before the square root (default 2e-5).
  BatchNormalizationOptions& eps(double value) { eps_ = value; return *this; }
  // Whether to learn the scale gamma (default true; otherwise it is 1).
  BatchNormalizationOptions& use_gamma(bool value) { use_gamma_ = value; return *this; }
  // Whether to learn the shift beta (default true; otherwise it is 0).
  BatchNormalizationOptions& use_beta(bool value) { use_beta_ = value; return *this; }
  // Initializer of gamma (default ones).
  BatchNormalizationOptions& initial_gamma(Initializer init) { initial_gamma_ = std::move(init); return *this; }
  // Initializer of beta (default zeros).
  BatchNormalizationOptions& initial_beta(Initializer init) { initial_beta_ = std::move(init); return *this; }
  // Starts gamma at 0 (Goyal et al. 2017, for the last layer of a residual branch); false restores ones.
  BatchNormalizationOptions& zero_gamma(bool value = true);
  // Running averages as the cumulative average of the batches seen in finetune mode (decay 1 - 1/N).
  BatchNormalizationOptions& finetune(bool value = true) { finetune_ = value; return *this; }
  // What follows the normalisation, fused into its passes (default none; relu for BN followed by ReLU).
  BatchNormalizationOptions& activation(functions::Activation value) { activation_ = value; return *this; }
  // Whether evaluation uses the running averages (default) or the last training batch's statistics.
  BatchNormalizationOptions& use_running_average(bool value) { use_running_average_ = value; return *this; }
  // Ghost batch normalization: training statistics over consecutive groups of n examples (default 0:
  // over the whole local batch); see the class comment.
  BatchNormalizationOptions& group_size(int64_t n) { group_size_ = n; return *this; }

 private:
  friend class BatchNormalization;
  int64_t size_;
  double decay_ = 0.9;
  double eps_ = 2e-5;
  bool use_gamma_ = true;
  bool use_beta_ = true;
  Initializer initial_gamma_;
  Initializer initial_beta_;
  bool finetune_ = false;
  bool use_running_average_ = true;
  functions::Activation activation_ = functions::Activation::none;
  int64_t group_size_ = 0;
};

// Normalises each channel of x (N, C, ...). In training mode (in_training) it uses the batch statistics
// and folds them into the persistents avg_mean and avg_var (the latter unbiased: var * m / (m - 1) for m
// values per channel); in evaluation mode it uses avg_mean and avg_var. Parameters gamma and beta (when
// used); persistent N counts the batches averaged in finetune mode. Without running averages, the
// persistents last_mean and last_var keep the last training batch's E[x] and biased Var[x] for
// evaluation, and last_count (int64, shape ()) its elements per channel (N * H * W), so that
// statistics can be averaged over ranks weighted by it.
// With a group size n > 0 (ghost batch normalization, functions::ghost_batch_normalization), training
// normalises each group of n consecutive examples with its own statistics; the running averages fold
// in the mean of the groups' means and the mean of the groups' unbiased variances (var_g * m / (m - 1)
// for m values per channel in a group), while last_mean, last_var and last_count stay those of the
// whole local batch.
class KUSARI_API BatchNormalization : public Cloneable<BatchNormalization, Link> {
 public:
  // A layer configured by options.
  explicit BatchNormalization(const BatchNormalizationOptions& options);
  // A layer over `size` channels with the default options.
  explicit BatchNormalization(int64_t size) : BatchNormalization(BatchNormalizationOptions(size)) {}
  // gamma * (x - mean) / sqrt(var + eps) + beta with batch or stored statistics (see the class comment).
  Variable forward(const Variable& x) override;
  // The normalised x plus `residual` (x's shape), then the activation, in the normalisation's own passes
  // (a ResNet block's join: relu(bn(x) + shortcut) with activation relu).
  Variable forward(const Variable& x, const Variable& residual);
  // Switches the finetune mode on or off (N restarts the average when the mode is switched on).
  void set_finetune(bool finetune);
  // Number of channels.
  int64_t size() const { return size_; }
  // Weight of the old running averages.
  double decay() const { return decay_; }
  // What follows the normalisation (BatchNormalizationOptions::activation).
  functions::Activation activation() const { return activation_; }
  // Added to the variance before the square root.
  double eps() const { return eps_; }
  // Whether evaluation uses the running averages (otherwise the last training batch's statistics).
  bool use_running_average() const { return use_running_average_; }
  // Examples per ghost-batch group in training (0: the whole local batch).
  int64_t group_size() const { return group_size_; }

 protected:
  std::string type_name() const override { return "BatchNormalization"; }
  // Normalises x with the statistics of the training batch, adding residual when it is defined: its
  // own statistics (MultiNodeBatchNormalization overrides this to take them over every rank).
  virtual functions::BatchNormalizationResult normalize_batch(const Variable& x, const Variable& gamma,
                                                              const Variable& beta, const Variable& residual);

 private:
  // The parameter `name`, or when it is not used a constant filled with `value` on x's device.
  Variable param_or_constant(const std::string& name, double value, const Variable& x) const;
  // Ghost batch normalization of x in groups of group_size examples; folds the groups' statistics into
  // the running averages and returns the whole local batch's.
  functions::BatchNormalizationResult normalize_groups(const Variable& x, const Variable& gamma, const Variable& beta,
                                                       const Variable& residual);
  // Folds a batch's mean and biased variance over m values per channel into the running averages.
  void update_running_averages(const Array& mean, const Array& var, int64_t m);

  int64_t size_;
  double decay_;
  double eps_;
  bool finetune_;
  bool use_running_average_;
  functions::Activation activation_;
  int64_t group_size_;
};

}  // namespace kusari::links
