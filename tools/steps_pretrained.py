"""
The pretrained models' steps (tools/steps.py says what a step is and how to add one): SmolLM2-135M and Gemma 3 270M on
CPU (results/pretrained, results/stream: hours of CPU, resumable: each step keeps the rows its JSON has, a cell under
way even the inputs or keys it has scored), and on a GPU (results/pretrained_gpu, results/gpu). Costs are one CPU
thread's unless the command says --threads.
"""
import os

from tools.steps import joined, name_of, opts, step

PRE = 'results/pretrained'
TWO_THREADS = (('OMP_NUM_THREADS', '2'),)


def prepare(part, tokenizer, **kw):
    """The pycode corpus in a model's tokenizer, made once."""
    meta = f'data/pycode-{tokenizer}/meta.json'
    return step(part, f'python -m data.prepare --corpus=pycode --tokenizer={tokenizer}', '10 min', out=meta,
                skip_if=meta, **kw)


def merge(part, folder, name, pattern, items):
    """One table of several JSONs' rows (extrapolate.py --mode=merge)."""
    return step(part, f'python extrapolate.py --mode=merge --out_dir={folder} --name={name} '
                f'--inputs={joined(pattern, items)}', 'seconds')


def smollm2_ppl():
    """SmolLM2-135M-Instruct (L_tr = 8192) on the pycode test split in its own tokenizer: one input per length from the
    documents longer than 2 x 8192 tokens, its last 128 tokens scored (a CPU forward at 16k tokens takes minutes)."""
    P = f'--ckpt=smollm2 --lengths=0.25,0.5,1,2 --n=1 --last_k=128 --out_dir={PRE}'
    out = [prepare('smollm2', 'smollm2'),
           step('smollm2', f'python extrapolate.py {P} --lm_infinite=True --windowed=True --name=smollm2_ppl', '25 min',
                reuse=True)]
    for s in ('yarn', 'ntk', 'dynamic', 'pi'):
        out.append(step('smollm2', f'python extrapolate.py {P} --rope_scaling={s} --rope_scale=2 --name=smollm2_{s}',
                        '6 min', reuse=True))
    out.append(step('smollm2', f'python extrapolate.py {P} --rope_scaling=yarn --rope_scale=4 --name=smollm2_yarn4',
                    '4 min', reuse=True))
    out.append(merge('smollm2', PRE, 'smollm2_ppl_all', f'{PRE}/smollm2_%s.json',
                     ('ppl', 'yarn', 'yarn4', 'ntk', 'dynamic', 'pi')))
    return out


def smollm2_inputs():
    """SmolLM2's perplexity on four inputs per length, to 2 L_tr and at 4 L_tr."""
    out = []
    # four inputs: LM-Infinite and windowed attention (up to 1x both equal plain RoPE, so they stand for it) and every
    # RoPE extension
    P4 = f'--ckpt=smollm2 --lengths=0.25,0.5,1,2 --n=4 --last_k=128 --out_dir={PRE}'
    out.append(step('smollm2', f'python extrapolate.py {P4} --no_vanilla=True --lm_infinite=True --windowed=True '
                    '--name=smollm2_lminf_n4', '30 min', reuse=True))
    for method, scale in (('yarn', 2), ('yarn', 4), ('dynamic', 2), ('ntk', 2), ('pi', 2)):
        out.append(step('smollm2', f'python extrapolate.py {P4} --rope_scaling={method} --rope_scale={scale} '
                        f'--name=smollm2_{method}{scale}_n4', '12 min', reuse=True))
    out.append(merge('smollm2', PRE, 'smollm2_n4', f'{PRE}/smollm2_%s_n4.json',
                     ('lminf', 'yarn2', 'yarn4', 'dynamic2', 'ntk2', 'pi2')))
    # 4 L_tr = 32,768 tokens: the test split has one document that long, so four inputs from the train split's 36,
    # scored at 1 and 4 L_tr (same draws as pretrained_gpu's); 30-55 minutes each
    X = f'--ckpt=smollm2 --split=train --lengths=1,4 --n=4 --last_k=128 --out_dir={PRE}'
    variants = ('plain:', 'lminf:--no_vanilla=True:--lm_infinite=True', 'windowed:--no_vanilla=True:--windowed=True',
                'yarn4:--rope_scaling=yarn:--rope_scale=4', 'dynamic2:--rope_scaling=dynamic:--rope_scale=2',
                'yarn2:--rope_scaling=yarn:--rope_scale=2', 'ntk2:--rope_scaling=ntk:--rope_scale=2',
                'pi2:--rope_scaling=pi:--rope_scale=2')
    for v in variants:
        out.append(step('smollm2', f'python extrapolate.py {X}{opts(v)} --name=smollm2_4x_{name_of(v)}', '45 min',
                        reuse=True))
    out.append(merge('smollm2', PRE, 'smollm2_4x', f'{PRE}/smollm2_4x_%s.json', [name_of(v) for v in variants]))
    return out


