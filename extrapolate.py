"""
Length extrapolation: evaluate models trained on L_tr tokens at L_ex > L_tr tokens, without parameter updates,
and measure *why* they hold up or blow up. One script, one subcommand per question:

  python extrapolate.py ppl       --ckpt out/tiny-alibi out/tiny-rope --lengths 1,2,4,8,16   # PPL vs length
  python extrapolate.py ppl       --ckpt out/tiny-alibi --protocol nonoverlap --lm_infinite --windowed
  python extrapolate.py position  --ckpt out/tiny-alibi --length 8           # loss at each position (+ windowed@L_tr)
  python extrapolate.py erf       --ckpt out/tiny-alibi out/tiny-rope --length 4   # cumulative normalised gradient
  python extrapolate.py kernels   --ckpt out/tiny-alibi out/tiny-kerple_log  # bias kernels, effective length
  python extrapolate.py attention --ckpt out/tiny-t5 --lengths 2,4,8,16      # dispersed attention, temperature
  python extrapolate.py passkey   --ckpt out/tiny-alibi --lengths 0.5,1,2,4  # synthetic passkey retrieval
  python extrapolate.py nope                                                 # ch. 2: NoPE variance and probe

Lengths are multiples of each checkpoint's training length L_tr (its block_size). Every subcommand writes
<out_dir>/<name>.json, a .png next to it, and (where there is a table) a .md; out_dir defaults to results/<subcommand>.
Modified attention (--windowed, --lm_infinite, --topk, --temperature) adds columns next to the vanilla model.

Papers (../shared/papers): thesis = Chi 2024 (000), LM-Infinite = Han et al. 2023 (002).
"""
import argparse
import json
import math
import os
import re
import resource
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.abspath(__file__))
PROTOCOLS = ('last_token', 'nonoverlap', 'sliding')
TAU_GRID = [round(1.0 - 0.05 * i, 2) for i in range(11)]  # thesis Algorithm 1: 1.0, 0.95, ..., 0.5
BIAS_THRESHOLD = -2.0   # thesis 3.7.5: a bias of -2 scales a softmax weight by e^-2 ~ 0.14
ERF_MASS = 0.99         # thesis 4.5.1: ERF = the most recent tokens holding 99% of the normalised gradient


class CLIError(Exception):
    """A bad input; main() prints it as one line."""


def die(msg):
    raise CLIError(msg)


# --------------------------------------------------------------------------------------------
# Loading: checkpoints, data splits
# --------------------------------------------------------------------------------------------

class Ckpt:
    """A trained model and what the evaluation needs to know about it."""

    def __init__(self, model, name, path='', config=None):
        self.model, self.name, self.path = model.eval(), name, path
        self.config = config or {}
        self.L_tr = model.config.block_size  # train.py trains on block_size-token windows

    @property
    def pe(self):
        return self.model.config.pe


def load_ckpt(path):
    """'out/tiny-alibi' or 'out/tiny-alibi/ckpt.pt' -> Ckpt."""
    file = os.path.join(path, 'ckpt.pt') if os.path.isdir(path) else path
    if not os.path.isfile(file):
        die(f"no checkpoint at {path!r}: expected a ckpt.pt file or a folder holding one (train.py writes out/<run>/ckpt.pt)")
    model = GPT.from_checkpoint(file, map_location='cpu')
    config = torch.load(file, map_location='cpu', weights_only=False).get('config', {})
    name = os.path.basename(os.path.dirname(os.path.abspath(file)))
    return Ckpt(model, name, file, config)


def load_ckpts(paths):
    ckpts = [load_ckpt(p) for p in paths]
    seen = {}
    for c in ckpts:  # two runs with the same folder name (a/x, b/x) still get distinct columns
        seen[c.name] = seen.get(c.name, 0) + 1
        if seen[c.name] > 1:
            c.name = f'{c.name}#{seen[c.name]}'
    return ckpts


class Split:
    """tokens (np.uint16 memmap), document start offsets, and the corpus meta of one data split."""

    def __init__(self, tokens, docs=None, meta=None, name=''):
        self.tokens = tokens
        self.docs = np.asarray(docs if docs is not None else [0], dtype=np.int64)
        self.meta, self.name = meta or {}, name

    @property
    def bits_unit(self):
        # one byte-level token is one byte, so loss / ln 2 is bits per byte
        return 'bits/byte' if self.meta.get('tokenizer') == 'bytes' else 'bits/token'


def default_data_dir(ckpts, data_dir):
    if data_dir:
        return data_dir
    dataset = ckpts[0].config.get('dataset', 'pycode') if ckpts else 'pycode'
    return ckpts[0].config.get('data_dir') if ckpts and ckpts[0].config.get('data_dir') else os.path.join(ROOT, 'data', dataset)


def load_meta(ckpts, data_dir):
    path = os.path.join(default_data_dir(ckpts, data_dir), 'meta.json')
    return json.load(open(path)) if os.path.exists(path) else {}


def load_split(ckpts, data_dir, split):
    data_dir = default_data_dir(ckpts, data_dir)
    path = os.path.join(data_dir, f'{split}.bin')
    if not os.path.exists(path):
        die(f"no {path}: prepare the data first (e.g. python data/pycode/prepare.py) or pass --data_dir")
    docs_path = os.path.join(data_dir, f'{split}_docs.npy')
    meta_path = os.path.join(data_dir, 'meta.json')
    docs = np.load(docs_path) if os.path.exists(docs_path) else None
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    return Split(np.memmap(path, dtype=np.uint16, mode='r'), docs, meta, f'{os.path.relpath(data_dir, ROOT)}:{split}')


def document_bounds(docs, n_tokens):
    """[start, end) of each document's own tokens: doc i is bin[docs[i] : docs[i+1]-1], the eot after it excluded."""
    starts = np.asarray(docs, dtype=np.int64)
    return starts, np.append(starts[1:] - 1, n_tokens)


def draw_ends(split, context, n, seed):
    """Positions e of n scored tokens, each with `context` tokens before it inside the same document, drawn uniformly
    without replacement over all such positions of the split. Documents shorter than context + 1 tokens are skipped:
    they cannot hold the longest context, and the last-token protocol must score the same tokens at every length."""
    starts, ends = document_bounds(split.docs, len(split.tokens))
    room = np.clip(ends - starts - context, 0, None)  # valid e: start + context .. end - 1
    total = int(room.sum())
    if total == 0:
        die(f"no document of {split.name} has more than {context} tokens; use shorter lengths or another split")
    take = min(n, total)
    pick = np.sort(np.random.default_rng(seed).choice(total, size=take, replace=False))
    cum = np.cumsum(room)
    doc = np.searchsorted(cum, pick, side='right')
    e = starts[doc] + context + (pick - (cum[doc] - room[doc]))
    info = dict(context=int(context), n_requested=int(n), n_drawn=int(take), docs_used=int(len(np.unique(doc))),
                docs_long_enough=int((room > 0).sum()), docs_too_short=int((room == 0).sum()), positions=total)
    return e, info


def windows(tokens, starts, L):
    """Inputs tokens[s:s+L] and next-token targets tokens[s+1:s+L+1] for each start s -> two int64 [n, L] tensors."""
    ix = np.asarray(starts)[:, None] + np.arange(L + 1)
    chunk = torch.from_numpy(np.asarray(tokens[ix], dtype=np.int64))
    return chunk[:, :-1], chunk[:, 1:]


# --------------------------------------------------------------------------------------------
# Attention variants: the vanilla model and its evaluation-time modifications (set_attention)
# --------------------------------------------------------------------------------------------

def parse_temperature(text):
    """'0.9' (every length) or '2:0.95,4:0.9' (per length multiple; others 1.0) -> {mult or None: tau}."""
    out = {}
    for part in text.split(','):
        try:
            if ':' in part:
                m, t = part.split(':')
                out[float(m)] = float(t)
            else:
                out[None] = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad temperature {part!r} in {text!r}: expected a number like 0.9 "
                                             f"or per-length pairs like 2:0.95,4:0.9") from None
    if any(not (t > 0) for t in out.values()):
        raise argparse.ArgumentTypeError(f"temperature must be positive, got {text!r}")
    return out


def variants(args):
    """[(label, fn(L_tr, mult) -> set_attention kwargs)]: vanilla first, then the modifications asked for."""
    out = [] if getattr(args, 'no_vanilla', False) else [('vanilla', lambda L_tr, m: {})]
    if getattr(args, 'windowed', False):
        # the thesis' "windowed@L_tr" baseline (Figs. 3.5/3.7): every token sees only the last L_tr tokens
        out.append(('windowed@L_tr', lambda L_tr, m: dict(local=L_tr)))
    if getattr(args, 'lm_infinite', False) or getattr(args, 'topk', 0):
        # LM-Infinite (paper 002, sec. 4): Λ-mask = first n_starting tokens + last L_pretrain tokens, distance
        # ceiling d' = min(d, L_pretrain); optionally the top-k middle tokens (here in every layer)
        k, ns = args.topk, args.n_starting
        label = f'LM-Inf(n_start={ns}' + (f',top{k})' if k else ')')
        out.append((label, lambda L_tr, m: dict(local=L_tr, n_starting=ns, ceiling=L_tr, topk=k)))
    if getattr(args, 'temperature', None):
        taus = args.temperature
        label = f'tau={taus[None]}' if list(taus) == [None] else 'tau(L)'
        out.append((label, lambda L_tr, m: dict(temperature=taus.get(m, taus.get(None, 1.0)))))
    if not out:
        die("--no_vanilla leaves nothing to evaluate; add --windowed, --lm_infinite, --topk or --temperature")
    return out


