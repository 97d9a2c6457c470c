# RegularGPT language models for thesis Tables 6.3/6.4 at the tiny scale (results/thesis/): configs/tiny.py with
# pe=regular, K = 2 shared blocks (RegularGPT ignores n_layer) reused at ceil(log_C T) levels, 3 seeds as the thesis.
#   C = 64: 2 levels (4 layers, as tiny's) from L_tr = 256 to 16 L_tr = 4096, as the thesis' C = 128 from 512 to 8192;
#   C = 32: 2 levels up to 4 L_tr, a third from 8 L_tr on, as the thesis' C = 64 gains one at 16 L_tr.
#   python sweep.py configs/sweep_lm_regular.py
script = 'train.py'
args = ['configs/tiny.py', '--max_iters=3200', '--eval_interval=200', '--pe=regular', '--thickness=2']
grid = dict(seed=[0, 1, 2], chunk_size=[64, 32])
out_dir = 'out/lm/regular{chunk_size}-s{seed}'
