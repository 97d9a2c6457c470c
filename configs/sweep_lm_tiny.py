# The seeded language-model tables (thesis Tables 3.3 / 4.3 at tiny scale; results/thesis/ and results/README.md):
# 9 encodings x 5 seeds (the thesis' five) of configs/tiny.py for 3200 iterations, one thread per run, two at a time,
# seed by seed, so a sweep stopped halfway leaves whole seeds:
#   python sweep.py configs/sweep_lm_tiny.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=3200', '--eval_interval=200']
grid = dict(seed=[0, 1, 2, 3, 4], pe=['sinusoidal', 'rope', 'alibi', 'kerple_power', 'kerple_log', 'sandwich',
                                      'sandwich_smoothed', 't5', 'none'])
out_dir = 'out/lm/{pe}-s{seed}'
