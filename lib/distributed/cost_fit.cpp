// The least-squares fits of cost_fit.h.

#include <kusari/distributed/cost_fit.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <kusari/core/error.h>
#include <kusari/serializers/atomic_file.h>

namespace kusari::distributed::cost {
namespace {

// Throws ValueError naming `op` unless every time is positive and every amount ≥ 0.
void check_timings(const std::vector<Timing>& timings, const char* op) {
  for (const Timing& t : timings) {
    if (!(t.seconds > 0) || !(t.amount >= 0)) {
      throw ValueError(cat(op, ": expected positive times of amounts ≥ 0, got ", t.seconds, " s for ", t.amount));
    }
  }
}

// Σ w·a·t / Σ w·a·a with w = 1/t²: the weighted slope through the origin.
double slope_through_origin(const std::vector<Timing>& timings) {
  double aa = 0, at = 0;
  for (const Timing& t : timings) {
    const double w = 1 / (t.seconds * t.seconds);
    aa += w * t.amount * t.amount;
    at += w * t.amount * t.seconds;
  }
  return aa > 0 ? at / aa : 0;
}

// Every parameter of a cluster by its key in the file, as a reference into it.
std::map<std::string, std::function<double&(Cluster&)>> cluster_fields() {
  std::map<std::string, std::function<double&(Cluster&)>> fields{
      {"intra_alpha", [](Cluster& c) -> double& { return c.intra.alpha; }},
      {"intra_beta", [](Cluster& c) -> double& { return c.intra.beta; }},
      {"intra_beta_memory", [](Cluster& c) -> double& { return c.intra.beta_memory; }},
      {"inter_alpha", [](Cluster& c) -> double& { return c.inter.alpha; }},
      {"inter_beta", [](Cluster& c) -> double& { return c.inter.beta; }},
      {"inter_beta_memory", [](Cluster& c) -> double& { return c.inter.beta_memory; }},
      {"intra_beta_streams", [](Cluster& c) -> double& { return c.intra.beta_streams; }},
      {"inter_beta_streams", [](Cluster& c) -> double& { return c.inter.beta_streams; }},
  };
  const std::pair<const char*, WireCosts Cluster::*> wires[] = {
      {"float32", &Cluster::float32}, {"float16", &Cluster::float16}, {"bfloat16", &Cluster::bfloat16}};
  const std::pair<const char*, double WireCosts::*> passes[] = {{"pack", &WireCosts::pack},
                                                                {"accumulate", &WireCosts::accumulate},
                                                                {"add", &WireCosts::add},
                                                                {"unpack", &WireCosts::unpack},
                                                                {"max_abs", &WireCosts::max_abs}};
  const std::pair<const char*, double MpiFactors::*> factors[] = {{"mpi_allreduce", &MpiFactors::allreduce},
                                                                  {"mpi_allreduce_half", &MpiFactors::allreduce_half},
                                                                  {"mpi_reduce", &MpiFactors::reduce},
                                                                  {"mpi_reduce_half", &MpiFactors::reduce_half},
                                                                  {"mpi_bcast", &MpiFactors::bcast},
                                                                  {"mpi_from_bytes", &MpiFactors::from_bytes}};
  // (Plain pairs rather than structured bindings: clang 14 cannot capture those.)
  for (const auto& factor : factors) {
    double MpiFactors::*member = factor.second;
    fields[factor.first] = [member](Cluster& c) -> double& { return c.mpi.*member; };
  }
  for (const auto& wire : wires) {
    for (const auto& pass : passes) {
      WireCosts Cluster::*costs = wire.second;
      double WireCosts::*member = pass.second;
      fields[std::string(wire.first) + "_" + pass.first] = [costs, member](Cluster& c) -> double& {
        return (c.*costs).*member;
      };
    }
  }
  return fields;
}

// The keys of MpiFactors' flags, 0 or 1 (files saved before them lack them: 0).
std::map<std::string, bool MpiFactors::*> mpi_flags() {
  return {{"mpi_by_node", &MpiFactors::by_node}, {"mpi_open_mpi", &MpiFactors::open_mpi}};
}

// The cluster's whole-number fields by key.
std::map<std::string, int Cluster::*> cluster_counts() {
  return {{"ranks", &Cluster::ranks}, {"ranks_per_node", &Cluster::ranks_per_node},
          {"links_per_node", &Cluster::links_per_node}};
}

}  // namespace

void save_cluster(const Cluster& cluster, const std::string& path) {
  std::ostringstream out;
  out.precision(17);
  Cluster copy = cluster;
  for (const auto& [key, member] : cluster_counts()) out << key << ' ' << cluster.*member << '\n';
  for (const auto& [key, field] : cluster_fields()) out << key << ' ' << field(copy) << '\n';
  for (const auto& [key, flag] : mpi_flags()) out << key << ' ' << (cluster.mpi.*flag ? 1 : 0) << '\n';
  serializers::AtomicFile file(path);
  file.write(out.str());
  file.commit();
}

Cluster load_cluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IOError(cat("load_cluster: cannot read '", path, "'"));
  const auto fields = cluster_fields();
  const auto counts = cluster_counts();
  const auto flags = mpi_flags();
  Cluster cluster;
  std::map<std::string, int> seen;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::istringstream words(line);
    std::string key, rest;
    double value = 0;
    const bool parsed = static_cast<bool>(words >> key >> value) && !(words >> rest);
    const auto where = [&] { return cat("load_cluster: ", path, ":", number, ": "); };
    if (!parsed) throw ValueError(cat(where(), "expected 'key value', got '", line, "'"));
    if (seen[key]++) throw ValueError(cat(where(), "'", key, "' given twice"));
    if (const auto f = fields.find(key); f != fields.end()) {
      if (!(value >= 0)) throw ValueError(cat(where(), "expected '", key, "' ≥ 0, got ", value));
      f->second(cluster) = value;
    } else if (const auto b = flags.find(key); b != flags.end()) {
      if (value != 0 && value != 1) throw ValueError(cat(where(), "expected '", key, "' 0 or 1, got ", value));
      cluster.mpi.*(b->second) = value == 1;
    } else if (const auto c = counts.find(key); c != counts.end()) {
      if (!(value >= 1) || value != static_cast<int>(value)) {
        throw ValueError(cat(where(), "expected '", key, "' a positive whole number, got ", value));
      }
      cluster.*(c->second) = static_cast<int>(value);
    } else {
      throw ValueError(cat(where(), "unknown key '", key, "'"));
    }
  }
  std::vector<std::string> keys;
  for (const auto& entry : counts) keys.push_back(entry.first);
  for (const auto& entry : fields) keys.push_back(entry.first);
  // Files saved before links had β_streams lack those keys: 0, not measured.
  const std::set<std::string> optional{"intra_beta_streams", "inter_beta_streams"};
  for (const std::string& key : keys) {
    if (!seen.count(key) && !optional.count(key)) {
      throw ValueError(cat("load_cluster: ", path, ": expected a line for '", key, "', got none"));
    }
  }
  cluster.check();  // ranks_per_node dividing ranks, at most one of MPI's flags
  return cluster;
}

