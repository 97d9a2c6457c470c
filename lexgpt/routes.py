"""
The fast attention routes. Each computes what reference.attention_reference defines, to float tolerance
(tests/test_attention.py, tests/test_routes.py), for the calls it accepts. choose() holds the rules, one condition per
route, and names the first route that accepts a call; attend() runs it. What each computes, in choose()'s order:

  causal    one fused causal SDPA call (grouped keys: see gqa_fused)
  dense     the whole [H, T, T] bias, as the KERPLE authors' code builds it, as SDPA's additive mask; the table's
            gradient is summed back along the diagonals (toeplitz), with no scatter of T^2 values into it
  flex      one FlexAttention kernel (flexattn.py) whose score_mod adds ALiBi's bias in closed form and reads the
            other distance tables and FoX's potential
  folded    one causal SDPA call with a bias that splits into pot[n] - pot[m] (ALiBi's slope * position, FoX's
            gates): pot[n] rides in an extra head dimension, and softmax ignores pot[m]
  tiled     tiled_attention below, the Λ mask's starting tokens merged in by log-sum-exp
  explicit  the reference's logits, one block of queries at a time
  blocks    query blocks through SDPA with the bias as a float mask; a rotary ceiling's far pairs (a stream's
            starting tokens) by the reference's logits, merged in by log-sum-exp
Every route but `causal`, `dense` and `folded` keeps memory linear in T: blocks of at most AttnOptions.block_elems
logits (dense holds H x T x T <= block_elems).

Dense or flex, for a training call on a GPU that both take (a bias with no potential): dense where a parameter of
the bias learns (KERPLE, T5), flex otherwise (Sandwich's fixed table), unless AttnOptions.route prefers one. Why: flex's
backward adds every (query, key) pair's gradient into the few [H, distance] entries of the table, a heavily contended
scatter (the hypothesis behind compiled KERPLE-log and T5 at 3.2x `none` on an H100, results/gpu/lease), while
dense's bias gradient is SDPA's own, reduced into the table like any sum; a fixed table has no such backward, and flex
holds no T x T tensor. It is a rule to measure, not a measurement: `python -m tools.bench configs/thesis_162m.py
--mode=train --pes=none,kerple_log+flex,kerple_log+dense,t5+flex,t5+dense` times both (results.sh lease), and the
rule should follow what a lease records there.

Python facts, not tensor values: choose() and the training routes read shapes, options and the call's `same` and
`plain` (set by the model from whether a KV cache holds past keys and whether the positions are 0..T-1), so that
torch.compile captures a training step as one graph (tests/test_compile.py). Where a call lacks those facts the routes
read the positions themselves, which breaks a compiled graph there and is left so on purpose: key_range (a window's
or cache's keys per query block, in blocks and explicit), reference.distance_table (the distances a block spans) and
flex_route's table length under a KV cache or BiPE's segments. Those are evaluation and decoding paths, run eagerly
(flex compiled on its own, for dynamic shapes), where the data decide how much work there is.

tiled_attention: causal self-attention over positions 0..T-1 whose logits are
    scale * q_m.k_n * weight[h, m-n] + bias[h, m-n] + pot[b, h, n] - pot[b, h, m]
The bias and weight depend on the distance only (a Toeplitz matrix), so the query-block x key-block tiles on one
diagonal all share one bias block: one batched SDPA call per diagonal, the partial results merged by their
log-sum-exp (the CPU flash kernel returns it). A potential (ALiBi: slope * position) rides in one extra head
dimension instead, so those tiles need no mask at all. Memory is linear in T; windowed attention skips the
diagonals it cannot see.
"""
import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from lexgpt import reference  # its scores are read as reference.scores, so that a test can count the calls
from lexgpt.flexattn import flex_attend, flex_mods
from lexgpt.reference import NEG, allowed_keys, capped, logit_scale, potential_term, repeat_kv


# --------------------------------------------------------------------------------------------
# Which keys a block of queries needs (the mask itself is the reference's: allowed_keys)
# --------------------------------------------------------------------------------------------

