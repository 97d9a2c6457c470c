"""
Length extrapolation: evaluate models trained on L_tr tokens at L_ex > L_tr tokens, without parameter updates.

  python extrapolate.py --ckpt=out/tiny-alibi,out/tiny-rope --lengths=1,2,4,8,16     # perplexity vs length
  python extrapolate.py --ckpt='out/lm/*' --protocol=nonoverlap --lm_infinite=True   # seeds averaged, + LM-Infinite
  python extrapolate.py --mode=position --ckpt=out/tiny-alibi --length=8             # loss at each position
  python extrapolate.py --ckpt='out/lm/rope-s*' --rope_scaling=yarn --rope_scale=4   # RoPE extension, no fine-tune
  python extrapolate.py --mode=merge --inputs=results/ppl/a.json,results/ppl/b.json --name=ppl_all  # one table
  python extrapolate.py --ckpt=smollm2 --lengths=0.25,1,2 --n=1 --last_k=128 --rope_scaling=yarn --rope_scale=2
  python extrapolate.py --ckpt=out/lm/rope-s0 --protocol=stream --tokens=1000000 --n_starting=4  # one long stream

A pretrained model (an alias such as smollm2, a .gguf file, a Hugging Face folder or hub name; pretrained.py) is a
checkpoint like any other: L_tr is its training length, its data data/pycode-<model> (python -m data.prepare
--tokenizer=<model>), and --device=cuda --dtype=bfloat16 run it on a GPU.

Lengths are multiples of each checkpoint's training length L_tr (its block_size), or of base_len tokens for every
run (to compare models trained at different lengths on the same tokens). Runs whose folders differ only by
a -s<seed> suffix form a group: the table shows the mean perplexity over its seeds with their standard deviation, the
plot the mean with a +-1 std band, and the JSON keeps every run next to the group summary. Attention variants
(windowed, lm_infinite, topk, temperature) add columns next to the vanilla model. Writes <out_dir>/<name>.json, .md
and .png. Papers: thesis = T.-C. Chi, "Toward Length-Extrapolatable Transformers" (PhD thesis, CMU 2024);
LM-Infinite = Han et al., "LM-Infinite: Zero-Shot Extreme Length Generalization for Large Language Models"
(arXiv:2308.16137).
"""
import fnmatch
import itertools
import math
import os

import numpy as np
import torch

from lexgpt.config import ConfigError, run
from lexgpt.corpus import check_n, draw_ends, load_split
from lexgpt.device import EVAL_DEVICE
from lexgpt.evaluation import (BOS_DEFAULTS, check_settings, ex_len, extension, last_token_losses, nonoverlap_losses,
                               runs_bos, segment_losses, sliding_losses, VARIANT_DEFAULTS, variants)
from lexgpt.loading import data_of, load_runs, run_folder
from lexgpt.outputs import fmt_ppl, md_table, plt, read_json, write_outputs
from lexgpt.progress import Meter
from lexgpt.resume import Previous, throttled
from lexgpt.streaming import check_stream, stream, stream_problem

