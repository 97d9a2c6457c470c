"""
The receptive field of a language model at L_ex (thesis ch. 4, 4.5.1): how the gradient of the last token's loss
spreads over the input embeddings. c_m, the cumulative normalised gradient, is the share of it on tokens m..L_ex;
the empirical receptive field (ERF) is the fewest most recent tokens that hold 99% of it.

  python -m analysis.receptive_field --ckpt=out/tiny-alibi,out/tiny-rope --length=4
  python -m analysis.receptive_field --ckpt=out/tiny-rope --length=4 --lm_infinite=True --windowed=True

Lengths are multiples of each checkpoint's training length L_tr. Attention variants (windowed, lm_infinite, topk,
temperature) add curves next to the vanilla model. Writes <out_dir>/<name>.json, .md and .png; --render=<a JSON it
wrote> rewrites that JSON's .md and .png, measuring nothing. The JSON is written as the segments go (marked partial),
and --reuse=<that JSON> goes on from the last segments it holds (lexgpt/resume.py).
"""
import contextlib
import functools
import json
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from lexgpt.config import ConfigError, run
from lexgpt.corpus import check_n, draw_ends, load_split, slices
from lexgpt.device import EVAL_DEVICE
from lexgpt.evaluation import (BOS_DEFAULTS, check_settings, cumulative_from_end, embedding_grad_norms, ERF_MASS,
                               erf_tokens, ex_len, extension, runs_bos, VARIANT_DEFAULTS, variants)
from lexgpt.loading import data_of, load_runs
from lexgpt.outputs import md_table, plt, write_outputs
from lexgpt.progress import Meter, Progress
from lexgpt.resume import Previous, throttled

DEFAULTS = dict(
    ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')
    length=4.0,                 # L_ex, a multiple of L_tr
    n=100,                      # segments averaged
    split='test',               # train | val | test
    data_dir='',                # default: data/<the first checkpoint's dataset>
    batch_tokens=8192,          # tokens per forward and backward pass
    recompute=False,            # keep only each block's input for the backward, rerun the block there, for one more
                                # forward (SmolLM2 at 4k tokens: 1.5 GB above the model, not 5.2; at 16k: 2.1 GB)
    regular_impl='gather',      # RegularGPT: gather (fast) or plain (dense; the only one that honours windowed/LM-Inf)
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    out_dir='out/erf',
    name='erf',                 # output file stem
    spans=[10, 512, 1024, 2048, 8192],  # the second table: the gradient's share on the last k and the first k tokens
    render='',                  # a JSON this script wrote: rewrite its .md and .png from it (no model is loaded)
    reuse='',                   # a previous JSON of the same settings: its finished rows are kept, a row stopped
                                # part-way goes on from the segments it holds
    **VARIANT_DEFAULTS,
    **BOS_DEFAULTS,
    **EVAL_DEVICE,
)


SAVE_SECONDS = 60.0  # a row under way writes its sum so far at most this often