def key_range(qi, ki, mask_rules):
    """Indices into the keys that a query block [qi[0], qi[-1]] can see, so windowed attention over a long
    input only touches the keys near the block (keys are in increasing token order)."""
    hi = int(torch.searchsorted(ki, qi[-1], right=True))
    lo, n_start = 0, 0
    for s, width in mask_rules:
        lo = max(lo, int(torch.searchsorted(ki, qi[0] - width + 1)))
        n_start = max(n_start, int(torch.searchsorted(ki, torch.tensor(s, device=ki.device))))
    if n_start >= lo:
        return torch.arange(0, hi, device=ki.device)
    return torch.cat([torch.arange(0, n_start, device=ki.device), torch.arange(lo, hi, device=ki.device)])


def tiled_windows(mask_rules):
    """(band, sinks) of the window rules that tiled_attention handles: every key within `band` of the query
    (0: no limit), plus the first `sinks` tokens; None when the rules do not reduce to that."""
    band = min([width for _, width in mask_rules], default=0)
    starts = [ns for ns, _ in mask_rules if ns > 0]
    if not starts:
        return band, 0
    return (band, starts[0]) if len(mask_rules) == 1 else (None, 0)


def has_potential(pe, o):
    """Whether the bias splits into kpot[n] - qpot[m] (see potentials): a fact of the encoding and the options."""
    return 'potential' in pe.kinds or ('linear' in pe.kinds and o.ceiling == 0)


def potentials(pe, call, o):
    """(kpot [b, H, Tk], qpot [b, H, Tq]) of a bias that splits into kpot[n] - qpot[m], or (None, None): FoX's
    gates, or a linear bias -slope * (m - n) = slope * n - slope * m (ALiBi) where no distance ceiling bends it."""
    if 'potential' in pe.kinds:
        return call.kpot, call.qpot
    if has_potential(pe, o):
        s = pe.slope(call.layer)[None, :, None]
        return s * call.krel[:, None, :].float(), s * call.qrel[:, None, :].float()
    return None, None


# --------------------------------------------------------------------------------------------
# The dispatcher and the routes
# --------------------------------------------------------------------------------------------

def choose(q, pe, call, o, dropout=0.0):
    """The name of the first route (see the module's docstring) that computes this attention call. It reads the
    shapes, the options and the call's Python facts (same, plain), never a tensor's values, so that torch.compile
    captures a training step whole (tests/test_compile.py)."""
    kinds = set(pe.kinds)
    training = torch.is_grad_enabled() or dropout > 0
    scored = o.hook is not None or o.topk > 0 or bool(kinds & {'content', 'weight'})  # needs the logits themselves
    rotary_far = o.ceiling > 0 and 'rotary' in kinds  # far pairs scored with the query turned to the ceiling
    pot = has_potential(pe, o)  # the bias splits into kpot[n] - qpot[m]
    table = 'bias' in kinds and not pot  # a distance table, where no potential stands in for it
    simple = not (scored or table or rotary_far)
    # causal: no bias, potential, window or option
    if simple and call.same and not call.mask_rules and not pot:
        return 'causal'
    # flex: a GPU, head dimension >= 16 (torch 2.11 refuses 8 when it compiles), no dropout and no option or kind
    # that FlexAttention's score_mod cannot express (hook, top-k, a rotary ceiling, CoPE, a query-dependent bias)
    flex_ok = (q.is_cuda and call.allow_flex and q.size(-1) >= 16 and o.hook is None and o.topk == 0 and not rotary_far
               and dropout == 0 and not kinds & {'content', 'query'})
    # dense: training over positions 0..T-1 with a distance table or a window, H x T x T within block_elems
    dense_ok = (training and call.plain and not (scored or rotary_far or pot) and 'query' not in kinds
                and q.size(1) * q.size(2) ** 2 <= o.block_elems)
    # where both apply (module docstring): dense where a parameter of the bias learns, flex elsewhere, or as preferred
    learns = torch.is_grad_enabled() and any(p.requires_grad for p in pe.parameters())
    if dense_ok and (not flex_ok or o.route == 'dense' or (learns and o.route != 'flex')):
        return 'dense'
    if flex_ok:
        return 'flex'
    # folded: training, no cached past and no window, a potential at most, up to 4,096 tokens
    if simple and call.same and not call.mask_rules and training and q.size(2) <= 4096:
        return 'folded'
    # tiled: inference with no cached past, windows that reduce to a band and sinks, no hook, top-k, CoPE or
    # query-dependent bias; a table or weight only over positions 0..T-1; a rotary ceiling only with a band within it
    band, _ = tiled_windows(call.mask_rules)
    if (call.same and dropout == 0 and not torch.is_grad_enabled() and band is not None and available(q.device)
            and o.hook is None and o.topk == 0 and not kinds & {'content', 'query'}
            and (call.plain or not (table or 'weight' in kinds))
            and (not rotary_far or 0 < band <= o.ceiling + 1)):
        return 'tiled'
    # explicit: the options that need the logits, or a rotary ceiling under a gradient; blocks: everything else
    # (training with FIRE or longer than dense's bound, decoding with a KV cache)
    return 'explicit' if scored or (rotary_far and training) else 'blocks'