def lminf_yarn_dynamic(command, name, costs):
    """A passkey grid three ways: LM-Infinite, then YaRN and dynamic NTK at s = 2 (name, name_yarn, name_dynamic)."""
    out = [step('smollm2', f'{command} --lm_infinite=True --name={name}', costs[0])]
    for s in ('yarn', 'dynamic'):
        out.append(step('smollm2', f'{command} --rope_scaling={s} --rope_scale=2 --name={name}_{s}', costs[1]))
    return out


def smollm2_passkey():
    """Passkey: one 5-digit key in the code-style filler, by depth and length, LM-Infinite and RoPE's extensions."""
    passkey, out = 'python -m analysis.passkey --ckpt=smollm2', []
    # one key in the middle, at 2048 and 16384 tokens
    out.append(step('smollm2', f'{passkey} --lengths=0.25,2 --depths=0.5 --n=1 --lm_infinite=True --out_dir={PRE} '
                    '--name=smollm2_passkey', '9 min'))
    for s in ('yarn', 'dynamic'):
        out.append(step('smollm2', f'{passkey} --lengths=0.25,2 --depths=0.5 --n=1 --rope_scaling={s} --rope_scale=2 '
                        f'--out_dir={PRE} --name=smollm2_passkey_{s}', '4 min'))
    # depths 0-100% at 2k-8k (one key per cell; a depth grid at 16k is 20 forwards of minutes each)
    out += lminf_yarn_dynamic(f'{passkey} --lengths=0.25,0.5,1 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir={PRE}',
                              'smollm2_passkey_depths', ('10 min', '5 min'))
    # four keys per cell at 2k-8k for plain RoPE and YaRN (within L_tr LM-Infinite and dynamic NTK equal plain RoPE)
    D = f'--lengths=0.25,0.5,1 --depths=0,0.25,0.5,0.75,1 --n=4 --out_dir={PRE}'
    for v in (':', '_yarn:--rope_scaling=yarn:--rope_scale=2'):
        out.append(step('smollm2', f'{passkey} {D}{opts(v)} --name=smollm2_passkey_depths_n4{name_of(v)}', '23 min',
                        reuse=True))
    # where between depths 0 and 0.25 of 8k (8,167 and 6,133 tokens back) plain RoPE's reach ends: 4 keys per depth
    out.append(step('smollm2', f'{passkey} --lengths=1 --depths=0.05,0.1,0.15,0.2 --n=4 --out_dir={PRE} '
                    '--name=smollm2_passkey_reach8k', '12 min', reuse=True))
    # ... and at 16k (one key per cell: 5 forwards of 5 minutes per variant)
    out += lminf_yarn_dynamic(f'{passkey} --lengths=2 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir={PRE}',
                              'smollm2_passkey_depths16k', ('21 min', '10 min'))
    # ... and at 32k, one key per depth (a forward at 32k: 8-12 CPU minutes; --reuse keeps each finished cell); YaRN at
    # s = 4, the factor 32k needs
    D = f'--lengths=4 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir={PRE}'
    for v in (':--lm_infinite=True', '_yarn:--rope_scaling=yarn:--rope_scale=4',
              '_dynamic:--rope_scaling=dynamic:--rope_scale=2'):
        out.append(step('smollm2', f'{passkey} {D}{opts(v)} --name=smollm2_passkey_32k{name_of(v)}', '50 min',
                        reuse=True))
    return out


