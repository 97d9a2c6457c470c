# A CPU run (pe=alibi, 800 iterations) of about 5 minutes only on 2 idle cores, ~0.3 s per iteration:
#   python train.py configs/tiny.py --pe=alibi --out_dir=out/tiny-alibi
# On a busy machine prefix OMP_NUM_THREADS=1: two threads that wait for each other slow down several-fold there.
# With one thread beside another run on the same 2 cores we saw ~0.5 s per iteration, about 7 minutes in all.
# ~0.8M parameters trained on 256-byte windows of Python source; evaluate it later at 512..2048 bytes.
out_dir = 'out/tiny'
dataset = 'pycode'
pe = 'alibi'
n_layer = 4
n_head = 4
n_embd = 128
block_size = 256
dropout = 0.0
batch_size = 16
gradient_accumulation_steps = 1
max_iters = 800
eval_interval = 100
eval_iters = 20
log_interval = 10
learning_rate = 1e-3  # small models tolerate a larger rate than GPT-2's 6e-4
warmup_iters = 50
min_lr = 1e-4
weight_decay = 0.1
device = 'cpu'
