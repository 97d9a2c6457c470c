"""
lexgpt: a small GPT whose positional encoding is a plug-in.

Data flows one way: token ids -> embeddings (absolute encodings are added here) -> blocks
(relative biases, rotations and masks are applied inside attention) -> logits.

Papers (see ../shared/papers): thesis = Chi, "Toward Length-Extrapolatable Transformers" (2024);
KERPLE = Chi et al. 2022; LM-Infinite = Han et al. 2023; BiPE = He et al. 2024.
"""
import math
from collections import namedtuple
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab_size: int = 256
    block_size: int = 256       # the *training* length L_tr; relative encodings accept longer inputs
    n_layer: int = 6
    n_head: int = 4
    n_embd: int = 256
    dropout: float = 0.0
    bias: bool = False          # biases in Linear and LayerNorm layers
    pe: str = 'alibi'           # a key of POSITIONAL_ENCODINGS
    window: int = 0             # >0: windowed attention, token m sees n with m - n < window (thesis 4.3.3)
    alibi_shift: float = 0.0    # Δ: every head's h becomes h + Δ, slope 2^-(h+Δ) (thesis 4.4.1)
    alibi_equal_h: float = -1.0 # >=0: every head gets the same slope 2^-h (thesis 4.4.2)
    sandwich_dbar: int = 128    # d_bar of eq. 4.6
    kernel_per_layer: bool = False  # KERPLE-family parameters per layer; the thesis shares them across layers (Fig. 3.1)
    rope_base: float = 10000.0
    bipe_sep_ids: tuple = (46, 10)  # tokens that end a BiPE segment: '.' and '\n' as bytes
    # RegularGPT (thesis ch. 6); used only by pe='regular'
    chunk_size: int = 2         # C
    thickness: int = 1          # K
    regular_impl: str = 'plain' # 'plain' | 'gather' | 'reduce'


# --------------------------------------------------------------------------------------------
# Positional encodings. Each one is a small module behind one interface; the model calls
#   positions(idx, start, state) -> (Positions, state)   which position every token has
#   embed(pos)        -> [b,T,C] or None   absolute part, added to the token embeddings
#   rotate(x, rel)    -> x                 rotary part, applied to queries and keys
#   bias(layer, d)    -> [H, n] or None    additive logit bias for distances d = m - n (float [n])
#   weight(layer, d)  -> [H, n] or None    multiplicative factor on q.k for distances d
# Relative parts are functions of the distance only, so they are shift invariant by construction
# and cost O(H * T) to evaluate; attention gathers them into [H, Tq, Tk] one query block at a time.
# --------------------------------------------------------------------------------------------

# idx: token index of each position [T]; rel: position seen by relative parts [b,T];
# abs: position seen by absolute parts [b,T]. They coincide except for BiPE.
Positions = namedtuple('Positions', 'idx rel abs')


class PositionalEncoding(nn.Module):
    rotary = False

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg

    def positions(self, idx, start, state):
        i = torch.arange(start, start + idx.size(1), device=idx.device)
        return Positions(i, i[None], i[None]), None

    def embed(self, pos):
        return None

    def rotate(self, x, rel):
        return x

    def bias(self, layer, d):
        return None

    def weight(self, layer, d):
        return None


class NoPE(PositionalEncoding):
    """No positional information at all; causal masking alone leaks position (thesis ch. 2)."""


