# RoPE with Scalable-Softmax, trained exactly like configs/sweep_lm_tiny.py:
#   python sweep.py configs/sweep_lm_rope_ssmax.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=3200', '--eval_interval=200', '--pe=rope']
grid = dict(seed=[0, 1, 2], ssmax=[True])
out_dir = 'out/lm/rope-ssmax-s{seed}'
