#include <kusari/distributed/detail/multi_node_synchronizer.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include <kusari/core/timeline.h>
#include <kusari/distributed/mpi_session.h>
#include <kusari/distributed/detail/parameter_agreement.h>
#include <kusari/distributed/detail/stall_inspector.h>
#include <kusari/kernels/routines.h>

namespace kusari::distributed {
namespace {

constexpr const char* kOp = "MultiNodeOptimizer";

// The parameters that receive gradients, in sorted name order.
std::vector<std::pair<std::string, Variable>> trainable_params(const links::Link& target) {
  std::vector<std::pair<std::string, Variable>> out;
  for (auto& [name, param] : target.namedparams()) {
    if (param.requires_grad()) out.emplace_back(name, param);
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

// `params` reordered: first those named in `order` (in that order), then the others as they come.
std::vector<std::pair<std::string, Variable>> reorder(const std::vector<std::pair<std::string, Variable>>& params,
                                                      const std::string& order) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < params.size(); ++i) index[params[i].first] = i;
  std::vector<bool> taken(params.size(), false);
  std::vector<std::pair<std::string, Variable>> out;
  std::istringstream in(order);
  for (std::string name; std::getline(in, name);) {
    auto it = index.find(name);
    if (it == index.end() || taken[it->second]) continue;
    taken[it->second] = true;
    out.push_back(params[it->second]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!taken[i]) out.push_back(params[i]);
  }
  return out;
}

// Host copies of the parameters' values (undefined where a parameter is not initialised yet).
std::vector<Array> copy_values(const std::vector<std::pair<std::string, Variable>>& params) {
  std::vector<Array> values;
  for (const auto& [name, param] : params) {
    const Array& data = param.data();
    if (!data.defined()) {
      values.emplace_back();
    } else {
      values.push_back(data.device().type == DeviceType::cpu ? data.copy() : data.to(Device::cpu()));
    }
  }
  return values;
}

// Whether every parameter holds exactly the bytes of `before` (both undefined counts as equal).
bool unchanged(const std::vector<std::pair<std::string, Variable>>& params, const std::vector<Array>& before) {
  for (size_t i = 0; i < params.size(); ++i) {
    const Array now = params[i].second.data();
    if (now.defined() != before[i].defined()) return false;
    if (!now.defined()) continue;
    const Array bytes = now.to(Device::cpu()).contiguous();
    if (std::memcmp(bytes.host_data(), before[i].host_data(), static_cast<size_t>(bytes.nbytes())) != 0) return false;
  }
  return true;
}

}  // namespace

MultiNodeSynchronizer::MultiNodeSynchronizer(Communicator comm, const MultiNodeOptions& options)
    : comm_(std::move(comm)),
      options_(options),
      thread_(mpi_thread_level() == ThreadLevel::multiple) {
  static std::once_flag warned;
  if (thread_.threaded() || !options_.overlap) return;
  std::call_once(warned, [] {
    std::fprintf(stderr, "kusari: MPI lacks MPI_THREAD_MULTIPLE, so the multi-node optimizer's all-reduces run on "
                         "the main thread and cannot overlap backward\n");
  });
}

MultiNodeSynchronizer::~MultiNodeSynchronizer() {
  for (const auto& [param, id] : hooks_) param.remove_gradient_hook(id);
}

void MultiNodeSynchronizer::hook(const std::string& name, const Variable& param) {
  if (!hooked_.insert(name).second) return;
  const int64_t id = param.register_gradient_hook([this, name](const Variable& p) { on_gradient(name, p); });
  hooks_.emplace_back(param, id);
}

void MultiNodeSynchronizer::attach(const std::shared_ptr<links::Link>& target) {
  detach();
  target_ = target;
  for (const auto& [name, param] : trainable_params(*target_)) hook(name, param);
}

void MultiNodeSynchronizer::detach() {
  thread_.wait_all();
  for (const auto& [param, id] : hooks_) param.remove_gradient_hook(id);
  hooks_.clear();
  hooked_.clear();
  arrival_order_.clear();
  arrived_.clear();
  buckets_.reset();
  current_.reset();
  previous_.reset();
  last_overlap_ = {};
  for (std::vector<Array>& cache : buffer_cache_) cache.clear();
  steps_ = 0;
  target_.reset();
}

void MultiNodeSynchronizer::on_gradient(const std::string& name, const Variable& param) {
  if (!buckets_) {
    if (arrived_.insert(name).second) arrival_order_.push_back(name);
    return;
  }
  if (!options_.overlap || options_.double_buffering || deferring_) return;
  const std::optional<size_t> slot = buckets_->find(name);
  if (!slot) return;
  if (!current_) current_ = new_transfer();
  Transfer& t = *current_;
  if (t.repeated || t.sources[*slot].defined()) {
    t.repeated = true;
    return;
  }
  t.sources[*slot] = staged_source(param.grad());
  const size_t bucket = buckets_->slots()[*slot].bucket;
  if (--t.missing[bucket] == 0) send_ready(t);
}

MultiNodeSynchronizer::Transfer MultiNodeSynchronizer::new_transfer() const {
  Transfer t;
  t.sources.resize(buckets_->slots().size());
  t.buffers.resize(buckets_->buckets().size());
  for (const Bucket& b : buckets_->buckets()) t.missing.push_back(static_cast<int64_t>(b.last - b.first));
  t.tasks = std::make_shared<std::vector<std::pair<Clock::time_point, Clock::time_point>>>(t.buffers.size());
  t.averaged = std::make_shared<std::vector<kernels::cuda::StreamMark>>(t.buffers.size());
  return t;
}

void MultiNodeSynchronizer::send_ready(Transfer& t) {
  while (t.next < t.missing.size() && t.missing[t.next] == 0) send_bucket(t, t.next++);
}

Array MultiNodeSynchronizer::bucket_buffer(size_t b) {
  std::vector<Array>& cache = buffer_cache_[options_.double_buffering ? steps_ % 2 : 0];
  cache.resize(buckets_->buckets().size());
  Array& cached = cache[b];
  // use_count 1: only the cache holds the storage (no transfer, task or installed gradient view).
  if (!cached.defined() || cached.storage().use_count() > 1 || cached.size() != buckets_->buckets()[b].elements) {
    // On the parameters' device: a GPU's gradients are packed and all-reduced there (through NCCL).
    const Device device = buckets_->slots()[buckets_->buckets()[b].first].param.data().device();
    cached = Array::empty({buckets_->buckets()[b].elements}, Dtype::float32, device);
  }
  return cached;
}

void MultiNodeSynchronizer::send_bucket(Transfer& t, size_t b) {
  const Bucket& bucket = buckets_->buckets()[b];
  const Array buffer = bucket_buffer(b);
  t.buffers[b] = buffer;
  std::vector<Array> sources(t.sources.begin() + static_cast<std::ptrdiff_t>(bucket.first),
                             t.sources.begin() + static_cast<std::ptrdiff_t>(bucket.last));
  // The gradients are final in the compute stream's queue here (nothing to wait for on the host).
  kernels::cuda::StreamMark gradients_final = kernels::cuda::mark_stream(buffer.device());
  t.ticket = thread_.submit([buckets = buckets_.get(), comm = comm_, b, sources = std::move(sources), buffer,
                             gradients_final = std::move(gradients_final), tasks = t.tasks, averaged = t.averaged] {
    (*tasks)[b].first = Clock::now();
    const kernels::cuda::CommunicationStreamScope on_communication_stream(buffer.device());
    kernels::cuda::wait_for(buffer.device(), gradients_final);
    // Blocks of the compute stream written or read here: not reused before this stream is done with them,
    // even when the optimizer drops them without installing (detach, an exception).
    kernels::cuda::mark_used_here(buffer);
    for (const Array& source : sources) kernels::cuda::mark_used_here(source);
    {
      const timeline::Span span("bucket ", b + 1, " pack");
      buckets->pack(b, sources, buffer);
    }
    const timeline::Span span("bucket ", b + 1, " allreduce");
    const CollectiveLabel named(buckets->buckets()[b].label);
    comm.allreduce_grad({buffer});
    (*averaged)[b] = kernels::cuda::mark_stream(buffer.device());
    (*tasks)[b].second = Clock::now();
  });
}

void MultiNodeSynchronizer::send_rest(Transfer& t) {
  t.backward_end = Clock::now();
  const std::vector<BucketSlot>& slots = buckets_->slots();
  for (size_t b = t.next; b < t.missing.size(); ++b) {
    const Bucket& bucket = buckets_->buckets()[b];
    for (size_t i = bucket.first; i < bucket.last; ++i) {
      if (!t.sources[i].defined()) t.sources[i] = staged_source(slots[i].param.grad());
    }
    t.missing[b] = 0;
  }
  send_ready(t);
}

double MultiNodeSynchronizer::install(const Transfer& t) {
  thread_.wait(t.ticket);
  // With a communication thread, what backward did not hide is update()'s wait for it; without one,
  // every all-reduce ran on the main thread and hid nothing.
  const auto began_in_backward = [&](const auto& task) { return thread_.threaded() && task.first < t.backward_end; };
  double exposed = std::chrono::duration<double>(Clock::now() - update_start_).count();
  if (!thread_.threaded()) {
    exposed = 0;
    for (const auto& [start, end] : *t.tasks) exposed += std::chrono::duration<double>(end - start).count();
  }
  last_overlap_ = {static_cast<int>(t.tasks->size()),
                   static_cast<int>(std::count_if(t.tasks->begin(), t.tasks->end(), began_in_backward)), exposed};
  for (size_t b = 0; b < t.buffers.size(); ++b) {
    const timeline::Span span("bucket ", b + 1, " install");
    kernels::cuda::wait_for(t.buffers[b].device(), (*t.averaged)[b]);
    buckets_->install(b, t.buffers[b]);
  }
  return t.loss_scale;
}

bool MultiNodeSynchronizer::first_update() {
  std::vector<std::pair<std::string, Variable>> params = trainable_params(*target_);
  const std::vector<std::pair<std::string, Variable>> all_params = target_->namedparams();
  const std::vector<Array> own = copy_values(all_params);
  std::string order;
  bool identical = false;
  thread_.run([&] {
    require_same_parameters(comm_, all_params, kOp);
    order = comm_.bcast_obj(join_lines(arrival_order_), 0);
    comm_.bcast_data(*target_, 0);
    const Array changed = Array::full({1}, unchanged(all_params, own) ? 0.0 : 1.0, Dtype::float32, Device::cpu());
    identical = comm_.allreduce(changed).data<float>()[0] == 0.0f;
  });
  buckets_ = std::make_unique<GradientBuckets>(reorder(params, order), options_.bucket_bytes);
  for (const auto& [name, param] : params) hook(name, param);
  arrival_order_.clear();
  arrived_.clear();
  current_.reset();
  return identical;
}

void MultiNodeSynchronizer::require_unchanged_parameters() const {
  const std::vector<std::pair<std::string, Variable>> now = trainable_params(*target_);
  if (now.size() != buckets_->slots().size()) {
    throw ValueError(cat(kOp, ": the target had ", buckets_->slots().size(),
                         " trainable parameters at the first update and has ", now.size(),
                         " now; initialise every parameter before the first update"));
  }
  std::unordered_map<std::string, const VariableNode*> nodes;
  for (const auto& [name, param] : now) nodes.emplace(name, param.node().get());
  for (const BucketSlot& slot : buckets_->slots()) {
    const auto it = nodes.find(slot.name);
    if (it != nodes.end() && it->second == slot.param.node().get()) continue;
    throw ValueError(cat(kOp, ": parameter '", slot.name, "' is not the variable it was at the first update ",
                         it == nodes.end() ? "(it is gone)" : "(it was replaced)",
                         ", so its gradient would no longer be averaged; replace parameters before the first update "
                         "or call setup(link) again"));
  }
}

std::optional<double> MultiNodeSynchronizer::synchronize(double loss_scale) {
  if (!target_) throw ValueError(cat(kOp, ": no target; call setup(link) first"));
  if (deferring_ > 0) throw ValueError(cat(kOp, ": update() inside no_sync(); leave the scope before the update"));
  update_start_ = Clock::now();
  ++steps_;
  if (!buckets_) {
    // Gradients computed from parameters that the broadcast changed on some rank are discarded;
    // when every rank already held rank 0's values they are as good as any later step's.
    if (!first_update() || options_.double_buffering) {
      target_->cleargrads();
      return std::nullopt;
    }
    Transfer t = new_transfer();
    t.loss_scale = loss_scale;
    send_rest(t);
    return install(t);
  }
  require_unchanged_parameters();
  if (options_.double_buffering) {
    Transfer t = new_transfer();
    t.loss_scale = loss_scale;
    send_rest(t);
    std::optional<double> ready;
    if (previous_) {
      ready = install(*previous_);
    } else {
      target_->cleargrads();
    }
    previous_ = std::move(t);
    return ready;
  }
  Transfer t = current_ ? std::move(*current_) : new_transfer();
  current_.reset();
  if (t.repeated) {
    thread_.wait(t.ticket);
    t = new_transfer();
  }
  t.loss_scale = loss_scale;
  send_rest(t);
  return install(t);
}

}  // namespace kusari::distributed
