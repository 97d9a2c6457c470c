"""
One long text through a bounded cache (extrapolate.py --protocol=stream; LM-Infinite Fig. 1, StreamingLLM Fig. 3):
which models can stream, the stream read a step (stream_step tokens) at a time, its per-token losses through a
cache-relative KVCache, and the protocol's rows, table and plot. bench.py times the same path.
"""
import itertools
import math
import time

import numpy as np
import torch

from lexgpt.config import ConfigError
from lexgpt.corpus import load_split, with_bos
from lexgpt.evaluation import runs_bos
from lexgpt.loading import data_of
from lexgpt.outputs import fmt_ppl, md_table, plt, write_outputs
from lexgpt.progress import Meter, Progress
from model import KVCache

STYLES = ['-', '--', ':']  # line style per row


STREAM_ROWS = ('sinks', 'no_sinks', 'windows')


def stream_refusal(model):
    """Why `model` cannot stream, in one line, or None. The rule: a token's logits may depend on positions only
    through distances (rotary, biases, weights, FoX's gates, CoPE), which a cache-relative position keeps at any
    stream length. Absolute parts (learned, sinusoidal, BiPE's in-segment sinusoid) would meet positions they never
    saw, FIRE's bias reads the query's own position, and RegularGPT has no cache."""
    if model.config.pe == 'regular':
        return "pe='regular' cannot stream: RegularGPT has no KV cache (its depth grows with the input)"
    if model.pe.reads_position():
        absolute = 'absolute' in model.pe.kinds
        why = 'absolute positions' if absolute else "a bias that reads the query's absolute position"
        return (f"pe={model.config.pe!r} cannot stream: {why} would grow past anything it was trained on; "
                f"streaming needs an encoding of distances only (rotary, bias, weight, potential, content or none)")
    return None


def stream_steps(parts, n_tokens, step, bos=None, each=False):
    """(input, target) pairs [1, <= step] over the first n_tokens targets of one stream, the token arrays `parts`
    (memmaps) joined end to end; read a step at a time, so memory does not grow with the stream. bos: the stream's
    first token (with n_starting, the first sink), or every step's with each (steps scored from scratch)."""
    bounds = np.cumsum([0] + [len(p) for p in parts])
    if n_tokens + 1 > bounds[-1]:
        raise ConfigError(f"tokens={n_tokens}: the stream holds only {bounds[-1] - 1} targets")

    def take(a, b):
        got = [p[max(a - s, 0):max(b - s, 0)] for p, s in zip(parts, bounds[:-1])]
        return torch.from_numpy(np.concatenate(got).astype(np.int64))[None]
    for p in range(0, n_tokens, step):
        c = min(step, n_tokens - p)
        yield with_bos(take(p, p + c), bos if each or p == 0 else None), take(p + 1, p + c + 1)


@torch.inference_mode()
def stream_losses(model, steps, cache_window, n_starting, fresh=False):
    """Per-token losses [c] of each step, scored through a relative KVCache that keeps the first n_starting tokens
    and the last cache_window ones: every token is predicted from at most n_starting + cache_window tokens, at
    distances capped at cache_window (LM-Infinite's ceiling), which equals one forward over the whole stream under
    model.attention(key_window=cache_window, n_starting=n_starting, ceiling=cache_window). fresh: each step from
    scratch."""
    cache = KVCache(cache_window=cache_window, n_starting=n_starting, relative=True)
    device = next(model.parameters()).device
    with model.attention(ceiling=cache_window if n_starting else 0):  # without starting tokens no distance reaches it
        for x, y in steps:
            loss = model(x.to(device), targets=y.to(device), cache=None if fresh else cache, reduction='none')[1][0]
            yield loss.double().cpu().numpy()


def position_buckets(n_tokens, first=64):
    """Log-spaced edges of stream positions, as LM-Infinite's Fig. 1 plots: [0, first), then one bucket per
    doubling, the last one ending at n_tokens."""
    edges, e = [0], first
    while e < n_tokens:
        edges, e = edges + [e], 2 * e
    return np.array(edges + [n_tokens], dtype=np.int64)


def stream_row(cfg, r, parts, row, edges, bos=None):
    """One run and row of protocol=stream (LM-Infinite Fig. 1, StreamingLLM Fig. 3): the stream scored through the
    bounded cache (or in windows of cache_window tokens from scratch); mean loss, seconds per position bucket, peak
    RSS. The row's JSON names the window W and the starting tokens S, as the papers' figures do."""
    cache_window = cfg['cache_window'] or r.L_tr  # None: the training length
    S, fresh = (cfg['n_starting'] if row == 'sinks' else 0), row == 'windows'
    label = f'windows of {cache_window} from scratch' if fresh else f'S={S}, W={cache_window}'
    loss, secs, at = np.zeros(len(edges) - 1), np.zeros(len(edges) - 1), 0
    steps = stream_steps(parts, cfg['tokens'], cache_window if fresh else cfg['stream_step'], bos, fresh)
    progress = Progress(f'{r.name} {label}', cfg['tokens'], 'tokens')
    with Meter() as meter:
        t, cpu = time.perf_counter(), time.process_time()
        for losses in stream_losses(r.model, steps, cache_window, S, fresh):
            bucket, now = np.searchsorted(edges, np.arange(at, at + len(losses)), 'right') - 1, time.perf_counter()
            np.add.at(loss, bucket, losses)
            np.add.at(secs, bucket, (now - t) / len(losses))
            at, t = at + len(losses), now
            progress.done(len(losses), f"perplexity so far {math.exp(loss.sum() / at):.3f}")
    cpu = time.process_time() - cpu  # of this process alone: what a busy machine disturbs less than the wall clock
    mean, n = loss.sum() / at, np.diff(edges)
    out = dict(ckpt=r.name, group=r.group, pe=r.pe, L_tr=r.L_tr, iters=r.iters, row=row, label=label, S=S,
               W=cache_window, stream_step=cfg['stream_step'], n_tokens=at, loss=mean, ppl=math.exp(mean),
               ppl_by_bucket=np.exp(loss / n).tolist(), tokens_per_s=at / meter.seconds, tokens_per_cpu_s=at / cpu,
               tokens_per_s_by_bucket=(n / secs).tolist(), memory_method=meter.method, **meter.record())
    print(f"{r.name:>18} {label:>28}: ppl {fmt_ppl(out['ppl']):>8} over {at} tokens, last bucket "
          f"{fmt_ppl(out['ppl_by_bucket'][-1])}, {out['tokens_per_s']:,.0f} tokens/s ({at / cpu:,.0f} per CPU s), "
          f"peak RSS {meter.peak_mb:.0f} MB", flush=True)
    return out