def attend(q, k, v, pe, call, o, dropout):
    """reference.attention_reference, by the first route that applies. The routes that need the scores themselves
    (explicit, a stream's far keys, the Λ mask's starting tokens) take them from the reference, reference.scores."""
    name = choose(q, pe, call, o, dropout)
    if name != 'causal' or not gqa_fused(q):
        k, v = repeat_kv(q, k, v)
    return ROUTES[name](q, k, v, pe, call, o, dropout)


def gqa_fused(q):
    """Whether SDPA reads grouped keys and values itself (enable_gqa) in linear memory. It does on CPU; on CUDA only
    the flash kernel (half precision) does, and in float32 the math kernel would hold [H, T, T] scores: an H100 ran
    out of memory at 32k tokens. Elsewhere the keys and values are copied out to H heads, for the efficient kernel."""
    return q.device.type == 'cpu' or q.dtype in (torch.float16, torch.bfloat16)


def causal(q, k, v, pe, call, o, dropout):
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True, scale=logit_scale(q, o),
                                          enable_gqa=k.size(1) != q.size(1))


def flex_route(q, k, v, pe, call, o, dropout):
    # a linear bias (ALiBi) in closed form, -slope * d, with no table to gather; the other distance tables on 0..n-1,
    # n from the shapes at positions 0..T-1 (training, scoring from scratch), else read off the positions (decoding
    # with a KV cache, BiPE's segments: data-dependent, outside any compiled graph there)
    slope = pe.slope(call.layer) / o.attn_temperature if 'linear' in pe.kinds else None
    tables = ('bias' in pe.kinds and slope is None) or 'weight' in pe.kinds
    n = k.size(2) if call.plain or not tables else int((call.qrel.max() - call.krel.min()).clamp(min=0)) + 1
    dist = capped(torch.arange(n, device=q.device, dtype=torch.float32), o.ceiling)
    btab = pe.bias(call.layer, dist) / o.attn_temperature if 'bias' in pe.kinds and slope is None else None
    fox = call.kpot / o.attn_temperature if 'potential' in pe.kinds else None
    mods = flex_mods(call.qi, call.qrel, call.ki, call.krel, call.mask_rules, btab, pe.weight(call.layer, dist), fox,
                     o.ceiling, slope)
    return flex_attend(q, k, v, logit_scale(q, o), *mods)


def toeplitz(tab, T):
    """[H, T, T] whose entry [h, m, n] is tab[h, m - n] for m >= n (0 above the diagonal): windows of the table laid
    out backwards. Autograd sums each diagonal's gradient into its one entry (unfold's backward), a reduction where
    indexing tab[:, m - n] would scatter T^2 values into H x T places."""
    return torch.cat([tab[:, :T].flip(-1), tab.new_zeros(tab.size(0), T - 1)], -1).unfold(-1, T, 1).flip(-2)


