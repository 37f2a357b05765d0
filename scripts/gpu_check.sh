#!/bin/sh
# scripts/gpu_check.sh -- the checks that need an NVIDIA GPU, in one run:
#   1. what the machine has (nvidia-smi, the CUDA runtime, PyTorch);
#   2. tests/test_staging and test_nocudart with GSNAP_EXPECT_CUDA=1 (a
#      stager that falls back to host buffers for device 0 fails), and
#      test_staging under compute-sanitizer's memcheck when it is on PATH;
#   3. bench/bench_staging (the H2D figure: staged GB/s against a host
#      memcpy, and what staging adds to an epoch);
#   4. the Python tests, python/tests/test_cuda.py included (device batches
#      equal host batches; a reused slot waits for GPU work queued on it);
#   5. examples/train_sage.py on the GPU (--device 0 --prefetch) and, as the
#      baseline in the same run, on the CPU with the same arguments.
# Usage: sh scripts/gpu_check.sh [OUTDIR]   (default gpu-check/)
# Environment: BUILD (default build) holds libgraphsnap.so, graphsnap,
# tests/test_staging, tests/test_nocudart, tests/test_temporal and
# bench/bench_staging (make all bench build/tests/test_staging ...);
# GSNAP_DEPS_LIB: a folder with liblmdb/liburing/libxxhash for a machine
# without those packages (prepended to LD_LIBRARY_PATH); PYTHON (python3);
# TRAIN_ARGS (--nodes 20000 --epochs 6).
# Exit status: the number of failed steps (0 = all passed).
set -u
out=${1:-gpu-check}
BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
TRAIN_ARGS=${TRAIN_ARGS:---nodes 20000 --epochs 6}
mkdir -p "$out"
if [ -n "${GSNAP_DEPS_LIB:-}" ]; then
    LD_LIBRARY_PATH=$GSNAP_DEPS_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi
export BUILD GRAPHSNAP_LIB="$BUILD/libgraphsnap.so" GSNAP_EXPECT_CUDA=1 PYTHONUNBUFFERED=1
failed=0
step() { # step NAME LOGFILE COMMAND...
    name=$1 log=$2
    shift 2
    t0=$(date +%s)
    "$@" >"$out/$log" 2>&1
    rc=$?
    echo "== $name: exit $rc ($(( $(date +%s) - t0 )) s), log $log"
    tail -n 25 "$out/$log"
    [ $rc -eq 0 ] || failed=$((failed + 1))
}

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
    ls -l /usr/local/cuda/lib64/libcudart.so* 2>&1
    "$PY" -c 'import torch, numpy; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), "numpy", numpy.__version__); print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no device")'
    ldd "$BUILD/libgraphsnap.so"
} >"$out/device.txt" 2>&1
cat "$out/device.txt"

step "test_staging" test_staging.log "$BUILD/tests/test_staging"
if command -v compute-sanitizer >/dev/null 2>&1; then
    # --report-api-errors no: test_staging makes a cudaHostAlloc of 2^62
    # bytes fail on purpose (a slot that cannot grow); memory errors and
    # leaks still fail the step
    step "compute-sanitizer memcheck test_staging" sanitizer.log \
        compute-sanitizer --tool memcheck --leak-check full --report-api-errors no \
        --error-exitcode 9 "$BUILD/tests/test_staging"
else
    echo "== compute-sanitizer: not on PATH (skipped)"
fi
step "test_nocudart" test_nocudart.log "$BUILD/tests/test_nocudart"
step "test_temporal" test_temporal.log "$BUILD/tests/test_temporal"
step "bench_staging" bench_staging.log "$BUILD/bench/bench_staging" --out "$out/staging.txt"
# torch's own pinned and pageable copies of 64 MiB, a reference for the H2D figure
step "torch H2D reference" torch_h2d.log "$PY" -c '
import time, torch
n = 64 << 20
for pinned in (True, False):
    h = torch.empty(n, dtype=torch.uint8, pin_memory=pinned); d = torch.empty(n, dtype=torch.uint8, device="cuda")
    for _ in range(3): d.copy_(h, non_blocking=pinned)
    torch.cuda.synchronize(); t = time.perf_counter(); reps = 32
    for _ in range(reps): d.copy_(h, non_blocking=pinned)
    torch.cuda.synchronize(); s = time.perf_counter() - t
    kind = "pinned" if pinned else "pageable"
    print(f"torch {kind} H2D of 64 MiB: {n * reps / s / 1e9:.2f} GB/s")
'
step "pytest" pytest.log "$PY" -m pytest -q -rs python/tests
# shellcheck disable=SC2086
step "train_sage on the GPU" train_gpu.log "$PY" examples/train_sage.py $TRAIN_ARGS --device 0 --prefetch
# shellcheck disable=SC2086
step "train_sage on the CPU (baseline)" train_cpu.log "$PY" examples/train_sage.py $TRAIN_ARGS --prefetch
echo "gpu_check: $failed step(s) failed"
exit $failed