DEFAULTS = dict(
    mode='ppl',                 # ppl: perplexity vs length | position: loss at each position vs windowed@L_tr |
                                # merge: one table and plot from several ppl JSONs made with the same settings
    ckpt=[],                    # checkpoint files, out/<run> folders, globs ('out/lm/*-s*'); -s<seed> runs are grouped
    lengths=[1.0, 2.0, 4.0, 8.0, 16.0],  # ppl: evaluation lengths, multiples of L_tr (or of base_len)
    base_len=0,                 # ppl: >0: lengths are multiples of this many tokens for every run (0: its L_tr)
    rope_scaling='',            # evaluate with a RoPE extension not trained with: pi | ntk | dynamic | yarn | llama3
    rope_scale=4.0,             # ... at this factor s (the runs are labelled +<scaling><s>)
    inputs=[],                  # merge: the ppl JSON files
    length=8.0,                 # position: L_ex, a multiple of L_tr
    protocol='last_token',      # ppl: last_token (thesis 4.3.4) | nonoverlap (Table 3.3) | sliding
    n=0,                        # segments drawn (0: 1000 for ppl, as the thesis; 100 for position)
    last_k=1,                   # last_token: also score the k-1 tokens before each scored one (1: the thesis protocol)
    max_tokens=65536,           # nonoverlap/sliding: tokens scored
    offset=0,                   # nonoverlap/sliding: start of the scored span in the split
    stride=0,                   # sliding: tokens between windows (0: L_tr)
    tokens=1000000,             # stream: targets scored, the split's documents joined, then train beyond it
    cache_window=None,          # stream: the last tokens each token sees besides the n_starting first (None: L_tr)
    stream_step=256,            # stream: tokens fed per forward pass through the bounded cache
    # stream: S = n_starting | S = 0 | windows of cache_window from scratch
    stream_rows=['sinks', 'no_sinks', 'windows'],
    reuse='',                   # ppl, stream: a previous JSON with the same settings (lexgpt/resume.py): its rows are
                                # taken, and those of runs that ckpt names but whose folders are gone kept
    smooth=0,                   # position: moving-average width of the plot (0: L_tr / 8)
    split='test',               # train | val | test
    data_dir='',                # default: data/<the first checkpoint's dataset>
    batch_tokens=16384,         # tokens per forward pass
    regular_impl='gather',      # RegularGPT: gather (fast) or plain (dense; the only one that honours windowed/LM-Inf)
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    out_dir='',                 # '' means out/<mode> (out/stream for the stream); results.sh names results/...
    name='',                    # output file stem ('' means ppl_<protocol> or position)
    **VARIANT_DEFAULTS, **BOS_DEFAULTS, **EVAL_DEVICE,
)
MODES = ('ppl', 'position', 'merge')
PROTOCOLS = ('last_token', 'nonoverlap', 'sliding', 'stream')
STYLES = ['-', '--', ':', '-.']  # line style per attention variant; colour per run or group


# ------------------------------------------------------------------ ppl: perplexity vs length, runs and seed groups

def unit(cfg, r):
    """The tokens one length multiple stands for: base_len, or the run's own training length."""
    return cfg['base_len'] or r.L_tr


def scored_span(cfg, split, r, L_max):
    """What a run's protocol scores, the same at every length: (ends or None, info for the JSON)."""
    if cfg['protocol'] == 'last_token':
        shortest = ex_len(min(cfg['lengths']), unit(cfg, r))
        if cfg['last_k'] > shortest:
            raise ConfigError(f"last_k={cfg['last_k']} exceeds the shortest L_ex={shortest} of {r.name}; "
                              f"allowed 1..{shortest}")
        if cfg.get('n_asked'):  # an n given is scored or refused; the default 1000 takes what the split holds
            check_n(split, L_max, cfg['n'], f"the longest L_ex of {r.name}")
        # one seed for every run: runs with equal L_tr score the same tokens (a paired comparison)
        ends, info = draw_ends(split, L_max, cfg['n'], cfg['seed'])
        if info['n_drawn'] < cfg['n']:
            print(f"note: n unset: only {info['n_drawn']} positions have {L_max} tokens of context, fewer than the "
                  f"default {cfg['n']}; using all of them")
        return ends, info
    span = min(cfg['max_tokens'], len(split.tokens) - 1 - cfg['offset'])
    span = span // L_max * L_max  # a multiple of the longest L_ex: the same tokens at every L that divides it
    if span <= 0:
        raise ConfigError(f"max_tokens={cfg['max_tokens']} at offset={cfg['offset']} holds no {L_max}-token segment")
    return None, dict(offset=cfg['offset'], n_tokens=span)


