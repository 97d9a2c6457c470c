"""
Recall at distance: does a model use the context it extrapolates over? A repeated-span probe. An input of L_ex tokens
ends with a span S of s tokens and holds an earlier copy of S whose start lies d tokens before the last copy's start;
the control is the same input with the earlier copy replaced by another span S' of the same length, so the scored
tokens and their positions are the same. A model that reads back d tokens predicts the last S better in the repeat.

  python -m analysis.recall --ckpt=out/tiny-alibi --lengths=1,4,16
  python -m analysis.recall --ckpt='out/lm/*-s*' --lengths=1,4,16 --windowed=True --lm_infinite=True
  python -m analysis.recall --ckpt=out/tiny-rope --cache_window=256 --n_starting=4 --no_vanilla=True  # the stream
  # a pretrained model: s = 64 tokens, a coarser grid
  python -m analysis.recall --ckpt=smollm2 --lengths=0.25,1,2 --span=64 --n=16 --ratio=4 --lm_infinite=True

Two kinds of span, a row each: 'text' (S and S' from the split's documents) and 'random' (s ids drawn uniformly
from those the split holds: Olsson et al. 2022, "In-context Learning and Induction Heads", repeated random tokens,
natural predictability removed). The filler around the copies is the same text of the split for both kinds.

Recall benefit at (L_ex, d), nats/token: over n spans, the mean of b_i = mean over S's tokens after the first `skip`
(the model cannot know yet that the span repeats) of loss(control) - loss(repeat). Its 95% CI is a t-interval over
the n spans (CI_METHOD); the model recalls at d where that interval lies above --min_benefit (a one-sided t-test at
2.5%, its p in the JSON; no correction over the d of a row). The floor, 0.001 nats/token by default, keeps out
effects too small to matter that a deterministic model still shows at n = 64: a tiny ALiBi's flattest head
(slope 1/256) still weighs a token 2,048 back by e^-8. The recall horizon of a row is the largest such d; the share
beyond L_tr is the mean benefit over the row's d > L_tr divided by the benefit at its smallest d (where that one
counts). L_ex is fixed along a row, only d changes: the default grid is s, 2s, 4s, ... (--ratio) plus L_tr and
L_ex - s, each within s..L_ex - s; --distances lists tokens instead.

The spans (the same at every length and distance) and the fillers (one per span and L_ex, the same for both kinds)
are drawn once from --seed; the JSON records them (text: offsets into the split; random: the ids), with the layout
of analysis/recall_inputs.py, so that an independent scorer can rebuild every input. Attention variants (windowed,
lm_infinite, ...) add rows next to the vanilla model; --cache_window=W adds a row scored through the bounded-cache
stream (lexgpt/streaming.py: the first --n_starting tokens and the last W, distances capped at W when there are
sinks), --stream_step tokens a forward.

Cost: every input of a span holds the same filler before its earlier copy, so that prefix goes once through a KV
cache, forked at each copy's start for the repeat and control of every kind (tree_losses; a cache gives what a
forward gives, tests/test_model.py, for all but the cases `shareable` leaves out). A tiny model at 16 L_tr (8
distances, both kinds) then runs 37,600 tokens a span instead of 131,072, but a cached query block takes the slower
`blocks` route (lexgpt/routes.py): a tiny ALiBi at 1, 4 and 16 L_tr, n = 8, took 73 CPU-s instead of 106, with the
same table. --share_prefix=False runs a whole forward per input.
Writes <out_dir>/<name>.json, .md and .png; the JSON is rewritten as spans are scored (marked partial, at most every
SAVE_SECONDS and as each length ends), and --reuse=<that JSON> goes on where a stopped run left off, inside a cell
too.
"""
import contextlib
import copy
import math

import numpy as np
import torch
from scipy import stats

from analysis.recall_inputs import cell_inputs, distance_grid, draw_fillers, draw_spans, KINDS
from analysis.recall_report import figure, row_verdict, tables
from lexgpt.config import ConfigError, run
from lexgpt.corpus import load_split
from lexgpt.device import EVAL_DEVICE
from lexgpt.evaluation import BOS_DEFAULTS, check_settings, ex_len, extension, runs_bos, VARIANT_DEFAULTS, variants
from lexgpt.loading import data_of, load_runs
from lexgpt.outputs import write_outputs
from lexgpt.progress import Meter, Progress
from lexgpt.resume import Previous, cells_so_far, kept_record, throttled
from lexgpt.streaming import stream_refusal
from model import KVCache

