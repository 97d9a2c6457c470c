# The thesis' setup (also KERPLE's and Sandwich's): 162M parameters with the GPT-2 vocabulary, trained on
# length 512, batch 32, 50k steps, lr 6e-4 with cosine decay to 0; Adam with betas (0.9, 0.999), no weight decay, no
# dropout, gradient clipping 1.0, as in the authors' GPT-NeoX config (KERPLE repository, kerple_configs/train.yml).
# One difference: their input and output embeddings are untied; ours are tied (nanoGPT).
#   data:     python -m data.prepare --corpus=openwebtext2            (needs internet; or arxiv, github)
#   one GPU:  python train.py configs/thesis_162m.py --pe=kerple_log --out_dir=out/owt2-kerple_log
#   8 GPUs:   torchrun --standalone --nproc_per_node=8 train.py configs/thesis_162m.py --pe=kerple_log \
#                 --batch_size=4 --gradient_accumulation_steps=8          (8 x 4 = 32 sequences per step)
# The global batch is batch_size * gradient_accumulation_steps sequences; keep it at 32 when changing either.
out_dir = 'out/thesis_162m'
dataset = 'openwebtext2'
pe = 'kerple_log'
n_layer = 12
n_head = 12
n_embd = 768
block_size = 512
dropout = 0.0
bias = False
batch_size = 32
gradient_accumulation_steps = 1
max_iters = 50000
lr_decay_iters = 50000
learning_rate = 6e-4
min_lr = 0.0  # GPT-NeoX's default: the cosine decays to 0
warmup_iters = 500  # the authors' "warmup": 0.01 of 50k steps
weight_decay = 0.0
beta1 = 0.9
beta2 = 0.999
grad_clip = 1.0
eval_interval = 1000
eval_iters = 100
log_interval = 50
dtype = 'bfloat16'
compile = True
