"""
The reference attention: every option in one explicit softmax over all Tq x Tk logits, the definition that each fast
route (routes.py) is tested equal to. With it, the rules the model and the routes share, each written once here: the
options (AttnOptions) and their allowed route values, one call's facts (AttnCall), the mask (allowed_keys), the
distance ceiling (capped), the logit scale (logit_scale), the distance tables (distance_table) and FoX's term
(potential_term). It imports nothing of the project: model.py and routes.py both import it.

Papers: LM-Infinite = Han et al. 2023, "LM-Infinite: Zero-Shot Extreme Length Generalization for Large Language
Models" (arXiv:2308.16137); FoX = Lin et al. 2025, "Forgetting Transformer: Softmax Attention with a Forget Gate"
(ICLR 2025); CoPE = Golovneva et al. 2024, "Contextual Position Encoding" (arXiv:2405.18719); thesis = T.-C. Chi 2024,
"Toward Length-Extrapolatable Transformers".
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

NEG = float('-inf')
# AttnOptions.route: 'auto' takes the fastest route that applies (routes.choose), 'reference' attention_reference;
# 'dense' and 'flex' name the route a training call with a bias prefers where both apply (tools/bench.py times both)
ROUTE_CHOICES = ('auto', 'reference', 'dense', 'flex')


@dataclass
class AttnOptions:
    """Evaluation-time controls, shared by all layers; `with model.attention(...)` changes them."""
    attn_temperature: float = 1.0  # logits / tau (thesis ch. 5, Algorithm 1)
    # >0: each query sees only the keys within key_window of it (windowed@L_tr; with n_starting, LM-Infinite's Λ mask).
    # Chosen at evaluation, on top of GPTConfig.window, the window a layer was trained with (Gemma 3's local layers)
    key_window: int = 0
    n_starting: int = 0        # ... plus the first n_starting tokens (LM-Infinite)
    ceiling: int = 0           # >0: relative distances above it are treated as `ceiling` (LM-Infinite)
    topk: int = 0              # >0: also attend to the top-k middle tokens by score (LM-Infinite) ...
    topk_from_layer: int = 5   # ... in the layers from this one on (0-based), at distance ceiling // 2 (its App. A)
    hook: object = None        # called as hook(layer, probs [B,H,tq,tk], query_idx [tq], key_idx [tk] or [tq, tk])
    route: str = 'auto'        # one of ROUTE_CHOICES
    block_elems: int = 1 << 22 # bound on one query block's bias / score tensor (bench.py mode=attention)
    tile: int = 256            # tile size of routes.tiled_attention


@dataclass(frozen=True)
class AttnCall:
    """What one attention call needs besides q, k, v [B, H, T, D]; built once per call by the model."""
    layer: int
    qi: torch.Tensor     # [Tq] token index of each query (masks)
    qrel: torch.Tensor   # [b, Tq] its position as the relative encodings see it (distances)
    ki: torch.Tensor     # [Tk] the same for the keys
    krel: torch.Tensor   # [b, Tk]
    mask_rules: tuple = ()     # (n_starting, width) rules: window, Λ mask, bounded cache
    qpot: torch.Tensor = None  # [b, H, Tq] the encoding's content-dependent potential (FoX), or None
    kpot: torch.Tensor = None  # [b, H, Tk]
    allow_flex: bool = True    # GPTConfig.flex: on a GPU, FlexAttention may take the call
    # Python facts, which routes.choose reads instead of tensor values: the queries are the keys (no cached past) ...
    same: bool = False
    plain: bool = False        # ... at positions 0..T-1 for the whole batch (Positions.plain): distances are Toeplitz


def allowed_keys(qi, ki, mask_rules):
    """Boolean [tq, tk]: causal, and for each (n_starting, width) rule: key among the first n_starting
    tokens or within `width` of the query (windowed attention is (0, w); thesis 4.3.3)."""
    diff = qi[:, None] - ki[None, :]
    ok = diff >= 0
    for n_start, width in mask_rules:
        ok &= (diff < width) | (ki[None, :] < n_start)
    return ok


def keys_seen(qi, mask_rules):
    """How many keys each query token qi sees: 0..qi, narrowed by the window rules (exact for one rule)."""
    n = qi.float() + 1
    for n_start, width in mask_rules:
        n = n.clamp(max=width) + (qi + 1 - width).clamp(min=0, max=n_start)
    return n


def capped(d, ceiling):
    """LM-Infinite's distance ceiling: every distance above `ceiling` (> 0) counts as `ceiling`; 0: none."""
    return d.clamp(max=ceiling) if ceiling > 0 else d


def logit_scale(q, o):
    """The factor on q.k: 1 / (sqrt(D) tau), tau the temperature of thesis ch. 5."""
    return 1.0 / (math.sqrt(q.size(-1)) * o.attn_temperature)


def potential_term(call, rows, keys, o):
    """FoX's logit term sum_{t=n+1..m} log f_t = kpot[n] - qpot[m], over the temperature: [b, H, tq, tk]."""
    return (call.kpot[:, :, None, keys] - call.qpot[:, :, rows, None]).float() / o.attn_temperature


def distance_table(pe, part, layer, d, m=None):
    """The encoding's `part` ('bias' or 'weight') at the distances d [b, tq, tk] -> [b, H, tq, tk], None if it has no
    such part: evaluated once on 0..max(d), then gathered, so no parameter is ever T x T. A bias that depends on the
    query positions m [b, tq, 1] as well (kind 'query') is evaluated on the block itself."""
    if part not in pe.kinds:
        return None
    fn = getattr(pe, part)
    if m is not None:
        return fn(layer, d.float(), m).transpose(0, 1)
    tab = fn(layer, torch.arange(int(d.max()) + 1 if d.numel() else 1, device=d.device, dtype=torch.float32))
    return tab[:, d].transpose(0, 1)


