# The thesis' setup (also KERPLE's and Sandwich's): 162M parameters with the GPT-2 vocabulary, trained on
# length 512, batch 32, 50k steps, lr 6e-4; other settings are nanoGPT's GPT-2 defaults.
#   one GPU:  python train.py configs/thesis_162m.py --pe=kerple_log --out_dir=out/owt2-kerple_log
#   8 GPUs:   torchrun --standalone --nproc_per_node=8 train.py configs/thesis_162m.py --pe=kerple_log \
#                 --batch_size=4 --gradient_accumulation_steps=8          (8 x 4 = 32 sequences per step)
# The global batch is batch_size * gradient_accumulation_steps sequences; keep it at 32 when changing either.
out_dir = 'out/thesis_162m'
dataset = 'openwebtext2'  # or arxiv, github (data/<name>/prepare.py needs internet)
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
min_lr = 6e-5
warmup_iters = 2000
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
eval_interval = 1000
eval_iters = 100
log_interval = 50
dtype = 'bfloat16'
compile = True