def smollm2_rest():
    """The receptive field, Algorithm 1's temperature and the bounded-cache stream, then the speed figures."""
    erf = 'python -m analysis.receptive_field --ckpt=smollm2 --length=2 --n=2 --recompute=True'
    return [
        # the empirical receptive field at 2 L_tr, two test inputs; --recompute keeps the backward at 16k within a
        # few GB
        step('smollm2', f'{erf} --out_dir={PRE} --name=smollm2_erf', '30 min'),
        # LM-Infinite's ceiling takes fastattn's explicit route, which reruns its query blocks in the backward; what
        # else grew (18.6 GB with 4 of the 30 layers at 16k) was freed memory that glibc's heap kept. A fixed mmap
        # threshold returns it: 1.14 and 1.37 GB with 2 and 4 layers, at about 1.7x the time
        step('smollm2', f'{erf} --no_vanilla=True --lm_infinite=True --out_dir={PRE} --name=smollm2_erf_lminf',
             '2.3 h', env=(('MALLOC_MMAP_THRESHOLD_', '1048576'),)),
        # Algorithm 1's temperature at 2 L_tr (8 train-split inputs at L_tr for the reference, one at 16k for each of
        # the 11 temperatures), then the perplexity at the temperature it picks
        step('smollm2', 'python -m analysis.temperature --ckpt=smollm2 --data_dir=data/pycode-smollm2 --split=train '
             f'--lengths=2 --n=1 --n_tr=8 --out_dir={PRE} --name=smollm2_temperature', '75 min'),
        step('smollm2', 'python extrapolate.py --ckpt=smollm2 --lengths=1,2 --n=1 --last_k=128 '
             f'--attn_temperature={{taus}} --out_dir={PRE} --name=smollm2_temperature_ppl', '6 min',
             taus=(f'{PRE}/smollm2_temperature.json', 'smollm2')),
        # #29: one stream of 100k tokens through the bounded cache, W = 8192 (its L_tr), S = 4 against S = 0
        step('smollm2', 'python extrapolate.py --ckpt=smollm2 --protocol=stream --tokens=100000 --n_starting=4 '
             '--threads=1 --stream_rows=sinks,no_sinks --out_dir=results/stream --name=stream_smollm2', '2.3 h',
             reuse=True),
    ] + bench('smollm2_bench', 'smollm2', ('bench', '--lengths=2048,4096,8192 --rounds=2 --warmup=1'),
              ('bench_32k', '--lengths=32768 --rounds=1 --warmup=0'))


def bench(part, model, *runs):
    """Our forward against transformers' on the same GGUF, interleaved in one process (a quiet machine)."""
    return [step(part, f'python -m tools.bench --mode=pretrained --pretrained={model} {args} --threads=2 '
                 f'--json={PRE}/{name}.json', '10 min', env=TWO_THREADS, tee=f'{PRE}/{name}.md') for name, args in runs]


def no_bos(kind):
    """#58: a Gemma run named nobos measures without <bos>."""
    return '' if kind == 'bos' else ' --bos=False'