def stream_problem(data):
    """Why data is not a stream JSON of extrapolate.py ('' where it is)."""
    if not isinstance(data, dict) or data.get('protocol') != 'stream' or not all(
            isinstance(o, dict) and {'ckpt', 'row', 'iters'} <= set(o) for o in data.get('results', [None])):
        return "is not a stream JSON of extrapolate.py (protocol=stream, rows with ckpt, row, iters)"
    return ''


def check_stream(cfg):
    """The stream's own settings, before any model or data is loaded."""
    if set(cfg['stream_rows']) - set(STREAM_ROWS) or not cfg['stream_rows']:
        raise ConfigError(f"stream_rows={','.join(cfg['stream_rows'])}; allowed: {', '.join(STREAM_ROWS)}")


def stream(cfg, runs, prev):
    """protocol=stream: every run over one stream of cfg['tokens'] targets, one row per stream_rows entry; the JSON
    is rewritten after each row, so a stopped run is resumed by --reuse of its own file (prev: lexgpt/resume.py)."""
    check_stream(cfg)
    for r in runs:
        if why := stream_refusal(r.model):
            raise ConfigError(f"{r.name}: {why}")
    folder = data_of(runs, cfg['data_dir'])
    parts = [load_split(folder, cfg['split']).tokens]
    if len(parts[0]) <= cfg['tokens'] and cfg['split'] != 'train':  # the stream goes on into train
        parts.append(load_split(folder, 'train').tokens)
    edges = position_buckets(cfg['tokens'])
    bos = runs_bos(runs, cfg['bos']) if runs else prev.settings().get('bos')
    settings = dict(split=cfg['split'], tokens=cfg['tokens'], n_starting=cfg['n_starting'],
                    cache_window=cfg['cache_window'], bos=bos)
    # files made before None meant L_tr said 0 for it, and before settings.bos put no BOS first
    made = prev.settings(dict(cache_window=None, bos=None))
    prev.check_settings(settings, made=dict(made, cache_window=made['cache_window'] or None))
    here = {r.name for r in runs}
    rows = [o for o in prev.list_rows(prev.data) if o['ckpt'] not in here] if prev else []  # runs not named here
    for r, row in itertools.product(runs, cfg['stream_rows']):
        rows.append(prev.take((r.name, row), r.iters, f"{r.name:>18} {row:>28}")
                    or stream_row(cfg, r, parts, row, edges, bos))
        partial = dict(protocol='stream', partial=True, settings=settings, bucket_edges=edges.tolist(),
                       results=prev.so_far(rows))
        write_outputs(cfg['out_dir'], cfg['name'] or 'stream', partial, say=False)
    ends = [f'{e:,}' for e in edges[1:]]  # exact: a rounded 1k would name both 1,024 and a stream's end at 1,200
    md = (f"Perplexity by stream position (positions up to the column's), {cfg['tokens']} tokens of {cfg['split']} "
          f"then train: each token predicted from the first S tokens and the last W (distances capped at W) through a "
          f"cache-relative KV cache, or windows of W scored from scratch; tokens per second (wall clock, and per CPU "
          f"second of the process) and peak RSS of the whole stream.\n\n"
          + md_table(['model', 'attention'] + ends + ['all', 'tokens/s', 'tokens/CPU s', 'peak RSS'],
                     [[o['ckpt'], o['label']] + [fmt_ppl(p) for p in o['ppl_by_bucket']]
                      + [fmt_ppl(o['ppl']), f"{o['tokens_per_s']:,.0f}", f"{o['tokens_per_cpu_s']:,.0f}",
                         f"{o['peak_rss_mb']:.0f} MB"] for o in rows]))
    print('\n' + md)
    fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=True, height_ratios=[3, 2])
    ckpts = list(dict.fromkeys(o['ckpt'] for o in rows))
    for o in rows:
        style = dict(color=f'C{ckpts.index(o["ckpt"]) % 10}', ls=STYLES[STREAM_ROWS.index(o['row'])], marker='o', ms=3)
        ax.plot(edges[1:], o['ppl_by_bucket'], label=f"{o['ckpt']} {o['label']}", **style)
        tax.plot(edges[1:], o['tokens_per_s_by_bucket'], **style)
    ax.set(xscale='log', yscale='log', ylabel='perplexity in the bucket')
    ax.set_title(f"one stream of {cfg['tokens']} tokens through a bounded cache", fontsize=10)
    tax.set(xlabel='stream position (bucket end)', ylabel='tokens/s')
    for a in (ax, tax):
        a.grid(alpha=0.3, which='both')
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    data = dict(protocol='stream', settings=settings, bucket_edges=edges.tolist(), results=rows)
    write_outputs(cfg['out_dir'], cfg['name'] or 'stream', data, md, fig)
    return data