def receptive_field(model, tokens, ends, L, batch_tokens=8192, bos=None, what='', before=(0, None),
                    save=lambda done, s_sum: None):
    """Mean normalised gradient s_m over segments, s_m = |g_m| / sum_n |g_n| with g_m the gradient of the loss of the
    token after the L-token input w.r.t. the input embedding e_m (thesis 4.5.1). Absolute encodings add their
    positions after wte, so d loss / d (e_m + p_m) = d loss / d e_m: one hook on wte serves every encoding. bos: each
    input's first token (corpus.with_bos), whose gradient counts as any other's. before: (segments done, their sum
    of s) of a run stopped part-way, which goes on from there; save(segments done, sum) after each batch."""
    ends = np.asarray(ends)
    B = max(1, batch_tokens // L)
    start, s_sum = before[0], np.zeros(L) if before[1] is None else np.array(before[1], dtype=np.float64)
    progress = Progress(what or f'L_ex={L}', len(ends), 'segments', start=start)
    for i in range(start, len(ends), B):
        x, y = slices(tokens, ends[i:i + B] - L, L, bos)
        # summed over the batch: each segment's loss depends only on its own embeddings; the last block runs for the
        # last position alone (last_k=1), the only one whose loss counts
        loss = lambda: F.cross_entropy(model(x, last_k=1)[0][:, -1].float(), y[:, -1], reduction='sum')
        g = embedding_grad_norms(model, model.transformer.wte, loss)
        s_sum += (g / g.sum(-1, keepdim=True)).sum(0).numpy()
        progress.done(len(g))
        save(i + len(g), s_sum)
    return s_sum / len(ends)


@contextlib.contextmanager
def recompute_blocks(model, on=True):
    """Activation checkpointing of every block while the context is open (the same gradients, one more forward)."""
    blocks = list(model.transformer.h) if on else []
    for b in blocks:  # an instance attribute shadows the class's forward; del restores it
        b.forward = functools.partial(checkpoint, type(b).forward.__get__(b), use_reentrant=False)
    try:
        yield
    finally:
        for b in blocks:
            del b.forward


def measure(cfg, runs, split, specs, bos=None, prev=Previous('', None), keep=lambda rows: None):
    """-> one row per checkpoint and attention variant: the normalised gradient s, its cumulative c, the ERF; a row
    the --reuse file `prev` holds is taken from it, one it holds part-way goes on. keep(rows) as the segments go."""
    out = []
    for r in runs:
        L = ex_len(cfg['length'], r.L_tr)
        ends, info = draw_ends(split, L, cfg['n'], cfg['seed'])
        for label, kw in specs:
            done = prev.take((r.name, label, L), r.iters) or {}
            if 'erf' in done:
                print(f"{r.name:>18} {label:>16}: taken from {prev.path}")
                out.append(done)
                continue
            head = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, L_ex=L, iters=r.iters, variant=label)
            before = (done.get('segments_so_far', 0), done.get('s_sum_so_far'))
            try:
                with r.model.attention(**kw(r.L_tr, cfg['length'])), recompute_blocks(r.model, cfg['recompute']), \
                        Meter() as meter:
                    s = receptive_field(r.model, split.tokens, ends, L, cfg['batch_tokens'], bos,
                                        f'{r.name} {label}', before, row_saver(keep, out, head))
            except ValueError as e:  # learned positions past block_size; an option a RegularGPT impl refuses
                print(f"{r.name:>18} {label:>16}: skipped ({e})")
                continue
            c, erf, recent = cumulative_from_end(s), erf_tokens(s), float(s[-r.L_tr:].sum())
            print(f"{r.name:>18} {label:>16}: L_ex={L}, ERF={erf} tokens ({erf / r.L_tr:.2f} L_tr), "
                  f"share of the last L_tr tokens {recent:.3f} ({meter.seconds:.1f} s)", flush=True)
            # a row gone on with: its seconds and memory are this part's
            out.append(dict(head, segments=info, erf=erf, erf_over_L_tr=erf / r.L_tr, share_last_L_tr=recent,
                            s=s.round(7).tolist(), c=c.round(6).tolist(), **meter.record(),
                            **({'segments_scored_before': before[0]} if before[0] else {})))
            keep(out)
    return out


def row_saver(keep, out, head):
    """-> save(segments done, sum of s) for a row under way: keep() gets it, as segments_so_far and s_sum_so_far
    (float64, so that going on from them gives the same s as one run), at most every SAVE_SECONDS."""
    return throttled(SAVE_SECONDS, lambda done, s_sum: keep(
        out + [dict(head, segments_so_far=done, s_sum_so_far=s_sum.tolist())]))


def span_shares(rows, spans):
    """-> (header, rows) of the second table: per row, the share of s on the last k and on the first k tokens, for
    every k of spans shorter than some row's L_ex ('-' where a row's input is not longer than k)."""
    ks = [k for k in spans if any(k < row['L_ex'] for row in rows)]
    header = ['checkpoint', 'attention', 'L_ex'] + [f'last {k}' for k in ks] + [f'first {k}' for k in ks]
    table = []
    for row in rows:
        s = np.asarray(row['s'])
        share = {(end, k): f"{100 * (s[-k:] if end == 'last' else s[:k]).sum():.2f}%" if k < len(s) else '-'
                 for end in ('last', 'first') for k in ks}
        table.append([row['ckpt'], row['variant'], row['L_ex']] + [share['last', k] for k in ks]
                     + [share['first', k] for k in ks])
    return header, table


