# The longer-training check of results/thesis/: seed 0 of four encodings trained 4x as long as
# configs/sweep_lm_tiny.py (12,800 iterations, the cosine schedule stretched to match), to see whether the
# verdicts move with training:
#   python sweep.py configs/sweep_lm_long.py
# Each run is about 100 minutes of one core beside another (98 on 2026-11-27), its scoring 16 more. Where out/
# does not outlive a session, train and score them in pairs, alibi and sandwich first (Table 4.5's windowed rows
# need both), then kerple_log and t5:
#   python sweep.py configs/sweep_lm_long.py "--grid={'seed': [0], 'pe': ['alibi', 'sandwich']}"
# `bash results.sh thesis` keeps the rows of runs it scored whose folders are gone.
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=12800', '--eval_interval=800']
grid = dict(seed=[0], pe=['alibi', 'kerple_log', 'sandwich', 't5'])
out_dir = 'out/lm_long/{pe}-s{seed}'