Link fit_link(const std::vector<Timing>& timings) {
  check_timings(timings, "fit_link");
  const auto [lo, hi] = std::minmax_element(timings.begin(), timings.end(),
                                            [](const Timing& a, const Timing& b) { return a.amount < b.amount; });
  if (timings.size() < 2 || lo->amount == hi->amount) {
    throw ValueError(cat("fit_link: expected timings of at least two distinct sizes, got ", timings.size(),
                         " timing(s)"));
  }
  // Weighted normal equations of t = α + β·b.
  double s = 0, sb = 0, sbb = 0, st = 0, sbt = 0;
  for (const Timing& t : timings) {
    const double w = 1 / (t.seconds * t.seconds);
    s += w;
    sb += w * t.amount;
    sbb += w * t.amount * t.amount;
    st += w * t.seconds;
    sbt += w * t.amount * t.seconds;
  }
  const double det = s * sbb - sb * sb;
  Link link{(st * sbb - sb * sbt) / det, (s * sbt - sb * st) / det};
  if (link.beta < 0) return {st / s, 0};  // no measurable bandwidth term: the weighted mean time
  if (link.alpha < 0) link = {0, slope_through_origin(timings)};
  return link;
}

double fit_per_element(const std::vector<Timing>& timings) {
  check_timings(timings, "fit_per_element");
  const bool any = std::any_of(timings.begin(), timings.end(), [](const Timing& t) { return t.amount > 0; });
  if (!any) throw ValueError("fit_per_element: expected a timing of a positive amount, got none");
  return slope_through_origin(timings);
}

}  // namespace kusari::distributed::cost
