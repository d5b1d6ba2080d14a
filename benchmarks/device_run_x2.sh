#!/usr/bin/env bash
# One batched call on a 2-GPU machine, most important first (a cut-off call keeps what it wrote):
# 2-rank correctness on 2 GPUs, then weak and strong scaling (profiled) at the sizes. Single-GPU
# benchmarks belong to benchmarks/device_run.sh (on this machine too: CUDA_VISIBLE_DEVICES=0).
# Usage (repository root): OUT=dir bash benchmarks/device_run_x2.sh [correct] [stats] [weak] [strong]  (default: all)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-bench-out}; mkdir -p "$OUT"
nvidia-smi -L
stages=" ${*:-correct stats weak strong} "
if [[ $stages == *" correct "* ]]; then
echo "=== 2 ranks on 2 GPUs vs 1 GPU $(date -u +%H:%M:%S)"
timeout 150 mpirun -n 2 python3 tests/distributed_worker.py \
  '{"seed":1,"cases":[{"n":3000,"block":256,"backend":"gpu","oracle":false},{"n":2049,"block":128,"backend":"gpu","oracle":false},{"n":700,"block":256,"backend":"gpu"}]}' 2>&1 | tail -4
fi
if [[ $stages == *" stats "* ]]; then
echo "=== statistics, n = 1,000,000, m = 10,000,000 unweighted: 1 rank against 2, one GPU each $(date -u +%H:%M:%S)"
timeout 400 python3 benchmarks/stats_scaling.py sweep --ranks 1 2 --n 1000000 --m 10000000 --backend gpu \
  --mpiexec "mpirun -n {ranks}" --json "$OUT/stats_scaling.json" 2>&1 | tail -8
fi
if [[ $stages == *" weak "* ]]; then
echo "=== weak scaling from n=46341, profiled $(date -u +%H:%M:%S)"
timeout 300 python3 benchmarks/distributed_scaling.py sweep --ranks 1 2 --strong-n 0 --weak-n 46341 \
  --backend gpu --dtype int32 --profile --mpiexec "mpirun -n {ranks}" --json "$OUT/weak.json" 2>&1 | tail -6
fi
if [[ $stages == *" strong "* ]]; then
echo "=== strong scaling n=65536, profiled $(date -u +%H:%M:%S)"
timeout 300 python3 benchmarks/distributed_scaling.py sweep --ranks 1 2 --strong-n 65536 --weak-n 0 \
  --backend gpu --dtype int32 --profile --mpiexec "mpirun -n {ranks}" --json "$OUT/strong.json" 2>&1 | tail -6
fi
