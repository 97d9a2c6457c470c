"""
Fast paths for attention with a relative position bias. Each computes what model.attention_reference defines,
to float tolerance (tests/test_attention.py); model.attention_fast picks among them.

tiled_attention: causal self-attention over positions 0..T-1 whose logits are
    scale * q_m.k_n * weight[h, m-n] + bias[h, m-n] + pot[b, h, n] - pot[b, h, m]
The bias and weight depend on the distance only (a Toeplitz matrix), so the query-block x key-block tiles on one
diagonal all share one bias block: one batched SDPA call per diagonal, the partial results merged by their
log-sum-exp (the CPU flash kernel returns it). A potential (ALiBi: slope * position) rides in one extra head
dimension instead, so those tiles need no mask at all. Memory is linear in T; windowed attention skips the
diagonals it cannot see.
"""
import math

import torch
import torch.nn.functional as F

NEG = float('-inf')


def merge(out, lse, o, l):
    """Combine two softmax-normalised partial attentions over disjoint key sets, given their log-sum-exps: the
    new part gets weight e^l / (e^lse + e^l) = sigmoid(l - lse). A part whose row sees no key has l = -inf."""
    w = torch.sigmoid(l - lse).nan_to_num()  # -inf - -inf: neither part sees a key; keep out
    return torch.lerp(out, o.nan_to_num(), w[..., None]), torch.logaddexp(lse, l)


def sdpa_lse(q, k, v, mask, scale, causal):
    """SDPA that also returns each row's log-sum-exp of the logits ([..., Tq])."""
    if q.device.type == 'cpu':
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, causal, attn_mask=mask, scale=scale)[:2]
    att = (q @ k.transpose(-2, -1)).float() * scale  # other devices: explicit (a tile is small)
    if mask is not None:
        att = att + mask
    if causal:
        att = att.masked_fill(torch.ones_like(att, dtype=torch.bool).triu(1), NEG)
    lse = att.logsumexp(-1)
    return (att - lse[..., None]).exp().nan_to_num().to(v.dtype) @ v, lse


def available(device):
    return device.type != 'cpu' or hasattr(torch.ops.aten, '_scaled_dot_product_flash_attention_for_cpu')


