# The mid-scale table of `bash results.sh lease` (#42): the first models here above the tiny config's 0.8M
# parameters, sized to train on one GPU within a lease's spare minutes. 25.3M parameters (8 layers x 512, 8 heads of
# 64: FlexAttention's head dimension is at least 16), L_tr = 512 bytes as in the thesis, 64 x 512 tokens per step:
# 1000 steps are 32.8M tokens, a little more than one pass over pycode's 28M training bytes.
# Measured on an H100 (results/gpu/lease/mid_*.json): 5 TFLOP per step (6 x 25.3M x 32,768 tokens), 51 ms
# uncompiled in bf16 (ALiBi; 11% of the card's bf16 peak), 54-97 s per run with its evaluations. A run alone leaves
# most of the card idle, so results.sh lease trains MID_PAR of them side by side (mid_<pe>-s<seed>, the eight
# encodings of Tables 3.3 and 4.3 at seed 0, then seeds 1-4) and scores them together.
#   python train.py configs/lease_mid.py --pe=alibi --seed=0 --out_dir=out/lease_mid/alibi-s0
out_dir = 'out/lease_mid'
dataset = 'pycode'
pe = 'alibi'
n_layer = 8
n_head = 8
n_embd = 512
block_size = 512
dropout = 0.0
bias = False
batch_size = 64
gradient_accumulation_steps = 1
max_iters = 1000
lr_decay_iters = 1000
learning_rate = 1e-3  # between the tiny config's 1e-3 and GPT-2 small's 6e-4: 25M parameters take the larger rate
min_lr = 1e-4
warmup_iters = 50
weight_decay = 0.1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
eval_interval = 250
eval_iters = 20
log_interval = 50
device = 'cuda'
dtype = 'bfloat16'
compile = False  # compiling costs more of a lease (about a minute per encoding) than it saves on 1000 steps
