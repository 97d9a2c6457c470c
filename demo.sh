#!/usr/bin/env bash
# The main job, end to end on CPU: train a tiny GPT on 256-byte windows of Python source with sinusoidal and with
# ALiBi positions, then measure perplexity at 1x, 4x and 16x that length under the thesis' non-overlapping protocol
# (Table 3.3): the same 65,536 test bytes cut into segments of each length. At the end it prints its wall time and
# writes it to out/demo/time.json, with the machine it ran on (the target: at most 10 minutes on 2 idle cores).
set -euo pipefail
cd "$(dirname "$0")"
start=$(date +%s)
python -m pip install torch==2.13.0  # first: the CPU build; a plain torch requirement would pull CUDA
python -m pip install -r requirements.lock  # every package pinned (README.md: how to refresh it)
if [ ! -f data/pycode/meta.json ]; then
    python -m data.prepare --corpus=pycode
fi
# the two runs go side by side, one thread each: on 2 cores that beats two threads per run one after the other;
# sweep.py prints where each run is (iteration, loss, time left) every 20 seconds
python sweep.py configs/sweep_demo.py
tail -n 1 out/tiny-sinusoidal/run.log out/tiny-alibi/run.log
python extrapolate.py --ckpt=out/tiny-sinusoidal,out/tiny-alibi --protocol=nonoverlap --lengths=1,4,16 \
    --threads=2 --out_dir=out/demo
python -c "import json, sys; from lexgpt.outputs import environment
json.dump(dict(command='bash demo.sh', seconds=int(sys.argv[1]), **environment()), open('out/demo/time.json', 'w'))
print(f'demo: {sys.argv[1]} s (out/demo/time.json)')" $(( $(date +%s) - start ))
