"""
What the evaluation scripts share: the protocols' per-token losses (extrapolate.py, passkey.py, temperature.py), the
evaluation-time attention variants, lengths in units of L_tr, the receptive-field tools (thesis 4.5.1) and one long
stream through a bounded cache. Where a pretrained model's tokenizer adds a BOS (Gemma 3's; not SmolLM2's), every
input starts with it: the first token of a window cut from the corpus is replaced by BOS, as llama-perplexity does
(corpus.with_bos), and a prompt gets it before its first token; --bos=False turns it off, and JSONs say settings.bos.
"""
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F

from lexgpt.config import ConfigError
from lexgpt.corpus import check_split, slices
from lexgpt.device import pick_device, precision
from lexgpt.progress import Progress
from lexgpt.rope_scaling import SCALINGS

BOS_DEFAULTS = dict(
    bos=True,                   # a model whose tokenizer puts a BOS before a text gets it in every input (False: none)
)


def bos_id(model, on=True):
    """The BOS id that the model's own tokenizer puts before a text (pretrained.load's info), or None: off, our own
    checkpoints, or a tokenizer that adds none."""
    return getattr(model, 'pretrained_info', {}).get('bos') if on else None


def prompt_with_bos(ids, bos):
    """A prompt's ids (a text that starts where the input starts: sample.py's, a passkey prompt) with bos put before
    them, as the model's tokenizer does; bos None: the ids as they are."""
    return ([] if bos is None else [bos]) + list(ids)


def runs_bos(runs, on=True):
    """The one BOS id (or None) of the runs one result JSON holds; runs that disagree are refused."""
    ids = {r.name: bos_id(r.model, on) for r in runs}
    if len(set(ids.values())) > 1:
        raise ConfigError(f"the runs want different BOS ids ({ids}): evaluate them in separate commands")
    return next(iter(ids.values()), None)


# ------------------------------------------------------------------ the three protocols: per-token losses

