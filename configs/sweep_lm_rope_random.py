# RoPE with randomized positions from [0, 4096) (L_max = 16 L_tr, the longest evaluation; Ruoss et al.), trained
# exactly like configs/sweep_lm_tiny.py:   python sweep.py configs/sweep_lm_rope_random.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=3200', '--eval_interval=200', '--pe=rope']
grid = dict(seed=[0, 1, 2], randomized_positions=[4096])
out_dir = 'out/lm/rope-rand4096-s{seed}'
