# RoPE extension with a short fine-tune: each seed's RoPE model from configs/sweep_lm_tiny.py, 200 steps at
# 4 x L_tr = 1024 tokens with PI, NTK or YaRN at s = 4 (PI: 1000 steps at a 16 x longer length in its paper):
#   python sweep.py configs/sweep_rope_finetune.py
# Dynamic NTK is left out: it is a training-free method, and at a fixed training length of 4 L_tr its base is that of
# static NTK at s T/L - (s - 1) = 13, which would then change again with every evaluation length.
script = 'train.py'
args = ['configs/tiny.py', '--init_from=out/lm/rope-s{seed}/ckpt.pt', '--block_size=1024', '--rope_scale=4.0',
        '--batch_size=4', '--max_iters=200', '--warmup_iters=20', '--learning_rate=1e-4', '--min_lr=1e-5',
        '--eval_interval=50']
grid = dict(seed=[0, 1, 2], rope_scaling=['pi', 'ntk', 'yarn'])
out_dir = 'out/lm/rope-{rope_scaling}ft-s{seed}'