def dense(q, k, v, pe, call, o, dropout):
    # training over positions 0..T-1 (route: the call's toeplitz fact): the whole [H, T, T] bias, as the KERPLE
    # authors' code builds it, SDPA's additive mask; its gradient reaches the [H, T] table through toeplitz()
    T = q.size(2)
    dist = torch.arange(T, device=q.device, dtype=torch.float32)
    ok = allowed_keys(call.qi, call.ki, call.mask_rules)
    if 'bias' in pe.kinds:
        tab = pe.bias(call.layer, capped(dist, o.ceiling)) / o.attn_temperature
        mask = toeplitz(tab, T).masked_fill(~ok, NEG)
    else:  # a window alone
        mask = torch.zeros(ok.shape, device=q.device).masked_fill(~ok, NEG)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype), dropout_p=dropout,
                                          scale=logit_scale(q, o))


def folded(q, k, v, pe, call, o, dropout):
    # pot[n] - pot[m] with pot[m] dropped (softmax ignores it): one extra dimension, q's entry 1/scale
    scale, pot = logit_scale(q, o), potentials(pe, call, o)[0]
    qx = torch.cat([q, q.new_full(q.shape[:-1] + (1,), 1.0 / scale)], -1)
    kpot = ((pot - pot[:, :, -1:]) / o.attn_temperature).expand(q.size(0), -1, -1)
    kx = torch.cat([k, kpot[..., None].to(k.dtype)], -1)
    return F.scaled_dot_product_attention(qx, kx, F.pad(v, (0, 1)), dropout_p=dropout, is_causal=True,
                                          scale=scale)[..., :-1]


def tiled(q, k, v, pe, call, o, dropout):
    layer, tau, (Tq, Tk) = call.layer, o.attn_temperature, (q.size(2), k.size(2))
    kpot = potentials(pe, call, o)[0]
    band, sinks = tiled_windows(call.mask_rules)
    bias = (lambda dist: pe.bias(layer, capped(dist, o.ceiling)) / tau) if 'bias' in pe.kinds and kpot is None else None
    weight = (lambda dist: pe.weight(layer, capped(dist, o.ceiling))) if 'weight' in pe.kinds else None
    kpot = None if kpot is None else kpot / tau
    y, lse = tiled_attention(q, k, v, logit_scale(q, o), bias, weight, kpot, band, o.tile)
    if sinks:  # the Λ mask's first tokens, for the queries that see them beyond the band
        keys = torch.arange(min(sinks, Tk), device=q.device)
        att = reference.scores(q, k, pe, call, o, torch.arange(Tq, device=q.device), keys)
        att = att.masked_fill((call.qi[:, None] - call.ki[None, keys]) < band, NEG)
        y = merge_logits(y, lse, att, v[:, :, keys])
    return y.to(v.dtype)