def tiled_attention(q, k, v, scale, bias=None, weight=None, pot=None, window=0, block=256, max_tiles=64):
    """q, k, v [B, H, T, D]; bias, weight: None or fn(distances float [n]) -> [H, n] (bias may hold -inf);
    pot: None or [B or 1, H, T]; window > 0: position m sees n only if m - n < window.
    -> (out [B, H, T, D], lse [B, H, T]), the lse of the logits as defined above."""
    B, H, T, D = q.shape
    bq = min(block, T)
    nb = -(-T // bq)
    span = nb if window <= 0 else min(nb, -(-(window + bq - 1) // bq))  # diagonals that hold a visible pair
    n_dist = T if window <= 0 else min(T, window)
    dist = torch.arange(n_dist, device=q.device, dtype=torch.float32)
    btab = bias(dist) if bias is not None else None
    wtab = weight(dist) if weight is not None else None
    if window > 0:  # a window is Toeplitz too: one more column, -inf, for every distance >= window
        btab = torch.cat([btab if btab is not None else q.new_zeros(H, n_dist, dtype=torch.float32),
                          q.new_full((H, 1), NEG, dtype=torch.float32)], 1)
    pad = nb * bq - T  # padded keys lie in every real query's future, so causality hides them
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        pot = F.pad(pot, (0, pad)) if pot is not None else None
    Bo = max(B, pot.size(0)) if pot is not None else B
    x1 = 1 if pot is not None else 0  # the potential's extra dimension

    def tiles(x, fill=0.0):  # -> contiguous [Bo, nb, H, bq, D + x1], so a run of tiles is a plain view
        t = x.reshape(x.size(0), H, nb, bq, D).transpose(1, 2)
        buf = t.new_full((Bo, nb, H, bq, D + x1), fill)
        buf[..., :D] = t
        return buf
    qt, kt, vt = tiles(q, 1.0 / scale), tiles(k), tiles(v)
    if pot is not None:
        # logit += pot[n] - pot[m]: the key term rides in the extra dimension (q's is 1/scale), taken relative to
        # the first position m0 of the query's tile so that the numbers stay small; the lse gets
        # -(pot[m] - pot[m0]) at the end
        pt = pot.reshape(pot.size(0), H, nb, bq).transpose(1, 2)                  # [B, nb, H, bq]
        p0 = pt[..., :1]
    r = torch.arange(bq, device=q.device)
    out = torch.empty(Bo, nb, H, bq, D + x1, device=q.device, dtype=torch.float32)
    lse = torch.empty(Bo, nb, H, bq, device=q.device, dtype=torch.float32)
    for j in range(span):
        d = j * bq + r[:, None] - r[None, :]                                       # [bq, bq] distance in every tile
        mask = btab[:, d.clamp(0, btab.size(1) - 1)] if btab is not None else None
        if j == 0 and mask is not None:
            mask = mask.masked_fill(d < 0, NEG)
        wmat = wtab[:, d.clamp(0, n_dist - 1)] * scale if wtab is not None else None
        if pot is not None:
            kt[:, :nb - j, :, :, D] = pt[:, :nb - j] - p0[:, j:]
        for s in range(0, nb - j, max_tiles):  # a bounded batch of tiles at a time
            e = min(nb - j, s + max_tiles)
            qq, kk, vv = (x.reshape(-1, H, bq, D + x1) for x in (qt[:, j + s:j + e], kt[:, s:e], vt[:, s:e]))
            if wtab is None:
                o, l = sdpa_lse(qq, kk, vv, None if mask is None else mask[None].to(qq.dtype), scale,
                                causal=j == 0 and mask is None)
                if mask is not None:  # the kernel reports lse 0 for a row with no visible key; it is -inf
                    l = l.masked_fill((mask == NEG).all(-1), NEG)
            else:  # a weight multiplies q.k, which SDPA cannot do: this tile's softmax, explicitly, in place
                att = (qq[..., :D] @ kk[..., :D].transpose(-2, -1)).float().mul_(wmat)
                if pot is not None:
                    att.add_(kk[..., D].float()[..., None, :])
                if mask is not None:
                    att.add_(mask)
                elif j == 0:
                    att.masked_fill_(d < 0, NEG)
                top = att.amax(-1, keepdim=True)
                dead = top == NEG  # a row with no visible key
                top.masked_fill_(dead, 0.0)
                # exp below e^-80 would make float32 denormals, which are slow on x86; next to the row's maximum
                # (e^0 = 1) such weights vanish in rounding anyway
                p = att.sub_(top).clamp_(min=-80.0).exp_()
                total = p.sum(-1, keepdim=True)
                o = ((p.to(vv.dtype) @ vv) / total).masked_fill_(dead, 0.0)
                l = (top + total.log()).masked_fill_(dead, NEG).squeeze(-1)
            o, l = o.float().view(Bo, e - s, H, bq, D + x1), l.float().view(Bo, e - s, H, bq)
            if j == 0:
                out[:, s:e], lse[:, s:e] = o, l
            else:  # merge into the tiles of queries j+s .. j+e-1, in place
                w = torch.sigmoid(l - lse[:, j + s:j + e])
                out[:, j + s:j + e].lerp_(o, w[..., None])
                lse[:, j + s:j + e] = torch.logaddexp(lse[:, j + s:j + e], l)
    if pot is not None:
        lse = lse - (pt - p0)
    out = out[..., :D].transpose(1, 2).reshape(Bo, H, nb * bq, D)[:, :, :T]
    return out.to(v.dtype), lse.transpose(1, 2).reshape(Bo, H, nb * bq)[:, :, :T]


# --------------------------------------------------------------------------------------------
# FlexAttention (the GPU path, under torch.compile): one fused kernel whose score_mod reads the distance tables
# and whose block mask skips the tiles that causality, a window or the Λ mask hide. The same functions run on
# CPU in the tests (eager, and a compiled forward).
# --------------------------------------------------------------------------------------------

_compiled = {}


def flex_mods(qi, qrel, ki, krel, windows, bias_tab=None, weight_tab=None, pot=None, ceiling=0):
    """(score_mod, mask_mod) of the logits of model.logits: score = q.k * scale, then * weight[h, d] + bias[h, d]
    (+ pot[b, h, n] - pot[b, h, m]), d = qrel - krel capped at `ceiling`; visible: causal and the window rules."""
    top = (bias_tab if bias_tab is not None else weight_tab).size(1) - 1 if (bias_tab is not None or weight_tab is not None) else 0
    qb = (lambda b: 0) if qrel.size(0) == 1 else (lambda b: b)
    pb = (lambda b: 0) if pot is None or pot.size(0) == 1 else (lambda b: b)

    def score_mod(score, b, h, m, n):
        d = (qrel[qb(b), m] - krel[qb(b), n]).clamp(0, min(ceiling, top) if ceiling > 0 else top)
        if weight_tab is not None:
            score = score * weight_tab[h, d]
        if bias_tab is not None:
            score = score + bias_tab[h, d]
        if pot is not None:
            score = score + pot[pb(b), h, n] - pot[pb(b), h, m]
        return score

    def mask_mod(b, h, m, n):
        ok = qi[m] >= ki[n]
        for n_start, local in windows:
            ok = ok & ((qi[m] - ki[n] < local) | (ki[n] < n_start))
        return ok
    return score_mod, mask_mod


def flex(q, k, v, scale, score_mod, mask_mod, compiled=True):
    """FlexAttention of q [B, H, Tq, D] against k, v [B, H, Tk, D] with the given mods."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    fn = flex_attention
    if compiled:
        if 'flex' not in _compiled:
            _compiled['flex'] = torch.compile(flex_attention)
        fn = _compiled['flex']
    block_mask = create_block_mask(mask_mod, None, None, q.size(2), k.size(2), device=q.device.type)
    return fn(q, k, v, score_mod=score_mod, block_mask=block_mask, scale=scale)