class Learned(PositionalEncoding):
    """GPT-2's learned absolute embeddings: one vector per position up to block_size."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)

    def embed(self, pos):
        top = int(pos.abs.max())
        if top >= self.cfg.block_size:
            raise ValueError(f"pe='learned' has embeddings for positions 0..{self.cfg.block_size - 1} only, "
                             f"got position {top}; use a relative encoding to go beyond the training length")
        return self.wpe(pos.abs)


def sinusoid(pos, dim, base=10000.0):
    """Eq. 4.5: p[m, 2i] = sin(m / base^(2i/d)), p[m, 2i+1] = cos(m / base^(2i/d))."""
    inv = base ** (-torch.arange(0, dim, 2, device=pos.device, dtype=torch.float32) / dim)
    ang = pos[..., None].float() * inv
    return torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(-2)


class Sinusoidal(PositionalEncoding):
    def embed(self, pos):
        return sinusoid(pos.abs, self.cfg.n_embd)


class RoPE(PositionalEncoding):
    """Rotary embedding (Su et al.): q.k then depends on positions only through m - n."""
    rotary = True

    def __init__(self, cfg):
        super().__init__(cfg)
        hd = cfg.n_embd // cfg.n_head
        self.register_buffer('inv_freq', cfg.rope_base ** (-torch.arange(0, hd, 2).float() / hd), persistent=False)

    def rotate(self, x, rel):
        ang = rel[:, None, :, None].float() * self.inv_freq        # [b,1,T,D/2]
        cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def alibi_slopes(n_head):
    """ALiBi's geometric slopes (Press et al. 2022, eq. 4.3): 2^(-8i/n) for n a power of two; otherwise
    the slopes of the nearest lower power of two plus every other slope of the next power of two."""
    def pow2(n):
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]
    p = 2 ** math.floor(math.log2(n_head))
    return torch.tensor(pow2(p) + pow2(2 * p)[0::2][:n_head - p])


class ALiBi(PositionalEncoding):
    def __init__(self, cfg):
        super().__init__(cfg)
        if cfg.alibi_equal_h >= 0:      # thesis 4.4.2: the same h for every head
            slopes = torch.full((cfg.n_head,), 2.0 ** -cfg.alibi_equal_h)
        else:                           # thesis 4.4.1: slope 2^-h becomes 2^-(h+Δ)
            slopes = alibi_slopes(cfg.n_head) * 2.0 ** -cfg.alibi_shift
        self.register_buffer('slopes', slopes, persistent=False)

    def bias(self, layer, d):
        return -self.slopes[:, None] * d    # eq. 4.3


class T5Bias(PositionalEncoding):
    """T5's learned bias over 32 log-spaced causal distance buckets up to 128, shared by all layers
    (thesis 3.4): exact buckets for d < 16, then 16 + floor(log(d/16) / log(128/16) * 16), capped at 31.
    As in the thesis' GPT-NeoX code (and x-transformers), the table is added after the 1/sqrt(D) scaling but
    multiplied by sqrt(D) first, so it learns at the scale of unscaled logits, from a Xavier-normal start."""
    n_buckets, max_distance = 32, 128

    def __init__(self, cfg):
        super().__init__(cfg)
        std = math.sqrt(2.0 / (self.n_buckets + cfg.n_head))  # xavier_normal_ of NeoX's [32, H] weight
        self.table = nn.Parameter(torch.randn(cfg.n_head, self.n_buckets) * std)
        self.scale = math.sqrt(cfg.n_embd // cfg.n_head)

    @classmethod
    def bucket(cls, d):
        exact = cls.n_buckets // 2
        far = exact + (torch.log(d.clamp(min=1) / exact) / math.log(cls.max_distance / exact) * exact).long()
        return torch.where(d < exact, d.long(), far.clamp(max=cls.n_buckets - 1))

    def bias(self, layer, d):
        return self.table[:, self.bucket(d)] * self.scale


class Kernel(PositionalEncoding):
    """Base of the KERPLE family: per-head parameters r_j, one set shared by all layers as in the thesis
    (Fig. 3.1; the authors' code builds one kernel module for every layer), or one set per layer with
    kernel_per_layer=True. Each is kept in its valid range by a straight-through clamp: the value used is
    clamped, while the gradient still reaches the raw parameter, so a parameter pushed past a bound can come back."""
    ranges = {}  # name -> (init_lo, init_hi, min, max)

    def __init__(self, cfg):
        super().__init__(cfg)
        sets = cfg.n_layer if cfg.kernel_per_layer else 1
        for name, (lo, hi, _, _) in self.ranges.items():
            self.register_parameter(name, nn.Parameter(lo + (hi - lo) * torch.rand(sets, cfg.n_head)))

    def r(self, name, layer):
        p = getattr(self, name)
        p = p[layer % len(p)][:, None]
        _, _, lo, hi = self.ranges[name]
        return p + (p.clamp(lo, hi) - p).detach()


EPS = 1e-2  # the authors' lower bound on every kernel parameter
# Initial ranges follow the authors' code: coefficients U(0, 1) (the log kernel's r1: U(0, 2)), exponents U(0, 2)


class KerplePower(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d):
        return -self.r('r1', layer) * d ** self.r('r2', layer)  # eq. 3.4, power variant


class KerpleLog(Kernel):
    ranges = {'r1': (0.0, 2.0, EPS, None), 'r2': (0.0, 1.0, EPS, None)}

    def bias(self, layer, d):
        return -self.r('r1', layer) * torch.log1p(self.r('r2', layer) * d)  # eq. 3.4, logarithmic variant


class Kerple3Log(Kernel):
    ranges = {'r1': (0.0, 2.0, EPS, None), 'r2': (0.0, 1.0, EPS, None), 'r3': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d):
        return -self.r('r1', layer) * torch.log1p(self.r('r2', layer) * d ** self.r('r3', layer))  # 3.5.3, 3-para-log


class KerpleBiasWht(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 2.0, EPS, 2.0),
              'r3': (0.0, 1.0, EPS, None), 'r4': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d):
        return -self.r('r1', layer) * d ** self.r('r2', layer)  # 3.5.3, bias+wht: bias kernel

    def weight(self, layer, d):
        return torch.exp(-self.r('r3', layer) * d ** self.r('r4', layer))  # 3.5.3, bias+wht: weight kernel


class GaussBias2(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 0.1, 1e-4, None)}

    def bias(self, layer, d):
        return self.r('r1', layer) * torch.exp(-self.r('r2', layer) * d ** 2)  # 3.7.3, 2-para-bias


class GaussBias3(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 0.1, 1e-4, None), 'r3': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d):
        return self.r('r1', layer) * torch.exp(-self.r('r2', layer) * d ** self.r('r3', layer))  # 3.7.3, 3-para-bias


class GaussWht1(Kernel):
    ranges = {'r1': (0.0, 0.1, 1e-4, None)}

    def weight(self, layer, d):
        return torch.exp(-self.r('r1', layer) * d ** 2)  # 3.7.3, 1-para-wht


class GaussWht2(Kernel):
    ranges = {'r1': (0.0, 0.1, 1e-4, None), 'r2': (0.0, 2.0, EPS, 2.0)}

    def weight(self, layer, d):
        return torch.exp(-self.r('r1', layer) * d ** self.r('r2', layer))  # 3.7.3, 2-para-wht


def sandwich_ratios(n_head):
    """Compression ratios h = n * 8 / H, n = 1..H, shared by Sandwich and ALiBi's h (thesis 4.6.1)."""
    return torch.arange(1, n_head + 1, dtype=torch.float32) * 8 / n_head


class Sandwich(PositionalEncoding):
    """Eq. 4.6: (p_m . p_n - d_bar/2) / h with p the d_bar-dim sinusoid; p_m . p_n = sum_i cos((m-n)/base^(2i/d_bar))."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.register_buffer('h', sandwich_ratios(cfg.n_head), persistent=False)

    def bias(self, layer, d):
        dbar = self.cfg.sandwich_dbar
        inv = 10000.0 ** (-torch.arange(0, dbar, 2, device=d.device, dtype=torch.float32) / dbar)
        dot = torch.cos(d[:, None] * inv).sum(-1)  # [n]
        return (dot - dbar / 2) / self.h[:, None]


class SandwichSmoothed(Sandwich):
    """The log curve fitted to Sandwich at h = 8 (thesis 4.6.2), -0.825 log(1+|m-n|) - 0.8, rescaled by 8/h per head."""

    def bias(self, layer, d):
        return (-0.825 * torch.log1p(d) - 0.8) * (8 / self.h[:, None])


class BiPE(PositionalEncoding):
    """Bilevel PE (BiPE paper, sec. 3.2): absolute sinusoid of the position inside the segment, added to
    the embeddings, and a relative encoding (RoPE or ALiBi) of the segment index. A separator token ends
    its segment, so the token after it starts a new one."""

    def __init__(self, cfg, inner):
        super().__init__(cfg)
        self.inner = inner(cfg)
        self.rotary = self.inner.rotary
        self.register_buffer('sep', torch.tensor(cfg.bipe_sep_ids, dtype=torch.long), persistent=False)

    def positions(self, idx, start, state):
        B, T = idx.shape
        i = torch.arange(start, start + T, device=idx.device)
        if state is None:  # (segment index, index of the segment's first token, last token was a separator)
            state = (idx.new_zeros(B), idx.new_full((B,), start), torch.zeros(B, dtype=torch.bool, device=idx.device))
        seg0, first0, sep0 = state
        is_sep = torch.isin(idx, self.sep)
        starts = torch.cat([sep0[:, None], is_sep[:, :-1]], dim=1)           # token begins a new segment
        seg = seg0[:, None] + starts.long().cumsum(1)
        first = torch.where(starts, i, first0[:, None].expand(B, T)).cummax(1).values
        return Positions(i, seg, i - first), (seg[:, -1], first[:, -1], is_sep[:, -1])

    def embed(self, pos):
        return sinusoid(pos.abs, self.cfg.n_embd)

    def rotate(self, x, rel):
        return self.inner.rotate(x, rel)

    def bias(self, layer, d):
        return self.inner.bias(layer, d)


class Regular(PositionalEncoding):
    """RegularGPT's sliding-dilated attention (thesis eq. 6.1), at depth l token m sees m - i*C^l for
    i in 0..C-1 with a learnable per-head bias r_i; every other key is masked out (-inf)."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.r = nn.Parameter(torch.zeros(cfg.thickness, cfg.n_head, cfg.chunk_size))

    def bias(self, layer, d):
        # `layer` is the depth l; the parameters belong to the shared layer l % K
        C, step = self.cfg.chunk_size, self.cfg.chunk_size ** (layer // self.cfg.thickness)
        i = (d / step).long()
        ok = (d.long() % step == 0) & (i < C)
        r = self.r[layer % self.cfg.thickness][:, i.clamp(max=C - 1)]
        return torch.where(ok, r, float('-inf'))


POSITIONAL_ENCODINGS = {
    'none': NoPE,
    'learned': Learned,
    'sinusoidal': Sinusoidal,
    'rope': RoPE,
    't5': T5Bias,
    'alibi': ALiBi,
    'kerple_power': KerplePower,
    'kerple_log': KerpleLog,
    'kerple_3log': Kerple3Log,
    'kerple_biaswht': KerpleBiasWht,
    'gauss_bias2': GaussBias2,
    'gauss_bias3': GaussBias3,
    'gauss_wht1': GaussWht1,
    'gauss_wht2': GaussWht2,
    'sandwich': Sandwich,
    'sandwich_smoothed': SandwichSmoothed,
    'bipe_rope': partial(BiPE, inner=RoPE),
    'bipe_alibi': partial(BiPE, inner=ALiBi),
    'regular': Regular,
}


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------

@dataclass
class AttnOptions:
    """Evaluation-time controls, shared by all layers; GPT.set_attention() changes them."""
    temperature: float = 1.0   # logits / tau (thesis ch. 5, Algorithm 1)
    local: int = 0             # >0: Λ-shaped mask, keys within `local` of the query ...
    n_starting: int = 0        # ... plus the first n_starting tokens (LM-Infinite)
    ceiling: int = 0           # >0: relative distances above it are treated as `ceiling` (LM-Infinite)
    topk: int = 0              # >0: also attend to the top-k middle tokens by score (LM-Infinite)
    hook: object = None        # called as hook(layer, probs [B,H,tq,tk], query_idx, key_idx)
    impl: str = 'auto'         # 'auto' (fastest applicable path) | 'plain' (one explicit T x T softmax)
    block_elems: int = 1 << 22 # bound on one query block's bias / score tensor (bench.py mode=attention)


class KVCache:
    """Past keys and values for incremental decoding. With `local` > 0 it keeps only the first
    n_starting tokens and the last `local` ones (constant memory): the sliding cache of thesis 4.9.2
    (n_starting=0) or LM-Infinite's Λ-shaped cache; attention is masked to match."""

    def __init__(self, local=0, n_starting=0):
        self.local, self.n_starting = local, n_starting
        self.k, self.v = {}, {}
        self.idx = self.rel = None   # token index [Tk] and relative position [b,Tk] of every cached key
        self.next, self.pe_state = 0, None

    def add_positions(self, pos, pe_state):
        self.idx = pos.idx if self.idx is None else torch.cat([self.idx, pos.idx])
        self.rel = pos.rel if self.rel is None else torch.cat([self.rel, pos.rel], dim=1)
        self.next, self.pe_state = int(pos.idx[-1]) + 1, pe_state

    def add(self, layer, k, v):
        if layer in self.k:
            k, v = torch.cat([self.k[layer], k], dim=2), torch.cat([self.v[layer], v], dim=2)
        self.k[layer], self.v[layer] = k, v
        return k, v

    def trim(self):
        n = self.idx.numel()
        if self.local <= 0 or n <= self.n_starting + self.local:
            return
        keep = torch.cat([torch.arange(self.n_starting), torch.arange(n - self.local, n)]).to(self.idx.device)
        self.idx, self.rel = self.idx[keep], self.rel[:, keep]
        for layer in self.k:
            self.k[layer], self.v[layer] = self.k[layer][:, :, keep], self.v[layer][:, :, keep]


def allowed_keys(qi, ki, windows):
    """Boolean [tq, tk]: causal, and for each (n_starting, local) rule: key among the first n_starting
    tokens or within `local` of the query (windowed attention is (0, w); thesis 4.3.3)."""
    diff = qi[:, None] - ki[None, :]
    ok = diff >= 0
    for n_start, local in windows:
        ok &= (diff < local) | (ki[None, :] < n_start)
    return ok


def key_range(qi, ki, windows):
    """Indices into the keys that a query block [qi[0], qi[-1]] can see, so windowed attention over a long
    input only touches the keys near the block (keys are in increasing token order)."""
    hi = int(torch.searchsorted(ki, qi[-1], right=True))
    lo, n_start = 0, 0
    for s, local in windows:
        lo = max(lo, int(torch.searchsorted(ki, qi[0] - local + 1)))
        n_start = max(n_start, int(torch.searchsorted(ki, torch.tensor(s, device=ki.device))))
    if n_start >= lo:
        return torch.arange(0, hi, device=ki.device)
    return torch.cat([torch.arange(0, n_start, device=ki.device), torch.arange(lo, hi, device=ki.device)])


class CausalSelfAttention(nn.Module):

    def __init__(self, cfg, opts):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.resid_dropout = nn.Dropout(cfg.dropout)
        self.n_head, self.dropout, self.window = cfg.n_head, cfg.dropout, cfg.window
        self.opts = opts

    def forward(self, x, pe, layer, pos, cache=None):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)
        q, k = pe.rotate(q, pos.rel), pe.rotate(k, pos.rel)
        ki, krel = pos.idx, pos.rel
        if cache is not None:
            k, v = cache.add(layer, k, v)
            ki, krel = cache.idx, cache.rel
        y = self.attend(q, k, v, pe, layer, pos.idx, pos.rel, ki, krel, cache)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))

    def attend(self, q, k, v, pe, layer, qi, qrel, ki, krel, cache):
        o = self.opts
        windows = [(0, self.window)] if self.window > 0 else []
        if o.local > 0:
            windows.append((o.n_starting, o.local))
        if cache is not None and cache.local > 0:
            windows.append((cache.n_starting, cache.local))
        drop = self.dropout if self.training else 0.0
        scale = 1.0 / (math.sqrt(q.size(-1)) * o.temperature)
        # distance tables, computed once per call: d ranges over 0 .. (largest query pos - smallest key pos)
        n = int((qrel.max() - krel.min()).clamp(min=0)) + 1
        if o.ceiling > 0:
            n = min(n, o.ceiling + 1)
        dist = torch.arange(n, device=q.device, dtype=torch.float32)
        btab, wtab = pe.bias(layer, dist), pe.weight(layer, dist)
        explicit = (o.impl == 'plain' or o.hook is not None or o.topk > 0 or (o.ceiling > 0 and pe.rotary)
                    or wtab is not None)

        if btab is None and not windows and not explicit and qi.numel() == ki.numel():
            # plain causal attention: the fused kernel (flash on GPU) applies
            return F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True, scale=scale)

        Tq, Tk = q.size(2), k.size(2)
        bq = Tq if o.impl == 'plain' else max(16, o.block_elems // (q.size(0) * q.size(1) * Tk))
        out = []
        for s in range(0, Tq, bq):
            qs = slice(s, s + bq)
            full = o.impl == 'plain' or o.topk > 0
            keys = torch.arange(Tk, device=q.device) if full else key_range(qi[qs], ki, windows)
            ok = allowed_keys(qi[qs], ki[keys], windows)                        # [tq, tk]
            d = (qrel[:, qs, None] - krel[:, None, keys]).clamp(0, n - 1)       # [b, tq, tk]
            kb, vb = k[:, :, keys], v[:, :, keys]
            if not explicit:
                bias = btab[:, d].transpose(0, 1) / o.temperature if btab is not None else q.new_zeros(ok.shape)
                mask = bias.masked_fill(~ok, float('-inf'))
                out.append(F.scaled_dot_product_attention(q[:, :, qs], kb, vb, attn_mask=mask.to(q.dtype),
                                                          dropout_p=drop, scale=scale))
                continue
            att = (q[:, :, qs] @ kb.transpose(-2, -1)).float()
            if o.ceiling > 0 and pe.rotary:
                # LM-Infinite distance ceiling for rotary encodings: score at distance `ceiling` for far pairs,
                # i.e. the query rotated to position `ceiling` against the key at position 0
                qraw = pe.rotate(q[:, :, qs], -qrel[:, qs])
                kraw = pe.rotate(kb, -krel[:, keys])
                far = pe.rotate(qraw, torch.full_like(qrel[:, qs], o.ceiling)) @ kraw.transpose(-2, -1)
                att = torch.where((qrel[:, qs, None] - krel[:, None, keys] > o.ceiling)[:, None], far.float(), att)
            if wtab is not None:
                att = att * wtab[:, d].transpose(0, 1)
            att = att * scale
            if btab is not None:
                att = att + btab[:, d].transpose(0, 1) / o.temperature
            if o.topk > 0:  # LM-Infinite: middle tokens with the top-k scores join the Λ-shaped window
                middle = (qi[qs, None] >= ki[None, keys]) & ~ok
                mid = att.masked_fill(~middle, float('-inf'))
                kth = mid.topk(min(o.topk, mid.size(-1)), dim=-1).values[..., -1:]
                ok = ok | (middle & (mid >= kth) & (kth > float('-inf')))
            att = att.masked_fill(~ok, float('-inf')).softmax(dim=-1)
            if o.hook is not None:
                o.hook(layer, att, qi[qs], ki[keys])
            att = F.dropout(att, drop, self.training)
            out.append(att.to(vb.dtype) @ vb)
        return torch.cat(out, dim=2)


class MLP(nn.Module):

    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):

    def __init__(self, cfg, opts):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg, opts)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x, pe, layer, pos, cache=None):
        x = x + self.attn(self.ln_1(x), pe, layer, pos, cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        if config.pe not in POSITIONAL_ENCODINGS:
            raise ValueError(f"unknown pe={config.pe!r}; choose one of: {', '.join(POSITIONAL_ENCODINGS)}")
        self.config = config
        self.attn_opts = AttnOptions()
        self.pe = POSITIONAL_ENCODINGS[config.pe](config)
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, self.attn_opts) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):  # GPT-2: scale residual projections by depth
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def get_num_params(self):
        return sum(p.numel() for p in self.parameters())

    def layers(self):
        """(depth, block) pairs in the order they run; RegularGPT repeats shared blocks."""
        return enumerate(self.transformer.h)

    def forward(self, idx, targets=None, cache=None, reduction='mean'):
        """Logits for every position when targets are given (with the loss), else for the last one only.
        reduction='none' returns the per-token loss [B, T]. With a KVCache, idx continues the cached text."""
        pos, state = self.pe.positions(idx, cache.next if cache else 0, cache.pe_state if cache else None)
        x = self.transformer.wte(idx)
        e = self.pe.embed(pos)
        if e is not None:
            x = x + e
        x = self.transformer.drop(x)
        if cache is not None:
            cache.add_positions(pos, state)
        for depth, block in self.layers():
            x = block(x, self.pe, depth, pos, cache)
        if cache is not None:
            cache.trim()
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1),
                               ignore_index=-1, reduction=reduction)
        return logits, (loss.view(targets.shape) if reduction == 'none' else loss)

    def set_attention(self, **kw):
        """Change evaluation-time attention controls (fields of AttnOptions); no arguments restores defaults."""
        bad = set(kw) - set(AttnOptions.__dataclass_fields__)
        if bad:
            raise ValueError(f"unknown attention option(s) {sorted(bad)}; allowed: {list(AttnOptions.__dataclass_fields__)}")
        if kw.get('impl', 'auto') not in ('auto', 'plain'):
            raise ValueError(f"impl={kw['impl']!r}; allowed: 'auto', 'plain'")
        fresh = AttnOptions(**kw)
        for f in AttnOptions.__dataclass_fields__:
            setattr(self.attn_opts, f, getattr(fresh, f))

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        # decay matrices of Linear/Embedding layers; positional parameters are not decayed, as decay
        # would pull kernels and biases toward "no position information"
        params = {n: p for n, p in self.named_parameters() if p.requires_grad}
        decay = [p for n, p in params.items() if p.dim() >= 2 and not n.startswith('pe.')]
        no_decay = [p for n, p in params.items() if p.dim() < 2 or n.startswith('pe.')]
        groups = [{'params': decay, 'weight_decay': weight_decay}, {'params': no_decay, 'weight_decay': 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=(device_type == 'cuda'))

    def estimate_mfu(self, fwdbwd_per_iter, dt, peak_flops=312e12):
        """Model flops utilisation against `peak_flops` (default: A100 bf16), PaLM appendix B counting."""
        cfg = self.config
        L, H, Q, T = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.block_size
        flops_per_token = 6 * self.get_num_params() + 12 * L * H * Q * T
        return flops_per_token * T * fwdbwd_per_iter / dt / peak_flops

    @classmethod
    def from_checkpoint(cls, path, map_location='cpu'):
        ckpt = torch.load(path, map_location=map_location, weights_only=False)
        args = dict(ckpt['model_args'])
        args['bipe_sep_ids'] = tuple(args.get('bipe_sep_ids', GPTConfig.bipe_sep_ids))
        model = make_model(GPTConfig(**args))  # RegularGPT for pe='regular'
        model.load_state_dict(ckpt['model'])
        return model

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, cache_window=0, n_starting=0):
        """Sample continuations with a KV cache. cache_window > 0 bounds memory: every new token sees the
        first n_starting tokens and the last cache_window ones (thesis 4.9.2; LM-Infinite)."""
        cache = KVCache(local=cache_window or 0, n_starting=n_starting)
        logits, _ = self(idx, cache=cache)
        for _ in range(max_new_tokens):
            logits = logits[:, -1, :] / max(temperature, 1e-8)
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('inf')
            nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, nxt), dim=1)
            logits, _ = self(nxt, cache=cache)
        return idx


