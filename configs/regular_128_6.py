# RegularGPT language model of thesis Tables 6.3/6.4 (C/K = 128/6): K = 6 shared blocks reused at
# ceil(log_128 T) levels: 12 layers for 129 <= T <= 16384, so from the training length 512 up to 8192 (thesis
# 6.2, 6.5, Table 6.6; 81M parameters with the GPT-2 vocabulary).
# Needs a trainer that builds model.make_model(config) (RegularGPT for pe='regular'), not GPT directly.
#   python train.py configs/regular_128_6.py --out_dir=out/owt2-regular_128_6
out_dir = 'out/regular_128_6'
dataset = 'openwebtext2'
pe = 'regular'
chunk_size = 128            # C
thickness = 6               # K; n_layer is ignored by RegularGPT
regular_impl = 'gather'     # every position predicts the next token: O(T * C) per layer
n_layer = 6
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
