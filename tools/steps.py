"""
Every command that makes a committed result, as data (#74). `python -m tools.results PART` (or `bash results.sh
PART`) runs a part's steps in order; `--list` shows each step's state, `--dry_run` its commands.

A Step is one command line, word for word as the JSON it writes records it (tests/test_provenance.py holds every
committed JSON's `command` against these lines), with what it writes and costs and how it runs:

  part        the name it runs under (tools/results.py: GROUPS run several parts, e.g. all and pretrained)
  command     the line; `{taus}` in it stands for Algorithm 1's temperatures, read from an earlier step's JSON (taus)
  cost        the time it took when it was last measured (CPU: one thread unless the command says --threads)
  outputs     the files it writes, its JSON first: read from --out_dir and --name (or --json) unless given
  reuse       the JSON whose rows it keeps: `--reuse=FILE` is appended when FILE exists, so a rerun after more seeds
              finish only scores those, and a stopped run goes on where it stopped
  env         variables beside OMP_NUM_THREADS=1, which every step gets (one thread per process: runs side by side);
              None unsets one
  skip_if     a file whose presence skips the step (a run JSON made, a corpus prepared)
  wait        a function that says why the step must wait (a checkpoint still training), None when it may run
  tee         stdout is also written to this file (tools.bench's markdown page)
  keep_going  a failure does not stop the part (a GPU's steps: the rest of the lease still runs)
  background  runs beside the steps after it (consecutive ones one after the other, the first failure ending them),
              until a step with join=True

This file holds the tiny models' parts; tools/steps_pretrained.py the pretrained models' (CPU and GPU); tools/lease.py
the GPU lease's. Adding a step is one line in its part's function below, e.g. for a RULER table

    step('ruler', 'python -m analysis.ruler --ckpt=out/lm/alibi-s0 --out_dir=results/ruler --name=alibi',
         '20 min', reuse=True)

and a new part is a function that returns its steps, added to all_steps() in tools/results.py (the order in which
--list shows the parts; tests/test_provenance.py then holds the part's JSONs against its lines).
"""
import functools
import glob
import json
import os
from dataclasses import dataclass
from typing import Callable, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Step:
    part: str
    command: str
    cost: str
    outputs: tuple = ()
    reuse: Optional[str] = None
    env: tuple = ()
    skip_if: Optional[str] = None
    wait: Optional[Callable[[], Optional[str]]] = None
    tee: Optional[str] = None
    keep_going: bool = False
    background: bool = False
    join: bool = False
    taus: Optional[tuple] = None  # (JSON of analysis.temperature, run): fills {taus} in the command


def option(command, key):
    """The value of --key=value in a command line, or None."""
    found = [w.split('=', 1)[1] for w in command.split() if w.startswith(f'--{key}=')]
    return found[-1] if found else None


def output_of(command):
    """The JSON a command writes, where it names it: --json, or --out_dir and --name."""
    if option(command, 'json'):
        return option(command, 'json')
    if option(command, 'out_dir') and option(command, 'name'):
        return f"{option(command, 'out_dir')}/{option(command, 'name')}.json"
    return None


def step(part, command, cost, out=None, reuse=False, **kw):
    """A Step whose outputs are `out` (a path or a tuple of them) or else the JSON its command names; reuse=True: it
    keeps the rows of its JSON."""
    outputs = (out,) if isinstance(out, str) else out if out is not None else (output_of(command),)
    return Step(part, command, cost, outputs=outputs, reuse=outputs[0] if reuse else None, **kw)


def opts(variant):
    """'name:--a=1:--b=2' -> ' --a=1 --b=2' (a variant's options, each after a space; '' for none)."""
    return ''.join(' ' + o for o in variant.split(':')[1:] if o)


def name_of(variant):
    return variant.split(':')[0]


def joined(pattern, items):
    """One comma-separated list: joined('results/ppl/rope_%s.json', ['pi', 'ntk'])."""
    return ','.join(pattern % i for i in items)


def taus(path, run):
    """Algorithm 1's pick (P_max alignment) per length for `run` in analysis.temperature's JSON: '2:0.95,4:0.9'."""
    with open(path) as f:
        row = next(r for r in json.load(f)['results'] if r['ckpt'] == run)
    return ','.join('%g:%g' % (length['mult'], length['tau_pmax']) for length in row['lengths'])


def resolve(s, dry=False):
    """The command a step runs now: {taus} filled in from its JSON (in a dry run, a placeholder while it is missing)."""
    if not s.taus:
        return s.command
    path, run = s.taus
    if dry and not os.path.exists(path):
        return s.command.replace('{taus}', f'<the taus of {run} in {path}>')
    return s.command.replace('{taus}', taus(path, run))


