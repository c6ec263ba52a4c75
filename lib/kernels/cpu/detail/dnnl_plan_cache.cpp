#include <kusari/kernels/cpu/detail/dnnl_plan_cache.h>

#include <list>
#include <map>
#include <mutex>
#include <utility>

namespace kusari::kernels::cpu {
namespace {

// Plans kept at most: far more than the distinct convolutions and poolings of one network's training.
constexpr size_t kCapacity = 512;

// A map from keys to plans that forgets the least recently used entry when full.
class LeastRecentlyUsedPlans {
 public:
  // The plan under `key`, made and inserted on a miss.
  std::shared_ptr<const DnnlPlan> get(const PlanKey& key, FunctionRef<DnnlPlan()> make) {
    const std::lock_guard lock(mutex_);
    if (auto found = index_.find(key); found != index_.end()) {
      order_.splice(order_.begin(), order_, found->second);
      return found->second->second;
    }
    auto plan = std::make_shared<const DnnlPlan>(make());
    order_.emplace_front(key, plan);
    index_.emplace(key, order_.begin());
    if (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return plan;
  }

 private:
  using Entry = std::pair<PlanKey, std::shared_ptr<const DnnlPlan>>;
  std::mutex mutex_;
  std::list<Entry> order_;  // most recently used first
  std::map<PlanKey, std::list<Entry>::iterator> index_;
};

}  // namespace

std::shared_ptr<const DnnlPlan> cached_plan(const PlanKey& key, FunctionRef<DnnlPlan()> make) {
  dnnl_engine();  // made first, so that it outlives the cached primitives at exit
  static LeastRecentlyUsedPlans plans;
  return plans.get(key, make);
}

}  // namespace kusari::kernels::cpu