@torch.inference_mode()
def last_token_losses(model, tokens, ends, L, batch_tokens=16384, last_k=1, bos=None, what='', done=(), save=None):
    """Thesis 4.3.4 / Fig. 4.3: the loss of token e given exactly the L tokens before it (input tokens[e-L:e]). With
    the same ends at every L the scored tokens are identical and only their context grows. last_k > 1 also scores
    the k-1 tokens before each e (contexts L-k+1..L), still the same tokens at every length. bos: each input's first
    token (corpus.with_bos). -> [len(ends) * last_k]. `what` names the run in the progress lines (progress.Progress).
    A long cell resumes: done holds the losses of its first inputs, scored before, and save(so_far) is called after
    each forward pass, so_far() giving the losses so far (built only where save writes them)."""
    ends = np.asarray(ends)
    rows = max(1, batch_tokens // L)  # windows per forward pass
    first = len(done) // last_k
    out = [torch.tensor(np.asarray(done, dtype=np.float64)[:first * last_k])]
    progress = Progress(what or f'L_ex={L}', len(ends), 'segments', start=first)
    so_far = lambda: torch.cat([o.double() for o in out]).numpy()
    for i in range(first, len(ends), rows):
        x, y = slices(tokens, ends[i:i + rows] - L, L, bos)
        out.append(last_losses(model, x, y, last_k))
        progress.done(len(x))
        if save:
            save(so_far)
    return so_far()


def last_losses(model, x, y, k):
    """Per-token losses of the last k targets of each row, flattened. Only those positions go through the last block
    and the head (GPT.forward's last_k): a 49k vocabulary's logits at every one of 16k positions would take GBs."""
    return model(x, targets=y[:, -k:], reduction='none', last_k=k)[1].reshape(-1)


@torch.inference_mode()
def segment_losses(model, tokens, starts, L, batch_tokens=16384, bos=None, what=''):
    """Per-token losses [n, L] of the windows tokens[s:s+L] -> tokens[s+1:s+L+1], each evaluated from scratch (bos:
    its first token)."""
    starts = np.asarray(starts)
    rows = max(1, batch_tokens // L)
    out, progress = [], Progress(what or f'L_ex={L}', len(starts), 'segments')
    for i in range(0, len(starts), rows):
        out.append(every_token_losses(model, *slices(tokens, starts[i:i + rows], L, bos)).double())
        progress.done(len(out[-1]))
    return torch.cat(out).numpy() if out else np.zeros((0, L))


def nonoverlap_losses(model, tokens, start, n_tokens, L, batch_tokens=16384, bos=None, what=''):
    """Table 3.3 protocol: the n_tokens targets after `start` cut into segments of L, each scored from scratch; every
    token counts, but the first ones of each segment have little context (the thesis' 'early token curse', 4.3.4)."""
    starts = start + L * np.arange(n_tokens // L)
    return segment_losses(model, tokens, starts, L, batch_tokens, bos, what).reshape(-1)


@torch.inference_mode()
def sliding_losses(model, tokens, start, n_tokens, L, stride, batch_tokens=16384, bos=None, what=''):
    """Windows of L tokens every `stride` tokens over the targets tokens[start+1 : start+n_tokens+1]; a window scores
    only the targets no earlier one scored, so each target counts once and, after the first window, with at least
    L - stride tokens of context (bos: each window's first token). A last window ends at the end of the span."""
    if not 1 <= stride <= L:
        raise ConfigError(f"stride={stride} is outside 1..L_ex={L}")
    if n_tokens < L:
        raise ConfigError(f"span of {n_tokens} tokens is shorter than L_ex={L}")
    window_starts = list(range(start, start + n_tokens - L + 1, stride))
    if window_starts[-1] + L < start + n_tokens:
        window_starts.append(start + n_tokens - L)
    # the targets each window adds beyond the previous window's end
    new = [L] + [b - a for a, b in zip(window_starts, window_starts[1:])]
    rows = max(1, batch_tokens // L)
    out, progress = [], Progress(what or f'L_ex={L}', len(window_starts), 'windows')
    for i in range(0, len(window_starts), rows):
        loss = every_token_losses(model, *slices(tokens, window_starts[i:i + rows], L, bos))
        out += [row[L - k:].double() for row, k in zip(loss, new[i:i + rows])]
        progress.done(len(loss))
    return torch.cat(out).numpy()


HEAD_ELEMENTS = 2 ** 27  # logits held at once where every position is scored: 512 MB of float32


def every_token_losses(model, x, y):
    """Per-token losses [B, T] of model(x, targets=y), the head run on a slice of positions at a time: Gemma 3's
    262,144 ids are 1 MB of float32 logits per token, 34 GB at 32k tokens at once. A small vocabulary gets one slice,
    the plain forward itself."""
    norm, head = getattr(getattr(model, 'transformer', None), 'ln_f', None), getattr(model, 'lm_head', None)
    span = max(1, HEAD_ELEMENTS // (head.out_features * x.size(0))) if head is not None else x.size(1)
    if norm is None or span >= x.size(1):
        return model(x, targets=y, reduction='none')[1]
    seen = {}
    with head_sees(model, lambda h: seen.setdefault('h', h)[:, :0]):  # the norm's output kept; the head sees none
        model(x, targets=y[:, :0], reduction='none')
    h, y = seen['h'].to(head.weight.dtype), y.to(seen['h'].device)
    return torch.cat([F.cross_entropy(head(h[:, i:i + span]).flatten(0, 1).float(), y[:, i:i + span].reshape(-1),
                                      ignore_index=-1, reduction='none').view(len(y), -1)
                      for i in range(0, x.size(1), span)], 1).cpu()


@contextmanager
def head_sees(model, pick):
    """Only pick(h) of the final norm's output h reaches the head of our GPT."""
    hook = model.transformer.ln_f.register_forward_hook(lambda module, inp, h: pick(h))
    try:
        yield
    finally:
        hook.remove()


# --------------------------------------------------------------------------------------------
# Evaluation-time attention variants (extrapolate.py, receptive_field.py, passkey.py): each adds a column
# next to the unmodified model, through `with model.attention(...)`
# --------------------------------------------------------------------------------------------

VARIANT_DEFAULTS = dict(
    windowed=False,             # windowed@L_tr: every token sees the last L_tr tokens only (thesis Figs. 3.5/3.7) ...
    windowed_at=0,              # ... or the last windowed_at tokens (0: L_tr)
    lm_infinite=False,          # LM-Infinite: Λ-mask (n_starting + last L_tr tokens) and distance ceiling L_tr
    n_starting=10,              # LM-Infinite's starting tokens (the paper: 5..100 work)
    topk=0,                     # LM-Infinite's top-k middle tokens (implies lm_infinite; the paper: 5)
    topk_from_layer=5,          # top-k only in layers >= this one, 0-based (the paper's h = 5 on Llama-2)
    attn_temperature='',        # attention's softmax temperature (thesis ch. 5): '0.9', or per multiple '2:0.95,4:0.9'
    no_vanilla=False,           # leave out the unmodified model
    extend_layers='',           # the layers that rope_scaling, windowed and lm_infinite reach: all | global |
                                # local (a window of its own: Gemma 3's sliding layers) |
                                # '' (the checkpoint's; all unless it says)
)


def parse_temperature(text):
    """'0.9' (every length) or '2:0.95,4:0.9' (per length multiple; others 1.0) -> {mult or None: tau}."""
    out = {}
    for part in str(text).split(','):
        try:
            m, t = part.split(':') if ':' in part else (None, part)
            out[None if m is None else float(m)] = float(t)
        except ValueError:
            raise ConfigError(f"bad attn_temperature {part!r} in {text!r}: expected a number like 0.9 or per-length "
                              f"pairs like 2:0.95,4:0.9") from None
    if any(not (t > 0) for t in out.values()):
        raise ConfigError(f"attn_temperature must be positive, got {text!r}")
    return out


def variants(cfg):
    """[(label, fn(L_tr, mult) -> model.attention kwargs)]: vanilla first, then the modifications asked for."""
    out = [] if cfg['no_vanilla'] else [('vanilla', lambda L_tr, m: {})]
    if cfg['windowed']:
        w = cfg.get('windowed_at', 0)
        out.append((f'windowed@{w or "L_tr"}', lambda L_tr, m: dict(key_window=w or L_tr)))
    if cfg['lm_infinite'] or cfg['topk']:
        # LM-Infinite (Han et al. 2023, sec. 4, App. A): Λ-mask = first n_starting + last L_pretrain tokens, distance
        # ceiling L_pretrain; top-k middle tokens at distance L_pretrain / 2, in the layers from topk_from_layer on
        k, ns, h = cfg['topk'], cfg['n_starting'], cfg['topk_from_layer']
        label = f'LM-Inf(n_start={ns}' + (f',top{k}@layer>={h})' if k else ')')
        out.append((label, lambda L_tr, m: dict(key_window=L_tr, n_starting=ns, ceiling=L_tr, topk=k,
                                                topk_from_layer=h)))
    if cfg['attn_temperature']:
        taus = parse_temperature(cfg['attn_temperature'])
        label = f'tau={taus[None]}' if list(taus) == [None] else 'tau(L)'
        out.append((label, lambda L_tr, m: dict(attn_temperature=taus.get(m, taus.get(None, 1.0)))))
    if not out:
        raise ConfigError("no_vanilla=True leaves nothing to evaluate; "
                          "add windowed, lm_infinite, topk or attn_temperature")
    return out


def extension(cfg):
    """A script's --rope_scaling/--rope_scale/--extend_layers -> (what run names gain: '+yarn4', '+yarn4@global',
    '@local' or '', the model overrides)."""
    layers = cfg.get('extend_layers') or ''
    over = dict(extend_layers=layers) if layers else {}
    if cfg.get('rope_scaling'):
        over.update(rope_scaling=cfg['rope_scaling'], rope_scale=cfg['rope_scale'])
    return (f"+{cfg['rope_scaling']}{cfg['rope_scale']:g}" if cfg.get('rope_scaling') else '') + \
        (f'@{layers}' if layers else ''), over


def check_settings(cfg):
    """What the evaluation scripts share, checked before any model or data is loaded (a pretrained model takes
    minutes, a length takes hours): each bad value in one line with the allowed ones. The keys a script lacks are
    skipped."""
    if 'split' in cfg:
        check_split(cfg['split'])
    for key in ('lengths', 'length'):
        bad = [m for m in (cfg[key] if key == 'lengths' else [cfg[key]]) if not m > 0] if key in cfg else []
        if bad:
            raise ConfigError(f"{key}: {bad[0]:g} is not a positive multiple of L_tr; give e.g. --{key}="
                              + ('1,2,4' if key == 'lengths' else '4'))
    if 'device' in cfg:
        precision(pick_device(cfg['device']).split(':')[0], cfg['dtype'])
    if cfg.get('regular_impl', 'gather') not in ('plain', 'gather', 'reduce'):
        raise ConfigError(f"regular_impl={cfg['regular_impl']!r}; allowed: plain, gather, reduce")
    if cfg.get('rope_scaling', '') not in SCALINGS or cfg.get('rope_scale', 1.0) < 1:
        raise ConfigError(f"rope_scaling={cfg['rope_scaling']!r}, rope_scale={cfg['rope_scale']:g}; allowed: "
                          f"{', '.join(s for s in SCALINGS if s)} (or '') with rope_scale >= 1")
    if cfg.get('extend_layers', '') not in ('', 'all', 'global', 'local'):
        raise ConfigError(f"extend_layers={cfg['extend_layers']!r}; allowed: all, global, local (or '')")
    for key in ('threads', 'windowed_at', 'n_starting', 'topk', 'topk_from_layer'):
        if cfg.get(key, 0) < 0:
            raise ConfigError(f"{key}={cfg[key]} must be >= 0")
    if 'attn_temperature' in cfg:
        variants(cfg)  # the temperature's parse, and something to evaluate


def ex_len(mult, L_tr):
    """A length given as a multiple of the training length -> tokens."""
    L = int(round(mult * L_tr))
    if L < 2:
        raise ConfigError(f"length multiple {mult:g} x L_tr={L_tr} gives {L} tokens; need at least 2")
    return L


# --------------------------------------------------------------------------------------------
# Receptive field (thesis 4.5.1): receptive_field.py and regular_lang.py
# --------------------------------------------------------------------------------------------

ERF_MASS = 0.99  # thesis 4.5.1: ERF = the most recent tokens holding 99% of the normalised gradient


def embedding_grad_norms(model, emb, loss_fn):
    """|g_m| = |d loss / d e_m| for every output e_m [rows, T] of the embedding module emb, loss = loss_fn() (a forward
    pass run here); a hook makes e a fresh leaf, so no parameter gets a gradient. Returns float64 [rows, T]."""
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
    return grads['e'].grad.double().norm(dim=-1).cpu()


def cumulative_from_end(s):
    """c_m = sum_{n >= m} s_n (thesis 4.5.1), c[0] = 1."""
    return np.cumsum(s[::-1])[::-1]


def erf_tokens(s, mass=ERF_MASS):
    """ERF counted from the end: the smallest number r of most recent tokens whose normalised gradient exceeds
    `mass`."""
    tail = np.cumsum(s[::-1])
    return int(np.argmax(tail > mass) + 1) if tail[-1] > mass else len(s)