def losses_at(cfg, split, r, ends, info, L, bos, what, done=(), save=None):
    """The per-token losses of run r at length L under cfg's protocol (bos: each input's first token). The last-token
    protocol, whose cells take hours on a pretrained model, resumes inside a cell (done, save: last_token_losses)."""
    n, batch = info.get('n_tokens'), cfg['batch_tokens']
    if cfg['protocol'] == 'last_token':
        return last_token_losses(r.model, split.tokens, ends, L, batch, cfg['last_k'], bos, what, done, save)
    if cfg['protocol'] == 'nonoverlap':
        return nonoverlap_losses(r.model, split.tokens, cfg['offset'], n, L, batch, bos, what)
    stride = min(cfg['stride'] or r.L_tr, L)
    return sliding_losses(r.model, split.tokens, cfg['offset'], n, L, stride, batch, bos, what)


def group_summary(groups, specs, lengths, rows):
    """Per group (-> its run names), variant and length: the mean perplexity over the seeds that gave one, and its
    spread."""
    find = {(r['ckpt'], r['variant'], r['mult']): r for r in rows}
    out = []
    for group, members in groups.items():
        for label, _ in specs:
            for m in lengths:
                got = [g for g in (find[(name, label, m)] for name in members) if g['ppl'] is not None]
                ppl = np.array([g['ppl'] for g in got])
                over = lambda f, key='ppl': float(f([g[key] for g in got])) if got else None
                out.append(dict(group=group, runs=members, variant=label, mult=m,
                                L_ex=find[(members[0], label, m)]['L_ex'], n=len(got), single=len(members) == 1,
                                ppl_mean=over(np.mean), ppl_min=over(min), ppl_max=over(max),
                                ppl_std=float(ppl.std(ddof=1)) if len(got) > 1 else 0.0,  # sample std over seeds
                                bits_mean=over(np.mean, 'bits'), seconds_mean=over(np.mean, 'seconds'),
                                peak_rss_mb_max=over(max, 'peak_rss_mb')))
    return out


PPL_FIELDS = ('command', 'protocol', 'bits_unit', 'settings', 'lengths', 'L_tr', 'description', 'results', 'groups')


def ppl_problem(data):
    """Why data is not a ppl JSON of this script ('' where it is): a foreign JSON would fail at a missing key."""
    rows_ok = isinstance(data, dict) and isinstance(data.get('results'), list) and all(
        isinstance(r, dict) and {'ckpt', 'variant', 'mult'} <= set(r) for r in data['results'])
    if not rows_ok or not all(k in data for k in PPL_FIELDS):
        return (f"is not a ppl JSON of extrapolate.py (it needs {', '.join(PPL_FIELDS)}, and rows with ckpt, variant, "
                f"mult)")
    return ''


def read_ppl_json(path, key):
    """A ppl JSON this script wrote, or a one-line error naming the file."""
    data = read_json(path, key)
    if ppl_problem(data):
        raise ConfigError(f"{key}: {path} {ppl_problem(data)}")
    return data


def pattern_rank(patterns, label):
    """Run name -> the index of the first ckpt pattern that names it: table rows follow the order of ckpt."""
    stems = [run_folder(p)[1] + label for p in patterns]
    return lambda name: next((i for i, s in enumerate(stems) if fnmatch.fnmatchcase(name.split('#')[0], s)), len(stems))


