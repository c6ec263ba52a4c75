#!/usr/bin/env bash
# Runs every kusari benchmark and its libtorch twin (bench/libtorch) with 1 and 2 threads (ResNet-50
# with 2 only), each as its own process, and prints the ratios kusari samples/s / libtorch samples/s
# per thread count and best of threads against best of threads, plus ResNet-50's peak-memory ratio.
# Then the per-layer times of ResNet-20 (bench/layers.cpp) on 1 thread, side by side.
# The ratios come from ms/step (the batch is the same on both sides; samples/s is printed rounded).
# The timed windows are short so the whole run fits in a few minutes on a 2-core machine.
# On a machine shared with other work, OpenMP's spinning threads make the 2-thread runs of both
# libraries many times slower; OMP_WAIT_POLICY=PASSIVE bench/compare.sh measures without the spinning.
# Usage: bench/compare.sh [build-dir]   (default: build/ in the repository; set up and built if needed)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
workloads=(tiny_mlp mlp_mnist resnet20_fmnist resnet50)

[ -f "$build/build.ninja" ] || meson setup "$build" "$root"
targets=()
for w in "${workloads[@]}" layers; do targets+=("bench/$w" "bench/libtorch/torch_$w"); done
ninja -C "$build" "${targets[@]}" >/dev/null

# Timing flags per workload: warm-up steps, least timed steps, least timed seconds.
declare -A flags=(
  [tiny_mlp]="--warmup 200 --steps 1000 --seconds 1"
  [mlp_mnist]="--warmup 3 --steps 5 --seconds 1.5"
  [resnet20_fmnist]="--warmup 1 --steps 2 --seconds 2"
  [resnet50]="--warmup 1 --steps 2 --seconds 0"
)
declare -A thread_counts=([tiny_mlp]="1 2" [mlp_mnist]="1 2" [resnet20_fmnist]="1 2" [resnet50]="2")

declare -A ms peak name  # keyed "kusari|torch,workload,threads"; name by workload
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"
for w in "${workloads[@]}"; do
  for n in ${thread_counts[$w]}; do
    for lib in kusari torch; do
      if [ "$lib" = kusari ]; then program=$build/bench/$w; else program=$build/bench/libtorch/torch_$w; fi
      # shellcheck disable=SC2086  # the flags are meant to split
      line=$("$program" --threads "$n" ${flags[$w]})
      echo "[$n thread(s)] $line"
      if [ "$lib" = kusari ]; then name[$w]=${line%%:*}; fi
      ms[$lib,$w,$n]=$(sed -E 's/.*: ([0-9.]+) ms\/step.*/\1/' <<<"$line")
      if [[ $line == *peak_rss_mb=* ]]; then peak[$lib,$w,$n]=$(sed -E 's/.*peak_rss_mb=([0-9]+).*/\1/' <<<"$line"); fi
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# ratio A B: A / B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# fastest LIB W: the lowest ms/step of LIB on W over its thread counts.
fastest() {
  local low=inf
  for n in ${thread_counts[$2]}; do low=$(awk -v a="$low" -v b="${ms[$1,$2,$n]}" 'BEGIN { print (a == "inf" || b < a ? b : a) }'); done
  echo "$low"
}

echo
echo "kusari samples/s / libtorch samples/s:"
for w in "${workloads[@]}"; do
  summary="  ${name[$w]}:"
  for n in ${thread_counts[$w]}; do summary+=" ${n}t $(ratio "${ms[torch,$w,$n]}" "${ms[kusari,$w,$n]}"),"; done
  summary+=" best of threads $(ratio "$(fastest torch "$w")" "$(fastest kusari "$w")")"
  echo "$summary"
  for n in ${thread_counts[$w]}; do
    if [ -n "${peak[kusari,$w,$n]:-}" ]; then
      echo "  ${name[$w]} peak memory kusari / libtorch (${n}t): ${peak[kusari,$w,$n]} MB / ${peak[torch,$w,$n]} MB =" \
        "$(ratio "${peak[kusari,$w,$n]}" "${peak[torch,$w,$n]}")"
    fi
  done
done

echo
echo "ResNet-20 layers at batch 128, 1 thread: kusari ms, libtorch ms, libtorch ms / kusari ms"
# Runs the two one after the other, then pairs each kusari line with the libtorch line of the same
# layer (both programs print in one order).
kusari_layers=$("$build/bench/layers" --threads 1)
torch_layers=$("$build/bench/libtorch/torch_layers" --threads 1)
paste -d'|' <(echo "$kusari_layers") <(echo "$torch_layers") |
  awk -F'|' '{
    split($1, k, ": "); split(k[2], km, " "); split($2, t, ": "); split(t[2], tm, " ");
    printf "  %-24s %9.2f %9.2f %6.2f\n", k[1], km[1], tm[1], tm[1] / km[1]
  }'