# --------------------------------------------------------------------------------------------
# RegularGPT (thesis ch. 6): K shared blocks reused for K * ceil(log_C T) layers, sliding-dilated
# attention (eq. 6.1, through pe='regular') and no absolute positions: the r_i are the only position signal.
# Three interchangeable forward implementations (config.regular_impl):
#   plain  - the reference: every layer is an ordinary Block, the T x T mask comes from Regular.bias
#   gather - every position, but each query gathers only its C keys: O(T * C) per layer
#   reduce - final position only: chunk, attend within the chunk, keep each chunk's last token, so the
#            length shrinks by C per level and the whole forward is O(T * C * K)
# --------------------------------------------------------------------------------------------

REGULAR_IMPLS = ('plain', 'gather', 'reduce')


def n_levels(T, C):
    """ceil(log_C T), at least 1: the levels after which the last token has seen token 0 (thesis 6.2.2)."""
    L = 1
    while C ** L < T:  # integer arithmetic: math.log would misround exact powers such as log_3(243)
        L += 1
    return L


def make_model(config):
    """RegularGPT for pe='regular', GPT otherwise: the constructor train.py and friends should call."""
    return RegularGPT(config) if config.pe == 'regular' else GPT(config)


class RegularGPT(GPT):
    """GPT whose depth adapts to the input: K = config.thickness distinct blocks, where layer l*K + k runs
    block k at dilation C^l (thesis 6.2.2), so a model trained at length 40 runs unchanged at length 500.
    config.n_layer is ignored (the model holds K blocks); the depth for length T is self.depth(T)."""

    def __init__(self, config):
        if config.pe != 'regular':
            raise ValueError(f"RegularGPT needs pe='regular', got pe={config.pe!r}")
        if config.regular_impl not in REGULAR_IMPLS:
            raise ValueError(f"unknown regular_impl={config.regular_impl!r}; choose one of: {', '.join(REGULAR_IMPLS)}")
        if config.chunk_size < 2 or config.thickness < 1:
            raise ValueError(f"RegularGPT needs chunk_size >= 2 and thickness >= 1, "
                             f"got chunk_size={config.chunk_size}, thickness={config.thickness}")
        super().__init__(GPTConfig(**{**vars(config), 'n_layer': config.thickness}))

    def depth(self, T):
        return self.config.thickness * n_levels(T, self.config.chunk_size)

    def layers(self, T=1):
        """(depth, block) pairs for an input of length T: SA^(l*K+k) = SA^(k), FFN likewise (thesis 6.2.2)."""
        K = self.config.thickness
        return ((d, self.transformer.h[d % K]) for d in range(self.depth(T)))

    def sparse_block(self, block, x, depth, qi, valid, step):
        """`block` at `depth` for the queries qi only: query qi[j] sees the keys qi[j] - i*step, i in [C]
        (eq. 6.1; step is C^l in token positions, 1 on reduce's shortened sequence). valid[n] is False for
        left padding. Returns x at qi after attention and MLP. Memory is bounded by querying in blocks."""
        C, K, attn = self.config.chunk_size, self.config.thickness, block.attn
        B, N, D = x.shape
        H = attn.n_head
        q, k, v = attn.c_attn(block.ln_1(x)).view(B, N, 3, H, D // H).permute(2, 0, 3, 1, 4)  # [B,H,N,hd]
        # eq. 6.1's r_i, read through the same Regular.bias as the plain path: distances i * C^l, all finite
        btab = self.pe.bias(depth, torch.arange(C, device=x.device, dtype=torch.float32) * C ** (depth // K))
        t = self.attn_opts.temperature
        scale = 1.0 / (math.sqrt(D // H) * t)
        drop = attn.dropout if self.training else 0.0
        bq = max(1, self.attn_opts.block_elems // (B * C * D))
        out = []
        for s in range(0, qi.numel(), bq):
            qb = qi[s:s + bq]
            ki = qb[:, None] - step * torch.arange(C, device=x.device)      # [nq, C]; column i is r_i's key
            ok = (ki >= 0) & valid[ki.clamp(min=0)]
            ok[:, 0] = True  # a query always sees itself, which keeps left-padded rows finite
            ki = ki.clamp(min=0)
            att = torch.einsum('bhqd,bhqcd->bhqc', q[:, :, qb], k[:, :, ki]) * scale + btab[None, :, None, :] / t
            att = F.dropout(att.masked_fill(~ok, float('-inf')).softmax(dim=-1), drop, self.training)
            out.append(torch.einsum('bhqc,bhqcd->bhqd', att, v[:, :, ki]))
        y = torch.cat(out, dim=2).transpose(1, 2).reshape(B, qi.numel(), D)
        x = x[:, qi] + attn.resid_dropout(attn.c_proj(y))
        return x + block.mlp(block.ln_2(x))

    def forward(self, idx, targets=None, cache=None, reduction='mean', impl=None, collect=None):
        """As GPT.forward; impl overrides config.regular_impl for this call. 'reduce' yields the final position
        only, so its targets (if any) are [B, 1]. collect: a list that receives every layer's output [B, n, C]."""
        impl = impl or self.config.regular_impl
        if impl not in REGULAR_IMPLS:
            raise ValueError(f"unknown impl={impl!r}; choose one of: {', '.join(REGULAR_IMPLS)}")
        if cache is not None:
            raise ValueError("RegularGPT has no KV cache: its depth grows with the input, so each step recomputes the prefix")
        o = self.attn_opts
        if impl != 'plain' and (o.local or o.ceiling or o.topk or o.hook is not None):
            raise ValueError(f"impl={impl!r} supports only the temperature attention option; use impl='plain'")
        B, T = idx.shape
        C, K = self.config.chunk_size, self.config.thickness
        x = self.transformer.drop(self.transformer.wte(idx))  # no absolute positions (thesis 6.2)
        if impl == 'plain':
            pos, _ = self.pe.positions(idx, 0, None)
            for depth, block in self.layers(T):
                x = block(x, self.pe, depth, pos)
                if collect is not None:
                    collect.append(x)
        elif impl == 'gather':
            qi, valid = torch.arange(T, device=idx.device), torch.ones(T, dtype=torch.bool, device=idx.device)
            for depth, block in self.layers(T):
                x = self.sparse_block(block, x, depth, qi, valid, C ** (depth // K))
                if collect is not None:
                    collect.append(x)
        else:
            valid = torch.ones(T, dtype=torch.bool, device=idx.device)
            for level in range(n_levels(T, C)):
                pad = (-x.size(1)) % C  # left padding (thesis 6.2.1, footnote 1) keeps the last token a chunk end
                x = torch.cat([x.new_zeros(B, pad, x.size(2)), x], dim=1)
                valid = torch.cat([valid.new_zeros(pad), valid])
                N = x.size(1)
                for k in range(K):
                    # on the shortened sequence neighbours are C^l tokens apart, so the dilation is 1 here;
                    # the last of the K layers only needs the chunk ends, the ones the next level keeps
                    qi = torch.arange(C - 1, N, C, device=idx.device) if k == K - 1 else torch.arange(N, device=idx.device)
                    x = self.sparse_block(self.transformer.h[k], x, level * K + k, qi, valid, 1)
                    if collect is not None:
                        collect.append(x)
                valid = valid[C - 1::C]
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None
        if impl == 'reduce' and targets.shape != (B, 1):
            raise ValueError(f"impl='reduce' predicts the final position only: targets must be [B, 1], got {list(targets.shape)}")
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1),
                               ignore_index=-1, reduction=reduction)
        return logits, (loss.view(targets.shape) if reduction == 'none' else loss)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, cache_window=0, n_starting=0):
        """Sampling without a cache (see forward); cache_window and n_starting are not supported."""
        if cache_window or n_starting:
            raise ValueError("RegularGPT.generate has no bounded cache: use cache_window=0, n_starting=0")
        for _ in range(max_new_tokens):
            logits = self(idx, impl='plain' if self.config.regular_impl == 'reduce' else None)[0][:, -1, :]
            logits = logits / max(temperature, 1e-8)
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('inf')
            idx = torch.cat((idx, torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)), dim=1)
        return idx
