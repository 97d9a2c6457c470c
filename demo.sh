#!/usr/bin/env bash
# The main job, end to end on CPU (about 10 minutes on 2 idle cores): train a tiny GPT on 256-byte windows of Python
# source with sinusoidal and with ALiBi positions, then measure perplexity at 1x, 2x, 4x and 8x that length.
set -euo pipefail
cd "$(dirname "$0")"
python -m pip install torch==2.13.0  # first: the CPU build; a plain torch requirement would pull CUDA
python -m pip install -r requirements.txt
if [ ! -f data/pycode/meta.json ]; then
    python -m data.prepare --corpus=pycode
fi
# the two runs go side by side, one thread each: on 2 cores that beats two threads per run one after the other
python sweep.py configs/sweep_demo.py
tail -n 1 out/tiny-sinusoidal/run.log out/tiny-alibi/run.log
python extrapolate.py --ckpt=out/tiny-sinusoidal,out/tiny-alibi --lengths=1,2,4,8 --protocol=last_token --n=32 \
    --last_k=64 --threads=1 --out_dir=results/demo
