"""
FlexAttention, the GPU path of lexgpt/routes.py (its `flex` route): one fused kernel whose score_mod reads the distance
tables and whose block mask skips the tiles that causality, a window or the Λ mask hide. The same functions run on
CPU in the tests (eager, and a compiled forward).
"""
import torch

from lexgpt.reference import capped

_compiled = {}


def flex_mods(qi, qrel, ki, krel, mask_rules, bias_tab=None, weight_tab=None, pot=None, ceiling=0, slope=None):
    """(score_mod, mask_mod) of the logits of reference.scores: score = q.k * scale, then * weight[h, d] + bias[h, d]
    - slope[h] * d (+ pot[b, h, n] - pot[b, h, m]), d = qrel - krel capped at `ceiling`; a table's last entry stands
    for every distance past it. Visible: causal and the window rules."""
    qb = (lambda b: 0) if qrel.size(0) == 1 else (lambda b: b)
    pb = (lambda b: 0) if pot is None or pot.size(0) == 1 else (lambda b: b)
    # the compiled backward refuses a tensor that needs grad indexed twice in one score_mod: the query side reads a copy
    qpot = None if pot is None else pot.clone()

    def score_mod(score, b, h, m, n):
        d = qrel[qb(b), m] - krel[qb(b), n]
        if weight_tab is not None:
            score = score * weight_tab[h, d.clamp(0, weight_tab.size(1) - 1)]
        if bias_tab is not None:
            score = score + bias_tab[h, d.clamp(0, bias_tab.size(1) - 1)]
        if slope is not None:  # ALiBi, eq. 4.3: -slope * (m - n); a key in the future is masked anyway
            score = score - slope[h] * capped(d, ceiling)
        if pot is not None:
            score = score + pot[pb(b), h, n] - qpot[pb(b), h, m]
        return score

    def mask_mod(b, h, m, n):
        ok = qi[m] >= ki[n]
        for n_start, width in mask_rules:
            ok = ok & ((qi[m] - ki[n] < width) | (ki[n] < n_start))
        return ok
    return score_mod, mask_mod


def flex_attend(q, k, v, scale, score_mod, mask_mod, compiled=True):
    """FlexAttention of q [B, H, Tq, D] against k, v [B, H, Tk, D] with the given mods. On a GPU compiled once for
    dynamic shapes, so that every length and batch takes the same kernel (one compilation per encoding and window
    rule; extrapolate.py compiled anew for each of its lengths before). Inside a compiled model, that model's graph
    holds it."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    fn, blocks = flex_attention, create_block_mask
    if compiled and not torch.compiler.is_compiling():
        if q.device.type not in _compiled:
            # Each encoding, window rule and autocast state is a graph of its own: past torch's default of 8, compiled
            # calls fall back to eager ones without an error (an H200 run of bench.py's eval mode did so).
            dyn, key = torch._dynamo.config, 'recompile_limit'  # cache_size_limit in older torch
            key = key if hasattr(dyn, key) else 'cache_size_limit'
            setattr(dyn, key, max(getattr(dyn, key), 64))
            # on CPU (the tests) torch 2.13 fails to build the C++ of flex's dynamic-shape kernel: static shapes there.
            # An eager block mask evaluates mask_mod at all Tq x Tk pairs (10 GB at 32k tokens); a compiled one not
            dynamic = q.device.type != 'cpu'
            _compiled[q.device.type] = (torch.compile(flex_attention, dynamic=dynamic),
                                        torch.compile(create_block_mask, dynamic=dynamic))
        fn, blocks = _compiled[q.device.type]
    block_mask = blocks(mask_mod, None, None, q.size(2), k.size(2), device=q.device.type)
    return fn(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=scale)
