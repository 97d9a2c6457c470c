# Seconds-long smoke test on CPU: python train.py configs/test.py
out_dir = 'out/test'
dataset = 'pycode'
n_layer = 2
n_head = 2
n_embd = 32
block_size = 32
batch_size = 4
max_iters = 20
eval_interval = 10
eval_iters = 2
log_interval = 5
warmup_iters = 2
learning_rate = 1e-3
min_lr = 1e-4
device = 'cpu'
