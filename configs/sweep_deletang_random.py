# Randomized positions (Ruoss et al. 2023) for the Transformer baseline on the four Deletang tasks, trained like the
# Transformer of Table 6.1 (1500 steps, 3 seeds):
#   python sweep.py configs/sweep_deletang_random.py && python regular_lang.py --mode=table --train_missing=False \
#       --seeds=0,1,2 --models=regulargpt_c2,transformer,transformer_rand1024,lstm --out_dir=out/regular
script = 'regular_lang.py'
args = ['--max_steps=1500', '--out_dir=out/regular']  # results.sh regular_runs writes results/regular
grid = dict(seed=[0, 1, 2], task=['even_pairs', 'modular_arithmetic', 'parity_check', 'cycle_navigation'],
            model=['transformer_rand1024'])
log = 'out/regular_logs/{task}__{model}__s{seed}.log'
