#!/usr/bin/env bash
# The check of the CUDA backend on a lent GPU machine, in two steps.
#   scripts/gpu_check.sh prepare   here: builds with -Dcuda=enabled and packs the device programs, the
#                                  library and every shared library they link that the GPU machine
#                                  lacks (MPICH, oneDNN, OpenBLAS, TurboJPEG, ...) into
#                                  gpu_carry/bundle.tar.xz (about 25 MB; git ignores gpu_carry/).
#   scripts/gpu_check.sh run       there (the device tool's run, carrying gpu_carry): unpacks the
#                                  bundle, finds CUDA's libraries (the toolkit's, PyTorch's wheels'
#                                  cuDNN, cuBLAS and NCCL), and runs these steps, their outputs packed
#                                  into $OUT/logs.tar.gz (the device tool brings back 8 files at most;
#                                  $OUT defaults to gpu_check_out/), the figures into $OUT/bench.txt and
#                                  $OUT/recipes.txt, in this order: the caching allocator's expandable
#                                  segments (the rest runs without them where they fail), the CUDA
#                                  device suite (every kernel against the CPU's, device memory handed
#                                  out as NaN), ResNet-20 on
#                                  cuda:0 against the CPU iteration by iteration (profiled: its GPU
#                                  kernels), the bench: ResNet-50 steps at batch 256 in float32, float16
#                                  and bfloat16 channels-last with the profiler's table of the float16
#                                  step and the float16 step's peak memory without the allocator's
#                                  expandable segments, beside PyTorch's float32, AMP and bfloat16 AMP
#                                  steps in the same run, and kusari's memory-bound kernels beside PyTorch's same
#                                  operations (bench/kernels, each against its run's cudaMemcpy, paired
#                                  in a table at the end of bench.txt); the NCCL path of the communicator
#                                  and the float16 wire's automatic factors made on the device; every
#                                  paper's recipe on synthetic ImageNet JPEGs (goyal2017 and jia2018 in
#                                  float32 and float16, jia2018 in bfloat16, the others and jia2018's
#                                  AlexNets in float16: s/iteration, images/s, loss finite); the
#                                  device matrix on cuda:0 (fashion_mnist and jia2018, every dtype and
#                                  model against the CPU, snapshots across); and the host suites with
#                                  every array on cuda:0, four processes at a time (each step's line
#                                  says how long it took). All within
#                                  GPU_CHECK_SECONDS (default 570; a step that would start later is
#                                  skipped); GPU_CHECK_SKIP, a bash regular expression, skips the steps
#                                  it matches (a second call's way past those the first ran).
# The last line of `run` is "N passed, N failed, N skipped" over the steps it checked (the bench lines
# are figures, passed when every program ran; the one-rank NCCL test is skipped unless it fails).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${KUSARI_BUILD_DIR:-build}
carry=gpu_carry
# The programs that run on the GPU, as paths under the build directory.
# The host suites that also run on the loopback device (test/meson.build's loopback_suites): here they
# run with every array on cuda:0 (KUSARI_TEST_DEVICE), each function's forward and backward included.
device_suites=(activation arithmetic array_manipulation autograd convolution ghost_batch_normalization initializers
               link links_layers loss matmul mixed_precision models noise normalization npz optimizers pooling random
               reduction routines)
recipe_names=(fashion_mnist goyal2017 akiba2017 jia2018 kumar2017)
programs=(test/test_cuda_device test/test_cuda_nccl test/test_wire_precision bench/resnet50 bench/kernels
          "${recipe_names[@]/#/recipes/}"
          "${device_suites[@]/#/test/test_}")