DEFAULTS = dict(
    ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0'), smollm2, gemma3
    data_dir='',                # default: data/<the first checkpoint's dataset>
    split='test',               # train | val | test: spans and fillers come from it
    lengths=[1.0, 4.0, 16.0],   # L_ex, multiples of L_tr
    distances=[],               # d in tokens ([]: s, s*ratio, ... plus L_tr and L_ex - s)
    ratio=2.0,                  # the default grid's step
    n=64,                       # spans per cell
    span=32,                    # s, tokens of S (32 bytes for the tiny models, 32-64 tokens for a pretrained one)
    skip=4,                     # S's first tokens left out of the score
    kinds=['text', 'random'],   # text | random (repeated random tokens)
    batch_tokens=16384,         # tokens per forward pass (at least one span's repeat and control)
    share_prefix=True,          # run each span's filler once through a KV cache for all its inputs, where a cache
                                # gives what a forward gives (shareable); False: a whole forward per input
    min_benefit=0.001,          # nats/token: recall counts where the 95% CI lies above it (0: above 0)
    cache_window=0,             # >0: also a row through the bounded-cache stream of this many last tokens, with the
                                # first n_starting tokens as sinks
    stream_step=256,            # the stream's tokens per forward
    rope_scaling='',            # evaluate with a RoPE extension: pi | ntk | dynamic | yarn | llama3
    rope_scale=4.0,             # ... at this factor s
    regular_impl='gather',      # RegularGPT: gather (fast) or plain (dense; the only one that honours windowed/LM-Inf)
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    reuse='',                   # a previous JSON of the same settings: its cells are kept, a cell stopped part-way
                                # goes on from the spans it holds
    out_dir='out/recall',
    name='recall',              # output file stem
    **VARIANT_DEFAULTS,
    **BOS_DEFAULTS,
    **EVAL_DEVICE,
)

CI_METHOD = ("b_i = mean over span i's scored tokens of loss(control) - loss(repeat); benefit = mean of b over the n "
             "spans, 95% CI = benefit +- t(0.975, n-1) sd(b) / sqrt(n) (a t-interval over spans, paired by span); "
             "p = one-sided t-test of benefit > min_benefit; significant: the CI's lower end above min_benefit "
             "(p < 0.025)")
LAYOUT = ("input of L_ex tokens: tokens[f:f+L_ex] of the split (f: fillers[L_ex][i]), with S at L_ex-s.. and "
          "S (repeat) or S' (control) at p1 = L_ex - s - d; with a BOS id, position 0 holds it; scored: the losses of "
          "the last s - skip tokens (S[skip:]); spans: text [S start, S' start] in the split, random [S ids, S' ids]")
SAVE_SECONDS = 10.0  # a run under way rewrites its partial JSON at most this often; a finished length, at once


def new_cache(stream):
    return KVCache() if stream is None else KVCache(cache_window=stream[0], n_starting=stream[1], relative=True)


def fork(cache, times):
    """A copy of the KV cache whose batch rows are each repeated `times` times (row b -> rows b*times ..): the
    cached prefix of one span serves its repeat and control inputs of every kind. Tensors are replaced, never
    written into, when the cache grows, so the copy shares none that a forward changes."""
    out, rows = copy.copy(cache), lambda t: None if t is None else t.repeat_interleave(times, 0)
    out.k, out.v, out.pot = ({layer: rows(t) for layer, t in d.items()} for d in (cache.k, cache.v, cache.pot))
    out.window = dict(cache.window)
    out.rel = cache.rel if cache.rel.size(0) == 1 else rows(cache.rel)
    out.pe_state = tuple(map(rows, cache.pe_state)) if isinstance(cache.pe_state, tuple) else cache.pe_state
    return out


def feed(model, x, cache, stream, step):
    """x through the cache with no scores (the head sees one position a call): the stream step by step."""
    for a in range(0, x.size(1), step if stream else max(1, x.size(1))):
        model(x[:, a:a + step] if stream else x, cache=cache)


def attention_of(model, stream):
    """The stream's distance ceiling (W, where there are sinks: streaming.stream_losses), or no change."""
    return model.attention(ceiling=stream[0] if stream[1] else 0) if stream else contextlib.nullcontext()