# ---- the tiny models (configs/sweep_lm_*.py write out/lm/<pe>-s<seed>) ----

PES = ('none', 'sinusoidal', 'rope', 'alibi', 'kerple_power', 'kerple_log', 'sandwich', 't5', 'fire', 'fox', 'cope',
       'xpos', 'rope-ssmax', 'rope-rand4096')


def lm():
    """results/ppl: perplexity vs length, thesis 4.3.4 (last-token; 64 segments x their last 64 tokens)."""
    P, out = 'results/ppl', []
    runs = joined('out/lm/%s-s[0-9]*', PES)
    out.append(step('lm', f'python extrapolate.py --ckpt={runs} --lengths=1,2,4,8,16 --n=64 --last_k=64 --out_dir={P}',
                    '2.2 h', out=f'{P}/ppl_last_token.json', reuse=True))
    # LM-Infinite and windowed attention next to vanilla (seed 0; xPos, whose claim is about windowed attention, all)
    out.append(step('lm', 'python extrapolate.py --ckpt=out/lm/rope-s0,out/lm/alibi-s0,out/lm/kerple_log-s0,'
                    'out/lm/xpos-s[0-9]* --lengths=1,4,16 --n=64 --last_k=64 --lm_infinite=True --windowed=True '
                    f'--out_dir={P} --name=lm_infinite', '14 min', reuse=True))
    # RoPE's extensions at s = 4: without fine-tuning (every seed of rope; dynamic NTK only here, as it is meant to be
    # used), and after the 200-step fine-tune at 4 L_tr of configs/sweep_rope_finetune.py; one set of settings
    # (lengths in units of the original L_tr = 256), which merge needs
    ext = f'--base_len=256 --lengths=1,4,16 --n=64 --last_k=64 --out_dir={P}'
    for s in ('pi', 'ntk', 'dynamic', 'yarn'):
        out.append(step('lm', f"python extrapolate.py --ckpt=out/lm/rope-s[0-9]* {ext} --rope_scaling={s} "
                        f"--rope_scale=4 --name=rope_{s}", '1 min', reuse=True))
    finetuned = joined('out/lm/%s-s[0-9]*', ('rope', 'rope-pift', 'rope-ntkft', 'rope-yarnft'))
    out.append(step('lm', f'python extrapolate.py --ckpt={finetuned} {ext} --name=rope_finetune', '3.5 min',
                    reuse=True))
    parts = joined(f'{P}/rope_%s.json', ('pi', 'ntk', 'dynamic', 'yarn', 'finetune'))
    out.append(step('lm', f'python extrapolate.py --mode=merge --out_dir={P} --name=rope_extension --inputs={parts}',
                    'seconds'))
    return out


def analysis():
    """results/analyses.md: kernels, attention temperature (ch. 5), receptive field, NoPE, passkey."""
    K, A, E = 'results/kernels', 'results/attention', 'results/erf'
    kernels = joined('out/lm/%s-s0', ('alibi', 'kerple_power', 'kerple_log', 'sandwich', 't5', 'fire'))
    temperature = joined('out/lm/%s-s0', ('t5', 'kerple_log', 'alibi', 'rope', 'rope-ssmax'))
    erf = joined('out/lm/%s-s0', ('alibi', 'kerple_log', 'rope', 'fire', 'fox', 'cope', 'xpos', 'rope-ssmax',
                                  'rope-rand4096'))
    # seeds 1 and 2 of the later methods, for the claims in results/ppl/README.md about them
    erf12 = joined('out/lm/%s-s[12]', ('fire', 'fox', 'cope', 'xpos', 'rope-ssmax', 'rope-rand4096'))
    return [
        step('analysis', f'python -m analysis.kernels --ckpt={kernels} --out_dir={K}', '1 min',
             out=f'{K}/kernels.json'),
        step('analysis', f'python -m analysis.temperature --ckpt={temperature} --lengths=2,4,8 --out_dir={A}', '7 min',
             out=f'{A}/attention.json'),
        # chapter 5: T5's perplexity at the temperatures Algorithm 1 picked just above
        step('analysis', 'python extrapolate.py --ckpt=out/lm/t5-s0 --lengths=1,2,4,8 --n=64 --last_k=64 '
             '--attn_temperature={taus} --out_dir=results/ppl --name=t5_temperature', '1.5 min', reuse=True,
             taus=(f'{A}/attention.json', 't5-s0')),
        step('analysis', f'python -m analysis.receptive_field --ckpt={erf} --length=4 --out_dir={E}', '4.5 min',
             out=f'{E}/erf.json'),
        step('analysis', f'python -m analysis.receptive_field --ckpt={erf12} --length=4 --out_dir={E} '
             '--name=erf_seeds12', '6 min'),
        step('analysis', f'python -m analysis.kernels --ckpt=out/lm/fire-s[12] --out_dir={K} --name=kernels_seeds12',
             '1 min'),
        step('analysis', f'python -m analysis.temperature --ckpt=out/lm/rope-ssmax-s[12] --lengths=2,4,8 --out_dir={A} '
             '--name=attention_seeds12', '1.5 min'),
        step('analysis', 'python -m analysis.nope --out_dir=results/nope', '1 min', out='results/nope/nope.json'),
        step('analysis', 'python -m analysis.passkey --ckpt=out/lm/alibi-s0,out/lm/t5-s0 --out_dir=results/passkey',
             '20 s', out='results/passkey/passkey.json'),
    ]