def report(cfg, rows):
    """-> (markdown, figure): the ERF table, the span table, and every row's cumulative gradient (a colour per
    checkpoint, a line style per variant; dotted: where the last L_tr tokens start). Made from the rows alone, so
    --render can redo it from a JSON."""
    fig, ax = plt().subplots(figsize=(8, 4.5))
    ckpts = list(dict.fromkeys(row['ckpt'] for row in rows))
    labels = list(dict.fromkeys(row['variant'] for row in rows))
    for row in rows:
        ci, vi = ckpts.index(row['ckpt']), labels.index(row['variant'])
        c = cumulative_from_end(np.asarray(row['s']))
        ax.plot(np.arange(1, row['L_ex'] + 1), c, ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}',
                lw=1.2, label=f"{row['ckpt']} {row['variant']} (ERF {row['erf']})")
    for L_start in {row['L_ex'] - row['L_tr'] + 1 for row in rows}:
        ax.axvline(L_start, color='gray', lw=0.8, ls=':')
    ax.axhline(ERF_MASS, color='k', lw=0.6, ls='--')
    ax.set_xlabel('input position m (the last token is predicted)')
    ax.set_ylabel('cumulative normalised gradient c_m')
    ax.set_title('c_m = share of the gradient on tokens m..L_ex (dotted: start of the last L_tr tokens)', fontsize=9)
    ax.grid(alpha=0.3)
    if rows:
        ax.legend(fontsize=7)
    fig.tight_layout()
    md_rows = [[row['ckpt'], row['variant'], row['L_tr'], row['L_ex'], row['erf'], f"{row['erf_over_L_tr']:.2f}",
                f"{row['share_last_L_tr']:.3f}"] for row in rows]
    md = (f"Empirical receptive field (thesis 4.5.1): the fewest most recent tokens holding > {ERF_MASS} of the mean "
          f"normalised input-embedding gradient of the last token's loss.\n\n"
          + md_table(['checkpoint', 'attention', 'L_tr', 'L_ex', 'ERF (tokens)', 'ERF / L_tr', 'share of last L_tr'],
                     md_rows)
          + "\nWhere the gradient falls: its share on the last k tokens of the input and on the first k.\n\n"
          + md_table(*span_shares(rows, cfg['spans'])))
    return md, fig


def render(cfg):
    """Rewrite the .md and .png beside the JSON cfg['render'] from its rows; the JSON is left as it is."""
    path = cfg['render']
    if not path.endswith('.json') or not os.path.isfile(path):
        raise ConfigError(f"render={path!r}: give a .json file this script wrote")
    with open(path) as f:
        rows = json.load(f)['results']
    md, fig = report(cfg, rows)
    write_outputs(os.path.dirname(path), os.path.basename(path)[:-len('.json')], None, md, fig)


def main(cfg):
    """One curve per checkpoint and attention variant; returns their rows (s, c, ERF)."""
    if cfg['render']:
        return render(cfg)
    if cfg['n'] < 1 or cfg['batch_tokens'] < 1:
        raise ConfigError(f"n={cfg['n']} and batch_tokens={cfg['batch_tokens']} must be positive")
    check_settings(cfg)
    if cfg['threads'] > 0:
        torch.set_num_threads(cfg['threads'])
    specs, (label, extend) = variants(cfg), extension(cfg)  # extend_layers: the layers windowed, lm_infinite reach
    runs = load_runs(cfg['ckpt'], label=label, regular_impl=cfg['regular_impl'], device=cfg['device'],
                     dtype=cfg['dtype'], **extend)
    split = load_split(data_of(runs, cfg['data_dir']), cfg['split'])
    for r in runs:  # every run's n before the first is measured
        check_n(split, ex_len(cfg['length'], r.L_tr), cfg['n'], f"L_ex of {r.name}")
    bos = runs_bos(runs, cfg['bos'])
    # what decides the segments and their gradients: a --reuse file must have been made with the same
    settings = dict(bos=bos, n=cfg['n'], seed=cfg['seed'], split=split.name, length=cfg['length'])
    prev = Previous(cfg['reuse'], key=lambda row: (row['ckpt'], row['variant'], row['L_ex']))
    prev.check_settings(settings)

    def keep(rows):  # the JSON as the rows come, with the reuse file's rows not reached yet
        write_outputs(cfg['out_dir'], cfg['name'], dict(partial=True, split=split.name, settings=settings,
                                                        results=prev.so_far(rows)), say=False)
    out = measure(cfg, runs, split, specs, bos, prev, keep)
    md, fig = report(cfg, out)
    print('\n' + md)
    write_outputs(cfg['out_dir'], cfg['name'], dict(split=split.name, settings=settings, results=out), md, fig)
    return out


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