@torch.inference_mode()
def scored_losses(model, x, m, stream=None, step=256, cache=None):
    """float64 [B, m]: the losses of the last m tokens of each input row x [B, L] (the targets x[:, L-m:], predicted
    at positions L-m-1..L-2), the last block and head reached only by the last m+1 positions; from one forward, or
    after the prefix a KV cache holds (fork), or through the bounded cache stream = (W, S): the cache and distance
    ceiling of streaming.stream_losses, stream_step tokens a forward."""
    L = x.size(1)
    y = torch.cat([x[:, L - m:], torch.full((len(x), 1), -1, dtype=x.dtype)], 1)  # the last position scores nothing
    if stream is None:
        logits = model(x, targets=y, cache=cache, reduction='none', last_k=m + 1)[0]
    else:
        cache = new_cache(stream) if cache is None else cache
        with attention_of(model, stream):
            feed(model, x[:, :L - m - 1], cache, stream, step)
            logits = model(x[:, L - m - 1:], targets=y, cache=cache, reduction='none')[0]
    logp = logits[:, :m].double().log_softmax(-1)
    return -logp.gather(-1, y[:, :m, None])[..., 0].cpu()


@torch.inference_mode()
def tree_losses(model, trunk, branches, m, stream=None, step=256):
    """The inputs of a batch of spans with their common prefix run once: trunk [B, T] (each span's filler, which
    every input of the span holds before its earlier copy), branches {p1: [B*R, L - p1]} (the R inputs of each span
    from its copy at p1 on, span-major). The prefix up to each p1 (ascending) goes through one KV cache, forked for
    the branches -> {p1: float64 [B*R, m]}, what scored_losses gives for the whole inputs."""
    cache, at, out = new_cache(stream), 0, {}
    with attention_of(model, stream):
        for p1 in sorted(branches):
            feed(model, trunk[:, at:p1], cache, stream, step)
            at, x = p1, branches[p1]
            out[p1] = scored_losses(model, x, m, stream, step, fork(cache, len(x) // len(trunk)) if p1 else None)
    return out


def shareable(model, kw):
    """Whether a KV cache gives what one forward gives (tests/test_model.py's decoding test), so that a span's prefix
    can be run once: not RegularGPT (no cache), randomized positions (a cache continues 0..T-1, a forward draws) or
    dynamic NTK (a cache keeps each key's base), nor top-k, a hook or a temperature."""
    cfg = model.config
    return (cfg.pe != 'regular' and not getattr(cfg, 'randomized_positions', 0) and cfg.rope_scaling != 'dynamic'
            and not kw.get('topk') and set(kw) <= {'key_window', 'n_starting', 'ceiling', 'topk', 'topk_from_layer'})


def batch_pairs(model, probe, L, which, cells, m, stream, step, share):
    """{(kind, d): [[repeat loss, control loss] per span of `which`]} of the asked cells of one length, by full
    forwards or, with share, one prefix a span (tree_losses)."""
    s, out = probe.s, {}
    if not share:
        for kind, d in cells:
            x = torch.from_numpy(probe.inputs(kind, L, d, which))
            out[kind, d] = scored_losses(model, x, m, stream, step).mean(-1).view(-1, 2).tolist()
        return out
    kinds, ds = list(dict.fromkeys(k for k, _ in cells)), sorted({d for _, d in cells})
    trunk = torch.from_numpy(probe.inputs(kinds[0], L, ds[0], which)[0::2, :L - s - ds[0]])
    branches = {L - s - d: torch.from_numpy(np.stack([probe.inputs(k, L, d, which).reshape(len(which), 2, L)
                                                      for k in kinds], 1).reshape(-1, L)[:, L - s - d:]) for d in ds}
    got = tree_losses(model, trunk, branches, m, stream, step)
    for d in ds:
        loss = got[L - s - d].mean(-1).view(len(which), len(kinds), 2)
        out.update({(k, d): loss[:, i].tolist() for i, k in enumerate(kinds)})
    return {c: out[c] for c in cells}


def summary(pairs, floor=0.0):
    """The benefit of one cell from its spans' [repeat, control] mean losses: mean, sd, 95% CI, and p of the one-sided
    t-test of benefit > floor (CI_METHOD); significant where the CI lies above the floor."""
    rep, ctl = np.array(pairs).T
    b, n = ctl - rep, len(pairs)
    mean, sd = float(b.mean()), float(b.std(ddof=1)) if n > 1 else math.nan
    if n > 1 and sd > 0:
        half = float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n))
        p = float(stats.t.sf((mean - floor) / (sd / math.sqrt(n)), n - 1))
    else:  # every span the same benefit (a model that cannot see the copy: exactly 0) or a single span
        half, p = (0.0, float(mean <= floor)) if sd == 0 else (math.nan, math.nan)
    return dict(benefit=mean, sd=sd, ci95=[mean - half, mean + half], p=p, significant=bool(mean - half > floor),
                n=n, loss_repeat=float(rep.mean()), loss_control=float(ctl.mean()),
                repeat_loss=rep.tolist(), control_loss=ctl.tolist())


