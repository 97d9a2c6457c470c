"""
The parts that test what a model does with the context it extrapolates over, beside its perplexity (tools/steps.py
says what a step is):

  recall   analysis.recall's repeated-span probe (#72): the tiny models of the thesis' tables and the later methods,
           one JSON per encoding over its finished seeds (a seed still training makes the encoding wait), the
           windowed and LM-Infinite rows of seed 0, the longer-training runs (out/lm_long), their page
           (analysis.recall_page: horizons beside ERF and perplexity, chapter 4's verdicts), then SmolLM2 and Gemma 3
           with their extensions
  ruler    RULER's synthetic tasks (#73; Hsieh et al. 2024) on SmolLM2 and Gemma 3: first the prompt format (chat
           template against RULER's base template), then NIAH single 1-3 and variable tracking for every method at
           every length (PAST_ONLY's methods, the plain model's equals up to L_tr, at 2 L_tr), then the other tasks

Costs were measured on this 2-core machine with other work beside (analysis.recall: 5-40 CPU-minutes a tiny checkpoint
at n = 64, and on SmolLM2 ~160 tokens a CPU-second at 0.25 and 0.5 L_tr and 80-100 at 1 L_tr, where a variant runs
3.9M tokens over the four lengths, 2.2M of them at 2 L_tr, and on Gemma 3 15.5M; analysis.ruler on SmolLM2, a sample
of each of NIAH single 1-3 and variable tracking: 37 CPU-s at 0.25 L_tr, 106 at 0.5, 295 at 1 L_tr, and NIAH single 1
alone 347 at 2 L_tr, six times its 58 at 1 L_tr). The pretrained ones are estimates from those rates (from one length
to twice it three times the cost, as from 0.5 to 1 L_tr, and six times past 8,192 tokens on SmolLM2, whose every layer
is global; Gemma 3, twice SmolLM2's size, at a third of its rates): far more than two cores give, so the pretrained
rows are partial. Every step keeps its JSON's rows (--reuse), so a stopped part goes on where it stopped.
"""
import functools
import os

from tools.steps import ROOT, step, thesis_wait
from tools.steps_pretrained import prepare

# the thesis' Tables 3.3 and 4.3 (configs/sweep_lm_tiny.py), then the later methods (configs/sweep_lm_wave2.py etc.)
TINY = ('alibi', 'rope', 'sandwich', 'kerple_log', 'sinusoidal', 't5', 'none', 'kerple_power', 'sandwich_smoothed',
        'fire', 'fox', 'cope', 'xpos', 'rope-ssmax', 'rope-rand4096')
VARIANTS = ('alibi', 'rope', 'kerple_log')  # windowed and LM-Infinite beside vanilla, as results/ppl's lm_infinite
LONG = ('alibi', 'sandwich', 'kerple_log', 't5')  # configs/sweep_lm_long.py's grid, seed 0
R = 'results/recall'

# Up to L_tr (the prompt and its answer budget) these see what the plain model sees: dynamic NTK scales nothing, and
# LM-Infinite's keys (L_tr and the sinks), a window of L_tr and a stream of W = L_tr keys hold the whole input. So they
# answer as it does (tests/test_ruler.py), and run at 2 L_tr only, beside the plain model's cells below it.
PAST_ONLY = {('smollm2', 'dynamic2'), ('smollm2', 'lminf'), ('smollm2', 'windowed'), ('smollm2', 'stream'),
             ('gemma3', 'lminf')}


def pretrained_lengths(model, name):
    """A pretrained method's lengths in L_tr: PAST_ONLY's at 2 L_tr alone."""
    return '2' if (model, name) in PAST_ONLY else '0.25,0.5,1,2'


def pretrained_recall(model, name, opts):
    line = (f'python -m analysis.recall --ckpt={model} --lengths={pretrained_lengths(model, name)} --span=64 --n=16 '
            f'--ratio=4 --threads=1 --out_dir={R} {opts} --name={model}_{name}')
    return ' '.join(line.split())


