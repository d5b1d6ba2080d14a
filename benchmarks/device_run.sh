#!/usr/bin/env bash
# One batched call on a GPU machine: the test suite for real, then the GPU benchmarks.
# Usage (repository root): OUT=dir bash benchmarks/device_run.sh [stage ...]
# stages: tests gpu_fw tune pairs paths homework startup d2h dense bfs ooc quicktests bench ndfw rowsolve dtype before_after
# before_after: BEFORE_TREE=<folder holding an older apsp/> times both trees alternately (plan_overhead.py)
#   (default: tests gpu_fw paths homework bfs)
# bench: BENCH_SUITES picks suites (default: all); their files come back as one $OUT/bench.tar.gz;
# APSP_COMMIT=<sha> names the commit in their headers (the device's copy of .git may be stale)
set -u
# keep a PYTHONPATH the caller set (carried wheels, e.g. pymetis)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
OUT=${OUT:-bench-out}
mkdir -p "$OUT"
stages=${*:-tests gpu_fw paths homework bfs}
for stage in $stages; do
  echo "=== $stage $(date -u +%H:%M:%S)"
  case $stage in
    tests)
      timeout 450 python3 -m pytest -q -m "not mpi and not slow" -n 8 -p no:cacheprovider tests \
        > "$OUT/pytest.log" 2>&1
      tail -5 "$OUT/pytest.log"; grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -20 ;;
    gpu_fw)
      timeout 300 python3 benchmarks/gpu_fw.py --stages ceiling,sweep,check,solve \
        --sizes 8192,16384,32768 --out "$OUT/gpu_fw.json" > "$OUT/gpu_fw.log" 2>&1
      grep -vE "^  (int|float)[0-9]+ +\(" "$OUT/gpu_fw.log" | tail -25 ;;
    tune)
      timeout 200 python3 benchmarks/gpu_fw.py --stages ceiling,tune --out "$OUT/tune.json" > "$OUT/tune.log" 2>&1
      grep -E "T/s|T updates" "$OUT/tune.log" ;;
    pairs)
      # exactness with pairs forced on every product, then int16 solves: default (pairs from
      # PAIRS["min_size"] up), pairs forced, packed only
      timeout 240 python3 benchmarks/gpu_fw.py --int16-pairs on --stages ceiling,check --out "$OUT/pairs.json" \
        > "$OUT/pairs.log" 2>&1; grep -E "cases equal|MISMATCH|Error" "$OUT/pairs.log"
      for mode in default on off; do
        echo "-- int16 pairs: $mode"
        timeout 100 python3 benchmarks/gpu_fw.py --int16-pairs $mode --stages solve --dtypes int16 \
          --sizes 8192,16384,32768 2>&1 | grep "n="
      done ;;
    bench)
      declare -A suites=(
        [ceiling]="ceiling" [block]="block --sizes 8192 --blocks 32 64 128 256 512 --backends fw-gpu"
        [breakdown]="breakdown --sizes 4096 16384 --backends fw-gpu"
        [memory]="memory --sizes 4096 16384 --backends fw-gpu bfs-gpu"
        [backends]="backends --sizes 1024 4096 8192 --time-limit 10 --repeat 3")
      mkdir -p /tmp/bench
      for name in ${BENCH_SUITES:-ceiling block breakdown memory backends}; do
        timeout 200 python3 -m apsp bench ${suites[$name]} --out "/tmp/bench/$name" -q > "/tmp/bench/$name.md" 2>&1
        echo "--- bench $name rc=$? $(date -u +%H:%M:%S)"; grep "^|" "/tmp/bench/$name.md" | head -14
        tar -czf "$OUT/bench.tar.gz" -C /tmp bench  # after each suite: a cut-off call keeps the finished ones
      done ;;
    paths)
      timeout 150 python3 benchmarks/gpu_fw.py --stages paths --out "$OUT/paths.json" 2>&1 | tail -4 ;;
    homework)
      # the homework command on the GPU: a first run (Numba compiles the text parser), then two warm
      # runs with --profile and one plain run timed from outside; every output equal to the CPU
      # backend's byte for byte; then where the time goes: the CLI's import chain (-X importtime, the
      # GPU start thread's imports included) and torch's import and CUDA's start alone
      python3 -m apsp gen 10000 --density 0.05 --weights 0 100 --seed 1 -o /tmp/h10k.txt &&
      ls -la /tmp/h10k.txt && nproc &&
      timeout 200 python3 -m apsp /tmp/h10k.txt /tmp/h10k.cpu.out 256 --backend cpu -q &&
      for run in first warm1 warm2; do
        echo "-- $run run"; timeout 120 python3 -m apsp /tmp/h10k.txt /tmp/h10k.out 128 --profile --backend gpu 2>&1 | tail -12
        cmp /tmp/h10k.out /tmp/h10k.cpu.out && echo "GPU output == CPU output (n=10000, $run)"
      done &&
      echo "-- plain command, wall (s):" &&
      /usr/bin/time -f "%e s wall, %U s user, %S s sys" timeout 120 python3 -m apsp /tmp/h10k.txt /tmp/h10k.out 128 --backend gpu &&
      cmp /tmp/h10k.out /tmp/h10k.cpu.out && echo "GPU output == CPU output (n=10000, plain)" &&
      timeout 120 python3 -X importtime -m apsp /tmp/h10k.txt /tmp/h10k.out 128 --backend gpu 2> "$OUT/importtime_homework.txt" &&
      echo "-- slowest imports (cumulative us, top-level):" &&
      grep -E "\| {1,3}[A-Za-z_]" "$OUT/importtime_homework.txt" | sort -t'|' -k2 -n -r | head -12 &&
      for i in 1 2; do
        python3 -c "import time; t = time.perf_counter(); import torch; t1 = time.perf_counter(); torch.zeros(1, device='cuda'); t2 = time.perf_counter(); import triton; t3 = time.perf_counter(); print(f'import torch {t1 - t:.2f} s, CUDA start {t2 - t1:.2f} s, import triton {t3 - t2:.2f} s')"
      done &&
      python3 -c "import time; t = time.perf_counter(); import numpy, numba; from apsp import api, io; print(f'import numpy + numba + apsp.api/io {time.perf_counter() - t:.2f} s')" ;;
    startup)
      # the homework command on the GPU in fresh processes, empty Numba cache then warm, every stage
      # printed; outputs compared with the CPU backend's (the homework stage writes it, else here)
      [ -f /tmp/h10k.txt ] || python3 -m apsp gen 10000 --density 0.05 --weights 0 100 --seed 1 -o /tmp/h10k.txt
      [ -f /tmp/h10k.cpu.out ] || timeout 200 python3 -m apsp /tmp/h10k.txt /tmp/h10k.cpu.out 256 --backend cpu -q
      timeout 240 python3 -m apsp bench startup --backend gpu --input /tmp/h10k.txt --block-size 128 --variants int32 \
        --repeat 2 --expect /tmp/h10k.cpu.out --json "$OUT/startup_gpu.json" 2>&1 | tail -4
      # README command 1 and the variants on the CPU (first run of each, then warm)
      timeout 200 python3 -m apsp bench startup --repeat 1 --json "$OUT/startup_cpu.json" 2>&1 | tail -11 ;;
    d2h)
      # result copies exact (odd shapes, every dtype, poisoned destinations), then GB/s for 4 GiB,
      # then a whole API call at WHOLE_N (default 65536) against its compute
      timeout 400 python3 benchmarks/d2h.py --whole "${WHOLE_N:-65536}" --out "$OUT/d2h.json" > "$OUT/d2h.log" 2>&1
      tail -4 "$OUT/d2h.log" ;;
    dense)
      # the default call on a float64 numpy matrix, n = 4096 and 8192, stage by stage beside the copy
      # bandwidths (pinned and pageable) and the kernels alone; then the dense tests for real
      timeout 300 python3 benchmarks/dense_call.py --json "$OUT/dense_call.json" 2>&1 | tee "$OUT/dense_call.log"
      timeout 200 python3 -m pytest -q -x tests/test_dense_input.py > "$OUT/dense_tests.log" 2>&1
      tail -3 "$OUT/dense_tests.log" ;;
    ooc)
      timeout 300 python3 benchmarks/outofcore_gpu.py --out "$OUT/ooc.json" > "$OUT/ooc.log" 2>&1; tail -25 "$OUT/ooc.log" ;;
    quicktests)
      timeout 150 python3 -m pytest -q -m "not mpi" -n 8 -p no:cacheprovider tests/test_bfs.py \
        tests/test_outofcore.py tests/test_checkpoint.py tests/test_bench.py tests/test_info.py \
        tests/test_scipy_compat.py tests/test_gpu_fw.py > "$OUT/quicktests.log" 2>&1
      tail -3 "$OUT/quicktests.log"; grep -E "^(FAILED|ERROR)" "$OUT/quicktests.log" | head -20 ;;
    dtype)
      # dtype=None (narrowest verified) must pick int16 for weights 1..100, give int32's distances, and
      # take at most 1/1.8 of int32's whole-call time (transfers included); exit 1 otherwise
      timeout 420 python3 benchmarks/dtype_policy.py --backend gpu --sizes 16384,32768 --density 0.01 \
        --require-dtype int16 --require-speedup 1.8 --out "$OUT/dtype_policy.json" > "$OUT/dtype_policy.log" 2>&1
      echo "rc=$?"; tail -16 "$OUT/dtype_policy.log"
      # nested-dissection FW through the same plan: a 256 x 256 grid, weights 1..100 (needs pymetis)
      if python3 -c "import pymetis" 2>/dev/null; then
        timeout 300 python3 benchmarks/dtype_policy.py --backend gpu --method nd-fw --graph grid --sizes 65536 \
          --require-dtype int16 --out "$OUT/dtype_policy_ndfw.json" > "$OUT/dtype_policy_ndfw.log" 2>&1
        echo "rc=$?"; tail -7 "$OUT/dtype_policy_ndfw.log"
      else echo "nd-fw part skipped: pymetis not importable"; fi ;;
    ndfw)
      # nested-dissection FW: its tests on the GPU, then a 350x350 grid and a k-NN graph of n = 122,500
      # (sampled rows checked against Dijkstra, compute timed, one whole solve with the host copy)
      timeout 300 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_ndfw.py > "$OUT/ndfw_tests.log" 2>&1
      tail -2 "$OUT/ndfw_tests.log"; grep -E "^(FAILED|ERROR)" "$OUT/ndfw_tests.log" | head
      timeout 420 python3 benchmarks/nd_gpu.py --side 350 --knn 122500 --wall --out "$OUT/nd_gpu.json" \
        > "$OUT/nd_gpu.log" 2>&1; tail -20 "$OUT/nd_gpu.log" ;;
    rowsolve)
      # rows from elimination factors: the tests on the GPU, then the downward pass's rate on a synthetic
      # level and a 1000x1000 grid's dissection (rows checked against numpy), beside the ceiling
      timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_rowsolve.py > "$OUT/rowsolve_tests.log" 2>&1
      tail -2 "$OUT/rowsolve_tests.log"; grep -E "^(FAILED|ERROR)" "$OUT/rowsolve_tests.log" | head
      timeout 560 python3 benchmarks/gpu_rowsolve.py --ceiling --check --side 300 1000 --leaf 64 --rows 1024 \
        --nodes 16384 --v 64 --b 256 --out "$OUT/gpu_rowsolve.json" > "$OUT/gpu_rowsolve.log" 2>&1
      tail -40 "$OUT/gpu_rowsolve.log" ;;
    before_after)
      # dense FW n = 32768 int32 and nd-fw on the 350 x 350 grid, the older tree and this one alternately
      for round in 1 2; do for tree in before after; do
        if [ $tree = before ]; then pp=$BEFORE_TREE:$PYTHONPATH; else pp=$PYTHONPATH; fi
        echo "-- $tree, round $round"
        PYTHONPATH=$pp timeout 200 python3 benchmarks/plan_overhead.py --runs 3 > "$OUT/ba_${tree}_$round.json" 2>&1
        cat "$OUT/ba_${tree}_$round.json" | cut -c1-400
      done; done ;;
    bfs)
      timeout 240 python3 benchmarks/bfs_gpu.py > "$OUT/bfs_gpu.log" 2>&1; tail -15 "$OUT/bfs_gpu.log" ;;
  esac
done
