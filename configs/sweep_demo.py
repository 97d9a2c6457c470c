# demo.sh's two runs: configs/tiny.py with sinusoidal and with ALiBi positions, side by side, one thread each
script = 'train.py'
args = ['configs/tiny.py']
grid = dict(pe=['sinusoidal', 'alibi'])
out_dir = 'out/tiny-{pe}'