def recall():
    out = []
    for pe in TINY:
        runs = f'out/lm/{pe}-s[0-9]*'
        out.append(step('recall', f'python -m analysis.recall --ckpt={runs} --lengths=1,4,16 --n=64 --span=32 '
                        f'--threads=1 --out_dir={R} --name=tiny_{pe}', '5-40 min a seed', reuse=True,
                        wait=functools.partial(thesis_wait, runs)))
    for pe in VARIANTS:
        run = f'out/lm/{pe}-s0'
        out.append(step('recall', f'python -m analysis.recall --ckpt={run} --lengths=1,4,16 --n=64 --span=32 '
                        f'--no_vanilla=True --windowed=True --lm_infinite=True --threads=1 --out_dir={R} '
                        f'--name=tiny_{pe}_variants', '20 min', reuse=True,
                        wait=functools.partial(thesis_wait, run)))
    for pe in LONG:  # the longer-training check's runs, 4x the iterations (configs/sweep_lm_long.py)
        run = f'out/lm_long/{pe}-s0'
        out.append(step('recall', f'python -m analysis.recall --ckpt={run} --lengths=1,4,16 --n=64 --span=32 '
                        f'--threads=1 --out_dir={R} --name=tiny_long_{pe}', '10 min', reuse=True,
                        wait=functools.partial(thesis_wait, run)))
    # the page over whatever tiny probes are done (analysis/recall_page.py expands the glob; marked partial while a
    # probe is): horizons beside the ERF and the perplexity ratio at 16x, chapter 4's verdicts. Sandwich smoothed and
    # the longer-trained runs have no row in results/ppl's table; Table 4.3's last-token rows (1 token of 1,000
    # segments) give their ratio.
    ppl = ','.join(('results/ppl/ppl_last_token.json', 'results/ppl/lm_infinite.json',
                    'results/thesis/eval/last_token_sandwich_smoothed.json',
                    'results/thesis/eval/last_token_long.json'))
    out.append(step('recall', f'python -m analysis.recall_page --inputs={R}/tiny_*.json --erf=results/erf/erf.json,'
                    f'results/erf/erf_seeds12.json --ppl={ppl} --ppl_at=16 --out_dir={R} --name=recall', 'seconds'))
    # the pretrained models, PAST_ONLY's methods at 2 L_tr only (on SmolLM2 a variant's 2.2M of its 3.9M tokens)
    out.append(prepare('recall', 'smollm2'))
    for name, opts, cost in (('plain', '', '16 h'), ('yarn2', '--rope_scaling=yarn --rope_scale=2', '16 h'),
                             ('dynamic2', '--rope_scaling=dynamic --rope_scale=2', '12 h'),
                             ('pi2', '--rope_scaling=pi --rope_scale=2', '16 h'),
                             ('lminf', '--no_vanilla=True --lm_infinite=True', '12 h'),
                             ('windowed', '--no_vanilla=True --windowed=True', '12 h'),
                             ('stream2048', '--no_vanilla=True --cache_window=2048 --n_starting=4', '16 h'),
                             ('stream2048_nosinks', '--no_vanilla=True --cache_window=2048 --n_starting=0', '16 h')):
        out.append(step('recall', pretrained_recall('smollm2', name, opts), cost, reuse=True))
    out.append(prepare('recall', 'gemma3'))
    for name, opts, cost in (('plain', '--windowed=True --windowed_at=512', '380 h'),
                             ('lminf', '--no_vanilla=True --lm_infinite=True', '130 h'),
                             ('yarn2', '--extend_layers=global --rope_scaling=yarn --rope_scale=2', '190 h')):
        out.append(step('recall', pretrained_recall('gemma3', name, opts), cost, reuse=True))
    return out


