# The seeded language-model table of results/README.md (thesis Tables 3.3 / 4.3 at tiny scale): 8 encodings x 3 seeds of
# configs/tiny.py for 3200 iterations (4x the single-seed runs before), one thread per run, two runs at a time:
#   python sweep.py configs/sweep_lm_tiny.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=3200', '--eval_interval=200']
grid = dict(seed=[0, 1, 2], pe=['none', 'sinusoidal', 'rope', 'alibi', 'kerple_power', 'kerple_log', 'sandwich', 't5'])
out_dir = 'out/lm/{pe}-s{seed}'