def add_variant_args(p):
    g = p.add_argument_group('attention variants (each adds a column next to the vanilla model)')
    g.add_argument('--windowed', action='store_true', help='windowed@L_tr: attend to the last L_tr tokens only')
    g.add_argument('--lm_infinite', action='store_true',
                   help='LM-Infinite: Λ-mask (n_starting + last L_tr tokens) and distance ceiling L_tr')
    g.add_argument('--n_starting', type=nonneg_int, default=10, help='LM-Infinite starting tokens (paper: 5..100 work)')
    g.add_argument('--topk', type=nonneg_int, default=0, help='LM-Infinite top-k middle tokens (implies --lm_infinite)')
    g.add_argument('--temperature', type=parse_temperature, default=None,
                   help="softmax temperature (thesis ch. 5): 0.9, or per length '2:0.95,4:0.9' (from `attention`)")
    g.add_argument('--no_vanilla', action='store_true', help='leave out the unmodified model')


# --------------------------------------------------------------------------------------------
# Time and memory of one measured block
# --------------------------------------------------------------------------------------------

def _status_kb(field):
    try:
        with open('/proc/self/status') as f:
            return int(re.search(rf'{field}:\s+(\d+)', f.read()).group(1))
    except (OSError, AttributeError):
        return None


class Meter:
    """Wall time and peak resident memory (RSS) of a block. The kernel's peak (VmHWM) is reset first by writing 5 to
    /proc/self/clear_refs, so `peak_mb` is the whole process' peak *during this block* (model, data pages and
    Python included) and `delta_mb` its excess over the RSS at the start. Where the reset is not allowed we fall back
    to ru_maxrss, which only ever grows, and `method` says so."""

    def __enter__(self):
        try:
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
            self.method = 'VmHWM, reset per block'
        except OSError:
            self.method = 'ru_maxrss (process lifetime peak, not reset)'
        self.rss0 = (_status_kb('VmRSS') or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        hwm = _status_kb('VmHWM') if self.method.startswith('VmHWM') else None
        self.peak_mb = (hwm or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
        self.delta_mb = self.peak_mb - self.rss0
        return False

    def record(self):
        return dict(seconds=round(self.seconds, 2), threads=torch.get_num_threads(), peak_rss_mb=round(self.peak_mb, 1),
                    delta_rss_mb=round(self.delta_mb, 1))


# --------------------------------------------------------------------------------------------
# Output helpers
# --------------------------------------------------------------------------------------------

def plt_module():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def write_outputs(args, stem, data, markdown=None, fig=None):
    os.makedirs(args.out_dir, exist_ok=True)
    base = os.path.join(args.out_dir, stem)
    data = dict(command='python extrapolate.py ' + ' '.join(args.argv), **data)
    with open(base + '.json', 'w') as f:
        json.dump(data, f, indent=1, default=float)
    written = [base + '.json']
    if markdown is not None:
        with open(base + '.md', 'w') as f:
            f.write(markdown)
        written.append(base + '.md')
    if fig is not None:
        fig.savefig(base + '.png', dpi=100)
        plt_module().close(fig)
        written.append(base + '.png')
    print('wrote ' + ', '.join(written))
    return base


def md_table(header, rows):
    lines = ['| ' + ' | '.join(map(str, header)) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(map(str, r)) + ' |' for r in rows]
    return '\n'.join(lines) + '\n'


def fmt_ppl(p):
    if p is None or not math.isfinite(p):
        return 'n/a'
    return f'{p:.3f}' if p < 10 else f'{p:.2f}' if p < 100 else f'{p:.4g}' if p < 1e6 else f'{p:.2e}'


def mult_str(m):
    return f'{m:g}'


# --------------------------------------------------------------------------------------------
# ppl: perplexity vs length under three protocols
# --------------------------------------------------------------------------------------------

@torch.inference_mode()
def last_token_losses(model, tokens, ends, L, batch_tokens=16384, last_k=1):
    """Thesis 4.3.4 / Fig. 4.3: the loss of token e given exactly the L tokens before it (the model input is
    tokens[e-L:e]), for each e. With the same ends at every L the scored tokens are identical and only their context
    grows. last_k > 1 also scores the k-1 tokens before each e (contexts L-k+1..L): k times the tokens per forward
    pass, still the same tokens at every length; last_k = 1 is the thesis protocol. -> losses [len(ends) * last_k]."""
    ends = np.asarray(ends)
    B = max(1, batch_tokens // L)
    out = []
    for i in range(0, len(ends), B):
        x, y = windows(tokens, ends[i:i + B] - L, L)
        if last_k == 1:
            logits, _ = model(x)               # logits of the last position only
            out.append(F.cross_entropy(logits[:, -1].float(), y[:, -1], reduction='none'))
        else:
            out.append(model(x, targets=y, reduction='none')[1][:, -last_k:].reshape(-1))
    return torch.cat(out).double().numpy()


@torch.inference_mode()
def segment_losses(model, tokens, starts, L, batch_tokens=16384):
    """Per-token losses [n, L] of the windows tokens[s:s+L] -> tokens[s+1:s+L+1], each window evaluated from scratch."""
    starts = np.asarray(starts)
    B = max(1, batch_tokens // L)
    out = []
    for i in range(0, len(starts), B):
        x, y = windows(tokens, starts[i:i + B], L)
        out.append(model(x, targets=y, reduction='none')[1].double())
    return torch.cat(out).numpy() if out else np.zeros((0, L))


def nonoverlap_losses(model, tokens, start, n_tokens, L, batch_tokens=16384):
    """Table 3.3 protocol: the n_tokens targets after `start` cut into n_tokens // L segments of L, each scored from
    scratch: every token counts, but the first tokens of each segment have little context (ALiBi's 'early token
    curse', thesis 4.3.4 footnote)."""
    return segment_losses(model, tokens, start + L * np.arange(n_tokens // L), L, batch_tokens).reshape(-1)


@torch.inference_mode()
def sliding_losses(model, tokens, start, n_tokens, L, stride, batch_tokens=16384):
    """Windows of L tokens every `stride` tokens over the targets tokens[start+1 : start+n_tokens+1]; each window
    scores only the targets no earlier window scored (the first all of its L), so every target is scored exactly
    once and, after the first window, with at least L - stride tokens of context. A last window ends at the span end."""
    if not 1 <= stride <= L:
        die(f"--stride={stride} is outside 1..L_ex={L}")
    if n_tokens < L:
        die(f"span of {n_tokens} tokens is shorter than L_ex={L}")
    ws = list(range(start, start + n_tokens - L + 1, stride))
    if ws[-1] + L < start + n_tokens:
        ws.append(start + n_tokens - L)
    new = [L] + [b - a for a, b in zip(ws, ws[1:])]  # targets a window adds beyond the previous window's end
    B = max(1, batch_tokens // L)
    out = []
    for i in range(0, len(ws), B):
        _, loss = model(*windows(tokens, ws[i:i + B], L), reduction='none')
        out += [row[L - k:].double() for row, k in zip(loss, new[i:i + B])]
    return torch.cat(out).numpy()


def parse_lengths(text):
    """'1,2,4' -> [1.0, 2.0, 4.0] (multiples of L_tr)."""
    out = []
    for tok in text.split(','):
        try:
            m = float(tok)
        except ValueError:
            m = None
        if m is None or not (m > 0) or not math.isfinite(m):
            raise argparse.ArgumentTypeError(f"bad length {tok.strip()!r} in {text!r}: expected positive multiples of "
                                             f"the training length, e.g. 1,2,4,8,16")
        out.append(m)
    return out


def ex_len(mult, L_tr):
    L = int(round(mult * L_tr))
    if L < 2:
        die(f"length multiple {mult:g} x L_tr={L_tr} gives {L} tokens; need at least 2")
    return L


def cmd_ppl(args):
    ckpts = load_ckpts(args.ckpt)
    split = load_split(ckpts, args.data_dir, args.split)
    specs = variants(args)
    L_max = {c.name: ex_len(max(args.lengths), c.L_tr) for c in ckpts}
    n_tok = len(split.tokens)
    rows, setup = [], {}
    # everything that decides which tokens are scored and how; a --reuse file must have been made with the same
    settings = dict(protocol=args.protocol, split=split.name, longest=max(args.lengths), n=args.n, last_k=args.last_k,
                    seed=args.seed, max_tokens=args.max_tokens, offset=args.offset, stride=args.stride,
                    n_starting=args.n_starting, topk=args.topk)
    reuse = {}
    if args.reuse:
        if not os.path.exists(args.reuse):
            die(f"--reuse={args.reuse!r} does not exist")
        old = json.load(open(args.reuse))
        if old.get('settings') != settings:
            die(f"--reuse={args.reuse!r} was made with settings {old.get('settings')}, this run has {settings}")
        # matched by checkpoint name, attention variant and length: a retrained checkpoint needs a fresh run
        reuse = {(r['ckpt'], r['variant'], r['mult']): r for r in old['results'] if r.get('loss') is not None}
        setup.update(old.get('setup', {}))
    for c in ckpts:
        # protocol set-up: what is scored does not depend on the length (except nonoverlap's dropped tails)
        if args.protocol == 'last_token':
            shortest = ex_len(min(args.lengths), c.L_tr)
            if args.last_k > shortest:
                die(f"--last_k={args.last_k} exceeds the shortest L_ex={shortest} of {c.name}; allowed 1..{shortest}")
            # the same seed for every checkpoint: with equal L_tr they all score the same tokens (paired comparison)
            ends, info = draw_ends(split, L_max[c.name], args.n, args.seed)
            if info['n_drawn'] < args.n:
                print(f"note: only {info['n_drawn']} positions have {L_max[c.name]} tokens of context; using all of them")
        else:
            span = min(args.max_tokens, n_tok - 1 - args.offset)
            span = (span // L_max[c.name]) * L_max[c.name]  # a multiple of the longest L_ex: same tokens at all L dividing it
            if span <= 0:
                die(f"--max_tokens={args.max_tokens} at --offset={args.offset} holds no {L_max[c.name]}-token segment")
            info = dict(offset=args.offset, n_tokens=span)
        setup[c.name] = info
        if c.pe in ('none', 'sinusoidal', 'learned') and (args.lm_infinite or args.topk):
            print(f"note: {c.name} (pe={c.pe}) has no relative encoding: LM-Infinite's distance ceiling does nothing there")
        for label, kw in specs:
            for m in args.lengths:
                L = ex_len(m, c.L_tr)
                if (c.name, label, m) in reuse:
                    rows.append(dict(reuse[(c.name, label, m)], reused_from=args.reuse))
                    print(f"{c.name:>18} {label:>22} L_ex={L:>6} ({m:g}x): taken from {args.reuse}")
                    continue
                c.model.set_attention(**kw(c.L_tr, m))
                row = dict(ckpt=c.name, pe=c.pe, L_tr=c.L_tr, variant=label, mult=m, L_ex=L)
                try:
                    with Meter() as meter:
                        if args.protocol == 'last_token':
                            losses = last_token_losses(c.model, split.tokens, ends, L, args.batch_tokens,
                                                       args.last_k)
                        elif args.protocol == 'nonoverlap':
                            losses = nonoverlap_losses(c.model, split.tokens, args.offset, info['n_tokens'], L,
                                                       args.batch_tokens)
                        else:
                            stride = args.stride or c.L_tr
                            losses = sliding_losses(c.model, split.tokens, args.offset, info['n_tokens'], L,
                                                    min(stride, L), args.batch_tokens)
                    loss = float(np.mean(losses))
                    row.update(loss=loss, ppl=math.exp(min(loss, 700)), bits=loss / math.log(2),
                               n_scored=int(len(losses)), memory_method=meter.method, **meter.record())
                    print(f"{c.name:>18} {label:>22} L_ex={L:>6} ({m:g}x): ppl {fmt_ppl(row['ppl']):>9} "
                          f"{row['bits']:.4f} {split.bits_unit}, {row['n_scored']} tokens, {meter.seconds:6.1f} s, "
                          f"peak RSS {meter.peak_mb:.0f} MB (+{meter.delta_mb:.0f})", flush=True)
                except ValueError as e:  # learned absolute positions refuse lengths past block_size
                    row.update(loss=None, ppl=None, bits=None, error=str(e))
                    print(f"{c.name:>18} {label:>22} L_ex={L:>6}: skipped ({e})")
                finally:
                    c.model.set_attention()
                rows.append(row)

    # table: rows = lengths, one column per (checkpoint, variant)
    cols = [(c, label) for c in ckpts for label, _ in specs]
    colname = lambda c, label: c.name if label == 'vanilla' else f'{c.name} [{label}]'
    find = {(r['ckpt'], r['variant'], r['mult']): r for r in rows}
    header = ['L_ex / L_tr'] + [colname(c, lab) for c, lab in cols]
    ppl_rows, cost_rows = [], []
    for m in args.lengths:
        cells, costs = [mult_str(m)], [mult_str(m)]
        for c, lab in cols:
            r = find[(c.name, lab, m)]
            cells.append(f"{fmt_ppl(r['ppl'])} ({r['bits']:.3f})" if r['ppl'] is not None else 'n/a')
            costs.append(f"{r['seconds']:.1f} s / {r['peak_rss_mb']:.0f} MB" if 'seconds' in r else 'n/a')
        ppl_rows.append(cells)
        cost_rows.append(costs)
    L_trs = sorted({c.L_tr for c in ckpts})
    first = setup[ckpts[0].name]
    if args.protocol == 'last_token':
        desc = (f"last-token protocol (thesis 4.3.4): the same {first['n_drawn']} tokens of {split.name}, each scored "
                f"after exactly L_ex tokens of context")
        if args.last_k > 1:
            desc = (f"last-token protocol (thesis 4.3.4) extended to the last {args.last_k} tokens of each of "
                    f"{first['n_drawn']} segments of {split.name} ({first['n_drawn'] * args.last_k} scored tokens, the "
                    f"same at every length, with L_ex-{args.last_k - 1}..L_ex tokens of context)")
    elif args.protocol == 'nonoverlap':
        desc = (f"non-overlapping segments (thesis Table 3.3) over {first['n_tokens']} tokens of {split.name} from "
                f"offset {args.offset}")
    else:
        desc = (f"sliding windows, stride {args.stride or 'L_tr'}, over {first['n_tokens']} tokens of {split.name} "
                f"from offset {args.offset}; each token scored once")
    md = (f"Perplexity ({split.bits_unit} in brackets) vs evaluation length; {desc}. L_tr = "
          f"{', '.join(map(str, L_trs))}.\n\n" + md_table(header, ppl_rows)
          + f"\nTime and peak RSS per length (memory: {rows[0].get('memory_method', 'n/a')}):\n\n"
          + md_table(header, cost_rows))
    print('\n' + md)

    plt = plt_module()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = [lab for lab, _ in specs]
    for c, lab in cols:  # colour = checkpoint, line style = attention variant
        pts = [(find[(c.name, lab, m)]['L_ex'], find[(c.name, lab, m)]['ppl']) for m in args.lengths
               if find[(c.name, lab, m)]['ppl'] is not None]
        if pts:
            ax.plot(*zip(*pts), ['-', '--', ':', '-.'][labels.index(lab) % 4], marker='o', ms=3,
                    label=colname(c, lab), color=f'C{ckpts.index(c) % 10}')
    for L_tr in L_trs:
        ax.axvline(L_tr, color='gray', lw=0.8, ls=':')
    ax.set_xscale('log', base=2)
    ax.set_yscale('log')
    ax.set_xlabel('evaluation length L_ex (tokens)')
    ax.set_ylabel('perplexity')
    ax.set_title(f'{args.protocol} protocol ({split.name.split(os.sep)[-1]})', fontsize=10)
    ax.grid(alpha=0.3, which='both')
    ax.legend(fontsize=7)
    fig.tight_layout()
    write_outputs(args, args.name or f'ppl_{args.protocol}',
                  dict(protocol=args.protocol, split=split.name, bits_unit=split.bits_unit, lengths=args.lengths,
                       settings=settings, setup=setup, results=rows), md, fig)
    return rows


# --------------------------------------------------------------------------------------------
# position: position-wise loss (thesis Figs. 3.5 / 3.7)
# --------------------------------------------------------------------------------------------

def smooth(y, k):
    """Moving average over k positions (valid part only), for readable per-position curves."""
    if k <= 1 or len(y) <= k:
        return np.arange(len(y)), y
    c = np.cumsum(np.insert(y, 0, 0.0))
    return np.arange(k - 1, len(y)), (c[k:] - c[:-k]) / k


def cmd_position(args):
    ckpts = load_ckpts(args.ckpt)
    split = load_split(ckpts, args.data_dir, args.split)
    args.windowed = True  # the point of the plot is the comparison with windowed@L_tr
    specs = variants(args)
    plt = plt_module()
    fig, (ax, dax) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, height_ratios=[3, 2])
    out, md_rows = [], []
    for ci, c in enumerate(ckpts):
        L = ex_len(args.length, c.L_tr)
        ends, info = draw_ends(split, L, args.n, args.seed)
        curves = {}
        for vi, (label, kw) in enumerate(specs):
            c.model.set_attention(**kw(c.L_tr, args.length))
            with Meter() as meter:
                losses = segment_losses(c.model, split.tokens, ends - L, L, args.batch_tokens)
            c.model.set_attention()
            curve = losses.mean(0)
            inside, beyond = curve[:c.L_tr].mean(), curve[c.L_tr:].mean() if L > c.L_tr else float('nan')
            print(f"{c.name:>18} {label:>22}: {len(losses)} segments of {L}: mean loss {curve.mean():.4f}, "
                  f"positions < L_tr {inside:.4f}, >= L_tr {beyond:.4f} ({meter.seconds:.1f} s)", flush=True)
            out.append(dict(ckpt=c.name, pe=c.pe, L_tr=c.L_tr, L_ex=L, variant=label, segments=info,
                            loss_by_position=curve.round(5).tolist(), mean_loss=float(curve.mean()),
                            mean_loss_below_L_tr=float(inside), mean_loss_from_L_tr=float(beyond), **meter.record()))
            md_rows.append([c.name, label, L, f'{math.exp(inside):.3f}', f'{math.exp(beyond):.3f}',
                            f'{math.exp(curve.mean()):.3f}'])
            curves[label] = curve
            x, y = smooth(curve, args.smooth or max(1, c.L_tr // 8))
            ax.plot(x, np.exp(y), ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}', lw=1.2,
                    label=f'{c.name} {label}')
        # paired difference on the same segments: below 0 past L_tr = the model gains from tokens beyond L_tr
        for vi, (label, _) in enumerate(specs):
            if label != 'windowed@L_tr':
                x, y = smooth(curves[label] - curves['windowed@L_tr'], args.smooth or max(1, c.L_tr // 8))
                dax.plot(x, y, ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}', lw=1.2,
                         label=f'{c.name} {label} - windowed')
        for a in (ax, dax):
            a.axvline(c.L_tr, color='gray', lw=0.8, ls=':')
    ax.set_yscale('log')
    ax.set_ylabel('perplexity (moving average)')
    ax.set_title('position-wise perplexity; dotted line: L_tr', fontsize=10)
    dax.axhline(0, color='k', lw=0.6)
    dax.set_xlabel('position in the segment')
    dax.set_ylabel('loss - windowed loss (nats)')
    for a in (ax, dax):
        a.grid(alpha=0.3, which='both')
        a.legend(fontsize=7)
    fig.tight_layout()
    md = ("Position-wise perplexity (thesis Figs. 3.5/3.7): exp of the mean loss over segments at positions below L_tr, "
          "from L_tr on, and over all positions.\n\n"
          + md_table(['checkpoint', 'attention', 'L_ex', 'PPL pos < L_tr', 'PPL pos >= L_tr', 'PPL all'], md_rows))
    print('\n' + md)
    write_outputs(args, args.name or 'position', dict(split=split.name, results=out), md, fig)
    return out


# --------------------------------------------------------------------------------------------
# erf: cumulative normalised gradient and empirical receptive field (thesis 4.5.1)
# --------------------------------------------------------------------------------------------

def embedding_grad_norms(model, emb, loss_fn):
    """|g_m| = |d loss / d e_m| for every output e_m [B, T] of the embedding module emb, loss = loss_fn() (a forward
    pass run here); a hook makes e a fresh leaf, so no parameter gets a gradient. Returns float64 [B, T]."""
    grads = {}

    def leaf(module, inp, out):
        out = out.detach().requires_grad_(True)
        grads['e'] = out
        return out

    handle = emb.register_forward_hook(leaf)
    flags = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        with torch.enable_grad():
            loss_fn().backward()
    finally:
        handle.remove()
        for p, f in zip(model.parameters(), flags):
            p.requires_grad_(f)
    return grads['e'].grad.double().norm(dim=-1)


def receptive_field(model, tokens, ends, L, batch_tokens=8192):
    """Mean normalised gradient s_m over segments, with s_m = |g_m| / sum_n |g_n| and g_m the gradient of the loss of
    the token after the L-token input w.r.t. the input embedding e_m (thesis 4.5.1). Absolute encodings add their
    positions after wte, so d loss / d (e_m + p_m) = d loss / d e_m: one hook on wte serves every encoding."""
    ends = np.asarray(ends)
    B = max(1, batch_tokens // L)
    s_sum = torch.zeros(L, dtype=torch.float64)
    for i in range(0, len(ends), B):
        x, y = windows(tokens, ends[i:i + B] - L, L)
        # summed over the batch: each segment's loss depends only on its own embeddings
        g = embedding_grad_norms(model, model.transformer.wte,
                                 lambda: F.cross_entropy(model(x)[0][:, -1].float(), y[:, -1], reduction='sum'))
        s_sum += (g / g.sum(-1, keepdim=True)).sum(0)
    return (s_sum / len(ends)).numpy()


def cumulative_from_end(s):
    """c_m = sum_{n >= m} s_n (thesis 4.5.1), c[0] = 1."""
    return np.cumsum(s[::-1])[::-1]


def erf_tokens(s, mass=ERF_MASS):
    """ERF counted from the end: the smallest number r of most recent tokens whose normalised gradient exceeds `mass`."""
    tail = np.cumsum(s[::-1])
    return int(np.argmax(tail > mass) + 1) if tail[-1] > mass else len(s)


def cmd_erf(args):
    ckpts = load_ckpts(args.ckpt)
    split = load_split(ckpts, args.data_dir, args.split)
    specs = variants(args)
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    out, md_rows = [], []
    for ci, c in enumerate(ckpts):
        L = ex_len(args.length, c.L_tr)
        ends, info = draw_ends(split, L, args.n, args.seed)
        for vi, (label, kw) in enumerate(specs):
            c.model.set_attention(**kw(c.L_tr, args.length))
            with Meter() as meter:
                s = receptive_field(c.model, split.tokens, ends, L, args.batch_tokens)
            c.model.set_attention()
            cm = cumulative_from_end(s)
            erf = erf_tokens(s)
            recent = float(s[-c.L_tr:].sum())
            print(f"{c.name:>18} {label:>16}: L_ex={L}, ERF={erf} tokens ({erf / c.L_tr:.2f} L_tr), "
                  f"share of the last L_tr tokens {recent:.3f} ({meter.seconds:.1f} s)", flush=True)
            out.append(dict(ckpt=c.name, pe=c.pe, L_tr=c.L_tr, L_ex=L, variant=label, segments=info, erf=erf,
                            erf_over_L_tr=erf / c.L_tr, share_last_L_tr=recent, s=s.round(7).tolist(),
                            c=cm.round(6).tolist(), **meter.record()))
            md_rows.append([c.name, label, c.L_tr, L, erf, f'{erf / c.L_tr:.2f}', f'{recent:.3f}'])
            ax.plot(np.arange(1, L + 1), cm, ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}', lw=1.2,
                    label=f'{c.name} {label} (ERF {erf})')
            ax.axvline(L - c.L_tr + 1, color='gray', lw=0.8, ls=':')
    ax.axhline(ERF_MASS, color='k', lw=0.6, ls='--')
    ax.set_xlabel('input position m (the last token is predicted)')
    ax.set_ylabel('cumulative normalised gradient c_m')
    ax.set_title('c_m = share of the gradient on tokens m..L_ex (dotted: start of the last L_tr tokens)', fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    md = (f"Empirical receptive field (thesis 4.5.1): the fewest most recent tokens holding > {ERF_MASS} of the mean "
          f"normalised input-embedding gradient of the last token's loss.\n\n"
          + md_table(['checkpoint', 'attention', 'L_tr', 'L_ex', 'ERF (tokens)', 'ERF / L_tr', 'share of last L_tr'],
                     md_rows))
    print('\n' + md)
    write_outputs(args, args.name or 'erf', dict(split=split.name, results=out), md, fig)
    return out


# --------------------------------------------------------------------------------------------
# kernels: per-head bias vs distance and the effective-length count (thesis 3.5.4, 3.7.5)
# --------------------------------------------------------------------------------------------

def kernel_tables(model, max_distance):
    """{layer: (bias [H, n] or None, weight [H, n] or None)} over distances 0..max_distance."""
    d = torch.arange(max_distance + 1, dtype=torch.float32)
    with torch.no_grad():
        out = {}
        for layer in range(model.config.n_layer):
            b, w = model.pe.bias(layer, d), model.pe.weight(layer, d)
            out[layer] = (None if b is None else b.double().numpy(), None if w is None else w.double().numpy())
    return out


def effective_lengths(bias):
    """Thesis 3.7.5: eff = the first distance at which a head's bias, relative to distance 0, drops below -2
    (inf if it never does within the table). Relative to d=0 because softmax ignores a per-row constant; for the
    KERPLE kernels b(0) = 0 anyway, and for non-monotonic biases (T5) this is the first crossing."""
    rel = bias - bias[:, :1]
    below = rel < BIAS_THRESHOLD
    return np.where(below.any(1), below.argmax(1), np.inf)


def head_counts(effs, distances):
    """Count{h : eff(h) <= d} for each d (thesis Fig. 3.6), over all layers' heads."""
    effs = np.sort(np.asarray(effs, dtype=float))
    return np.searchsorted(effs, distances, side='right')


def cmd_kernels(args):
    ckpts = load_ckpts(args.ckpt)
    plt = plt_module()
    have = []
    for c in ckpts:
        D = args.max_distance or 16 * c.L_tr
        tabs = kernel_tables(c.model, D)
        if all(b is None and w is None for b, w in tabs.values()):
            print(f"{c.name}: pe={c.pe!r} has no distance bias or weight kernel (its positions enter through "
                  f"{'rotations of q and k' if c.model.pe.rotary else 'the embeddings' if c.pe != 'none' else 'nothing but the causal mask'}); nothing to plot")
            continue
        have.append((c, D, tabs))
    if not have:
        die("none of the checkpoints has a bias or weight kernel; kernels applies to t5, alibi, kerple_*, gauss_*, "
            "sandwich*, bipe_alibi, regular")
    n_layer = max(c.model.config.n_layer for c, _, _ in have)
    rows_per = [1 + any(w is not None for _, w in tabs.values()) for _, _, tabs in have]
    fig, axes = plt.subplots(sum(rows_per), n_layer, figsize=(2.6 * n_layer, 2.2 * sum(rows_per)), squeeze=False)
    out, md_rows = [], []
    fig2, ax2 = plt.subplots(figsize=(7, 4.5))
    r0 = 0
    for (c, D, tabs), nr in zip(have, rows_per):
        d = np.arange(D + 1)
        effs, layers_out = [], []
        for layer, (b, w) in tabs.items():
            entry = dict(layer=layer)
            ax = axes[r0, layer]
            if b is not None:
                e = effective_lengths(b)
                effs += e.tolist()
                entry.update(bias_at=dict(zip(['d=1', 'L_tr', '4L_tr', '16L_tr'],
                                              [b[:, min(k, D)].round(4).tolist() for k in (1, c.L_tr, 4 * c.L_tr, 16 * c.L_tr)])),
                             effective_length=[None if not math.isfinite(v) else int(v) for v in e])
                rel = b - b[:, :1]
                for h in range(b.shape[0]):
                    ax.plot(d, rel[h], lw=1, label=f'head {h}')
                ax.axhline(BIAS_THRESHOLD, color='k', lw=0.6, ls='--')
                ax.set_ylim(max(rel.min(), -20) - 0.5, max(rel.max(), 0) + 0.5)  # steep heads would hide the rest
                ax.set_title(f'{c.name} layer {layer}: bias', fontsize=8)
            else:
                ax.set_title(f'{c.name} layer {layer}: no bias', fontsize=8)
            ax.axvline(c.L_tr, color='gray', lw=0.8, ls=':')
            if w is not None:
                wax = axes[r0 + 1, layer]
                for h in range(w.shape[0]):
                    wax.plot(d, w[h], lw=1)
                wax.axvline(c.L_tr, color='gray', lw=0.8, ls=':')
                wax.set_title(f'{c.name} layer {layer}: weight', fontsize=8)
                entry.update(weight_at=dict(zip(['d=1', 'L_tr', '4L_tr'],
                                                [w[:, min(k, D)].round(4).tolist() for k in (1, c.L_tr, 4 * c.L_tr)])))
            layers_out.append(entry)
        axes[r0, 0].legend(fontsize=6)
        r0 += nr
        res = dict(ckpt=c.name, pe=c.pe, L_tr=c.L_tr, max_distance=D, layers=layers_out)
        if effs:
            effs = np.array(effs)
            grid = np.arange(D + 1)
            ax2.step(grid, head_counts(effs, grid), where='post', label=c.name)
            fin = effs[np.isfinite(effs)]
            res.update(heads=len(effs), heads_within_L_tr=int((effs <= c.L_tr).sum()),
                       heads_never_below=int((~np.isfinite(effs)).sum()))
            md_rows.append([c.name, c.pe, len(effs), int((effs <= c.L_tr).sum()), int((~np.isfinite(effs)).sum()),
                            f'{np.median(fin):.0f}' if len(fin) else 'n/a'])
            print(f"{c.name}: effective lengths (bias < {BIAS_THRESHOLD} rel. to d=0) per layer x head: "
                  f"{[None if not math.isfinite(v) else int(v) for v in effs]}")
        else:
            print(f"{c.name}: pe={c.pe!r} has only a weight kernel; the effective length (a bias threshold) is undefined")
        out.append(res)
    for ax in axes.flat:
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle('bias b(d) - b(0) per head vs distance d (dashed: -2; dotted: L_tr; y clipped at -20)', fontsize=9)
    fig.tight_layout()
    ax2.set_xscale('symlog', linthresh=1)
    ax2.set_xlabel('distance |m - n|')
    ax2.set_ylabel('heads (all layers) with effective length <= |m - n|')
    ax2.set_title(f'effective length (thesis Fig. 3.6): first d with b(d) - b(0) < {BIAS_THRESHOLD}', fontsize=9)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    fig2.tight_layout()
    md = (f"Effective length per head (thesis 3.7.5): the first distance where the bias falls {-BIAS_THRESHOLD} below "
          f"its value at distance 0.\n\n"
          + md_table(['checkpoint', 'pe', 'heads', 'eff <= L_tr', 'never below -2', 'median eff'], md_rows))
    print('\n' + md)
    base = write_outputs(args, args.name or 'kernels', dict(results=out), md, fig)
    fig2.savefig(base + '_effective_length.png', dpi=100)
    plt.close(fig2)
    print(f'wrote {base}_effective_length.png')
    return out


# --------------------------------------------------------------------------------------------
# attention: dispersed attention and temperature alignment (thesis ch. 5)
# --------------------------------------------------------------------------------------------

class AttnStats:
    """A set_attention hook: per layer, the summed max-probability and entropy of attention rows, and the row count.
    Each call sees one query block [B, H, tq, tk], so nothing of size T x T is kept."""

    def __init__(self, n_layer):
        self.pmax = np.zeros(n_layer)
        self.ent = np.zeros(n_layer)
        self.rows = np.zeros(n_layer)

    def __call__(self, layer, probs, qi, ki):
        self.pmax[layer] += probs.amax(-1).double().sum().item()
        self.ent[layer] += torch.special.entr(probs.double()).sum(-1).sum().item()  # entr(0) = 0: masked keys add nothing
        self.rows[layer] += probs[..., 0].numel()

    def means(self):
        rows = np.maximum(self.rows, 1)
        per_layer = dict(pmax=self.pmax / rows, entropy=self.ent / rows)
        # Algorithm 1 averages over every logit vector; each layer has the same number of rows
        return per_layer, dict(pmax=self.pmax.sum() / rows.sum(), entropy=self.ent.sum() / rows.sum())


@torch.inference_mode()
def attention_stats(model, tokens, ends, L, temperature=1.0, batch_tokens=8192):
    stats = AttnStats(model.config.n_layer)
    model.set_attention(hook=stats, temperature=temperature)
    try:
        ends = np.asarray(ends)
        B = max(1, batch_tokens // L)
        for i in range(0, len(ends), B):
            model(windows(tokens, ends[i:i + B] - L, L)[0])
    finally:
        model.set_attention()
    return stats.means()


def search_temperature(stat_tr, stat_ex_by_tau):
    """Thesis Algorithm 1: the tau of the grid whose statistic at L_ex is closest to the one at L_tr with tau = 1
    (ties go to the first, i.e. the largest tau)."""
    taus = list(stat_ex_by_tau)
    return taus[int(np.argmin([abs(stat_ex_by_tau[t] - stat_tr) for t in taus]))]


def length_rule(L_ex, L_tr):
    """tau = log_{L_ex} L_tr (Yao et al. 2021; Su 2021), the length-only baseline of thesis 5.5."""
    return math.log(L_tr) / math.log(L_ex)


def prop51_tau(L_tr, L_ex, pmax_tr, sigma_tr, sigma_ex):
    """Thesis Proposition 5.1 (max-probability alignment): A tau^2 - B tau + C = 0 with A = log L_ex + log P_tr,
    B = log L_tr + log P_tr + sigma_tr^2 / 2, C = sigma_ex^2 / 2; the larger root, as the thesis says (nan if none
    is real). At L_ex = L_tr the roots are 1 and C/A: with widely spread logits (C > A) the larger one is not the
    root that starts from tau = 1, a sign that Assumption 5.1 (Gaussian logits) does not hold."""
    A = math.log(L_ex) + math.log(pmax_tr)
    B = math.log(L_tr) + math.log(pmax_tr) + sigma_tr ** 2 / 2
    C = sigma_ex ** 2 / 2
    disc = B * B - 4 * A * C
    if A <= 0 or disc < 0:
        return float('nan')
    return (B + math.sqrt(disc)) / (2 * A)


def prop52_tau(L_tr, L_ex, sigma_tr, sigma_ex):
    """Thesis Proposition 5.2 (entropy alignment): tau = sigma_ex / sqrt(sigma_tr^2 + 2 log(L_ex / L_tr))."""
    return sigma_ex / math.sqrt(sigma_tr ** 2 + 2 * math.log(L_ex / L_tr))


@torch.inference_mode()
def layer0_last_row_logits(model, idx):
    """Pre-softmax logits [B, H, T] of layer 0's last query at temperature 1, recomputed from the model's parts with
    the same formula as CausalSelfAttention (q.k * weight(d) / sqrt(hd) + bias(d)): the hook sees only
    probabilities, which underflow to exactly 0 far away under steep biases, so logits cannot be recovered there."""
    cfg, pe = model.config, model.pe
    pos, _ = pe.positions(idx, 0, None)
    x = model.transformer.wte(idx)
    e = pe.embed(pos)
    if e is not None:
        x = x + e
    block = model.transformer.h[0]
    B, T, C = x.shape
    H = cfg.n_head
    q, k, _ = block.attn.c_attn(block.ln_1(x)).view(B, T, 3, H, C // H).permute(2, 0, 3, 1, 4)
    q, k = pe.rotate(q, pos.rel), pe.rotate(k, pos.rel)
    att = (q[:, :, -1:] @ k.transpose(-2, -1))[:, :, 0].float()     # [B, H, T]
    d = (pos.rel[:, -1:] - pos.rel).long()                          # [B, T] distance from the last query
    dist = torch.arange(int(d.max()) + 1, dtype=torch.float32)
    w, b = pe.weight(0, dist), pe.bias(0, dist)
    if w is not None:
        att = att * w[:, d].permute(1, 0, 2)
    att = att / math.sqrt(C // H)
    if b is not None:
        att = att + b[:, d].permute(1, 0, 2)
    if cfg.window > 0:
        att = att.masked_fill((d >= cfg.window)[:, None], float('-inf'))
    return att


def average_logit_vector(logits):
    """Thesis 5.6.1: sort each logit vector, average over vectors (and heads), centre: -> (sigma, P_max of its softmax)."""
    v = logits.sort(dim=-1, descending=True).values.reshape(-1, logits.size(-1)).double().mean(0)
    if not torch.isfinite(v).all():
        return float('nan'), float('nan')
    v = v - v.mean()
    return float(v.std(unbiased=False)), float(v.softmax(-1).max())


def layer0_closed_form_inputs(model, tokens, ends, L):
    idx = windows(tokens, np.asarray(ends) - L, L)[0]
    return average_logit_vector(layer0_last_row_logits(model, idx))


def cmd_attention(args):
    ckpts = load_ckpts(args.ckpt)
    split = load_split(ckpts, args.data_dir, args.split)
    plt = plt_module()
    fig, axes = plt.subplots(1, len(ckpts), figsize=(5.5 * len(ckpts), 4.2), squeeze=False)
    out, md = [], ''
    for ci, c in enumerate(ckpts):
        L_tr = c.L_tr
        Ls = [ex_len(m, L_tr) for m in args.lengths]
        ends, info = draw_ends(split, max(Ls + [L_tr]), args.n, args.seed)
        with Meter() as meter:
            tr_layers, tr_all = attention_stats(c.model, split.tokens, ends, L_tr, 1.0, args.batch_tokens)
        print(f"{c.name}: L_tr={L_tr}: P_max {tr_all['pmax']:.4f}, entropy {tr_all['entropy']:.4f} ({meter.seconds:.1f} s)")
        sig_tr, pmax_tr0 = layer0_closed_form_inputs(c.model, split.tokens, ends, L_tr)
        per_len = []
        for m, L in zip(args.lengths, Ls):
            grid = {}
            with Meter() as meter:
                for tau in TAU_GRID:
                    grid[tau] = attention_stats(c.model, split.tokens, ends, L, tau, args.batch_tokens)
            tau_p = search_temperature(tr_all['pmax'], {t: g[1]['pmax'] for t, g in grid.items()})
            tau_h = search_temperature(tr_all['entropy'], {t: g[1]['entropy'] for t, g in grid.items()})
            sig_ex, _ = layer0_closed_form_inputs(c.model, split.tokens, ends, L)
            r = dict(mult=m, L_ex=L, tau_pmax=tau_p, tau_entropy=tau_h, tau_length_rule=length_rule(L, L_tr),
                     tau_prop51=prop51_tau(L_tr, L, pmax_tr0, sig_tr, sig_ex) if L > L_tr else 1.0,
                     tau_prop52=prop52_tau(L_tr, L, sig_tr, sig_ex) if L >= L_tr else float('nan'),
                     sigma_ex_layer0=sig_ex,
                     per_layer_tau1={k: v.round(5).tolist() for k, v in grid[1.0][0].items()},
                     all_tau1=grid[1.0][1],
                     grid={str(t): g[1] for t, g in grid.items()}, **meter.record())
            per_len.append(r)
            print(f"{c.name}: L_ex={L} ({m:g}x): P_max {grid[1.0][1]['pmax']:.4f} entropy {grid[1.0][1]['entropy']:.4f} "
                  f"-> Alg.1 tau(P_max)={tau_p} tau(H)={tau_h}; Prop 5.1 {r['tau_prop51']:.3f}, Prop 5.2 "
                  f"{r['tau_prop52']:.3f}, log rule {r['tau_length_rule']:.3f} ({meter.seconds:.1f} s)", flush=True)
        # dense closed-form curves (only layer 0's last row is needed, which is cheap)
        dense = sorted(set(int(round(L_tr * 2 ** (k / 4))) for k in range(0, int(4 * math.log2(max(Ls) / L_tr)) + 1)))
        curves = []
        for L in dense:
            s_ex, _ = layer0_closed_form_inputs(c.model, split.tokens, ends, L)
            curves.append((L, prop51_tau(L_tr, L, pmax_tr0, sig_tr, s_ex), prop52_tau(L_tr, L, sig_tr, s_ex),
                           length_rule(L, L_tr)))
        out.append(dict(ckpt=c.name, pe=c.pe, L_tr=L_tr, segments=info,
                        at_L_tr=dict(per_layer={k: v.round(5).tolist() for k, v in tr_layers.items()}, all=tr_all),
                        layer0_sigma_tr=sig_tr, layer0_pmax_tr=pmax_tr0, lengths=per_len,
                        closed_form_curves=[dict(L_ex=L, prop51=a, prop52=b, length_rule=lr) for L, a, b, lr in curves]))
        tau_arg = ','.join(f"{r['mult']:g}:{r['tau_pmax']}" for r in per_len)
        # Table 5.1 style: P_max and entropy per layer at L_tr and each L_ex (tau = 1)
        n_layer = c.model.config.n_layer
        head = ['layer', f'P_max @{L_tr}'] + [f'P_max @{r["L_ex"]}' for r in per_len] + \
               [f'H @{L_tr}'] + [f'H @{r["L_ex"]}' for r in per_len]
        rows = []
        for l in list(range(n_layer)) + ['all']:
            get = (lambda d, k: d[k][l]) if l != 'all' else (lambda d, k: d[k])
            rows.append([l, f"{get(tr_layers if l != 'all' else tr_all, 'pmax'):.4f}"]
                        + [f"{get(r['per_layer_tau1'] if l != 'all' else r['all_tau1'], 'pmax'):.4f}" for r in per_len]
                        + [f"{get(tr_layers if l != 'all' else tr_all, 'entropy'):.3f}"]
                        + [f"{get(r['per_layer_tau1'] if l != 'all' else r['all_tau1'], 'entropy'):.3f}" for r in per_len])
        md += (f"### {c.name} (pe={c.pe}, L_tr={L_tr}, {info['n_drawn']} segments)\n\nAttention rows at temperature 1 "
               f"(thesis Table 5.1): mean max-probability and entropy (nats).\n\n" + md_table(head, rows)
               + "\nTemperatures: Algorithm 1 grid search (1.0..0.5), Propositions 5.1/5.2 (layer 0, last query row), "
                 "length rule log_{L_ex} L_tr.\n\n"
               + md_table(['L_ex', 'Alg.1 P_max', 'Alg.1 entropy', 'Prop 5.1', 'Prop 5.2', 'log rule'],
                          [[r['L_ex'], r['tau_pmax'], r['tau_entropy'], f"{r['tau_prop51']:.3f}",
                            f"{r['tau_prop52']:.3f}", f"{r['tau_length_rule']:.3f}"] for r in per_len])
               + f"\nFor `ppl`: `--temperature {tau_arg}` (P_max alignment)\n\n")
        ax = axes[0, ci]
        xs = [L for L, *_ in curves]
        ax.plot(xs, [a for _, a, _, _ in curves], '-', color='C0', label='Prop. 5.1 (P_max)')
        ax.plot(xs, [b for _, _, b, _ in curves], '-', color='C1', label='Prop. 5.2 (entropy)')
        ax.plot(xs, [lr for *_, lr in curves], '--', color='gray', label=r'$\log_{L_{ex}} L_{tr}$')
        ax.plot([r['L_ex'] for r in per_len], [r['tau_pmax'] for r in per_len], 'o', color='C0', label='Alg. 1 P_max')
        ax.plot([r['L_ex'] for r in per_len], [r['tau_entropy'] for r in per_len], 'x', color='C1', ms=8,
                label='Alg. 1 entropy')
        ax.set_xscale('log', base=2)
        ax.set_xlabel('L_ex')
        ax.set_ylabel('temperature tau')
        ax.set_ylim(0.4, 1.6)  # the grid spans 0.5..1; closed forms outside this band mean their assumptions fail
        ax.set_title(f'{c.name} (L_tr={L_tr}; y clipped to 0.4..1.6)', fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    print('\n' + md)
    write_outputs(args, args.name or 'attention', dict(split=split.name, tau_grid=TAU_GRID, results=out), md, fig)
    return out


# --------------------------------------------------------------------------------------------
# passkey: synthetic retrieval (Mohtashami & Jaggi 2023; LM-Infinite 5.2; thesis 5.5.2)
# --------------------------------------------------------------------------------------------

# The question ends with the needle's own prefix, so a model that can look back and copy finds the key.
PASSKEY_STYLES = {
    'text': dict(intro='There is a pass key hidden in this text. Find it and remember it.\n',
                 filler='The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.\n',
                 needle='The pass key is {key}. Remember it. {key} is the pass key.\n',
                 question='What is the pass key? The pass key is '),
    'code': dict(intro='# a pass key is hidden in this file; find it\n',
                 filler='x = x + 1  # the grass is green, the sky is blue\n',
                 needle='pass_key = {key}  # remember it\n',
                 question='# the pass key was set by the line\n# pass_key = '),
}


def passkey_prompt(style, n_tokens, depth, key, encode):
    """-> (prompt ids, answer ids, needle offset). Fillers fill the prompt so that prompt + answer - 1 (the model's
    input when the answer is scored) fits in n_tokens; the needle follows round(depth * n_fillers) fillers."""
    t = PASSKEY_STYLES[style]
    intro, filler, needle, question, answer = encode([t['intro'], t['filler'], t['needle'].format(key=key),
                                                      t['question'], key])
    fixed = len(intro) + len(needle) + len(question) + len(answer) - 1
    n_fill = max(0, (n_tokens - fixed) // len(filler))
    k = int(round(depth * n_fill))
    ids = intro + filler * k + needle + filler * (n_fill - k) + question
    return ids, answer, len(intro) + len(filler) * k


@torch.inference_mode()
def score_answers(model, prompts, answers):
    """Teacher-forced scoring of each answer after its prompt (one forward pass). Greedy decoding reproduces the
    answer iff each answer token is the argmax given the correct tokens before it, so `exact` is the greedy-decoding
    accuracy. Returns per-example dicts: exact, digit accuracy, mean log-prob and mean rank (0 = top) of the answer."""
    out = []
    groups = {}
    for i, (p, a) in enumerate(zip(prompts, answers)):
        groups.setdefault((len(p), len(a)), []).append(i)
    res = [None] * len(prompts)
    for (lp, la), ids in groups.items():
        x = torch.tensor([list(prompts[i]) + list(answers[i][:-1]) for i in ids], dtype=torch.long)
        logits, _ = model(x, targets=x, reduction='none')          # targets only to get every position's logits
        logp = logits[:, lp - 1:lp - 1 + la].float().log_softmax(-1)  # positions that predict the answer tokens
        ans = torch.tensor([list(answers[i]) for i in ids], dtype=torch.long)
        lp_ans = logp.gather(-1, ans[..., None])[..., 0]
        rank = (logp > lp_ans[..., None]).sum(-1)
        for j, i in enumerate(ids):
            res[i] = dict(exact=bool((rank[j] == 0).all()), digit_acc=float((rank[j] == 0).double().mean()),
                          logprob=float(lp_ans[j].mean()), rank=float(rank[j].double().mean()))
    return res


def get_encoder(meta):
    sys.path.insert(0, os.path.join(ROOT, 'data'))
    from dataprep import get_tokenizer  # the tokenizers the corpora were built with
    tok = meta.get('tokenizer', 'bytes')
    enc = get_tokenizer(tok)['encode_batch']
    return lambda texts: [list(map(int, ids)) for ids in enc(texts)]


def cmd_passkey(args):
    ckpts = load_ckpts(args.ckpt)
    encode = get_encoder(load_meta(ckpts, args.data_dir))
    specs = variants(args)
    rng = np.random.default_rng(args.seed)
    keys = [''.join(rng.choice(list('0123456789'), args.digits)) for _ in range(args.n)]
    plt = plt_module()
    n_panels = len(ckpts) * len(specs)
    fig, axes = plt.subplots(2, n_panels, figsize=(3.4 * n_panels + 1.5, 5.6), squeeze=False, layout='constrained')
    ims = [None, None]
    lp_range = (-math.log(ckpts[0].model.config.vocab_size), 0.0)  # colour scale: uniform guess .. certainty
    out, md = [], ''
    for c in ckpts:
        for vi, (label, kw) in enumerate(specs):
            acc = np.zeros((len(args.lengths), len(args.depths)))
            lp = np.zeros_like(acc)
            cells = []
            with Meter() as meter:
                for i, m in enumerate(args.lengths):
                    L = ex_len(m, c.L_tr)
                    c.model.set_attention(**kw(c.L_tr, m))
                    for j, depth in enumerate(args.depths):
                        made = [passkey_prompt(args.style, L, depth, k, encode) for k in keys]
                        res = score_answers(c.model, [p for p, _, _ in made], [a for _, a, _ in made])
                        acc[i, j] = np.mean([r['exact'] for r in res])
                        lp[i, j] = np.mean([r['logprob'] for r in res])
                        cells.append(dict(mult=m, L_ex=L, depth=depth, accuracy=acc[i, j], mean_logprob=lp[i, j],
                                          digit_acc=float(np.mean([r['digit_acc'] for r in res])),
                                          mean_rank=float(np.mean([r['rank'] for r in res])),
                                          prompt_tokens=len(made[0][0])))
                    c.model.set_attention()
                    print(f"{c.name:>18} {label:>16} L_ex={L}: accuracy by depth {acc[i].round(2).tolist()}, "
                          f"mean log-prob of the key digits {lp[i].mean():.3f}", flush=True)
            out.append(dict(ckpt=c.name, pe=c.pe, L_tr=c.L_tr, variant=label, cells=cells, **meter.record()))
            md += (f"### {c.name} [{label}]: exact-match accuracy (greedy) / mean log-prob per key token\n\n"
                   + md_table(['L_ex / L_tr'] + [f'depth {d:g}' for d in args.depths],
                              [[mult_str(m)] + [f'{acc[i, j]:.2f} / {lp[i, j]:.2f}' for j in range(len(args.depths))]
                               for i, m in enumerate(args.lengths)]) + '\n')
            col = len(out) - 1
            for row, (vals, kw_im, what) in enumerate([(acc, dict(vmin=0, vmax=1), 'accuracy'),
                                                       (lp, dict(vmin=lp_range[0], vmax=lp_range[1]), 'log-prob')]):
                ax = axes[row, col]
                ims[row] = ax.imshow(vals, cmap='viridis', aspect='auto', **kw_im)
                for i in range(vals.shape[0]):
                    for j in range(vals.shape[1]):
                        ax.text(j, i, f'{vals[i, j]:.2f}', ha='center', va='center', fontsize=6, color='w')
                ax.set_xticks(range(len(args.depths)), [f'{d:g}' for d in args.depths], fontsize=7)
                ax.set_yticks(range(len(args.lengths)), [f'{m:g}x' for m in args.lengths], fontsize=7)
                ax.set_title(f'{c.name} [{label}]: {what}', fontsize=7)
                if row == 1:
                    ax.set_xlabel('needle depth', fontsize=8)
                if col == 0:
                    ax.set_ylabel('L_ex / L_tr', fontsize=8)
    fig.colorbar(ims[0], ax=axes[0].tolist(), shrink=0.8, label='exact match')
    fig.colorbar(ims[1], ax=axes[1].tolist(), shrink=0.8, label='mean log-prob per key token')
    md = (f"Passkey retrieval, style {args.style!r}, {args.n} random {args.digits}-digit keys per cell.\n\n" + md)
    print('\n' + md)
    write_outputs(args, args.name or 'passkey', dict(style=args.style, keys=keys, depths=args.depths,
                                                    lengths=args.lengths, results=out), md, fig)
    return out


# --------------------------------------------------------------------------------------------
# nope: latent position in a random NoPE model (thesis ch. 2)
# --------------------------------------------------------------------------------------------

def random_nope(d, H, L, sigma, n_layer=1, seed=0):
    """The random model of thesis 2.3: pe='none', no biases, every weight matrix i.i.d. N(0, sigma^2) (W_o too: no
    GPT-2 depth scaling), LayerNorm with gamma = 1, beta = 0; inputs are fed through a hook on wte (see below)."""
    torch.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=2, block_size=L, n_layer=n_layer, n_head=H, n_embd=d, pe='none', bias=False)).eval()
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.Linear):
                mod.weight.normal_(0.0, sigma)
    return model


def feed_vectors(model, x):
    """Replace the token embeddings by the given vectors x [B, T, d] (no embedding lookup, thesis 2.2)."""
    return model.transformer.wte.register_forward_hook(lambda mod, inp, out: x)


@torch.no_grad()
def nope_variance(d=768, H=12, L=512, sigma=0.02, n_samples=100, seed=0):
    """Per-position variance of the layer-0 attention output o_m (after W_o) over samples and dimensions, against
    Lemma 2.3: Var = d^2 sigma^4 / m for 1-indexed position m. The lemma only needs LayerNorm(x_m) ~ N(0, I)
    (thesis 2.3.1), which holds for i.i.d. inputs of any scale; we feed unit-variance inputs because with
    x ~ N(0, sigma^2) and sigma^2 below LayerNorm's eps (1e-5, e.g. sigma = 0.002) the eps would shrink them."""
    model = random_nope(d, H, L, sigma, 1, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n_samples, L, d, generator=gen)
    got = {}
    h1 = feed_vectors(model, x)
    h2 = model.transformer.h[0].attn.register_forward_hook(lambda mod, inp, out: got.update(o=out))
    try:
        model(torch.zeros(n_samples, L, dtype=torch.long))
    finally:
        h1.remove()
        h2.remove()
    o = got['o'].double()
    var = o.var(dim=(0, 2), unbiased=False).numpy()   # mean is 0 by symmetry; pooled over samples and dimensions
    lemma = d ** 2 * sigma ** 4 / np.arange(1, L + 1)  # thesis Lemma 2.3
    return var, lemma


def nope_probe(d=64, H=4, L=64, sigma=0.02, n_layer=4, steps=1000, n_train=512, batch_tokens=2048, lr=1e-3, seed=0,
               n_test=128):
    """Thesis 2.2 / 2.8.1: a frozen random NoPE model fed random vectors x ~ N(0, sigma^2); a two-layer ReLU probe per
    depth (0 = the inputs themselves) classifies the absolute position of every token from LayerNorm(hidden state).
    The model is frozen, so its features are computed once for a pool of n_train sequences (the thesis draws fresh
    inputs for 5000 x 32 sequences, too slow here); the MAE [n_layer+1, L] is measured on n_test fresh sequences."""
    model = random_nope(d, H, L, sigma, n_layer, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    torch.manual_seed(seed + 2)

    @torch.no_grad()
    def features(n):
        x = torch.randn(n, L, d, generator=gen) * sigma
        hs = [x]
        hooks = [feed_vectors(model, x)] + [b.register_forward_hook(lambda mod, inp, out: hs.append(out))
                                            for b in model.transformer.h]
        try:
            model(torch.zeros(n, L, dtype=torch.long))
        finally:
            for h in hooks:
                h.remove()
        # the final LayerNorm of thesis Fig. 2.1 (gamma 1, beta 0): the probe cannot just read the overall scale
        return torch.stack([F.layer_norm(h, (d,)).reshape(n * L, d) for h in hs])   # [depths, n*L, d]

    train = features(n_train)
    target = torch.arange(L).repeat(n_train)
    probes = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, L)) for _ in range(n_layer + 1)])
    opt = torch.optim.Adam(probes.parameters(), lr=lr)
    for step in range(steps):
        ix = torch.randint(len(target), (batch_tokens,), generator=gen)
        loss = sum(F.cross_entropy(p(f[ix]), target[ix]) for p, f in zip(probes, train))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            print(f"probe step {step}: loss summed over depths {loss.item():.3f}", flush=True)
    with torch.no_grad():
        test = features(n_test)
        pos = torch.arange(L).repeat(n_test)
        # point prediction = the median of the probe's distribution, the best guess under absolute error: a probe
        # that learned nothing predicts the middle, MAE L/4, the baseline of thesis Fig. 2.2 (argmax would give ~L/3)
        median = lambda logits: (logits.softmax(-1).cumsum(-1) < 0.5).sum(-1)
        return np.stack([(median(p(f)) - pos).abs().double().view(n_test, L).mean(0).numpy()
                         for p, f in zip(probes, test)])


def cmd_nope(args):
    plt = plt_module()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    res = dict(variance=[], probe=None)
    md_rows = []
    for sigma in args.sigmas:
        with Meter() as meter:
            var, lemma = nope_variance(args.d, args.heads, args.L, sigma, args.samples, args.seed)
        m = np.arange(1, args.L + 1)
        ratio = var / lemma
        print(f"sigma={sigma}: simulated / Lemma 2.3 variance: median {np.median(ratio):.3f}, range "
              f"{ratio.min():.3f}..{ratio.max():.3f} ({meter.seconds:.1f} s)", flush=True)
        res['variance'].append(dict(sigma=sigma, var=var.tolist(), lemma=lemma.tolist(), **meter.record()))
        md_rows.append([sigma, f'{args.d ** 2 * sigma ** 4 / args.heads:.2e}', f'{np.median(ratio):.3f}',
                        f'{ratio.min():.3f}..{ratio.max():.3f}'])
        line, = ax1.plot(np.log(m), np.log(var), lw=1.2, label=f'simulation sigma={sigma}')
        ax1.plot(np.log(m), np.log(lemma), '--', color=line.get_color(), lw=1, label=f'Lemma 2.3 sigma={sigma}')
    ax1.set_xlabel('log position m')
    ax1.set_ylabel('log variance of layer-0 attention output')
    ax1.set_title(f'random NoPE layer 0 (d={args.d}, H={args.heads}, {args.samples} samples)', fontsize=9)
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    with Meter() as meter:
        mae = nope_probe(args.probe_d, args.probe_heads, args.probe_L, args.probe_sigma, args.probe_layers,
                         args.probe_steps, args.probe_train, seed=args.seed)
    res['probe'] = dict(d=args.probe_d, heads=args.probe_heads, L=args.probe_L, sigma=args.probe_sigma,
                        steps=args.probe_steps, mae=mae.round(3).tolist(), mae_mean=mae.mean(1).tolist(),
                        **meter.record())
    for depth in range(len(mae)):
        x, y = smooth(mae[depth], max(1, args.probe_L // 32))
        ax2.plot(x, y, lw=1.2, label=f'{depth} layers' if depth else 'inputs (0 layers)')
    ax2.axhline(args.probe_L / 4, color='gray', ls=':', lw=0.8)
    ax2.set_xlabel('position')
    ax2.set_ylabel('probe MAE (positions)')
    ax2.set_title(f'position probe on a frozen random NoPE model (L={args.probe_L}; dotted: predict the middle)',
                  fontsize=8)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    md = ("Layer-0 attention-output variance of a random NoPE model vs Lemma 2.3 (d^2 sigma^4 / m); the lemma assumes "
          "near-uniform attention, i.e. logit variance d^2 sigma^4 / H << 1 (Lemma 2.2, Property 2.1).\n\n"
          + md_table(['sigma', 'logit variance (Lemma 2.2)', 'median sim/lemma', 'range sim/lemma'], md_rows)
          + f"\nPosition probe (thesis Fig. 2.2 set-up, d={args.probe_d}, L={args.probe_L}, {args.probe_steps} steps): "
            f"mean absolute error in positions (predicting the middle gives {args.probe_L / 4:g}).\n\n"
          + md_table(['layers'] + list(range(len(mae))), [['MAE'] + [f'{v:.1f}' for v in mae.mean(1)]]))
    print('\n' + md)
    write_outputs(args, args.name or 'nope', res, md, fig)
    return res


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line naming the bad value, instead of usage + message
        raise CLIError(message)


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def nonneg_int(text):
    try:
        v = int(text)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return v


def floats(lo, hi):
    def parse(text):
        try:
            out = [float(t) for t in text.split(',')]
        except ValueError:
            out = None
        if not out or any(not (lo <= v <= hi) for v in out):
            raise argparse.ArgumentTypeError(f"bad list {text!r}: expected comma-separated numbers in [{lo}, {hi}]")
        return out
    return parse


def build_parser():
    p = Parser(prog='extrapolate.py', description=__doc__.strip().splitlines()[0])
    sub = p.add_subparsers(dest='cmd', metavar='subcommand', parser_class=Parser)
    sub.required = True

    def add(name, help, ckpt=True, data=True):
        s = sub.add_parser(name, help=help)
        if ckpt:
            s.add_argument('--ckpt', nargs='+', required=True, help='checkpoint files or out/<run> folders')
        if data:
            s.add_argument('--split', default='test', choices=['train', 'val', 'test'])
            s.add_argument('--data_dir', default='', help="default: data/<the checkpoint's dataset>")
            s.add_argument('--batch_tokens', type=positive_int, default=16384, help='tokens per forward pass')
        s.add_argument('--seed', type=int, default=1337)
        s.add_argument('--threads', type=nonneg_int, default=0,
                       help="torch CPU threads (0: torch's default; 1 is faster on a core shared with other jobs)")
        s.add_argument('--out_dir', default=os.path.join('results', name))
        s.add_argument('--name', default='', help='output file stem (default: the subcommand)')
        return s

    s = add('ppl', 'perplexity vs evaluation length')
    s.add_argument('--lengths', type=parse_lengths, default=[1, 2, 4, 8, 16], help='multiples of L_tr')
    s.add_argument('--protocol', default='last_token', choices=PROTOCOLS)
    s.add_argument('--n', type=positive_int, default=1000, help='last_token: segments (thesis: 1000)')
    s.add_argument('--last_k', type=positive_int, default=1,
                   help='last_token: score the last k tokens of each segment (1 = the thesis protocol)')
    s.add_argument('--max_tokens', type=positive_int, default=65536, help='nonoverlap/sliding: tokens scored')
    s.add_argument('--offset', type=nonneg_int, default=0, help='nonoverlap/sliding: start of the span in the split')
    s.add_argument('--stride', type=nonneg_int, default=0, help='sliding: tokens between windows (0: L_tr)')
    s.add_argument('--reuse', default='', help="a previous ppl JSON with the same settings: its rows (matched by "
                                               "checkpoint name, variant, length) are not recomputed")
    add_variant_args(s)

    s = add('position', 'position-wise perplexity, vanilla vs windowed@L_tr')
    s.add_argument('--length', type=lambda t: parse_lengths(t)[0], default=8.0, help='L_ex as a multiple of L_tr')
    s.add_argument('--n', type=positive_int, default=100, help='segments')
    s.add_argument('--smooth', type=nonneg_int, default=0, help='moving-average width for the plot (0: L_tr/8)')
    add_variant_args(s)

    s = add('erf', 'cumulative normalised gradient and empirical receptive field')
    s.add_argument('--length', type=lambda t: parse_lengths(t)[0], default=4.0, help='L_ex as a multiple of L_tr')
    s.add_argument('--n', type=positive_int, default=100, help='segments')
    add_variant_args(s)

    s = add('kernels', 'bias kernels per head and effective length', data=False)
    s.add_argument('--max_distance', type=nonneg_int, default=0, help='distances plotted (0: 16 L_tr)')

    s = add('attention', 'attention max-probability/entropy and temperature alignment')
    s.add_argument('--lengths', type=parse_lengths, default=[2, 4, 8, 16], help='multiples of L_tr')
    s.add_argument('--n', type=positive_int, default=4, help='segments per length')

    s = add('passkey', 'synthetic passkey retrieval by length and depth', data=False)
    s.add_argument('--data_dir', default='', help="where meta.json names the tokenizer (default: the checkpoint's)")
    s.add_argument('--lengths', type=parse_lengths, default=[0.5, 1, 2, 4], help='multiples of L_tr')
    s.add_argument('--depths', type=floats(0, 1), default=[0, 0.25, 0.5, 0.75, 1.0])
    s.add_argument('--n', type=positive_int, default=10, help='keys per cell')
    s.add_argument('--digits', type=positive_int, default=5)
    s.add_argument('--style', default='code', choices=sorted(PASSKEY_STYLES))
    add_variant_args(s)

    s = add('nope', 'ch. 2: NoPE attention-output variance (Lemma 2.3) and position probe', ckpt=False, data=False)
    s.add_argument('--sigmas', type=floats(1e-6, 10), default=[0.2, 0.02, 0.002])
    s.add_argument('--d', type=positive_int, default=768)
    s.add_argument('--heads', type=positive_int, default=12)
    s.add_argument('--L', type=positive_int, default=512)
    s.add_argument('--samples', type=positive_int, default=32)
    s.add_argument('--probe_d', type=positive_int, default=64)
    s.add_argument('--probe_heads', type=positive_int, default=4)
    s.add_argument('--probe_L', type=positive_int, default=64)
    s.add_argument('--probe_sigma', type=float, default=0.02)
    s.add_argument('--probe_layers', type=positive_int, default=4)
    s.add_argument('--probe_steps', type=positive_int, default=1000)
    s.add_argument('--probe_train', type=positive_int, default=512, help='sequences in the probe training pool')
    return p


COMMANDS = dict(ppl=cmd_ppl, position=cmd_position, erf=cmd_erf, kernels=cmd_kernels, attention=cmd_attention,
                passkey=cmd_passkey, nope=cmd_nope)


def run(argv):
    """Parse argv and run the subcommand; bad input raises CLIError."""
    args = build_parser().parse_args(argv)
    args.argv = list(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.cmd == 'nope' and args.d % args.heads:
        die(f"--d={args.d} is not divisible by --heads={args.heads}")
    return COMMANDS[args.cmd](args)


def main(argv=None):
    try:
        run(sys.argv[1:] if argv is None else argv)
    except CLIError as e:
        sys.exit(f'error: {e}')


if __name__ == '__main__':
    main()
