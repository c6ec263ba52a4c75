#!/usr/bin/env bash
# The large-batch study (docs/large_batch.md): ResNet-20 on Fashion-MNIST under `mpiexec -n 2`, batch
# normalization over groups of 32 examples, the same epochs for every run: the small-batch baseline,
# plain momentum SGD at a large batch, and each recipe's fashion_mnist preset at that batch.
# Usage: scripts/large_batch_study.sh [RUN ...]   (default: every run below, in order)
# A finished run (its log in docs/large_batch/<run>/ reaches the last epoch) is skipped; an
# interrupted one resumes from its newest snapshot under $STUDY_SCRATCH (default study_runs/).
# Each finished run's log, args.json, printed output and provenance.json (the commit and CPU it ran at)
# go to docs/large_batch/<run>/. SEEDS-style reruns are runs of their own (jia2018_b4096_seed1, ...).
# EPOCHS (default 15) sets the epochs of every run without its own (the *_e30 runs: 30); KUSARI_BUILD_DIR
# the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${EPOCHS:-15}
build=${KUSARI_BUILD_DIR:-build}
scratch=${STUDY_SCRATCH:-study_runs}
baseline=(--model resnet20 --bn local --bn-batch 32)
declare -A recipe flags run_epochs
add() { recipe[$1]=$2; flags[$1]=$3; run_epochs[$1]=${4:-$epochs}; order+=("$1"); }
order=()
add baseline_b128 fashion_mnist "-b 128 ${baseline[*]} --seed 0"
add baseline_b128_seed1 fashion_mnist "-b 128 ${baseline[*]} --seed 1"
add plain_b4096 fashion_mnist "-b 4096 ${baseline[*]}"
add goyal2017_b4096 goyal2017 "-b 4096"
add goyal2017_b4096_no_zero_gamma goyal2017 "-b 4096 --no-zero-gamma"
add goyal2017_b4096_scaled_warmup goyal2017 "-b 4096 --warmup-epochs 0.833333 --lr-milestones 5,10,13.3333"
add akiba2017_b4096 akiba2017 "-b 4096"
add akiba2017_b4096_transition5 akiba2017 "-b 4096 --warmup-center 4 --warmup-period 2"
add akiba2017_b4096_zero_gamma akiba2017 "-b 4096 --zero-gamma"
add akiba2017_b4096_zero_gamma_late_decay akiba2017 "-b 4096 --zero-gamma --slow-start-epochs 10,13.3333,14.5"
add jia2018_b4096 jia2018 "-b 4096"
add kumar2017_b4096 kumar2017 "-b 4096"
add plain_b8192 fashion_mnist "-b 8192 ${baseline[*]}"
add goyal2017_b8192 goyal2017 "-b 8192"
add akiba2017_b8192 akiba2017 "-b 8192"
add jia2018_b8192 jia2018 "-b 8192"
# Twice the epochs for the baseline and goyal2017: does the large batch's gap close with training time?
add baseline_b128_e30 fashion_mnist "-b 128 ${baseline[*]} --seed 0" 30
add goyal2017_b4096_e30 goyal2017 "-b 4096" 30
# The other recipes and plain SGD at those 30 epochs, for the goal at equal epochs.
add jia2018_b4096_e30 jia2018 "-b 4096" 30
add akiba2017_b4096_e30 akiba2017 "-b 4096" 30
add plain_b4096_e30 fashion_mnist "-b 4096 ${baseline[*]}" 30
# akiba2017 with zero-γ and the slow start's decays at 2/3, 8/9 and 29/30 of the run (as the 15-epoch
# akiba2017_b4096_zero_gamma_late_decay row), at 30 epochs.
add akiba2017_b4096_zero_gamma_late_decay_e30 akiba2017 "-b 4096 --zero-gamma --slow-start-epochs 20,26.6667,29" 30
# jia2018 at today's numerics (the float16 wire's averaging since fb9942b; docs/large_batch/numerics_changes.json)
# with three seeds, and a third seed of the baseline: the spread of each.
add jia2018_b4096_seed0 jia2018 "-b 4096 --seed 0"
add jia2018_b4096_seed1 jia2018 "-b 4096 --seed 1"
add jia2018_b4096_seed2 jia2018 "-b 4096 --seed 2"
add baseline_b128_seed2 fashion_mnist "-b 128 ${baseline[*]} --seed 2"

runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=("${order[@]}")
# A build directory (not a copy of the executables alone) is brought up to date first.
[ ! -f "$build/build.ninja" ] || ninja -C "$build" recipes/fashion_mnist recipes/goyal2017 recipes/akiba2017 \
  recipes/jia2018 recipes/kumar2017 >/dev/null

# Whether docs/large_batch/<run>/log holds the last epoch.
finished() {
  /usr/bin/python3 - "docs/large_batch/$1/log" "${run_epochs[$1]}" <<'PY'
import json, sys
try:
    log = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(1)
sys.exit(0 if log and log[-1]["epoch"] >= float(sys.argv[2]) else 1)
PY
}

# The code and the processor a run ran on (docs/large_batch/<run>/provenance.json): the commit, with
# "-modified" when the library, the recipes or the build differed from it, and lscpu's model name.
provenance() {
  local commit cpu
  commit=$(git rev-parse --short=12 HEAD)
  git diff --quiet HEAD -- lib recipes meson.build || commit+=-modified
  cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
  printf '{\n "commit": "%s",\n "cpu": "%s",\n "cores": %s\n}\n' "$commit" "$cpu" "$(nproc)"
}

for run in "${runs[@]}"; do
  [ -n "${recipe[$run]:-}" ] || { echo "unknown run '$run' (expected one of: ${order[*]})" >&2; exit 2; }
  if finished "$run"; then echo "$run: finished, skipped"; continue; fi
  echo "$run: ${recipe[$run]} ${flags[$run]} --epoch ${run_epochs[$run]}"
  # shellcheck disable=SC2086
  mpiexec -n 2 "$build/recipes/${recipe[$run]}" --preset fashion_mnist --epoch "${run_epochs[$run]}" --threads 1 \
    --no-progress --autoload --out "$scratch/$run" ${flags[$run]} > "$scratch.$run.out" 2>&1 || {
    echo "$run failed; see $scratch.$run.out" >&2; exit 1; }
  mkdir -p "docs/large_batch/$run"
  cp "$scratch/$run/log" "$scratch/$run/args.json" "docs/large_batch/$run/"
  provenance "$run" > "docs/large_batch/$run/provenance.json"
  mv "$scratch.$run.out" "docs/large_batch/$run/stdout.txt"
done