class Probe:
    """What every run shares: the split, the spans, the fillers per L_ex (drawn as they are first needed), the BOS."""

    def __init__(self, cfg, split, vocab, bos):
        self.cfg, self.split, self.bos, self.s = cfg, split, bos, cfg['span']
        self.spans = draw_spans(split, self.s, cfg['n'], cfg['seed'], cfg['kinds'], vocab)
        self.fillers, self.vocab_size = {}, len(vocab)

    def filler(self, L):
        if L not in self.fillers:
            self.fillers[L] = draw_fillers(self.split, L, self.spans.get('text'), self.cfg['n'], self.s,
                                           self.cfg['seed'])
        return self.fillers[L]

    def grid(self, L, L_tr):
        return distance_grid(L, L_tr, self.s, self.cfg['ratio'], self.bos, self.cfg['distances'])

    def inputs(self, kind, L, d, which=None):
        return cell_inputs(self.split, self.spans, kind, self.filler(L), L, d, self.s, self.bos, which)


def cell_key(row, cell):
    return row['ckpt'], row['variant'], row.get('iters'), cell['kind'], cell['mult'], cell['d']


@contextlib.contextmanager
def heartbeat(model, progress):
    """Progress in tokens through the model: the tokens of each forward counted once its first layer ran, a line
    allowed after every layer, so that one comes at least every PROGRESS_SECONDS even where a batch of spans takes
    minutes (a pretrained model at 2 L_tr)."""
    layers = list(getattr(getattr(model, 'transformer', None), 'h', None) or [model])
    tokens = lambda x: x.shape[0] * x.shape[1]  # a block's input [B, T, C], or a model's ids [B, T]
    hooks = [layer.register_forward_hook(lambda m, inp, out, first=i == 0: progress.done(tokens(inp[0]) if first
                                                                                          else 0))
             for i, layer in enumerate(layers)]
    try:
        yield
    finally:
        for h in hooks:
            h.remove()


def tokens_per_span(L, s, cells, share):
    """The tokens batch_pairs runs for one span of the cells [(kind, d)]: a whole input pair per cell, or the filler
    up to the last copy's start once and every kind's pair from each copy on."""
    if not share:
        return 2 * L * len(cells)
    ds, kinds = {d for _, d in cells}, {k for k, _ in cells}
    return L - s - min(ds) + 2 * len(kinds) * sum(s + d for d in ds)


def measure(cfg, probe, r, label, kw, stream, prev, write):
    """One run under one variant: a cell per (length, kind, d), taken from the --reuse file where it holds the cell,
    gone on with from the spans it holds of a cell stopped part-way; write(cells) as the spans are scored (at most
    every SAVE_SECONDS) and as each length ends. A length the model refuses (learned positions past block_size) is
    left out with a note."""
    cells, head, save = [], dict(ckpt=r.name, variant=label, iters=r.iters), throttled(SAVE_SECONDS, write)
    for mult in cfg['lengths']:
        L = ex_len(mult, r.L_tr)
        try:
            with r.model.attention(**kw(r.L_tr, mult)):
                share = cfg['share_prefix'] and shareable(r.model, kw(r.L_tr, mult))
                row = measure_length(cfg, probe, r, (mult, L, label), share, stream, prev, head, cells, save)
        except ValueError as e:
            if isinstance(e, ConfigError):
                raise
            print(f"{r.name:>18} {label:>16} {mult:g}x: skipped ({e})")
            continue
        cells += row
        write(cells)  # the length's cells are final in the JSON now, not only at the next throttled save
        for kind in cfg['kinds']:
            v = row_verdict([c for c in row if c['kind'] == kind], r.L_tr)
            if v is None:
                print(f"{r.name:>18} {label:>16} L_ex={L}: no distance fits (d from s={cfg['span']} to L_ex - s)")
                continue
            print(f"{r.name:>18} {label:>16} L_ex={L} {kind:>6}: benefit by d "
                  + ' '.join(f"{c['d']}:{c['benefit']:.3f}" for c in row if c['kind'] == kind)
                  + f"; horizon {v['horizon']}", flush=True)
    return cells