prepare() {
  set -e
  [ -f "$build/build.ninja" ] || meson setup "$build" --wrap-mode=nodownload -Dcuda=enabled >/dev/null
  grep -q "KUSARI_WITH_CUDA" "$build/build.ninja" || { echo "$build is not configured with -Dcuda=enabled" >&2; exit 1; }
  ninja -C "$build" "${programs[@]}" >/dev/null
  local stage
  stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib" "$carry"
  for p in "${programs[@]}"; do cp "$build/$p" "$stage/bin/"; done
  # Every library the programs link except the C and C++ runtimes (the GPU machine's are newer) and
  # CUDA's own (it has its own toolkit and PyTorch's wheels).
  ldd "${programs[@]/#/$build/}" | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|librt|libdl|libgcc_s|libstdc\+\+)\.so|/usr/local/cuda/' |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  strip --strip-unneeded "$stage"/lib/libkusari.so* "$stage"/bin/*
  cp bench/torch_resnet50_gpu.py bench/torch_kernels_gpu.py bench/kernel_pairs.py "$stage/bin/"
  tar -C "$stage" -cf - bin lib | xz -T0 -6 > "$carry/bundle.tar.xz.tmp"
  mv "$carry/bundle.tar.xz.tmp" "$carry/bundle.tar.xz"
  rm -rf "$stage"
  echo "$carry/bundle.tar.xz: $(du -h "$carry/bundle.tar.xz" | cut -f1) (${programs[*]})"
}