def gemma3():
    """Gemma 3 270M (#41, #58; L_tr = 32,768; 15 local layers with a 512-token window, 3 global ones) as its own tools
    run it: its tokenizer puts <bos> first, so every input starts with it (settings.bos = 2). Perplexity: 4 train-split
    inputs, their last 128 tokens scored at every length (per input and column: 0.25x 1, 0.5x 2-3, 1x 4-6, 2x 7-17
    minutes; 4 L_tr is gemma3_4x's)."""
    G = f'--ckpt=gemma3 --split=train --lengths=0.25,0.5,1,2 --n=4 --last_k=128 --out_dir={PRE}'
    out = [prepare('gemma3', 'gemma3'),
           step('gemma3', f'python extrapolate.py {G} --name=gemma3_bos_plain', '2 h', reuse=True),
           # the changes reach the 3 global layers only: LM-Infinite, a 512 window (all 18 layers local), and after
           # passkey (its 64k row first), RoPE's extensions at s = 2
           step('gemma3', f'python extrapolate.py {G} --no_vanilla=True --lm_infinite=True --windowed=True '
                '--windowed_at=512 --extend_layers=global --name=gemma3_bos_lminf', '2.3 h', reuse=True),
           # passkey by depth at 8k, 32k and 64k, 4 keys per cell, each scored alone at 64k; the JSON is rewritten after
           # every forward pass, so a stopped cell keeps its keys (at 64k 13 minutes a key on one thread)
           step('gemma3', 'python -m analysis.passkey --ckpt=gemma3 --lengths=0.25,1,2 --depths=0,0.25,0.5,0.75,1 '
                f'--n=4 --threads=2 --out_dir={PRE} --name=gemma3_bos_passkey', '8 h', reuse=True)]
    for s in ('yarn', 'dynamic', 'pi'):
        out.append(step('gemma3', f'python extrapolate.py {G} --rope_scaling={s} --rope_scale=2 --extend_layers=global '
                        f'--name=gemma3_bos_{s}2', '75 min', reuse=True))
    out.append(merge('gemma3', PRE, 'gemma3_bos_ppl_all', f'{PRE}/gemma3_bos_%s.json',
                     ('plain', 'lminf', 'yarn2', 'dynamic2', 'pi2')))
    # the receptive field at 1 L_tr (4 test-split inputs), and with the global layers windowed at 512: the local
    # layers' reach alone. Beside a 4x run on 2 cores: 16-22 minutes an input, the windowed row 16; peak RSS 8.0 GB,
    # the windowed row 9.8: beside gemma3_4x* (about 7.4 GB) it fits a 23 GB machine
    E = f'python -m analysis.receptive_field --ckpt=gemma3 --length=1 --n=4 --recompute=True --out_dir={PRE}'
    out.append(step('gemma3', f'{E} --name=gemma3_bos_erf', '65 min', reuse=True))
    out.append(step('gemma3', f'{E} --no_vanilla=True --windowed=True --windowed_at=512 --extend_layers=global '
                    '--name=gemma3_bos_erf_windowed', '65 min', reuse=True))
    return out


def gemma3_stream():
    """#41, #58: Gemma 3's 200k-token stream (the test split, then train) with <bos> its first token, so the first of
    the S = 4 sinks; W = L_tr = 32,768 for the global layers (the local ones keep their 512), S = 4 against S = 0; one
    row per call, so a stopped run keeps the row it finished (40 minutes a row on two threads). First, minutes a row,
    the sinks where they can matter: W = 512, with <bos> first and, for the comparison, without. The 200k stream
    without <bos> is the one measured before #58 as stream_gemma3 (its JSON's command_as_run), renamed: --reuse of its
    file keeps its rows."""
    out = []
    for b in ('bos', 'nobos'):
        out.append(step('gemma3_stream', 'python extrapolate.py --ckpt=gemma3 --protocol=stream --tokens=32768 '
                        f'--cache_window=512 --n_starting=4{no_bos(b)} --threads=2 --out_dir=results/stream '
                        f'--name=stream_gemma3_w512_{b}', '18 min', reuse=True))
    for b in ('bos', 'nobos'):
        for rows in ('sinks', 'sinks,no_sinks'):
            out.append(step('gemma3_stream', 'python extrapolate.py --ckpt=gemma3 --protocol=stream --tokens=200000 '
                            f'--n_starting=4 --threads=2{no_bos(b)} --stream_rows={rows} --out_dir=results/stream '
                            f'--name=stream_gemma3_{b}', '40 min', reuse=True))
    return out