def score_runs(cfg, runs, split, specs, settings, prev, keep):
    """One row per (run, variant, length): loss, perplexity, time and memory, or the --reuse file's row (lexgpt/
    resume.py); keep(rows, setup) after each. Every run's lengths and span are checked before the first is scored.
    -> (rows, what each run's protocol scored)."""
    prev.check_settings(settings, {'bos': None})  # files made before settings.bos: no BOS was put first
    setup, rows, spans = dict(prev.data.get('setup', {})), [], {}
    for r in runs:
        for m in cfg['lengths']:
            ex_len(m, unit(cfg, r))
        spans[r.name], setup[r.name] = scored_span(cfg, split, r, ex_len(max(cfg['lengths']), unit(cfg, r)))
    for r in runs:
        ends = spans[r.name]
        if (cfg['lm_infinite'] or cfg['topk']) and not r.model.pe.reads_distance():
            print(f"note: {r.name} (pe={r.pe}) has no relative encoding: "
                  "LM-Infinite's distance ceiling does nothing there")
        for label, kw in specs:
            for m in cfg['lengths']:
                L = ex_len(m, unit(cfg, r))
                done = prev.take((r.name, label, m), r.iters) or {}
                if done.get('loss') is not None:  # a row that failed before, or a cell stopped half-way, goes on
                    print(f"{r.name:>18} {label:>22} L_ex={L:>6} ({m:g}x): taken from {prev.path}")
                    rows.append(dict(done, reused_from=prev.path))
                    continue
                row = dict(ckpt=r.name, group=r.group, pe=r.pe, L_tr=r.L_tr, iters=r.iters, variant=label, mult=m,
                           L_ex=L)
                before = done.get('losses_so_far', [])
                if before:  # its seconds and memory are then this part's
                    row['inputs_scored_before'] = len(before) // cfg['last_k']
                try:
                    with r.model.attention(**kw(r.L_tr, m)), Meter() as meter:
                        losses = losses_at(cfg, split, r, ends, setup[r.name], L, settings['bos'],
                                           f'{r.name} {label} L_ex={L}', before, cell_saver(keep, rows, row, setup))
                    loss = float(np.mean(losses))
                    row.update(loss=loss, ppl=math.exp(min(loss, 700)), bits=loss / math.log(2),
                               n_scored=len(losses), memory_method=meter.method, **meter.record())
                    print(f"{r.name:>18} {label:>22} L_ex={L:>6} ({m:g}x): ppl {fmt_ppl(row['ppl']):>9} "
                          f"{row['bits']:.4f} {split.bits_unit}, {row['n_scored']} tokens, {meter.seconds:6.1f} s, "
                          f"peak RSS {meter.peak_mb:.0f} MB (+{meter.delta_mb:.0f})", flush=True)
                except ValueError as e:  # learned positions past block_size; an option a RegularGPT impl refuses
                    row.update(loss=None, ppl=None, bits=None, error=str(e))
                    print(f"{r.name:>18} {label:>22} L_ex={L:>6}: skipped ({e})")
                rows.append(row)
                keep(rows, setup)
    return rows, setup


CELL_SAVE_SECONDS = 60.0  # a long cell writes its losses so far at most this often


def cell_saver(keep, rows, row, setup):
    """-> save(so_far) for a cell under way: the partial JSON gets the cell's row with losses_so_far() (no loss yet),
    which --reuse of that file continues from; at most every CELL_SAVE_SECONDS."""
    return throttled(CELL_SAVE_SECONDS, lambda so_far: keep(
        rows + [dict(row, loss=None, ppl=None, bits=None, losses_so_far=so_far().tolist())], setup))


def partial_writer(cfg, settings, bits_unit, prev, kept):
    """-> keep(rows, setup): the JSON as the rows come, so that a stopped run keeps them (results.sh reruns a step
    with --reuse of its own file). The reuse file's rows not reached yet stay in it."""

    def keep(done, setup):
        write_outputs(cfg['out_dir'], cfg['name'] or f"ppl_{cfg['protocol']}", dict(
            partial=True, protocol=cfg['protocol'], split=settings['split'], bits_unit=bits_unit,
            lengths=cfg['lengths'], settings=settings, setup=setup, description='partial: a run still going or stopped',
            L_tr=[], results=prev.so_far(done + kept), groups=[]), say=False)
    return keep