def measure_length(cfg, probe, r, where, share, stream, prev, head, cells, save):
    """The cells of one length, every (kind, d), a batch of spans at a time through all of them (batch_pairs); a
    cell the --reuse file holds whole is kept, one it holds in part goes on from the spans it holds."""
    (mult, L, label), n, whole, pairs = where, cfg['n'], {}, {}
    order = [(kind, d) for kind in cfg['kinds'] for d in probe.grid(L, r.L_tr)]
    cell = lambda c, **kw: dict(kind=c[0], mult=mult, L_ex=L, d=c[1], **kw)
    for c in order:
        done = (prev.take(cell_key(head, cell(c))) or (None, {}))[1]
        if done.get('benefit') is not None:
            whole[c] = done
        else:
            pairs[c] = [list(p) for p in done.get('spans_so_far', [])]
    before, batches, held = {c: len(p) for c, p in pairs.items()}, [], dict.fromkeys(pairs, 0)
    per = max(1, cfg['batch_tokens'] // (2 * L * (len(cfg['kinds']) if share else 1)))
    for i in range(min(before.values(), default=n), n, per):  # which spans, and the cells that lack them
        which = range(i, min(i + per, n))
        batches.append((which, [c for c in pairs if max(before[c], held[c]) < which[-1] + 1]))
        held.update(dict.fromkeys(batches[-1][1], which[-1] + 1))
    total = sum(len(which) * tokens_per_span(L, probe.s, todo, share) for which, todo in batches)
    with heartbeat(r.model, Progress(f'{r.name} {label} L_ex={L}', total, 'tokens')):
        for which, todo in batches:
            got = batch_pairs(r.model, probe, L, which, todo, cfg['span'] - cfg['skip'], stream, cfg['stream_step'],
                              share)
            for c in todo:
                pairs[c] += got[c][len(pairs[c]) - which[0]:]
            save(cells + [whole.get(c) or cell(c, benefit=None, spans_so_far=pairs[c]) for c in order])
    return [whole.get(c) or cell(c, **summary(pairs[c], cfg['min_benefit']),
                                 **(dict(spans_scored_before=before[c]) if before[c] else {})) for c in order]


def previous_cells(path, settings, spans):
    def problem(data):
        if data.get('settings') != settings or data.get('spans') != spans:
            return (f"was made with settings {data.get('settings')} (or other spans), this run has {settings}: "
                    f"the spans follow split, span, n, kinds and seed")
        return ''
    return Previous(path, key=lambda pair: cell_key(*pair), check=problem,
                    rows=lambda data: [(r, c) for r in data['results'] for c in r['cells']])


def payload(probe, settings, results):
    return dict(settings=settings, ci_method=CI_METHOD, layout=LAYOUT, spans=probe.spans,
                fillers={str(L): f for L, f in sorted(probe.fillers.items())}, vocab_size_random=probe.vocab_size,
                results=results)


def specs_of(cfg):
    """[(label, kw(L_tr, mult), stream)]: the attention variants, then the bounded-cache stream where asked
    (no_vanilla with cache_window alone: the stream alone)."""
    out = [(label, kw, None) for label, kw in variants(cfg)] if not cfg['no_vanilla'] or has_variant(cfg) else []
    if cfg['cache_window']:
        W, S = cfg['cache_window'], cfg['n_starting']
        out.append((f'stream(S={S},W={W})', lambda L_tr, m: {}, (W, S)))
    return out


def has_variant(cfg):
    return bool(cfg['windowed'] or cfg['lm_infinite'] or cfg['topk'] or cfg['attn_temperature'])


def check(cfg):
    """The probe's own settings, each bad value in one line, before any model or data is loaded."""
    bad_kinds = [k for k in cfg['kinds'] if k not in KINDS]
    if bad_kinds or not cfg['kinds']:
        raise ConfigError(f"kinds={','.join(cfg['kinds'])}; allowed: {', '.join(KINDS)}")
    if cfg['span'] < 2 or not 0 <= cfg['skip'] < cfg['span']:
        raise ConfigError(f"span={cfg['span']}, skip={cfg['skip']}: need span >= 2 and 0 <= skip < span")
    if cfg['n'] < 2:
        raise ConfigError(f"n={cfg['n']}: a confidence interval over spans needs n >= 2")
    if any(not isinstance(d, int) or d < 1 for d in cfg['distances']):
        raise ConfigError(f"distances={cfg['distances']}: expected positive token counts, e.g. 32,256,1024")
    if not cfg['ratio'] > 1 or cfg['min_benefit'] < 0:
        raise ConfigError(f"ratio={cfg['ratio']:g}, min_benefit={cfg['min_benefit']:g}: the grid's step must be above "
                          f"1, the floor >= 0")
    if cfg['batch_tokens'] < 1 or cfg['cache_window'] < 0 or cfg['stream_step'] < 1:
        raise ConfigError(f"batch_tokens={cfg['batch_tokens']}, cache_window={cfg['cache_window']}, stream_step="
                          f"{cfg['stream_step']}: batch_tokens and stream_step >= 1, cache_window >= 0")
    if cfg['no_vanilla'] and not has_variant(cfg) and not cfg['cache_window']:
        raise ConfigError("no_vanilla=True leaves nothing to evaluate; add windowed, lm_infinite, topk, "
                          "attn_temperature or cache_window")
    check_settings(dict(cfg, no_vanilla=cfg['no_vanilla'] and not cfg['cache_window']))


def split_vocab(split, bos):
    """The ids the split holds, less its eot and the BOS: what a random span draws from."""
    drop = {split.meta.get('eot'), bos} - {None}
    ids = np.unique(np.asarray(split.tokens))
    return ids[~np.isin(ids, list(drop))].astype(np.int64)


def main(cfg):
    """Benefit per (run, variant, kind, length, d); returns the results' rows."""
    check(cfg)
    if cfg['threads'] > 0:
        torch.set_num_threads(cfg['threads'])
    specs = specs_of(cfg)
    label, extend = extension(cfg)
    runs = load_runs(cfg['ckpt'], label=label, regular_impl=cfg['regular_impl'], device=cfg['device'],
                     dtype=cfg['dtype'], **extend)
    bos = runs_bos(runs, cfg['bos'])
    split = load_split(data_of(runs, cfg['data_dir']), cfg['split'])
    small = [r.name for r in runs if r.model.config.vocab_size <= int(np.max(split.tokens))]
    if small:
        raise ConfigError(f"{', '.join(small)}: a vocabulary smaller than the ids of {split.name}")
    probe = Probe(cfg, split, split_vocab(split, bos), bos)
    settings = dict(split=split.name, span=cfg['span'], skip=cfg['skip'], n=cfg['n'], kinds=list(cfg['kinds']),
                    seed=cfg['seed'], bos=bos, min_benefit=cfg['min_benefit'])
    prev, out = previous_cells(cfg['reuse'], settings, probe.spans), []
    for r in runs:
        for label, kw, stream in specs:
            why = stream_refusal(r.model) if stream else None
            if why:
                print(f"{r.name:>18} {label:>16}: skipped ({why})")
                continue
            # each layer's own window (0: none), so that the page can state the reach without the checkpoint
            windows = [r.model.config.layer(i)[0] for i in range(r.model.config.n_layer)]
            head = dict(ckpt=r.name, group=r.group, pe=r.pe, L_tr=r.L_tr, iters=r.iters, variant=label,
                        windows=windows)
            write = lambda cells: write_outputs(cfg['out_dir'], cfg['name'], dict(
                payload(probe, settings, cells_so_far(out + [dict(head, cells=cells)], prev)), partial=True), say=False)
            with Meter() as meter:
                cells = measure(cfg, probe, r, label, kw, stream, prev, write)  # writes as each length ends
            verdicts = [v for v in (row_verdict([c for c in cells if c['kind'] == k and c['mult'] == mult], r.L_tr)
                        for mult in dict.fromkeys(c['mult'] for c in cells) for k in cfg['kinds']) if v]
            out.append(dict(head, cells=cells, verdicts=verdicts, **kept_record(prev, head, cells, meter.record())))
    report(cfg, probe, settings, cells_so_far(out, prev))
    return out


def report(cfg, probe, settings, rows):
    md = (f"Recall at distance: {cfg['n']} spans of s = {cfg['span']} tokens per cell, scored after the first "
          f"{cfg['skip']}; {settings['split']}; min_benefit = {cfg['min_benefit']:g} nats/token. {CI_METHOD}. "
          f"Horizon: the largest d with a significant benefit; "
          f"share > L_tr: the mean benefit over d > L_tr / the benefit at the smallest d.\n\n" + tables(cfg, rows))
    print('\n' + md)
    write_outputs(cfg['out_dir'], cfg['name'], payload(probe, settings, rows), md, figure(cfg, rows) if rows else None)


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