def gemma3_4x():
    """#41, #58: 4 L_tr = 131,072 tokens on CPU: 4 inputs, all from the only train document that long (4 offsets),
    their last 128 tokens, 1x on the same inputs beside them: LM-Infinite on the 3 global layers with all 18 windowed at
    512, then YaRN, dynamic NTK and PI at s = 4 on the global layers. With <bos> first (gemma3_4x) and, for this table
    alone, without it (gemma3_4x_nobos: the same inputs). Per input at 4x: LM-Infinite 22 and windowed 11.5 minutes on
    one thread, each extension 30-31."""
    out = []
    for b, part in (('bos', 'gemma3_4x'), ('nobos', 'gemma3_4x_nobos')):
        G = f'python extrapolate.py --ckpt=gemma3 --split=train --lengths=1,4 --n=4 --last_k=128 --out_dir={PRE}' \
            f'{no_bos(b)} --threads=2'
        out.append(step(part, f'{G} --lm_infinite=True --windowed=True --windowed_at=512 --extend_layers=global '
                        f'--name=gemma3_{b}_4x_lminf', '3.5 h', reuse=True))
        for s in ('yarn', 'dynamic', 'pi'):
            out.append(step(part, f'{G} --rope_scaling={s} --rope_scale=4 --extend_layers=global '
                            f'--name=gemma3_{b}_4x_{s}4', '1.5 h', reuse=True))
        out.append(merge(part, PRE, f'gemma3_{b}_4x_all', f'{PRE}/gemma3_{b}_4x_%s.json',
                         ('lminf', 'yarn4', 'dynamic4', 'pi4')))
    return out


def gemma3_cells():
    """#58: where Gemma 3's runs stand, each cell of their JSONs with the n it reached (a partial file's too): what
    results/pretrained/gemma3.md quotes while they run. Seconds; run it after any of the Gemma parts."""
    files = [f'{PRE}/gemma3_bos_{f}.json' for f in ('plain', 'lminf', 'yarn2', 'dynamic2', 'pi2', 'passkey', 'erf',
                                                    'erf_windowed')]
    files += [f'results/stream/stream_gemma3_{f}.json' for f in ('bos', 'w512_bos', 'w512_nobos')]
    files += [f'{PRE}/gemma3_{b}_4x_{f}.json' for b in ('bos', 'nobos') for f in ('lminf', 'yarn4', 'dynamic4', 'pi4')]
    return [step('gemma3_cells', f"python -m tools.cells --inputs={','.join(files)} --out_dir={PRE} "
                 '--name=gemma3_bos_cells', 'seconds')]


def pretrained_cpu():
    """What `pretrained` runs, in order: SmolLM2, its speed, then every Gemma 3 part."""
    gemma3_bench = bench('gemma3_bench', 'gemma3', ('bench_gemma3', '--lengths=2048,8192 --rounds=2 --warmup=1'),
                         ('bench_gemma3_32k', '--lengths=32768 --rounds=1 --warmup=0'))
    return smollm2_ppl() + smollm2_passkey() + smollm2_inputs() + smollm2_rest() + gemma3() + gemma3_stream() + \
        gemma3_4x() + gemma3_bench + gemma3_cells()