def ppl(cfg, runs, split, specs, prev, kept_runs=()):
    """runs are scored (or taken from the --reuse file), next to its rows of the kept_runs, whose checkpoints are not
    here."""
    lengths = cfg['lengths']
    kept = [dict(k, reused_from=prev.path) for k in prev.list_rows(prev.data) if k['ckpt'] in kept_runs
            and k['variant'] in dict(specs) and k['mult'] in lengths] if prev else []
    rank = pattern_rank(cfg['ckpt'], extension(cfg)[0])
    kept_runs = dict.fromkeys((k['ckpt'], k['group'], k['L_tr']) for k in kept)  # each run once, in their order
    found = [(r.name, r.group, r.L_tr) for r in runs] + list(kept_runs)
    groups, L_tr = {}, {}
    for name, group, L in sorted(found, key=lambda f: (rank(f[0]), f[0])):
        groups.setdefault(group, []).append(name)
        if L_tr.setdefault(group, (name, L))[1] != L:
            raise ConfigError(f"runs {L_tr[group][0]} and {name} of group {group!r} have different L_tr")
    # everything that decides which tokens are scored and how: a reuse file must have been made with the same
    settings = dict(protocol=cfg['protocol'], split=split.name if split else prev.settings()['split'],
                    longest=max(lengths), n=cfg['n'], last_k=cfg['last_k'],
                    seed=cfg['seed'], max_tokens=cfg['max_tokens'], offset=cfg['offset'], stride=cfg['stride'],
                    n_starting=cfg['n_starting'], topk=cfg['topk'], topk_from_layer=cfg['topk_from_layer'],
                    base_len=cfg['base_len'])
    settings['bos'] = runs_bos(runs, cfg['bos']) if runs else prev.settings().get('bos')
    bits_unit = split.bits_unit if split else prev.data['bits_unit']
    writer = partial_writer(cfg, settings, bits_unit, prev, kept)
    rows, setup = score_runs(cfg, runs, split, specs, settings, prev, writer)
    rows += kept
    have = {(r['ckpt'], r['variant'], r['mult']) for r in rows}
    for name, (label, _), m in itertools.product([n for g in groups.values() for n in g], specs, lengths):
        if (name, label, m) not in have:
            raise ConfigError(f"reuse={cfg['reuse']!r} has no {label} row at {m:g}x for {name}, whose checkpoint is "
                              f"not here: train or copy it, or leave that length or variant out")
    summary = group_summary(groups, specs, lengths, rows)
    first, k = setup[next(iter(groups.values()))[0]], cfg['last_k']
    if cfg['protocol'] == 'last_token':
        desc = (f"last-token protocol (thesis 4.3.4): the last token of the same {first['n_drawn']} segments of "
                f"{settings['split']}, scored after exactly L_ex tokens of context"
                + (f" (and the {k - 1} tokens before it, after L_ex-{k - 1}..L_ex-1 tokens)" if k > 1 else ''))
    else:
        desc = ('non-overlapping segments (thesis Table 3.3)' if cfg['protocol'] == 'nonoverlap' else
                f"sliding windows with stride {cfg['stride'] or 'L_tr'}, each token scored once")
        desc += f" over {first['n_tokens']} tokens of {settings['split']} from offset {cfg['offset']}"
    if settings['bos'] is not None:  # corpus.with_bos: the length and the scored tokens stay those of a run without
        desc += f"; each input's first token replaced by BOS (id {settings['bos']}), as llama-perplexity does"
    data = dict(protocol=cfg['protocol'], split=settings['split'], bits_unit=bits_unit, lengths=lengths,
                settings=settings, setup=setup, description=desc, L_tr=sorted({L for _, L in L_tr.values()}),
                results=rows, groups=summary)
    report(cfg, data, cfg['out_dir'])
    return dict(results=rows, groups=summary)


