// How exactly each wire dtype and averaging policy averages gradients over P ranks: ResNet-20's
// gradients recorded from 1024 micro-batches of 32 Fashion-MNIST images after 30 training steps, raw and
// loss-scaled (the largest power of two keeping them finite in float16), averaged by a one-process
// replay of the ring all-reduce (kusari's own wire and reduction code) and compared with the exact mean.
// One line per gradient set, dtype, policy and P (the communicator's default policy is "default"):
//   wire_precision_<dtype>_<policy>_P<n>: median_rel_err=X p90_rel_err=Y zero_fraction=Z overflow=N gradients=raw

#include <cstdio>
#include <filesystem>

#include <kusari/distributed/wire_precision.h>

#include "gradient_samples.h"

using namespace kusari;
namespace dist = kusari::distributed;

int main() {
  dist::install_abort_on_uncaught_exception();  // an error ends the program with its message
  if (!std::filesystem::exists(data::kFashionMnistDir)) {
    std::fprintf(stderr, "wire_precision: %s is absent (Debian package dataset-fashion-mnist)\n",
                 data::kFashionMnistDir);
    return 1;
  }
  const auto train = data::fashion_mnist(true);
  auto model = std::make_shared<L::models::ResNet>(20, 1, 10);
  const bench::GradientSamples samples = bench::record_gradient_samples(
      model, train->arrays()[0], train->arrays()[1], /*steps=*/30, /*batch=*/256, /*ranks=*/1024, /*micro=*/32,
      /*stride=*/16);
  std::printf("# %lld of ResNet-20's gradient elements per rank, loss scale %g\n",
              static_cast<long long>(samples.contributions[0].size()), samples.loss_scale);
  for (const auto& [set, scale] : {std::pair{"raw", 1.0f}, std::pair{"scaled", samples.loss_scale}}) {
    for (const Dtype wire : {Dtype::float16, Dtype::bfloat16, Dtype::float32}) {
      for (const dist::AveragingPolicy policy : dist::averaging_policies()) {
        const char* policy_name =
            policy == dist::CommunicatorOptions{}.averaging ? "default" : dist::averaging_policy_name(policy);
        for (const int ranks : {2, 32, 256, 1024}) {
          const bench::RankSubset subset = bench::first_ranks(samples, ranks, scale);
          const dist::WirePrecision p = dist::simulate_wire_average(subset.contributions, wire, policy, subset.max_abs);
          std::printf("wire_precision_%s_%s_P%d: median_rel_err=%.3g p90_rel_err=%.3g zero_fraction=%.3g overflow=%lld "
                      "gradients=%s\n",
                      dtype_name(wire).c_str(), policy_name, ranks, p.median_rel_err, p.p90_rel_err, p.zero_fraction,
                      static_cast<long long>(p.overflow), set);
          std::fflush(stdout);
        }
      }
    }
  }
}