def pretrained_gpu():
    """What a CPU sitting cannot do (#28), on one GPU: passkey at 16k and 32k with four keys per cell (float32, as
    every CPU table), and PI's fine-tune (bfloat16 autocast), which trains beside them: one GPU holds both. Then the
    perplexity grid that a first try on an H100 did not finish (it ran out of memory at 4x, a fault fixed since), and
    Gemma 3's: 4 L_tr (131k tokens) on 4 inputs, every extension at s = 4, passkey at 64k with four keys. A failed step
    does not stop the rest of a GPU lease. PRETRAINED_GPU_MODEL, _DEVICE, _OUT and _LENGTH override the model, the
    device, the folder and the fine-tune's length (to try the part on a CPU)."""
    model = os.environ.get('PRETRAINED_GPU_MODEL', 'smollm2')
    device = os.environ.get('PRETRAINED_GPU_DEVICE', 'cuda')
    folder = os.environ.get('PRETRAINED_GPU_OUT', 'results/pretrained_gpu')
    length = os.environ.get('PRETRAINED_GPU_LENGTH', '16384')
    gpu = lambda *a, **kw: step('pretrained_gpu', *a, keep_going=True, **kw)  # noqa: E731
    # PI (Chen et al. 2023, arXiv:2306.15595): interpolate to 2 x 8192, then fine-tune at that length (their lr 2e-5,
    # no weight decay); 80 steps of 2 x 16,384 tokens, then the test inputs of smollm2_n4 (lengths 2048-16,384, n = 4)
    ft = 'out/smollm2-pi2ft'
    out = [prepare('pretrained_gpu', 'smollm2', keep_going=True),
           gpu(f'python train.py --init_from={model} --data_dir=data/pycode-smollm2 --out_dir={ft} --device={device} '
               f'--dtype=bfloat16 --block_size={length} --rope_scaling=pi --rope_scale=2 --batch_size=1 '
               '--gradient_accumulation_steps=2 --max_iters=80 --learning_rate=2e-5 --min_lr=2e-6 --warmup_iters=8 '
               '--weight_decay=0 --eval_interval=20 --eval_iters=4 --log_interval=5', '10 min',
               out=f'{ft}/ckpt.pt', background=True),
           gpu(f'python extrapolate.py --ckpt={ft} --data_dir=data/pycode-smollm2 --lengths=0.125,0.25,0.5,1 --n=4 '
               f'--last_k=128 --device={device} --out_dir={folder} --name=smollm2_pi2ft', '1 min', background=True),
           gpu(f'cp {ft}/log.csv {folder}/smollm2_pi2ft_log.csv', 'seconds', out=f'{folder}/smollm2_pi2ft_log.csv',
               background=True),
           gpu(f'cp {ft}/loss.png {folder}/smollm2_pi2ft_loss.png', 'seconds', out=f'{folder}/smollm2_pi2ft_loss.png',
               background=True)]
    # passkey: YaRN at the factor each length needs, LM-Infinite, dynamic NTK, then plain RoPE (one key: lost at both)
    K = f'--ckpt={model} --device={device} --depths=0,0.25,0.5,0.75,1 --n=4 --out_dir={folder}'
    for v in ('yarn2:--lengths=2:--rope_scaling=yarn:--rope_scale=2', 'yarn4:--lengths=4:--rope_scaling=yarn:'
              '--rope_scale=4', 'lminf:--lengths=2,4:--no_vanilla=True:--lm_infinite=True',
              'dynamic2:--lengths=2,4:--rope_scaling=dynamic:--rope_scale=2', 'plain:--lengths=2,4'):
        out.append(gpu(f'python -m analysis.passkey {K}{opts(v)} --name=smollm2_passkey_n4_{name_of(v)}', '1 min',
                       reuse=True))
    # the perplexity grid: 4 train-split inputs with 32,768 tokens of context (the CPU has since scored 1x and 4x on
    # the same draws), every extension
    P = f'--ckpt={model} --data_dir=data/pycode-smollm2 --device={device} --out_dir={folder} --split=train ' \
        '--lengths=0.25,0.5,1,2,4 --n=4 --last_k=128'
    out.append(gpu(f'python extrapolate.py {P} --lm_infinite=True --windowed=True --name=smollm2_ppl', '5 min',
                   reuse=True))
    for method, scale in (('yarn', 2), ('yarn', 4), ('ntk', 2), ('dynamic', 2), ('pi', 2)):
        out.append(gpu(f'python extrapolate.py {P} --rope_scaling={method} --rope_scale={scale} '
                       f'--name=smollm2_{method}{scale}', '3 min', reuse=True))
    out.append(merge('pretrained_gpu', folder, 'smollm2_ppl_all', f'{folder}/smollm2_%s.json',
                     ('ppl', 'yarn2', 'yarn4', 'ntk2', 'dynamic2', 'pi2')))
    return out + gemma3_gpu(device, folder)