def query_blocks(q, k, call, o):
    """(rows, keys) index pairs: blocks of queries of at most o.block_elems logits, each with the keys it can see."""
    per_head = o.block_elems // (q.size(0) * q.size(1))
    bq = max(16, per_head // k.size(2))
    if call.mask_rules and o.topk == 0:
        # a window: a block sees its own rows and at most `seen` keys before them, whatever T, so it can take more
        # rows. Few large blocks rather than many small: each copies its keys and values out and, under a gradient,
        # keeps them (a Gemma 3 local layer at 32k: 64 blocks of 512 rows, not 1,024 of 32, as its test checks).
        # With bq (seen + bq) <= per_head / 2 the bound holds where a block takes every key (T < 2 (seen + bq) there)
        seen = max(s for s, _ in call.mask_rules) + min(w for _, w in call.mask_rules)
        bq = max(bq, int((math.sqrt(seen * seen + 2 * per_head) - seen) / 2))
    for s in range(0, q.size(2), bq):
        rows = torch.arange(s, min(s + bq, q.size(2)), device=q.device)
        keys = None if o.topk > 0 else key_range(call.qi[rows], call.ki, call.mask_rules)
        # most keys: masked rather than gathered, for a gather copies k and v (a stream's cache) for every block
        yield rows, slice(None) if keys is None or keys.numel() > k.size(2) // 2 else keys


def explicit(q, k, v, pe, call, o, dropout):
    def one(rows, keys, q, k, v):
        att = reference.scores(q, k, pe, call, o, rows, keys).softmax(dim=-1)
        if o.hook is not None:
            o.hook(call.layer, att, call.qi[rows], call.ki[keys])
        return F.dropout(att, dropout, dropout > 0).to(v.dtype) @ v[:, :, keys]
    # Under a gradient autograd keeps every block's probabilities, [B, H, T, T] in all (SmolLM2 at 16k: 9.7 GB per
    # layer). Past 16 blocks' worth, a block keeps only q, k, v and is rerun in the backward instead: the same
    # gradient (checkpoint restores the RNG state for dropout), one more pass over the logits
    rerun = (torch.is_grad_enabled() and o.hook is None
             and q.size(0) * q.size(1) * q.size(2) * k.size(2) > 16 * o.block_elems)
    return torch.cat([checkpoint(one, rows, keys, q, k, v, use_reentrant=False) if rerun else one(rows, keys, q, k, v)
                      for rows, keys in query_blocks(q, k, call, o)], dim=2)


def blocks(q, k, v, pe, call, o, dropout):
    out = []
    for rows, keys in query_blocks(q, k, call, o):
        d = (call.qrel[:, rows, None] - call.krel[:, None, keys]).clamp(min=0)
        bias = reference.distance_table(pe, 'bias', call.layer, capped(d, o.ceiling),
                                        call.qrel[:, rows, None] if 'query' in pe.kinds else None)
        mask = bias / o.attn_temperature if bias is not None else torch.zeros(d.shape, device=q.device)[:, None]
        if 'potential' in pe.kinds:
            mask = mask + potential_term(call, rows, keys, o)
        ok = allowed_keys(call.qi[rows], call.ki[keys], call.mask_rules)
        far = ok & (d > o.ceiling) if o.ceiling > 0 and 'rotary' in pe.kinds else None  # [b, tq, tk]
        mask = mask.masked_fill(~ok if far is None else ~ok | far[:, None], NEG).to(q.dtype)
        qb, kb, vb, scale = q[:, :, rows], k[:, :, keys], v[:, :, keys], logit_scale(q, o)
        c = [] if far is None else far.any(1).any(0).nonzero()[:, 0]  # keys some query sees past a rotary ceiling
        if not len(c):
            out.append(F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, dropout_p=dropout, scale=scale))
            continue
        # (a stream's starting tokens): q.k with the query turned to the ceiling, by the reference's logits, merged in
        y, lse = sdpa_lse(qb, kb, vb, mask, scale, False)
        cols = torch.arange(k.size(2), device=q.device)[keys][c]
        att = reference.scores(q, k, pe, call, o, rows, cols).masked_fill(~far[:, None, :, c], NEG)
        y = merge_logits(y, lse, att, v[:, :, cols])
        out.append(y.to(v.dtype))
    return torch.cat(out, dim=2)


ROUTES = dict(causal=causal, dense=dense, flex=flex_route, folded=folded, tiled=tiled, explicit=explicit, blocks=blocks)


@contextmanager
def recording():
    """`with routes.recording() as taken: model(idx)`: `taken` lists the route of every attention call in the
    block, in order (tests and bench.py say which route ran)."""
    taken, real = [], dict(ROUTES)

    def spy(name):
        def run(*args):
            taken.append(name)
            return real[name](*args)
        return run
    ROUTES.update({name: spy(name) for name in real})
    try:
        yield taken
    finally:
        ROUTES.update(real)


# --------------------------------------------------------------------------------------------
# Building blocks: partial softmaxes merged by their log-sum-exp, SDPA that returns it, tiled attention
# --------------------------------------------------------------------------------------------

def merge_parts(out, lse, part, l):
    """Combine two softmax-normalised partial attentions over disjoint key sets, given their log-sum-exps: the
    new part gets weight e^l / (e^lse + e^l) = sigmoid(l - lse). A part whose row sees no key has l = -inf."""
    w = torch.sigmoid(l - lse).nan_to_num().to(out.dtype)  # -inf - -inf: neither part sees a key; keep out
    # under autocast a part's matmul comes back in bfloat16 while out stays float32; lerp wants one dtype
    return torch.lerp(out, part.nan_to_num().to(out.dtype), w[..., None]), torch.logaddexp(lse, l)


