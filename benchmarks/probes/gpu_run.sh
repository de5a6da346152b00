#!/usr/bin/env bash
# What a GPU machine runs in one short slot (about 15 minutes of device time):
#   smoke: the CUDA tests beside a 45-second run of the whole sweep grid (steps/s of every row side by side);
#   perf:  the CUDA tests, where a `base` training step's time goes (benchmarks/probes/profile_gpu_training.py), and
#          the GPU benchmarks;
#   full:  the Multi30k recipe sweep (checkpoints/recipes/multi30k_sweep.py), and the GPU benchmarks once its training
#          is done (they then share the GPU with nothing; the sweep scores on the CPU meanwhile).
# usage: [WHEELS=DIR] [DEVICE=cuda] [SWEEP_ARGS="..."] bash benchmarks/probes/gpu_run.sh smoke|perf|full DATA_DIR OUT_DIR [MINUTES]
# WHEELS: wheels to install first (the GPU machine has torch, sacrebleu and sentencepiece, not sentencex).
# Prepared here, in the ignored .gpu/ that the device tool carries (carry: [".gpu"]):
#   mkdir -p .gpu/data .gpu/whl && cp -r ../shared/data/multi30k .gpu/data/
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_17_x86_64 -d .gpu/whl sentencex
#   then run: WHEELS=.gpu/whl bash benchmarks/probes/gpu_run.sh full .gpu/data/multi30k $OUT 5.5
set -u
mode=$1 data=$2 out=$3 minutes=${4:-5.5}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if [ -n "${WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHEELS"/*.whl &&
    export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import os, sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.get_device_name(0), os.cpu_count(), 'CPUs')"
if [ "$mode" = perf ]; then
  # Training throughput: the CUDA tests, the probe of where a `base` step goes (levers side by side,
  # a torch.profiler table, torch.compile), then the GPU benchmarks. Benchmarks find
  # Multi30k at ../shared/data/multi30k, as here.
  [ -e ../shared/data/multi30k ] || { mkdir -p ../shared/data && ln -s "$PWD/$data" ../shared/data/multi30k; } || true
  timeout 60 python3 -m pytest -q -p no:cacheprovider -rs tests/engine/test_cuda.py -k "not benchmarks" >"$out/cuda_tests.log" 2>&1
  tail -4 "$out/cuda_tests.log"
  timeout 260 python3 -m benchmarks.probes.profile_gpu_training >"$out/probe.log" 2>&1
  cat "$out/probe.log"
  timeout 130 python3 -m benchmarks --only gpu --device cuda --no-memory --out "$out/gpu_bench.md" >"$out/gpu_bench.log" 2>&1
  tail -45 "$out/gpu_bench.log"
  exit 0
fi
if [ "$mode" = smoke ]; then
  timeout 100 python3 -m checkpoints.recipes.multi30k_sweep --data "$data" --work /tmp/smoke --out /tmp/smoke-out \
    --minutes 0.75 --device "${DEVICE:-cuda}" --eval-every 100 --save-every 100 --train-only >"$out/smoke.log" 2>&1 &
  timeout 240 python3 -m pytest -q -p no:cacheprovider -rs tests/engine/test_cuda.py >"$out/cuda_tests.log" 2>&1
  tail -25 "$out/cuda_tests.log"
  wait
  tail -12 "$out/smoke.log"
  for f in /tmp/smoke/*/progress.json; do echo "$f: $(head -c 300 "$f")"; done
  for f in /tmp/smoke/*.log; do echo "== $f"; tail -4 "$f"; done
  exit 0
fi
# Killed at 530 s whatever it is doing, so that what it wrote still comes back inside a 600-second command.
timeout 530 python3 -m checkpoints.recipes.multi30k_sweep --data "$data" --work /tmp/sweep --out /tmp/sweep-out \
  --minutes "$minutes" --device "${DEVICE:-cuda}" --workers 7 --worker-threads 2 ${SWEEP_ARGS:-} >"$out/sweep.log" 2>&1 &
sweep=$!
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/engine/test_cuda.py >"$out/cuda_tests.log" 2>&1  # while tokenizers train
until grep -q "training done" "$out/sweep.log" 2>/dev/null || ! kill -0 $sweep 2>/dev/null; do sleep 2; done
timeout 170 python3 -m benchmarks --only gpu --device cuda --no-memory --out "$out/gpu_bench.md" >"$out/gpu_bench.log" 2>&1
wait $sweep
tail -60 "$out/sweep.log"
tail -30 "$out/gpu_bench.log"
for f in /tmp/sweep/*/progress.json; do echo "$f: $(head -c 300 "$f")"; done
mkdir -p /tmp/sweep-out/runs
cp /tmp/sweep/*.log /tmp/sweep-out/runs/ 2>/dev/null
for d in /tmp/sweep/*/; do cp "$d/progress.json" "/tmp/sweep-out/runs/$(basename "$d").progress.json" 2>/dev/null; done
tar cf - -C /tmp sweep-out | split -b 15m - "$out/result.tar."
ls -la "$out"