def ruler():
    out = []
    u = 'results/ruler'
    first = '--tasks=niah_single_1,niah_single_2,niah_single_3,vt'
    rest = '--tasks=niah_multikey_1,niah_multikey_2,niah_multikey_3,niah_multivalue,niah_multiquery,cwe,fwe'
    for template in ('chat', 'base'):  # SmolLM2-135M-Instruct's own format against RULER's; the better one stays
        out.append(step('ruler', f'python -m analysis.ruler --ckpt=smollm2 --tasks=niah_single_1 --lengths=0.5 '
                        f'--n=20 --threads=1 --template={template} --out_dir={u} --name=smollm2_{template}_niah1',
                        '10 min', reuse=True))
    methods = (('smollm2', 'plain', ''), ('smollm2', 'yarn2', '--rope_scaling=yarn --rope_scale=2'),
               ('smollm2', 'dynamic2', '--rope_scaling=dynamic --rope_scale=2'),
               ('smollm2', 'pi2', '--rope_scaling=pi --rope_scale=2'),
               ('smollm2', 'lminf', '--no_vanilla=True --lm_infinite=True'),
               ('smollm2', 'windowed', '--no_vanilla=True --windowed=True'),
               ('smollm2', 'stream', '--no_vanilla=True --cache_window=8192 --n_starting=4'),
               ('gemma3', 'plain', ''),
               ('gemma3', 'yarn2', '--extend_layers=global --rope_scaling=yarn --rope_scale=2'),
               ('gemma3', 'lminf', '--no_vanilla=True --lm_infinite=True'),
               ('gemma3', 'windowed', '--no_vanilla=True --windowed=True --windowed_at=512'))
    costs = {('smollm2', ''): '12 h', ('smollm2', '_rest'): '21 h',  # the module docstring says from what
             ('gemma3', ''): '200 h', ('gemma3', '_rest'): '350 h'}
    # 2 L_tr's share of those by the same estimate: on SmolLM2 54 of 1 + 3 + 9 + 54, on Gemma 3 27 of 1 + 3 + 9 + 27
    past_costs = {('smollm2', ''): '10 h', ('smollm2', '_rest'): '17 h', ('gemma3', ''): '135 h',
                  ('gemma3', '_rest'): '240 h'}
    for tasks, stem in ((first, ''), (rest, '_rest')):
        for model, name, opts in methods:
            line = (f'python -m analysis.ruler --ckpt={model} {tasks} --lengths={pretrained_lengths(model, name)} '
                    f'--n=20 --threads=1 {opts} --out_dir={u} --name={model}_{name}{stem}')
            cost = (past_costs if (model, name) in PAST_ONLY else costs)[model, stem]
            out.append(step('ruler', ' '.join(line.split()), cost, reuse=True))
    # the page: every method beside the plain model on the same samples, and beside its perplexity
    # perplexity from one protocol per model: SmolLM2's table of every method (one input, as smollm2_n4 has no plain
    # RoPE row), Gemma 3's (four inputs)
    ppl = {'smollm2': 'results/pretrained/smollm2_ppl_all.json', 'gemma3': 'results/pretrained/gemma3_bos_ppl_all.json'}
    inputs = ','.join(f'{u}/{model}_{name}{stem}.json' for stem in ('', '_rest') for model, name, _ in methods)
    out.append(step('ruler', f"python -m analysis.ruler_page --inputs={inputs} --ppl={ppl['smollm2']},{ppl['gemma3']} "
                    f'--out_dir={u} --name=ruler', 'seconds'))
    # every cell so far rescored by RULER's own code (a checkout of it, which the project does not download)
    out.append(step('ruler', f'python -m tools.ruler_check --ruler=out/RULER --inputs={u}/smollm2_*.json,'
                    f'{u}/gemma3_*.json --out_dir={u} --name=rulers_scoring', 'seconds',
                    wait=lambda: None if os.path.isdir(os.path.join(ROOT, 'out/RULER/scripts')) else
                    'no RULER checkout: git clone https://github.com/NVIDIA/RULER out/RULER'))
    return out