run() {
  # The whole check, unpacking included, ends within GPU_CHECK_SECONDS (default 570: the device tool's
  # 600 less the packing of the logs), so that its logs come back: a step that would start with too
  # little time left is skipped and said.
  local budget=${GPU_CHECK_SECONDS:-570}
  local deadline=$((SECONDS + budget)) step_skipped=0
  local out=${OUT:-gpu_check_out} here
  here=$(mktemp -d)
  mkdir -p "$out"
  [ -f "$carry/bundle.tar.xz" ] || { echo "no $carry/bundle.tar.xz: run 'scripts/gpu_check.sh prepare' first"; echo "0 passed, 1 failed"; exit 1; }
  python3 -c "import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$carry/bundle.tar.xz" "$here"
  # CUDA's libraries: the toolkit's, and the nvidia-* wheels beside PyTorch.
  local wheels
  wheels=$(python3 -c "import glob, os, nvidia; print(':'.join(sorted(d for p in nvidia.__path__ for d in glob.glob(os.path.join(p, '*', 'lib')))))" 2>/dev/null || true)
  # Only kusari's programs get the bundled libraries (python3 keeps its own libz, libgomp, ...).
  local library_path="$here/lib:/usr/local/cuda/lib64:${wheels}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "CUDA libraries searched: $library_path"; } > "$out/gpu.txt" 2>&1 || true
  local passed=0 failed=0 skipped=0 missing logs="$here/logs"
  mkdir -p "$logs"
  # The logs come back even when a step hangs into the device tool's limit.
  trap "tar -C '$here' -czf '$out/logs.tar.gz' logs; rm -rf '$here'" EXIT
  missing=$(LD_LIBRARY_PATH="$library_path" ldd "$here"/bin/* 2>/dev/null | grep "not found" | sort -u || true)
  # libcublasLt is opened by the first product on a GPU, so ldd does not list it: look for it too.
  local directory found_cublaslt=
  for directory in ${library_path//:/ }; do [ -e "$directory/libcublasLt.so.13" ] && found_cublaslt=1; done
  [ -n "$found_cublaslt" ] || missing+=" libcublasLt.so.13 => not found"
  if [ -n "$missing" ]; then
    echo "libraries not found: $missing" | tee "$out/missing.txt"
    echo "0 passed, 1 failed"
    return 1
  fi
  seconds_left() { echo $((deadline - SECONDS)); }
  # Counts the step `name` as skipped, saying why; step_skipped=1.
  skip() {
    step_skipped=1
    skipped=$((skipped + 1))
    echo "$1: skipped ($2)"
  }
  # Whether step `name` may start: not when its name matches GPU_CHECK_SKIP (a bash regular expression,
  # unanchored: steps a previous call ran) or under 30 s are left (each counted as skipped, and
  # said). Sets step_limit: STEP_SECONDS (default 240) or what is left of the budget less timeout's
  # 10 s of grace, whichever is less.
  admit() {
    local name=$1 left=$(( $(seconds_left) - 10 ))
    step_skipped=0
    step_limit=${STEP_SECONDS:-240}
    if [[ -n ${GPU_CHECK_SKIP:-} && $name =~ $GPU_CHECK_SKIP ]]; then
      skip "$name" GPU_CHECK_SKIP
      return 1
    fi
    if [ "$left" -lt 30 ]; then
      skip "$name" "the check's $budget s are spent"
      return 1
    fi
    [ "$left" -lt "$step_limit" ] && step_limit=$left
    return 0
  }
  # Runs a command within step_limit seconds, its output into $logs/<name>.log; kusari's programs run
  # with the bundled libraries.
  run_limited() {
    local name=$1
    shift
    LD_LIBRARY_PATH="$library_path" timeout -k 10 "$step_limit" "$@" > "$logs/$name.log" 2>&1
  }
  # Counts step `name` as passed or failed by its status, saying so with how long it took (and the end
  # of its output when it failed). Returns its success.
  report() {
    local name=$1 status=$2 seconds=$3
    if [ "$status" -eq 0 ]; then
      passed=$((passed + 1))
      echo "$name: passed ($seconds s)"
      return 0
    fi
    failed=$((failed + 1))
    echo "$name: failed after $seconds s; the end of its output:"
    tail -40 "$logs/$name.log"
    return 1
  }
  # Runs one step (a name, then its command) if admitted. Returns the step's success.
  step() {
    local name=$1 started=$SECONDS status=0
    admit "$name" || return 1
    run_limited "$@" || status=$?
    report "$name" "$status" $((SECONDS - started))
  }
  # Starts one step in the background if admitted, while at most `jobs` others run; steps_joined reports
  # every step started this way once all have ended.
  background_names=()
  step_in_background() {
    local jobs=$1 name=$2
    shift 2
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    admit "$name" || return 0  # after the wait for a slot, so that its limit is counted from its start
    background_names+=("$name")
    ( started=$SECONDS; status=0; run_limited "$name" "$@" || status=$?
      echo "$status $((SECONDS - started))" > "$logs/$name.status" ) &
  }
  steps_joined() {
    wait
    local name status seconds
    for name in "${background_names[@]}"; do
      read -r status seconds < "$logs/$name.status" || { status=1; seconds=0; }
      report "$name" "$status" "$seconds" || true
    done
    background_names=()
  }
  # step for a python3 program: the system's libraries, not the bundle's.
  step_python() {
    local saved=$library_path
    library_path=${LD_LIBRARY_PATH:-}
    step "$1" python3 "${@:2}"
    library_path=$saved
  }
  # The caching allocator's expandable segments (the driver's virtual memory calls) have not run on a GPU
  # before: where their device case fails, the rest of the check runs without them, and says so, so that
  # one fault there does not cost every later step.
  if ! step expandable_segments "$here/bin/test_cuda_device" --test-case='*KUSARI_CUDA_EXPANDABLE*' &&
    [ "$step_skipped" = 0 ]; then
    export KUSARI_CUDA_EXPANDABLE=0
    echo "expandable_segments failed: the rest of the check runs with KUSARI_CUDA_EXPANDABLE=0"
  fi
  # Every block the caching allocator hands out filled with NaN first (KUSARI_POISON): a kernel that
  # leaves its output unwritten fails instead of passing on an earlier result.
  KUSARI_POISON=1 step cuda_device "$here/bin/test_cuda_device" --duration=true
  tail -3 "$logs/cuda_device.log" 2>/dev/null
  # A tiny IDX set, and the same 2 epochs on the CPU and on the GPU: the losses agree to float32's
  # reordered sums.
  python3 test/idx_set.py "$here/data" 320 64
  local recipe=("$here/bin/fashion_mnist" --preset fashion_mnist --model resnet20 --dataset "$here/data"
                --batchsize 32 --epoch 2 --log-interval 1 --threads 4 --no-progress)
  step recipe_cpu "${recipe[@]}" --device cpu --out "$here/recipe_cpu"
  KUSARI_PROFILE=1 step recipe_cuda "${recipe[@]}" --device cuda:0 --out "$here/recipe_cuda"
  grep -sA8 "kusari profile" "$logs/recipe_cuda.log" || true
  # The first iterations agree to float32's reordered sums (later ones drift apart as training amplifies
  # them: printed, not held); skipped where either run was.
  if [ -f "$here/recipe_cpu/log" ] && [ -f "$here/recipe_cuda/log" ]; then
    step_python recipe_agreement - "$here/recipe_cpu/log" "$here/recipe_cuda/log" <<'PY'
import json, sys
cpu, gpu = (json.load(open(p)) for p in sys.argv[1:3])
assert len(cpu) == len(gpu) > 4, (len(cpu), len(gpu))
for i, (a, b) in enumerate(zip(cpu, gpu)):
    print(f"iteration {a['iteration']} main/loss: cpu {a['main/loss']:.6f}, cuda {b['main/loss']:.6f}")
    if i < 4:
        assert abs(a["main/loss"] - b["main/loss"]) <= 2e-3 * max(1.0, abs(a["main/loss"])), a["iteration"]
PY
  else
    skip recipe_agreement "a recipe run before it did not run"
  fi
  cat "$logs/recipe_agreement.log" 2>/dev/null
  # Both sides time cuDNN's algorithms once per shape (cudnn.benchmark), and their lines say so.
  step bench_float32 "$here/bin/resnet50" --device cuda:0 --dtype float32 --warmup 3 --steps 10 --seconds 0 \
    --cudnn-benchmark 1
  step bench_float16 "$here/bin/resnet50" --device cuda:0 --dtype float16 --channels-last 1 --warmup 3 --steps 10 \
    --seconds 0 --cudnn-benchmark 1
  step bench_bfloat16 "$here/bin/resnet50" --device cuda:0 --dtype bfloat16 --channels-last 1 --warmup 3 --steps 10 \
    --seconds 0 --cudnn-benchmark 1
  step bench_float16_profile "$here/bin/resnet50" --device cuda:0 --dtype float16 --channels-last 1 --warmup 3 \
    --steps 5 --seconds 0 --profile 1 --cudnn-benchmark 1
  # The float16 step's peak memory with a device allocation for each large block, as before the caching
  # allocator's expandable segments (its line in bench.txt says so).
  KUSARI_CUDA_EXPANDABLE=0 step segments_float16 "$here/bin/resnet50" --device cuda:0 --dtype float16 \
    --channels-last 1 --warmup 3 --steps 5 --seconds 0 --cudnn-benchmark 1
  STEP_SECONDS=300 step_python bench_torch "$here/bin/torch_resnet50_gpu.py" float32 amp amp_bf16 --warmup 3 --steps 10 \
    --cudnn-benchmark 1
  # kusari's own memory-bound kernels at ResNet-50's float16 channels-last shapes beside the same operations
  # in PyTorch, each side's rates against its own cudaMemcpy, and the two paired in a table.
  step bench_kernels "$here/bin/kernels" --device cuda:0 --dtype float16 --channels-last 1
  step_python bench_kernels_torch "$here/bin/torch_kernels_gpu.py" --dtype float16 --channels-last 1
  { cat "$logs"/bench_*.log 2>/dev/null | grep "ms/step"
    grep -s "ms/step" "$logs/segments_float16.log" | sed 's/^/KUSARI_CUDA_EXPANDABLE=0 /'; } | tee "$out/bench.txt"
  cat "$logs"/bench_kernels*.log 2>/dev/null | python3 "$here/bin/kernel_pairs.py" | tee -a "$out/bench.txt"
  grep -sv "ms/step" "$logs/bench_float16_profile.log" > "$out/profile_float16.txt"
  # One rank, as an MPI singleton (the GPU machine has no mpiexec): the NCCL path runs, but a sum over one
  # rank is the identity, so it counts as skipped unless it fails.
  step cuda_nccl "$here/bin/test_cuda_nccl" && { passed=$((passed - 1)); skipped=$((skipped + 1)); }
  # The float16 wire's automatic factors made on cuda:0 against the host's, bit for bit.
  step wire_scaling "$here/bin/test_wire_precision" --test-case="automatic_float16_scaling*"
  # Every paper's recipe on synthetic ImageNet JPEGs, each dtype, a few dozen iterations (the JPEGs only
  # where a recipe can still run and GPU_CHECK_SKIP leaves the first).
  if [ "$(seconds_left)" -ge 90 ] && ! [[ -n ${GPU_CHECK_SKIP:-} && imagenet_goyal2017_float32 =~ $GPU_CHECK_SKIP ]]; then
    python3 scripts/synthetic_imagenet.py "$here/imagenet" 3072 512
  fi
  # One recipe (its name, then a run name and flags) for 30 iterations of batch 128 on the JPEGs.
  local imagenet_runs=0
  imagenet_step() {
    local recipe=$1 run=$2
    shift 2
    if [ ! -f "$here/imagenet/train.txt" ]; then
      skip "imagenet_$run" "no JPEGs: too little time was left to make them, or GPU_CHECK_SKIP"
      return
    fi
    step "imagenet_$run" "$here/bin/$recipe" --preset imagenet --train "$here/imagenet/train.txt" \
      --val "$here/imagenet/val.txt" --root "$here/imagenet" --device cuda:0 --batchsize 128 --max-iterations 30 \
      --log-interval 10 --eval-batchsize 128 --no-progress --out "$here/imagenet_$run" "$@"
    [ "$step_skipped" = 1 ] || imagenet_runs=$((imagenet_runs + 1))
  }
  # goyal2017 and jia2018 (SGD against LARS: their iterations are to be within 5% at one dtype) in
  # float32 and float16, jia2018 in bfloat16 too; akiba2017 and kumar2017 in float16 (each dtype's path
  # is the library's, shared by every recipe, and the device matrix runs every dtype through two).
  local name dtype
  for dtype in float32 float16; do
    for name in goyal2017 jia2018; do imagenet_step "$name" "${name}_$dtype" --dtype "$dtype"; done
  done
  imagenet_step jia2018 jia2018_bfloat16 --dtype bfloat16
  for name in akiba2017 kumar2017; do imagenet_step "$name" "${name}_float16" --dtype float16; done
  for name in alexnet_bn alexnet_pool5_bn; do  # jia2018's other models, in its float16
    imagenet_step jia2018 "jia2018_$name" --model "$name" --dtype float16
  done
  if [ "$imagenet_runs" -gt 0 ]; then
    step_python imagenet_recipes - "$here" "$imagenet_runs" <<'PY'
import glob, json, math, os, sys
failed = False
outs = [d for d in sorted(glob.glob(os.path.join(sys.argv[1], "imagenet_*"))) if os.path.isdir(d)]
if len(outs) != int(sys.argv[2]):
    print(f"expected {sys.argv[2]} recipe runs, found {len(outs)}")
    failed = True
for out in outs:
    if not os.path.exists(os.path.join(out, "log")):
        print(f"{os.path.basename(out)[9:]}: no log")
        failed = True
        continue
    log = json.load(open(os.path.join(out, "log")))
    losses = [e["main/loss"] for e in log if "main/loss" in e]
    seconds = log[-1]["time_per_iteration"]
    finite = all(math.isfinite(v) for v in losses)
    failed = failed or not finite or not losses
    print(f"{os.path.basename(out)[9:]}: {seconds:.3f} s/iteration, {128 / seconds:.0f} images/s, "
          f"main/loss {' '.join(f'{v:.4f}' for v in losses)}{'' if finite else ' NOT FINITE'}")
sys.exit(1 if failed else 0)
PY
    tee "$out/recipes.txt" < "$logs/imagenet_recipes.log"
  fi
  # The recipes through wrappers that give them the bundled libraries (python3 keeps its own).
  mkdir -p "$here/wrapped"
  for name in "${recipe_names[@]}"; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$library_path" "$here/bin/$name" > "$here/wrapped/$name"
    chmod +x "$here/wrapped/$name"
  done
  # Two recipes on the GPU (every one runs on loopback:0 in CI): fashion_mnist's and jia2018's, whose
  # imagenet part brings ResNet-50 and the AlexNets.
  STEP_SECONDS=240 step_python device_matrix test/recipe_device_matrix.py - cuda:0 "$here/wrapped/fashion_mnist" \
    "$here/wrapped/jia2018"
  tail -5 "$logs/device_matrix.log" 2>/dev/null
  # Last, as the longest: the host suites with every array on cuda:0, four processes at a time on the GPU.
  local suite
  for suite in "${device_suites[@]}"; do
    step_in_background 4 "on_cuda_$suite" env KUSARI_TEST_DEVICE=cuda:0 KUSARI_POISON=1 "$here/bin/test_$suite"
  done
  steps_joined
  # Where cuDNN or the expandable segments were not used (each process says so once on stderr): the slow
  # or wasteful paths to look at first.
  echo "Fallbacks (cuDNN, the allocator: processes that said so, by message):"
  grep -shE "kusari: (conv2d: no cuDNN engine plan|batch_normalization: .* declined|cuda:[0-9]+: no expandable)" \
    "$logs"/*.log |
    sort | uniq -c | tee "$out/fallbacks.txt" || true
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/gpu_check.sh prepare|run" >&2; exit 2 ;;
esac