def gemma3_gpu(device, folder):
    """Gemma 3 on the GPU, once the fine-tune beside the passkey runs is done. Its GGUF (253 MB) and
    data/pycode-gemma3 outrun what one device call carries (64 MiB): `split -b 60M ~/.cache/lexgpt/gemma-3-270m-
    q4_k_m.gguf .lease/gemma3.part`, one call per part appending it to ~/.cache/lexgpt/ there, sha256 checked; the
    tokenizer needs the gguf and tokenizers wheels in .lease/whl (tools/lease.py)."""
    gpu = lambda *a, **kw: step('pretrained_gpu', *a, keep_going=True, **kw)  # noqa: E731
    out = [prepare('pretrained_gpu', 'gemma3', keep_going=True, join=True)]
    P = f'--ckpt=gemma3 --device={device} --out_dir={folder} --split=train --lengths=0.25,0.5,1,2,4 --n=4 --last_k=128'
    out.append(gpu(f'python extrapolate.py {P} --lm_infinite=True --windowed=True --windowed_at=512 '
                   '--extend_layers=global --name=gemma3_ppl', '10 min', reuse=True))
    for s in ('yarn', 'dynamic', 'pi'):
        out.append(gpu(f'python extrapolate.py {P} --rope_scaling={s} --rope_scale=4 --extend_layers=global '
                       f'--name=gemma3_{s}4', '5 min', reuse=True))
    out.append(merge('pretrained_gpu', folder, 'gemma3_ppl_all', f'{folder}/gemma3_%s.json',
                     ('ppl', 'yarn4', 'dynamic4', 'pi4')))
    K = f'python -m analysis.passkey --ckpt=gemma3 --device={device} --lengths=0.25,1,2 ' \
        f'--depths=0,0.25,0.5,0.75,1 --n=4 --out_dir={folder}'
    out.append(gpu(f'{K} --lm_infinite=True --extend_layers=global --name=gemma3_passkey', '10 min', reuse=True))
    out.append(gpu(f'{K} --rope_scaling=yarn --rope_scale=2 --extend_layers=global --name=gemma3_passkey_yarn2',
                   '10 min', reuse=True))
    return out


def gpu():
    """results/gpu: GPU speed figures: FlexAttention against the other attention routes, the eval forward per encoding
    (the biased ones take the flex route), SmolLM2 against transformers (configs/tiny.py says device=cpu: --device)."""
    tiny, G = 'python -m tools.bench configs/tiny.py --device=cuda', 'results/gpu'
    lines = (('attention', f'{tiny} --mode=attention --lengths=4096,16384 --attn_pe=alibi --rounds=5 '
              '--attn_impls=causal,sdpa_mask,flex_eager,flex_compiled,fast'),
             ('eval', f'{tiny} --mode=eval --lengths=8192,32768 --rounds=3 --warmup=1 '
              '--pes=none,alibi,kerple_log,t5,rope --variants=,window,lm_infinite'),
             ('pretrained', 'python -m tools.bench --mode=pretrained --pretrained=smollm2 --device=cuda '
              '--dtype=float32 --lengths=8192,32768 --rounds=3 --warmup=1'))
    return [step('gpu', f'{command} --json={G}/{name}.json', '5 min', tee=f'{G}/{name}.md') for name, command in lines]