def merge_logits(out, lse, att, v):
    """A softmax part (out, lse) with the logits att [..., Tq, n] of n more keys, values v, merged in: the attention
    over both key sets. A row of att that is all -inf adds nothing (merge_parts)."""
    return merge_parts(out.float(), lse, att.softmax(-1).to(v.dtype).float() @ v.float(), att.logsumexp(-1))[0]


def sdpa_lse(q, k, v, mask, scale, causal, explicit=False):
    """SDPA that also returns each row's log-sum-exp of the logits ([..., Tq]). explicit=True takes the other
    devices' branch on CPU too, so that the tests cover it."""
    if q.device.type == 'cpu' and not explicit:
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


def weighted_tiles(qq, kk, vv, D, wmat, pot, mask, future):
    """A batch of tiles whose q.k a weight multiplies, which SDPA cannot do: their softmax, explicitly and in place
    -> (out, lse). pot: the keys carry a potential in dimension D; future: [bq, bq], True for the keys in the
    queries' future on a diagonal tile with no mask (None elsewhere)."""
    att = (qq[..., :D] @ kk[..., :D].transpose(-2, -1)).float().mul_(wmat)
    if pot:
        att.add_(kk[..., D].float()[..., None, :])
    if mask is not None:
        att.add_(mask)
    elif future is not None:
        att.masked_fill_(future, NEG)
    top = att.amax(-1, keepdim=True)
    dead = top == NEG  # a row with no visible key
    top.masked_fill_(dead, 0.0)
    # exp below e^-80 would make float32 denormals, which are slow on x86; next to the row's maximum
    # (e^0 = 1) such weights vanish in rounding anyway
    p = att.sub_(top).clamp_(min=-80.0).exp_()
    total = p.sum(-1, keepdim=True)
    y = ((p.to(vv.dtype) @ vv) / total).masked_fill_(dead, 0.0)
    return y, (top + total.log()).masked_fill_(dead, NEG).squeeze(-1)


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
    Bt = max(B, pot.size(0)) if pot is not None else B  # the tiles' batch: a potential's may be larger than q's
    x1 = 1 if pot is not None else 0  # the potential's extra dimension

    def tiles(x, fill=0.0):  # -> contiguous [Bt, nb, H, bq, D + x1], so a run of tiles is a plain view
        t = x.reshape(x.size(0), H, nb, bq, D).transpose(1, 2)
        buf = t.new_full((Bt, nb, H, bq, D + x1), fill)
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
    out = torch.empty(Bt, nb, H, bq, D + x1, device=q.device, dtype=torch.float32)
    lse = torch.empty(Bt, nb, H, bq, device=q.device, dtype=torch.float32)
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
                y, l = sdpa_lse(qq, kk, vv, None if mask is None else mask[None].to(qq.dtype), scale,
                                causal=j == 0 and mask is None)
                if mask is not None:  # the kernel reports lse 0 for a row with no visible key; it is -inf
                    l = l.masked_fill((mask == NEG).all(-1), NEG)
            else:
                y, l = weighted_tiles(qq, kk, vv, D, wmat, pot is not None, mask, d < 0 if j == 0 else None)
            y, l = y.float().view(Bt, e - s, H, bq, D + x1), l.float().view(Bt, e - s, H, bq)
            if j == 0:
                out[:, s:e], lse[:, s:e] = y, l
            else:  # merge into the tiles of queries j+s .. j+e-1, in place
                w = torch.sigmoid(l - lse[:, j + s:j + e])
                out[:, j + s:j + e].lerp_(y, w[..., None])
                lse[:, j + s:j + e] = torch.logaddexp(lse[:, j + s:j + e], l)
    if pot is not None:
        lse = lse - (pt - p0)
    out = out[..., :D].transpose(1, 2).reshape(Bt, H, nb * bq, D)[:, :, :T]
    return out.to(v.dtype), lse.transpose(1, 2).reshape(Bt, H, nb * bq)[:, :, :T]