def report(cfg, data, out_dir):
    """The markdown table (perplexity, then time and memory) and the plot of ppl's group summaries."""
    summary, lengths, L_trs = data['groups'], data['lengths'], data['L_tr']
    cols = list(dict.fromkeys((s['group'], s['variant']) for s in summary))  # one column per (group, variant)
    shown = {s['group']: s['runs'][0] if s['single'] else s['group'] for s in summary}
    colname = lambda g, label: shown[g] if label == 'vanilla' else f'{shown[g]} [{label}]'
    at = {(s['group'], s['variant'], s['mult']): s for s in summary}

    def cell(s):
        if s['ppl_mean'] is None:
            return 'n/a'
        if s['single']:
            return f"{fmt_ppl(s['ppl_mean'])} ({s['bits_mean']:.3f})"
        return f"{fmt_ppl(s['ppl_mean'])} ± {fmt_ppl(s['ppl_std'], s['ppl_mean'])} (n={s['n']})"

    base = data['settings'].get('base_len') or 0
    # one row per run or group and variant, one column per length: many models stay readable
    header = ['model'] + [f'{m:g} x {base}' if base else f'{m:g} L_tr' for m in lengths]
    ppl_rows = [[colname(g, lab)] + [cell(at[(g, lab, m)]) for m in lengths] for g, lab in cols]
    cost = lambda s: (f"{s['seconds_mean']:.1f} s / {s['peak_rss_mb_max']:.0f} MB" if s['seconds_mean'] is not None
                      else 'n/a')
    cost_rows = [[colname(g, lab)] + [cost(at[(g, lab, m)]) for m in lengths] for g, lab in cols]
    seeds = any(not s['single'] for s in summary)
    md = (f"Perplexity ({data['bits_unit']} in brackets) vs evaluation length; {data['description']}"
          + ("; groups of seeds: mean perplexity ± its sample standard deviation over the n seeds" if seeds else '')
          + f". L_tr = {', '.join(map(str, L_trs))}.\n\n" + md_table(header, ppl_rows)
          + "\nTime and peak RSS per length (groups: mean time, largest peak):\n\n" + md_table(header, cost_rows))
    print('\n' + md)

    fig, ax = plt().subplots(figsize=(7.5, 5))
    labels = list(dict.fromkeys(lab for _, lab in cols))
    groups = list(dict.fromkeys(g for g, _ in cols))
    for g, lab in cols:
        pts = [at[(g, lab, m)] for m in lengths if at[(g, lab, m)]['ppl_mean'] is not None]
        if not pts:
            continue
        x, y, sd = (np.array([s[k] for s in pts], dtype=float) for k in ('L_ex', 'ppl_mean', 'ppl_std'))
        colour = f'C{groups.index(g) % 10}'
        ax.plot(x, y, STYLES[labels.index(lab) % 4] if groups.index(g) < 10 else ':', marker='o', ms=3,
                label=colname(g, lab), color=colour)
        if sd.any():
            ax.fill_between(x, np.maximum(y - sd, 1.0), y + sd, color=colour, alpha=0.2, lw=0)  # perplexity >= 1
    for L_tr in L_trs:
        ax.axvline(L_tr, color='gray', lw=0.8, ls=':')
    ax.set_xscale('log', base=2)
    ax.set(yscale='log', xlabel='evaluation length L_ex (tokens)',
           ylabel='perplexity' + (' (mean over seeds, band: ±1 std)' if seeds else ''))
    ax.set_title(f"{data['protocol']} protocol ({data['split']})", fontsize=10)
    ax.grid(alpha=0.3, which='both')
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    write_outputs(out_dir, cfg['name'] or f"ppl_{data['protocol']}", data, md, fig)


def merge(cfg):
    """One table and plot from several ppl JSONs made with the same settings (each perhaps with its own overrides)."""
    if not cfg['inputs']:
        raise ConfigError("mode=merge needs inputs=<ppl JSON files>, "
                          "e.g. --inputs=results/ppl/a.json,results/ppl/b.json")
    parts = []
    for path in cfg['inputs']:
        if not os.path.isfile(path):
            raise ConfigError(f"inputs: no file {path!r}")
        parts.append(read_ppl_json(path, 'inputs'))
        if parts[-1].get('partial'):
            raise ConfigError(f"inputs: {path} is a run's partial JSON; finish it first (its command, --reuse={path})")
    for path, p in zip(cfg['inputs'], parts):
        if p.get('settings') != parts[0].get('settings') or p.get('lengths') != parts[0].get('lengths'):
            raise ConfigError(f"inputs: {path} was made with other settings or lengths than {cfg['inputs'][0]}")
    data = dict({k: v for k, v in parts[0].items() if k != 'command'}, inputs=[p['command'] for p in parts],
                description=parts[0]['description'] + f"; merged from {', '.join(cfg['inputs'])}",
                L_tr=sorted({L for p in parts for L in p['L_tr']}),
                results=[r for p in parts for r in p['results']], groups=[s for p in parts for s in p['groups']])
    report(cfg, data, cfg['out_dir'])
    return data