def regular():
    """results/regular: thesis Table 6.1 tabulated from the run JSONs (regular_runs makes them)."""
    table = 'python regular_lang.py --mode=table --train_missing=False --seeds=0,1,2'
    return [
        step('regular', f'{table} --models=regulargpt_c2,transformer,transformer_rand1024,lstm '
             '--out_dir=results/regular', 'seconds', out='results/regular/table.json'),
        # the dropout ablation: RegularGPT on the four Deletang tasks with the other dropout setting
        step('regular', f'{table} --models=regulargpt_c2 --tasks=even_pairs,modular_arithmetic,parity_check,'
             'cycle_navigation --out_dir=results/regular/dropout_ablation', 'seconds',
             out='results/regular/dropout_ablation/table.json'),
    ]


def regular_runs():
    """The run JSONs that `regular` tabulates (thesis Table 6.1; #5, #11): one regular_lang.py run per task, model and
    seed, skipped where its JSON exists (so a stopped part goes on); about 10 hours in all. Steps per task as in
    results/regular/README.md; RegularGPT's parity with dropout 0.1, and dropout_ablation/ the other setting on the
    four Deletang tasks. The tomita rows of seed 0 predate two options since removed (lr_decay, pad_depth: off)."""
    deletang = ('even_pairs', 'modular_arithmetic', 'parity_check', 'cycle_navigation')
    dyck = ('D_2', 'D_3', 'D_4', 'D_12')
    tomita = ('tomita_3', 'tomita_4', 'tomita_5', 'tomita_6')
    regulargpt = ('even_pairs:--max_steps=2500', 'modular_arithmetic:--max_steps=2500',
                  'parity_check:--max_steps=5000:--dropout=0.1', 'cycle_navigation:--max_steps=6000', *dyck,
                  *(f'{t}:--max_steps=4000' for t in tomita))
    ablation = ('even_pairs:--max_steps=2500:--dropout=0.1', 'modular_arithmetic:--max_steps=2500:--dropout=0.1',
                'parity_check:--max_steps=5000', 'cycle_navigation:--max_steps=6000:--dropout=0.1')
    R, out = 'results/regular', []
    for folder, model, seeds, variants in (
            (R, 'regulargpt_c2', (0, 1, 2), regulargpt), (R, 'transformer', (0, 1, 2), deletang + dyck + tomita),
            (R, 'transformer_rand1024', (0, 1, 2), deletang), (R, 'lstm', (0, 1, 2), deletang + dyck),
            (R, 'lstm', (0,), tomita), (f'{R}/dropout_ablation', 'regulargpt_c2', (0, 1, 2), ablation)):
        for v in variants:
            for seed in seeds:
                path = f'{folder}/{name_of(v)}__{model}__s{seed}.json'
                out.append(step('regular_runs', f'python regular_lang.py --task={name_of(v)} --model={model} '
                                f'--seed={seed}{opts(v)} --out_dir={folder}', '5 min', out=path, skip_if=path))
    return out


def stream():
    """#29: one stream of 1M tokens (the test split, then train) through the bounded cache-relative KV cache, S = 4 and
    W = L_tr, against S = 0 and windows of L_tr scored from scratch; seed 0, 0.5-2 CPU min per row, one thread."""
    runs = joined('out/lm/%s-s0', ('alibi', 'rope', 't5', 'kerple_log', 'none'))
    return [step('stream', f'python extrapolate.py --ckpt={runs} --protocol=stream --tokens=1000000 --n_starting=4 '
                 '--threads=1 --out_dir=results/stream', '22 min', out='results/stream/stream.json', reuse=True)]


