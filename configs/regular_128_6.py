# RegularGPT language model of thesis Tables 6.3/6.4 (C/K = 128/6), on top of the thesis setup:
#   python train.py configs/thesis_162m.py configs/regular_128_6.py --out_dir=out/owt2-regular_128_6
# K = 6 shared blocks reused at ceil(log_128 T) levels: 12 layers for 129 <= T <= 16384, so from the training
# length 512 up to 8192 (thesis 6.2, Table 6.6; 81M parameters with the GPT-2 vocabulary).
out_dir = 'out/regular_128_6'
pe = 'regular'
chunk_size = 128            # C
thickness = 6              # K; RegularGPT ignores n_layer
regular_impl = 'gather'     # every position predicts the next token: O(T * C) per layer
