# The longer-training check of results/thesis/: seed 0 of four encodings trained 4x as long as
# configs/sweep_lm_tiny.py (12,800 iterations, the cosine schedule stretched to match), to see whether the
# verdicts move with training:
#   python sweep.py configs/sweep_lm_long.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=12800', '--eval_interval=800']
grid = dict(seed=[0], pe=['alibi', 'kerple_log', 'sandwich', 't5'])
out_dir = 'out/lm_long/{pe}-s{seed}'
