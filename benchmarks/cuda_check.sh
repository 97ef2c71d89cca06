#!/usr/bin/env bash
# The checks that need a GPU, in one command, from the repository root:
#   bash benchmarks/cuda_check.sh OUTDIR
# 1. the tests that run on CUDA when it is visible (graphs, static shapes, precision, the engine);
# 2. benchmarks/round_time.py on cuda: FedAvg and FedSAM, batched with and without CUDA graphs,
#    sequential, against the reference loop;
# 3. benchmarks/gpu_profile.py: busy fraction, clients per round, precision over 300 rounds;
# 4. the whole suite with CUDA visible, for what time is left (SUITE_SECONDS, default 150).
# Each part is bounded by `timeout`; the logs and JSON rows go to OUTDIR.
set -uo pipefail
out=${1:?usage: benchmarks/cuda_check.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
$py -c "import torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__, torch.cuda.get_device_name())" | tee -a "$out/device.txt"

echo "== 1. CUDA tests"
timeout 150 $py -m pytest -o addopts="" -p no:cacheprovider -q -n 8 -ra \
  tests/test_cuda_graphs.py tests/test_round_device.py tests/test_precision.py tests/test_engine.py \
  2>&1 | tee "$out/cuda_tests.log" | tail -25

echo "== 2. round time"
timeout 150 $py benchmarks/round_time.py --device cuda --methods fedavg,fedsam \
  --engine batched,batched-eager,sequential --rounds 20 --warmup 2 --no-retained-reference --json \
  > "$out/round_time.jsonl" 2> "$out/round_time.err"
echo "rc $?"; tail -3 "$out/round_time.err"

echo "== 3. profile, clients, precision"
timeout 200 $py benchmarks/gpu_profile.py --json --rounds 5 > "$out/gpu_profile.jsonl" 2> "$out/gpu_profile.err"
echo "rc $?"; grep -v "^USDT\|profiler_st" "$out/gpu_profile.err" | tail -5

echo "== 4. the whole suite with CUDA visible"
timeout "${SUITE_SECONDS:-150}" $py -m pytest -o addopts="" -p no:cacheprovider -v -n 14 \
  -m "not extended" --continue-on-collection-errors tests > "$out/suite.log" 2>&1
grep -E "(PASSED|FAILED|ERROR|SKIPPED) tests/" "$out/suite.log" | sed -E 's/.*(PASSED|FAILED|ERROR|SKIPPED) /\1 /' \
  | sort > "$out/suite_results.txt"
cut -d' ' -f1 "$out/suite_results.txt" | sort | uniq -c
grep -E "^(FAILED|ERROR)" "$out/suite_results.txt" | head -80
exit 0
