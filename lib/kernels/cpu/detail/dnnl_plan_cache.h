#pragma once
// Internal to the CPU backend: the process-wide cache of oneDNN plans (making a primitive costs far more
// than running a small one), keyed by everything a plan was made for.

#include <cstdint>
#include <memory>
#include <vector>

#include <kusari/core/function_ref.h>
#include <kusari/kernels/cpu/detail/dnnl_plan.h>

namespace kusari::kernels::cpu {

// What a plan is made for: the operation and its variant, the shapes, the geometry, the thread count.
using PlanKey = std::vector<int64_t>;

// The plan cached under `key`, made by `make` on first use; thread-safe. The least recently used plans
// are dropped beyond a few hundred (a plan in use elsewhere lives on until that use ends).
std::shared_ptr<const DnnlPlan> cached_plan(const PlanKey& key, FunctionRef<DnnlPlan()> make);

}  // namespace kusari::kernels::cpu
