# Table 6.1's D_n rows over the two-symbol alphabet: RegularGPT C=2, Transformer and LSTM, 3 seeds, 1500 steps each:
#   python sweep.py configs/sweep_dyck.py && python regular_lang.py --mode=table --train_missing=False \
#       --seeds=[0,1,2] --out_dir=out/regular
script = 'regular_lang.py'
args = ['--max_steps=1500', '--out_dir=out/regular']  # results.sh regular_runs writes results/regular
grid = dict(seed=[0, 1, 2], task=['D_2', 'D_3', 'D_4', 'D_12'], model=['regulargpt_c2', 'transformer', 'lstm'])
log = 'out/regular_logs/{task}__{model}__s{seed}.log'
