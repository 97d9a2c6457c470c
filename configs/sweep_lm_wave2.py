# The methods after the seed papers, trained exactly like configs/sweep_lm_tiny.py (same config, steps and seeds):
#   python sweep.py configs/sweep_lm_wave2.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=3200', '--eval_interval=200']
grid = dict(seed=[0, 1, 2], pe=['fire', 'fox', 'cope', 'xpos'])
out_dir = 'out/lm/{pe}-s{seed}'