def erf_tables():
    """The receptive-field pages redone from their committed JSONs, measuring nothing (seconds): their span table,
    which the pages' prose quotes, came after most of them were measured."""
    found = sorted(glob.glob(os.path.join(ROOT, 'results/erf/erf*.json'))) + \
        sorted(glob.glob(os.path.join(ROOT, 'results/pretrained/*erf*.json')))
    return [step('erf_tables', f'python -m analysis.receptive_field --render={os.path.relpath(f, ROOT)}', 'seconds',
                 out=()) for f in found]


def bench():
    """results/bench (#12), the speed figures: a quiet machine; ratios are against pe='none' in the same process."""
    tiny, B, two = 'python -m tools.bench configs/tiny.py', 'results/bench', (('OMP_NUM_THREADS', '2'),)
    pes = 'none,rope,alibi,sandwich,t5,kerple_log,kerple_power,kerple_3log,kerple_biaswht,gauss_wht1,xpos,fire,fox,cope'
    lines = [
        ('eval', two, '--mode=eval --lengths=8192,32768 --rounds=2 --warmup=1 --threads=2 '
         '--pes=none,alibi,kerple_log,kerple_biaswht,t5,sandwich --variants=,window,lm_infinite'),
        ('eval_more', two, '--mode=eval --lengths=2048,8192 --rounds=3 --warmup=1 --threads=2 '
         '--pes=none,rope,xpos,fire,fox,cope,kerple_3log,gauss_wht1'),
        ('train', two, f'--mode=train --rounds=12 --threads=2 --pes={pes}'),
        ('train_1thread', (), f'--mode=train --rounds=12 --threads=1 --pes={pes}'),
        ('attention', two, '--mode=attention --lengths=8192 --attn_pe=alibi --rounds=3 --threads=2 '
         '--attn_impls=causal,sdpa_mask,flex_compiled,fast'),
        ('attention_train', two, '--mode=attention --lengths=256 --attn_batch=16 --attn_pe=kerple_log --rounds=10 '
         '--threads=2 --attn_impls=causal,sdpa_mask,sdpa_mask_grad,fast'),
        ('stream', (), '--mode=stream --pes=alibi,rope --stream_tokens=10000,1000000 --rounds=2 --warmup=0 '
         '--threads=1'),
    ]
    return [step('bench', f'{tiny} {args} --json={B}/{name}.json', '10 min', env=env, tee=f'{B}/{name}.md')
            for name, env, args in lines]


def repro():
    """#71, what reproduces across machines: the demo's two runs (configs/sweep_demo.py) and their Table 3.3
    perplexities, with this machine's own kernels, with MKL's matrix products held to its AVX2 code (the path MKL
    takes on an AMD EPYC), and with torch's own kernels held to AVX2 as well: the same seed and data, only the
    rounding of the products (and of softmax) differs (results/repro/README.md)."""
    out = []
    for kernels, env in (('native', (('MKL_ENABLE_INSTRUCTIONS', None), ('ATEN_CPU_CAPABILITY', None))),
                         ('mkl_avx2', (('MKL_ENABLE_INSTRUCTIONS', 'AVX2'), ('ATEN_CPU_CAPABILITY', None))),
                         ('avx2', (('MKL_ENABLE_INSTRUCTIONS', 'AVX2'), ('ATEN_CPU_CAPABILITY', 'avx2')))):
        runs = f'out/repro/{kernels}/tiny-sinusoidal,out/repro/{kernels}/tiny-alibi'
        out.append(step('repro', f'python sweep.py configs/sweep_demo.py --jobs=1 '
                        f'--out_dir=out/repro/{kernels}/tiny-{{pe}}', '14 min',
                        out=tuple(f'{r}/ckpt.pt' for r in runs.split(',')), env=env))
        out.append(step('repro', f'python extrapolate.py --ckpt={runs} --protocol=nonoverlap --lengths=1,4,16 '
                        f'--threads=2 --out_dir=results/repro --name=demo_{kernels}', '1 min', env=env))
    return out


def mutation():
    """The project's own mutation run (#59, #75; not in CI, mutmut installed by hand: tools/mutation.py's docstring):
    tools/mutation.py's seeded sample of mutants of the code behind the reported numbers, first on the commit before
    #59's tests, then on this tree; then (#75) 50 mutants of every module behind a reported number, on the commit that
    holds the tool's TARGETS (one tree while others edit this one); a stopped run goes on where it stopped
    (results/mutation/README.md); then the defects planted by hand in the recall probe and RULER (tools/planted.py)."""
    from tools.mutation import TARGETS  # the wide run's modules, in its order: one list
    wide = ','.join(TARGETS)
    return [step('mutation', 'python -m tools.mutation --at=f78da08 --out_dir=results/mutation --name=before', '2 h'),
            step('mutation', 'python -m tools.mutation --out_dir=results/mutation --name=after', '2.5 h'),
            step('mutation', f'python -m tools.mutation --modules={wide} --n=50 --at=950d93d '
                             '--out_dir=results/mutation --name=wide', '6 h'),
            step('mutation', 'python -m tools.planted --out_dir=results/mutation --name=planted', '3 min')]