# ------------------------------------------------------------------ position: loss at each position (Figs. 3.5 / 3.7)

def smooth(y, k):
    """Moving average over k positions (valid part only), for readable per-position curves."""
    k = max(1, min(k, len(y)))
    return np.arange(k - 1, len(y)), np.convolve(y, np.ones(k) / k, mode='valid')


def position(cfg, runs, split, specs):
    for r in runs:  # every run's length and n before the first is measured
        if cfg.get('n_asked'):
            check_n(split, ex_len(cfg['length'], r.L_tr), cfg['n'], f"L_ex of {r.name}")
    fig, (ax, dax) = plt().subplots(2, 1, figsize=(8, 6.5), sharex=True, height_ratios=[3, 2])
    out, md_rows, bos = [], [], runs_bos(runs, cfg['bos'])
    for ci, r in enumerate(runs):
        L, width = ex_len(cfg['length'], r.L_tr), cfg['smooth'] or max(1, r.L_tr // 8)
        ends, info = draw_ends(split, L, cfg['n'], cfg['seed'])
        curves = {}
        for vi, (label, kw) in enumerate(specs):
            try:
                with r.model.attention(**kw(r.L_tr, cfg['length'])), Meter() as meter:
                    losses = segment_losses(r.model, split.tokens, ends - L, L, cfg['batch_tokens'], bos,
                                            f'{r.name} {label}')
            except ValueError as e:  # an option a RegularGPT impl refuses
                print(f"{r.name:>18} {label:>22}: skipped ({e})")
                continue
            curve = losses.mean(0)
            inside, beyond = curve[:r.L_tr].mean(), curve[r.L_tr:].mean() if L > r.L_tr else float('nan')
            print(f"{r.name:>18} {label:>22}: {len(losses)} segments of {L}: mean loss {curve.mean():.4f}, "
                  f"positions < L_tr {inside:.4f}, >= L_tr {beyond:.4f} ({meter.seconds:.1f} s)", flush=True)
            out.append(dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, L_ex=L, variant=label, segments=info,
                            loss_by_position=curve.round(5).tolist(), mean_loss=float(curve.mean()),
                            mean_loss_below_L_tr=float(inside), mean_loss_from_L_tr=float(beyond), **meter.record()))
            md_rows.append([r.name, label, L, f'{math.exp(inside):.3f}', f'{math.exp(beyond):.3f}',
                            f'{math.exp(curve.mean()):.3f}'])
            curves[label] = curve
            x, y = smooth(curve, width)
            ax.plot(x, np.exp(y), STYLES[vi % 4], color=f'C{ci % 10}', lw=1.2, label=f'{r.name} {label}')
        # paired difference on the same segments: below 0 past L_tr means the model gains from tokens beyond L_tr
        for vi, (label, _) in enumerate(specs):
            if label in curves and label != 'windowed@L_tr' and 'windowed@L_tr' in curves:
                dax.plot(*smooth(curves[label] - curves['windowed@L_tr'], width), STYLES[vi % 4], color=f'C{ci % 10}',
                         lw=1.2, label=f'{r.name} {label} - windowed')
        for a in (ax, dax):
            a.axvline(r.L_tr, color='gray', lw=0.8, ls=':')
    ax.set(yscale='log', ylabel='perplexity (moving average)')
    ax.set_title('position-wise perplexity; dotted line: L_tr', fontsize=10)
    dax.axhline(0, color='k', lw=0.6)
    dax.set(xlabel='position in the segment', ylabel='loss - windowed loss (nats)')
    for a in (ax, dax):
        a.grid(alpha=0.3, which='both')
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=7)
    fig.tight_layout()
    md = ("Position-wise perplexity (thesis Figs. 3.5/3.7): exp of the mean loss over segments at positions below "
          "L_tr, from L_tr on, and over all positions.\n\n"
          + md_table(['checkpoint', 'attention', 'L_ex', 'PPL pos < L_tr', 'PPL pos >= L_tr', 'PPL all'], md_rows))
    print('\n' + md)
    data = dict(split=split.name, settings=dict(bos=bos), results=out)
    write_outputs(cfg['out_dir'], cfg['name'] or 'position', data, md, fig)
    return out