def dot(q, k):
    """q.k [B, H, tq, tk] in float32 at least (the tests' float64 kept)."""
    return (q @ k.transpose(-2, -1)).to(torch.promote_types(q.dtype, torch.float32))


def dot_at(pe, layer, q, k, qrel, krel, dist):
    """q.k of a rotary encoding as if every pair were `dist` apart: the rotation by position undone, the query's redone
    at `dist`. scale=False: a constant factor on q and k (YaRN's) was applied once by the forward and is not a
    rotation, so it is neither undone nor applied again."""
    q0 = pe.rotate(q, -qrel, scale=False, layer=layer)
    k0 = pe.rotate(k, -krel, key=True, scale=False, layer=layer)
    return dot(pe.rotate(q0, torch.full_like(qrel, dist), scale=False, layer=layer), k0)


def logits(raw, pe, layer, d, m, q, o):
    """q.k * weight(d) / (sqrt(D) tau) + bias(d) / tau from the raw q.k at distances d."""
    weight, bias = distance_table(pe, 'weight', layer, d), distance_table(pe, 'bias', layer, d, m)
    if weight is not None:
        raw = raw * weight
    att = raw * logit_scale(q, o)
    return att if bias is None else att + bias / o.attn_temperature


def scores(q, k, pe, call, o, rows, keys):
    """The attention logits [B, H, tq, tk] of the queries `rows` against the keys `keys` (index tensors into
    call), -inf where a key may not be attended:
        q.k * weight(d) / (sqrt(D) tau) + bias(d) / tau,     d = qrel - krel, capped at o.ceiling (LM-Infinite),
    plus (kpot[n] - qpot[m]) / tau for a content-dependent potential (FoX) and the content term (CoPE).
    A rotary encoding caps the distance by scoring far pairs with the query rotated to distance `ceiling`."""
    qb, kb, qrel, krel = q[:, :, rows], k[:, :, keys], call.qrel[:, rows], call.krel[:, keys]
    d = (qrel[:, :, None] - krel[:, None, :]).clamp(min=0)                    # [b, tq, tk]
    m = qrel[:, :, None] if 'query' in pe.kinds else None
    ok = allowed_keys(call.qi[rows], call.ki[keys], call.mask_rules)          # [tq, tk]
    raw = dot(qb, kb)
    if o.ceiling > 0 and 'rotary' in pe.kinds:
        raw = torch.where((d > o.ceiling)[:, None], dot_at(pe, call.layer, qb, kb, qrel, krel, o.ceiling), raw)
    att = logits(raw, pe, call.layer, capped(d, o.ceiling), m, q, o).masked_fill(~ok, NEG)
    if 'potential' in pe.kinds:
        att = att + potential_term(call, rows, keys, o)
    if 'content' in pe.kinds:
        att = att + pe.content(call.layer, qb, att) * logit_scale(q, o)  # masked entries stay -inf
    if o.topk > 0 and call.layer >= o.topk_from_layer:
        att = with_topk(att, qb, kb, pe, call, o, rows, keys)
    return att


def with_topk(att, q, k, pe, call, o, rows, keys):
    """LM-Infinite App. A: the top-k middle keys (causal, but dropped by the Λ mask), by their logit at distance
    ceiling // 2, are attended with that logit. q, k: the block's own."""
    qi, ki, qrel, krel, half = call.qi[rows], call.ki[keys], call.qrel[:, rows], call.krel[:, keys], o.ceiling // 2
    middle = (qi[:, None] >= ki[None, :]) & ~allowed_keys(qi, ki, call.mask_rules)
    raw = dot_at(pe, call.layer, q, k, qrel, krel, half) if 'rotary' in pe.kinds else dot(q, k)
    d = torch.full((qrel.size(0), qrel.size(1), krel.size(1)), half, dtype=torch.long, device=q.device)
    m = qrel[:, :, None] if 'query' in pe.kinds else None
    mid = logits(raw, pe, call.layer, d, m, q, o).masked_fill(~middle, NEG)
    kth = mid.topk(min(o.topk, mid.size(-1)), dim=-1).values[..., -1:]
    chosen = middle & (mid >= kth) & (kth > NEG)                               # [B, H, tq, tk]
    return torch.where(chosen, mid, att)


def repeat_kv(q, *kv):
    """Grouped-query attention (n_kv key/value heads for H query heads): query head h reads key/value head
    h // (H / n_kv); the keys and values copied out to H heads for the code that indexes heads one to one."""
    g = q.size(1) // kv[0].size(1)
    return kv if g == 1 else tuple(t.repeat_interleave(g, dim=1) for t in kv)


def attention_reference(q, k, v, pe, call, o, dropout=0.0):
    """Attention with every option: one explicit softmax over all Tq x Tk logits. The definition that every fast
    route (routes.py) is tested against."""
    k, v = repeat_kv(q, k, v)
    att = scores(q, k, pe, call, o, torch.arange(q.size(2), device=q.device), torch.arange(k.size(2), device=q.device))
    att = att.softmax(dim=-1)
    if o.hook is not None:
        o.hook(call.layer, att, call.qi, call.ki)
    return F.dropout(att, dropout, dropout > 0).to(v.dtype) @ v