# ---- results/thesis (#39): an encoding waits while one of its runs is still training ----

def finished(pattern):
    """Whether a run matching the glob has finished: train.py writes loss.png last (a ckpt.pt may be a mid-run one)."""
    return any(os.path.isfile(os.path.join(d, 'loss.png')) for d in glob.glob(pattern))


def training(pattern):
    """A run matching the glob that is still training, or None."""
    return next((d for d in sorted(glob.glob(pattern)) if os.path.isdir(d)
                 and not os.path.isfile(os.path.join(d, 'loss.png'))), None)


def thesis_wait(runs, windowed=None):
    """Why an encoding's tables wait (None: they may run): no finished run yet, or one still training; a windowed table
    also waits until every run its --ckpt list names is finished (a pattern that matches no checkpoint is refused)."""
    if not finished(runs):
        return f'thesis: no finished run {runs} yet'
    if training(runs):
        return f'thesis: {runs} waits, {training(runs)} is still training'
    if windowed and not all(finished(p) for p in windowed.split(',')):
        return f'thesis: the windowed table of {windowed} waits until each of them has finished'
    return None


def thesis():
    """results/thesis/: the thesis' Tables 3.3, 3.4, 4.3, 4.5, 6.1 and 6.3 under their own protocols, from every
    finished seed of configs/sweep_lm_tiny.py (out/lm) and the 4x-longer runs of configs/sweep_lm_long.py (out/lm_long);
    one extrapolate.py JSON per encoding and protocol in results/thesis/eval/, whose rows --reuse keeps.
      Table 3.3, non-overlapping: the same first 2^18 tokens of the test split at every length, cut into segments of
        L_ex, every token scored; ~2 CPU minutes per run.
      Table 4.3, last token: N = 1000 segments, the last token of each after exactly L_ex tokens of context (the same
        1000 tokens at every length): 15-25 CPU minutes per run.
      Table 4.5: the same 1000 tokens with windowed attention, each token seeing the last 1024 = 4 L_tr (the thesis'
        w = 2048 at its L_tr = 512), at 8 and 16 L_tr; ALiBi and Sandwich.
      Tables 6.3/6.4: RegularGPT (configs/sweep_lm_regular.py) under Table 4.3's protocol; its reduce computes the final
        position only, so no Table 3.3 row."""
    T, out = 'results/thesis/eval', []
    no = f'--protocol=nonoverlap --max_tokens=262144 --lengths=1,2,4,8,16 --out_dir={T}'
    lt = f'--protocol=last_token --n=1000 --out_dir={T}'
    for p in ('sinusoidal', 'rope', 'alibi', 'kerple_power', 'kerple_log', 'sandwich', 'sandwich_smoothed', 't5',
              'none', 'regular64', 'regular32', 'long'):
        runs = 'out/lm_long/*-s[0-9]*' if p == 'long' else f'out/lm/{p}-s[0-9]*'
        wait = functools.partial(thesis_wait, runs)
        impl = ' --regular_impl=reduce' if p.startswith('regular') else ''
        if not impl:
            out.append(step('thesis', f'python extrapolate.py --ckpt={runs} {no} --name=nonoverlap_{p}', '10 min',
                            reuse=True, wait=wait))
        out.append(step('thesis', f'python extrapolate.py --ckpt={runs} {lt} --lengths=1,2,4,8,16{impl} '
                        f'--name=last_token_{p}', '75 min', reuse=True, wait=wait))
        if p in ('alibi', 'sandwich', 'long'):
            # the long alibi and sandwich wait for each other, so that a session that trains the long kerple_log and
            # t5 alone scores them meanwhile
            w = 'out/lm_long/alibi-s[0-9]*,out/lm_long/sandwich-s[0-9]*' if p == 'long' else runs
            out.append(step('thesis', f'python extrapolate.py --ckpt={w} {lt} --lengths=8,16 --no_vanilla=True '
                            f'--windowed=True --windowed_at=1024 --name=windowed_{p}', '45 min', reuse=True,
                            wait=functools.partial(thesis_wait, runs, w)))
    out.append(step('thesis', 'python -m analysis.thesis --out_dir=results/thesis', 'seconds',
                    out='results/thesis/thesis.json'))
    return out