def output_folder(cfg):
    """--out_dir, else out/ppl, out/stream or out/position: the one place the default is decided (only results.sh
    writes under results/, naming --out_dir)."""
    folder = 'stream' if cfg['protocol'] == 'stream' and cfg['mode'] == 'ppl' else 'ppl'
    return cfg['out_dir'] or os.path.join('out', 'position' if cfg['mode'] == 'position' else folder)


def main(cfg):
    """Evaluate every checkpoint in cfg['mode']; returns ppl's {results, groups} or position's list of curves."""
    mode = cfg['mode']
    if mode not in MODES:
        raise ConfigError(f"mode={mode!r}; allowed: {', '.join(MODES)}")
    if cfg['protocol'] not in PROTOCOLS:
        raise ConfigError(f"protocol={cfg['protocol']!r}; allowed: {', '.join(PROTOCOLS)}")
    if mode == 'ppl' and not cfg['lengths']:
        raise ConfigError("lengths is empty; give multiples of L_tr, e.g. --lengths=1,2,4,8,16")
    check_settings(cfg)
    for key, low in dict(last_k=1, max_tokens=1, batch_tokens=1, n=0, offset=0, stride=0, smooth=0, threads=0, tokens=1,
                         stream_step=1, n_starting=0, base_len=0).items():
        if cfg[key] < low:
            raise ConfigError(f"{key}={cfg[key]} must be an integer >= {low}")
    if cfg['cache_window'] is not None and cfg['cache_window'] < 1:  # 0 keeps every token in sample.py: no stream
        raise ConfigError(f"cache_window={cfg['cache_window']}: the stream needs a bounded cache of >= 1 tokens "
                          f"(unset: each model's L_tr)")
    cfg = dict(cfg, out_dir=output_folder(cfg))
    if mode == 'merge':
        return merge(cfg)
    cfg = dict(cfg, n=cfg['n'] or (1000 if mode == 'ppl' else 100), n_asked=cfg['n'])
    if cfg['threads']:
        torch.set_num_threads(cfg['threads'])
    # position compares every variant with windowed@L_tr, so that one is always there
    specs = variants(cfg if mode == 'ppl' else dict(cfg, windowed=True))
    label, extend = extension(cfg)
    if cfg['protocol'] == 'stream' and mode == 'ppl':
        check_stream(cfg)
        prev = Previous(cfg['reuse'], key=lambda o: (o['ckpt'], o['row']), check=stream_problem)
        patterns, _ = prev.absent_runs(cfg['ckpt'], label)
        runs = load_runs(patterns, label=label, regular_impl=cfg['regular_impl'], device=cfg['device'],
                         dtype=cfg['dtype'], **extend)
        return stream(cfg, runs, prev)
    prev = Previous(cfg['reuse'] if mode == 'ppl' else '', key=lambda r: (r['ckpt'], r['variant'], r['mult']),
                    check=ppl_problem)
    patterns, kept = prev.absent_runs(cfg['ckpt'], label)
    runs = load_runs(patterns, label=label, empty_ok=bool(kept), regular_impl=cfg['regular_impl'],
                     device=cfg['device'], dtype=cfg['dtype'], **extend) if patterns or not kept else []
    split = load_split(data_of(runs, cfg['data_dir']), cfg['split']) if runs else None
    return ppl(cfg, runs, split, specs, prev, kept) if mode == 'ppl' else position(cfg, runs, split, specs)


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
