"""
lexgpt: a small GPT whose positional encoding is a plug-in.

Data flows one way: token ids -> embeddings (absolute encodings are added here) -> blocks
(relative biases, rotations and masks are applied inside attention) -> logits.

Papers: thesis = T.-C. Chi, "Toward Length-Extrapolatable Transformers" (PhD thesis, CMU-LTI-24-005, 2024);
KERPLE = Chi et al., "KERPLE: Kernelized Relative Positional Embedding for Length Extrapolation" (NeurIPS 2022);
LM-Infinite = Han et al., "LM-Infinite: Zero-Shot Extreme Length Generalization for Large Language Models"
(arXiv:2308.16137); BiPE = He et al., "Two Stones Hit One Bird: Bilevel Positional Encoding for Better Length
Extrapolation" (ICML 2024).
"""
import math
from collections import namedtuple
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

from lexgpt import regular_fast, rope_scaling, routes
from lexgpt.kv_cache import KVCache  # the past keys and values of decoding and streaming, bounded or not
from lexgpt.reference import ROUTE_CHOICES, AttnCall, AttnOptions, attention_reference, keys_seen

GATED = ('swiglu', 'geglu')  # MLPs whose c_fc holds [gate; up]: SiLU-gated (SwiGLU) and tanh-GELU-gated (GeGLU, Gemma)


@dataclass
class GPTConfig:
    # ---- the research settings: the model trained here, its positional encoding, and what extends it ----
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
    sandwich_dbar: int = 128    # d_bar of thesis eq. 4.6
    kernel_per_layer: bool = False  # KERPLE's parameters per layer; the thesis shares one set (its Fig. 3.1)
    xpos_scale_base: float = 512.0  # B of xPos
    fire_hidden: int = 32       # FIRE's MLP width
    cope_max_pos: int = 64      # CoPE: positions are clamped below this
    bipe_sep_ids: tuple = (46, 10)  # tokens that end a BiPE segment: '.' and '\n' as bytes
    randomized_positions: int = 0  # L_max > 0: positions are a sorted random subset of [0, L_max) (Ruoss et al.)
    ssmax: bool = False         # Scalable-Softmax: logits of q.k times s_h * log(keys seen), s_h learned per head
    rope_base: float = 10000.0
    rope_scaling: str = ''      # RoPE extension ('' off): pi | ntk | dynamic | yarn | llama3, factor s = rope_scale
    rope_scale: float = 1.0
    rope_original_len: int = 0  # the length first trained on, which dynamic/yarn/llama3 count from (0: block_size)
    rope_beta_fast: float = 0.0 # yarn/llama3: pairs turning more times in that length are kept (0: yarn 32, llama3 4)
    rope_beta_slow: float = 0.0 # yarn/llama3: pairs turning fewer times than this are interpolated (0: 1 for both)
    rope_attn_factor: float = 0.0  # yarn: the factor on q and k (0: 0.1 ln s + 1)
    rope_truncate: bool = True  # yarn: the ramp's ends rounded out to whole pairs (transformers' `truncate`)
    extend_layers: str = 'all'  # layers rope_scaling and AttnOptions' key_window/ceiling/topk reach: all|global|local
    flex: bool = True           # on a GPU, FlexAttention may take a biased attention call (routes.py's flex route)
    # ---- RegularGPT (thesis ch. 6), pe='regular' only ----
    chunk_size: int = 2         # C
    thickness: int = 1          # K
    regular_impl: str = 'plain' # 'plain' | 'gather' | 'reduce'
    # ---- pretrained architectures (lexgpt/pretrained.py); the defaults are GPT-2's and nanoGPT's ----
    n_kv_head: int = 0          # grouped-query attention: heads of keys and values (0: n_head)
    head_dim: int = 0           # per-head width (0: n_embd // n_head)
    norm: str = 'layernorm'     # 'layernorm' | 'rmsnorm'
    norm_eps: float = 1e-5
    mlp: str = 'gelu'           # 'gelu' | 'gelu_tanh' | 'swiglu' (SiLU-gated) | 'geglu' (tanh-GELU-gated, Gemma)
    mlp_hidden: int = 0         # MLP width (0: 4 * n_embd)
    tie_head: bool = True       # the output head shares the token embedding
    # ---- single-family flags: one family each (or two) sets them ----
    qkv_bias: bool = False      # Qwen2: biases on q, k and v even without `bias`
    parallel_residual: bool = False  # GPT-NeoX: x + attn(ln_1(x)) + mlp(ln_2(x))
    rotary_dim: int = 0         # GPT-NeoX (rotary_pct): RoPE turns the first rotary_dim dims of each head (0: all)
    qk_norm: bool = False       # Gemma 3, Qwen3: a norm of each head's q and k before the rotation
    post_norm: bool = False     # Gemma 2/3: also a norm on each branch's output before the residual add
    embd_mult: float = 1.0      # Gemma: the token embeddings times this (sqrt(n_embd))
    attn_scale: float = 0.0     # Gemma: the q.k scale, query_pre_attn_scalar^-0.5 (0: 1/sqrt(head size))
    layer_attn: tuple = ()      # Gemma 3: (window, rope_base) per layer, 0: `window` / `rope_base` (local layers)

    def layer(self, i):
        """Layer i's window, RoPE base, and whether rope_scaling and the evaluation-time options reach it."""
        w, b = self.layer_attn[i] if self.layer_attn else (0, 0)
        extended = self.extend_layers in ('all', 'local' if w else 'global')
        return int(w or self.window), float(b or self.rope_base), extended

    @property
    def head_size(self):
        return self.head_dim or self.n_embd // self.n_head

    def __post_init__(self):
        """Refuse a setting that cannot build a model, with one line naming the value and what is allowed."""
        choices = dict(pe=tuple(POSITIONAL_ENCODINGS), norm=('layernorm', 'rmsnorm'), regular_impl=REGULAR_IMPLS,
                       mlp=('gelu', 'gelu_tanh') + GATED, extend_layers=('all', 'global', 'local'))
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"unknown {name}={getattr(self, name)!r}; choose one of: {', '.join(allowed)}")
        positive = ('vocab_size', 'block_size', 'n_layer', 'n_head', 'n_embd', 'sandwich_dbar', 'chunk_size',
                    'thickness')
        for name in positive:
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r} must be a positive integer")
        if self.n_embd % self.n_head and not self.head_dim:
            raise ValueError(f"n_embd={self.n_embd} must be divisible by n_head={self.n_head} (or set head_dim)")
        if self.n_kv_head < 0 or self.n_head % (self.n_kv_head or self.n_head):
            raise ValueError(f"n_kv_head={self.n_kv_head} must divide n_head={self.n_head} (0: n_head)")
        self.layer_attn = tuple((int(w), float(b)) for w, b in self.layer_attn)  # a JSON list back to pairs
        if len(self.layer_attn) not in (0, self.n_layer) or min([w for w, _ in self.layer_attn], default=0) < 0:
            raise ValueError(f"layer_attn={self.layer_attn} must hold n_layer={self.n_layer} "
                             f"(window >= 0, rope_base) pairs")
        if self.rotary_dim % 2 or not 0 <= self.rotary_dim <= self.head_size:
            raise ValueError(f"rotary_dim={self.rotary_dim} must be even and in [0, head size {self.head_size}]")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout} must lie in [0, 1)")
        if self.window < 0:
            raise ValueError(f"window={self.window} must be >= 0 (0: no window)")
        if self.pe == 'regular' and self.chunk_size < 2:
            raise ValueError(f"RegularGPT needs chunk_size >= 2, got chunk_size={self.chunk_size}")
        rope_scaling.check(self)
        if self.randomized_positions and self.pe.startswith('bipe'):
            raise ValueError(f"randomized_positions applies to token positions; pe={self.pe!r} has segment positions")
        if 0 < self.randomized_positions < self.block_size:
            raise ValueError(f"randomized_positions={self.randomized_positions} must be 0 (off) or >= block_size="
                             f"{self.block_size}: it is the range L_max the positions are drawn from")


# --------------------------------------------------------------------------------------------
# Positional encodings. Each one is a small module behind one interface; the model calls
#   positions(idx, start, state, cached) -> (Positions, state)   which position every token has
#   embed(pos)          -> [b,T,C] or None   absolute part, added to the token embeddings
#   rotate(x, rel, key, scale, layer) -> x   rotary part, applied to queries (key=False) and keys (key=True) of a
#                                            layer; scale=False leaves out a constant factor (YaRN's), so they compose
#   bias(layer, d, m)   -> [H, n] or None    additive logit bias for distances d = m - n (float [n]); an encoding
#                                            of kind 'query' also depends on the query positions m ([H, *d.shape])
#   weight(layer, d)    -> [H, n] or None    multiplicative factor on q.k for distances d
#   slope(layer)        -> [H] or None       a bias linear in d, -slope * d (ALiBi), that the fast routes fold into q.k
#   potential(layer, x, last) -> [B,H,T] or None   a content-dependent bias pot[n] - pot[m] (FoX's running sum of log
#                                            forget gates, from the layer input x; `last`: the cached keys' last value)
#   content(layer, q, logits) -> [B,H,tq,tk] or None   a logit term computed from q and the logits (CoPE)
# and `kinds` says which parts an encoding has, so scripts need not list encodings by name: 'absolute', 'rotary',
# 'bias', 'weight', 'linear' (the bias is -slope * d), 'mask' (a bias with -inf entries), 'query' (a bias that
# depends on m, not only on m - n), 'potential' and 'content'; tests/test_model.py checks them both ways.
# Relative parts are functions of the distance only unless their kind says otherwise, so they are shift invariant
# by construction and cost O(H * T) to evaluate; attention turns them into [H, Tq, Tk] one block at a time.
# --------------------------------------------------------------------------------------------

# idx: token index of each position [T]; rel: position seen by relative parts [b,T];
# abs: position seen by absolute parts [b,T]. They coincide except for BiPE and randomized positions; plain says
# so as a Python fact (rel is idx, one row for the batch), so that attention can route on it without reading tensors.
Positions = namedtuple('Positions', 'idx rel abs plain', defaults=(False,))


class PositionalEncoding(nn.Module):
    kinds = ()

    def __init__(self, config):
        super().__init__()
        self.config = config

    def positions(self, idx, start, state, cached=False):
        B, T = idx.shape
        i = torch.arange(start, start + T, device=idx.device)
        L = self.config.randomized_positions
        if L and not cached:
            if T > L:
                raise ValueError(f"an input of {T} tokens does not fit randomized_positions={L}: positions are drawn "
                                 f"from [0, {L}); train with a larger L_max to evaluate this long")
            # Ruoss et al. 2023: the positions of a length-T input are a sorted random subset of [0, L_max), fresh
            # per sequence in training; in evaluation one draw per length (so results repeat). A KV cache, whose
            # later tokens must continue the positions, gets 0..T-1.
            g = None if self.training else torch.Generator(device=idx.device).manual_seed(T)
            draws = torch.rand(B if self.training else 1, L, generator=g, device=idx.device)
            r = draws.argsort(-1)[:, :T].sort(-1).values
            return Positions(i, r, r), None
        return Positions(i, i[None], i[None], plain=True), None

    def rotate(self, x, rel, key=False, scale=True, layer=0):
        return x

    def none(self, *args, **kw):  # the parts an encoding lacks (their signatures: above)
        return None
    embed = bias = weight = slope = potential = content = none

    # What "relative" means, decided here once for the scripts (extrapolate.py's note, streaming's refusal):
    def reads_distance(self):
        """A part that reads the distance m - n (rotary, a bias or a weight): what LM-Infinite's ceiling caps."""
        return bool({'rotary', 'bias', 'weight'} & set(self.kinds))

    def reads_position(self):
        """A part that reads a position itself, not only distances (an absolute encoding, FIRE's query bias): one
        that a stream's cache-relative positions would change."""
        return bool({'absolute', 'query'} & set(self.kinds))


class NoPE(PositionalEncoding):
    """No positional information at all; causal masking alone leaks position (thesis ch. 2)."""


class Learned(PositionalEncoding):
    """GPT-2's learned absolute embeddings: one vector per position up to block_size."""
    kinds = ('absolute',)

    def __init__(self, config):
        super().__init__(config)
        self.wpe = nn.Embedding(max(config.block_size, config.randomized_positions), config.n_embd)

    def embed(self, pos):
        top = int(pos.abs.max())
        if top >= self.wpe.num_embeddings:
            raise ValueError(f"pe='learned' has embeddings for positions 0..{self.wpe.num_embeddings - 1} only, "
                             f"got position {top}; use a relative encoding to go beyond the training length")
        return self.wpe(pos.abs)


def sinusoid(pos, dim, base=10000.0):
    """Eq. 4.5: p[m, 2i] = sin(m / base^(2i/d)), p[m, 2i+1] = cos(m / base^(2i/d))."""
    inv = base ** (-torch.arange(0, dim, 2, device=pos.device, dtype=torch.float32) / dim)
    ang = pos[..., None].float() * inv
    return torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(-2)


class Sinusoidal(PositionalEncoding):
    kinds = ('absolute',)

    def embed(self, pos):
        return sinusoid(pos.abs, self.config.n_embd)


class RoPE(PositionalEncoding):
    """Rotary embedding (Su et al.): q.k then depends on positions only through m - n. rope_scaling stretches it
    to s = rope_scale times the training length (rope_scaling.py): 'pi' rotates by m / s (Chen et al. 2023), 'ntk'
    raises the base to base * s^(D/(D-2)), 'dynamic' raises it with the input's length, 'yarn' and 'llama3'
    interpolate only the pairs of long wavelength (yarn also sharpens the logits, Peng et al.). Per-layer bases or
    extensions (GPTConfig.layer_attn, extend_layers) make inv_freq [n_layer, D/2] and mscale a list."""
    kinds = ('rotary',)

    def __init__(self, config):
        super().__init__(config)
        self.dim = config.rotary_dim or config.head_size  # frequencies over the rotated dims only (GPT-NeoX)
        if self.dim % 2:
            raise ValueError(f"pe={config.pe!r} rotates pairs of dimensions: the head size n_embd/n_head={self.dim} "
                             f"must be even")
        inv, self.mscale = rope_scaling.layer_frequencies(config, self.dim)
        self.register_buffer('inv_freq', inv, persistent=False)

    def positions(self, idx, start, state, cached=False):
        pos, state = super().positions(idx, start, state, cached)
        if self.config.rope_scaling == 'dynamic':
            # the base follows the input's last position (transformers'); with a KV cache, cached keys keep theirs
            inv, _ = rope_scaling.layer_frequencies(self.config, self.dim, int(pos.rel.max()) + 1)
            self.inv_freq = inv.to(self.inv_freq.device)
        return pos, state

    def rotate(self, x, rel, key=False, scale=True, layer=0):
        one = self.inv_freq.dim() == 1
        ang = rel[:, None, :, None].float() * (self.inv_freq if one else self.inv_freq[layer])  # [b,1,T,D/2]
        cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        r = 2 * cos.size(-1)  # the rotated dims; those past r pass through unrotated
        s = self.mscale if one else self.mscale[layer]
        x1, x2 = x[..., :r].chunk(2, dim=-1)
        x = torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos, x[..., r:]], dim=-1)
        return x * s if scale and s != 1.0 else x


class XPos(RoPE):
    """xPos (Sun et al. 2022): RoPE whose pair i also decays, q_m scaled by zeta_i^(m/B) and k_n by zeta_i^(-n/B),
    zeta_i = (2i/D + 0.4) / 1.4, so q.k gains zeta_i^((m-n)/B). Positions are not re-centred: in float32 that holds
    to about 36k tokens with B = 512."""

    def __init__(self, config):
        super().__init__(config)  # zeta over the rotated dims (self.dim): a pair's two dims must decay alike
        self.register_buffer('zeta', (torch.arange(0, self.dim, 2).float() / self.dim + 0.4) / 1.4, persistent=False)

    def rotate(self, x, rel, key=False, scale=True, layer=0):
        power = rel[:, None, :, None].float() / self.config.xpos_scale_base
        decay = self.zeta ** (-power if key else power)            # [b,1,T,dim/2]; dims past rotary_dim keep 1
        decay = torch.cat([decay, decay, decay.new_ones(*decay.shape[:-1], x.size(-1) - self.dim)], -1)
        return super().rotate(x, rel, scale=scale, layer=layer) * decay.to(x.dtype)


def alibi_slopes(n_head):
    """ALiBi's geometric slopes (Press et al. 2022, eq. 4.3): 2^(-8i/n) for n a power of two; otherwise
    the slopes of the nearest lower power of two plus every other slope of the next power of two."""
    def pow2(n):
        return [2.0 ** (-8.0 * (i + 1) / n) for i in range(n)]
    p = 2 ** math.floor(math.log2(n_head))
    return torch.tensor(pow2(p) + pow2(2 * p)[0::2][:n_head - p])


class ALiBi(PositionalEncoding):
    kinds = ('bias', 'linear')

    def __init__(self, config):
        super().__init__(config)
        if config.alibi_equal_h >= 0:      # thesis 4.4.2: the same h for every head
            slopes = torch.full((config.n_head,), 2.0 ** -config.alibi_equal_h)
        else:                           # thesis 4.4.1: slope 2^-h becomes 2^-(h+Δ)
            slopes = alibi_slopes(config.n_head) * 2.0 ** -config.alibi_shift
        self.register_buffer('slopes', slopes, persistent=False)

    def bias(self, layer, d, m=None):
        return -self.slopes[:, None] * d    # eq. 4.3

    def slope(self, layer):
        return self.slopes


class T5Bias(PositionalEncoding):
    """T5's learned bias over 32 log-spaced causal distance buckets up to 128, shared by all layers
    (thesis 3.4): exact buckets for d < 16, then 16 + floor(log(d/16) / log(128/16) * 16), capped at 31.
    As in the thesis' GPT-NeoX code (and x-transformers), the table is added after the 1/sqrt(D) scaling but
    multiplied by sqrt(D) first, so it learns at the scale of unscaled logits, from a Xavier-normal start."""
    kinds = ('bias',)
    n_buckets, max_distance = 32, 128

    def __init__(self, config):
        super().__init__(config)
        std = math.sqrt(2.0 / (self.n_buckets + config.n_head))  # xavier_normal_ of NeoX's [32, H] weight
        self.table = nn.Parameter(torch.randn(config.n_head, self.n_buckets) * std)
        self.scale = math.sqrt(config.head_size)

    @classmethod
    def bucket(cls, d):
        exact = cls.n_buckets // 2
        far = exact + (torch.log(d.clamp(min=1) / exact) / math.log(cls.max_distance / exact) * exact).long()
        return torch.where(d < exact, d.long(), far.clamp(max=cls.n_buckets - 1))

    def bias(self, layer, d, m=None):
        return self.table[:, self.bucket(d)] * self.scale


class Kernel(PositionalEncoding):
    """Base of the KERPLE family: per-head parameters r_j, one set shared by all layers as in the thesis
    (Fig. 3.1; the authors' code builds one kernel module for every layer), or one set per layer with
    kernel_per_layer=True. Each is kept in its valid range by a straight-through clamp: the value used is
    clamped, while the gradient still reaches the raw parameter, so a parameter pushed past a bound can come back."""
    kinds = ('bias',)
    ranges = {}  # name -> (init_lo, init_hi, min, max)

    def __init__(self, config):
        super().__init__(config)
        sets = config.n_layer if config.kernel_per_layer else 1
        for name, (lo, hi, _, _) in self.ranges.items():
            self.register_parameter(name, nn.Parameter(lo + (hi - lo) * torch.rand(sets, config.n_head)))

    def r(self, name, layer):
        p = getattr(self, name)
        p = p[layer % len(p)][:, None]
        _, _, lo, hi = self.ranges[name]
        return p + (p.clamp(lo, hi) - p).detach()


EPS = 1e-2  # the authors' lower bound on every kernel parameter
# Initial ranges follow the authors' code: coefficients U(0, 1) (the log kernel's r1: U(0, 2)), exponents U(0, 2)


class KerplePower(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d, m=None):
        return -self.r('r1', layer) * d ** self.r('r2', layer)  # eq. 3.4, power variant


class KerpleLog(Kernel):
    ranges = {'r1': (0.0, 2.0, EPS, None), 'r2': (0.0, 1.0, EPS, None)}

    def bias(self, layer, d, m=None):
        return -self.r('r1', layer) * torch.log1p(self.r('r2', layer) * d)  # eq. 3.4, logarithmic variant


class Kerple3Log(Kernel):
    ranges = {'r1': (0.0, 2.0, EPS, None), 'r2': (0.0, 1.0, EPS, None), 'r3': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d, m=None):
        return -self.r('r1', layer) * torch.log1p(self.r('r2', layer) * d ** self.r('r3', layer))  # 3.5.3, 3-para-log


class KerpleBiasWht(Kernel):
    kinds = ('bias', 'weight')
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 2.0, EPS, 2.0),
              'r3': (0.0, 1.0, EPS, None), 'r4': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d, m=None):
        return -self.r('r1', layer) * d ** self.r('r2', layer)  # 3.5.3, bias+wht: bias kernel

    def weight(self, layer, d):
        return torch.exp(-self.r('r3', layer) * d ** self.r('r4', layer))  # 3.5.3, bias+wht: weight kernel


class GaussBias2(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 0.1, 1e-4, None)}

    def bias(self, layer, d, m=None):
        return self.r('r1', layer) * torch.exp(-self.r('r2', layer) * d ** 2)  # 3.7.3, 2-para-bias


class GaussBias3(Kernel):
    ranges = {'r1': (0.0, 1.0, EPS, None), 'r2': (0.0, 0.1, 1e-4, None), 'r3': (0.0, 2.0, EPS, 2.0)}

    def bias(self, layer, d, m=None):
        return self.r('r1', layer) * torch.exp(-self.r('r2', layer) * d ** self.r('r3', layer))  # 3.7.3, 3-para-bias


class GaussWht1(Kernel):
    kinds = ('weight',)
    ranges = {'r1': (0.0, 0.1, 1e-4, None)}

    def weight(self, layer, d):
        return torch.exp(-self.r('r1', layer) * d ** 2)  # 3.7.3, 1-para-wht


class GaussWht2(Kernel):
    kinds = ('weight',)
    ranges = {'r1': (0.0, 0.1, 1e-4, None), 'r2': (0.0, 2.0, EPS, 2.0)}

    def weight(self, layer, d):
        return torch.exp(-self.r('r1', layer) * d ** self.r('r2', layer))  # 3.7.3, 2-para-wht


def sandwich_ratios(n_head):
    """Compression ratios h = n * 8 / H, n = 1..H, shared by Sandwich and ALiBi's h (thesis 4.6.1)."""
    return torch.arange(1, n_head + 1, dtype=torch.float32) * 8 / n_head


class Sandwich(PositionalEncoding):
    """Eq. 4.6: (p_m . p_n - d_bar/2) / h with p the d_bar-dim sinusoid, where
    p_m . p_n = sum_i cos((m-n) / base^(2i/d_bar))."""
    kinds = ('bias',)

    def __init__(self, config):
        super().__init__(config)
        self.register_buffer('h', sandwich_ratios(config.n_head), persistent=False)

    def bias(self, layer, d, m=None):
        dbar = self.config.sandwich_dbar
        inv = 10000.0 ** (-torch.arange(0, dbar, 2, device=d.device, dtype=torch.float32) / dbar)
        dot = torch.cos(d[:, None] * inv).sum(-1)  # [n]
        return (dot - dbar / 2) / self.h[:, None]


class SandwichSmoothed(Sandwich):
    """The log curve fitted to Sandwich at h = 8 (thesis 4.6.2), -0.825 log(1+|m-n|) - 0.8, rescaled by 8/h per head."""

    def bias(self, layer, d, m=None):
        return (-0.825 * torch.log1p(d) - 0.8) * (8 / self.h[:, None])


class BiPE(PositionalEncoding):
    """Bilevel PE (BiPE paper, sec. 3.2): absolute sinusoid of the position inside the segment, added to
    the embeddings, and a relative encoding (RoPE or ALiBi) of the segment index. A separator token ends
    its segment, so the token after it starts a new one."""

    def __init__(self, config, inner):
        super().__init__(config)
        self.inner = inner(config)
        self.kinds = ('absolute',) + self.inner.kinds
        self.register_buffer('sep', torch.tensor(config.bipe_sep_ids, dtype=torch.long), persistent=False)

    def positions(self, idx, start, state, cached=False):
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
        return sinusoid(pos.abs, self.config.n_embd)

    def rotate(self, x, rel, key=False, scale=True, layer=0):
        return self.inner.rotate(x, rel, key, scale, layer)

    def bias(self, layer, d, m=None):
        return self.inner.bias(layer, d)

    def slope(self, layer):
        return self.inner.slope(layer)


class Regular(PositionalEncoding):
    """RegularGPT's sliding-dilated attention (thesis eq. 6.1), at depth l token m sees m - i*C^l for
    i in 0..C-1 with a learnable per-head bias r_i; every other key is masked out (-inf)."""
    kinds = ('bias', 'mask')

    def __init__(self, config):
        super().__init__(config)
        self.r = nn.Parameter(torch.zeros(config.thickness, config.n_head, config.chunk_size))

    def bias(self, layer, d, m=None):
        # `layer` is the depth l; the parameters belong to the shared layer l % K
        C, step = self.config.chunk_size, self.config.chunk_size ** (layer // self.config.thickness)
        i = (d / step).long()
        ok = (d.long() % step == 0) & (i < C)
        r = self.r[layer % self.config.thickness][:, i.clamp(max=C - 1)]
        return torch.where(ok, r, float('-inf'))


class FIRE(PositionalEncoding):
    """FIRE (Li et al. 2023): b(m, n) = f(psi(m - n) / psi(max(L, m))), psi(x) = log(|c x| + 1), f an MLP
    1 -> fire_hidden -> H (ReLU) per layer. As in the paper's code, c is learned from 0.1, and the threshold
    L = |a| L0 is a learned multiplier a (from 1) of a fixed L0 = block_size, so Adam moves L by about lr * L0 a step.
    Dividing by psi of the query position keeps f's input in [0, 1] at any length: progressive interpolation."""
    kinds = ('bias', 'query')
    eps = 1e-6  # added to psi(max(L, m)), as in the paper's code

    def __init__(self, config):
        super().__init__(config)
        hidden = config.fire_hidden
        self.f = nn.ModuleList([nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, config.n_head))
                                for _ in range(config.n_layer)])
        self.c = nn.Parameter(torch.full((config.n_layer,), 0.1))
        self.L_mult = nn.Parameter(torch.ones(config.n_layer))
        # saved with the model: a fine-tune at a longer length keeps the L0 it was trained with
        self.register_buffer('L0', torch.tensor(float(config.block_size)))

    def inputs(self, layer, d, m):
        """f's input: psi(d) / psi(max(L, m)) for distances d and query positions m (broadcastable)."""
        c = self.c[layer].abs()  # |c x| with x >= 0
        L = (self.L_mult[layer] * self.L0).abs()
        return torch.log1p(c * d) / (torch.log1p(c * torch.maximum(L, m.float())) + self.eps)

    def bias(self, layer, d, m=None):
        m = d if m is None else m  # a table over d alone is seen from the query at distance d from token 0
        x = self.inputs(layer, d, m)
        return self.f[layer](x[..., None]).movedim(-1, 0)


class FoX(PositionalEncoding):
    """Forgetting Transformer (Lin et al. 2025), with no other position information: per layer and head a forget
    gate f_t = sigmoid(w . x_t + b) from the layer's input, and the logit bias sum_{t=n+1..m} log f_t = F_m - F_n,
    F the running sum of log f: an ALiBi whose slope is learned per token. With constant gates it is ALiBi."""
    kinds = ('potential',)

    def __init__(self, config):
        super().__init__(config)
        self.gate = nn.ModuleList([nn.Linear(config.n_embd, config.n_head) for _ in range(config.n_layer)])

    def potential(self, layer, x, last=None):
        pot = -F.logsigmoid(self.gate[layer](x)).transpose(1, 2).float().cumsum(-1)  # -F, [B, H, T]
        return pot if last is None else pot + last


class CoPE(PositionalEncoding):
    """Contextual position encoding (Golovneva et al. 2024): gates g(m, t) = sigmoid(logit(m, t)) decide which keys
    count, the position of key n is p(m, n) = sum_{t=n..m} g(m, t), and the logit gains q_m . e[p(m, n)], e a learned
    table per layer (shared by the heads) read between floor(p) and ceil(p); p is clamped below cope_max_pos."""
    kinds = ('content',)

    def __init__(self, config):
        super().__init__(config)
        self.e = nn.Parameter(torch.zeros(config.n_layer, config.head_size, config.cope_max_pos))

    def content(self, layer, q, logits):
        g = torch.sigmoid(logits)                                                  # masked keys (-inf) count 0
        p = (g.sum(-1, keepdim=True) - g.cumsum(-1) + g).clamp(0, self.config.cope_max_pos - 1)  # sum over t >= n
        z = (q @ self.e[layer].to(q.dtype)).float()                                # q_m . e[i] for every integer i
        lo = p.detach().floor()
        z_lo = z.gather(-1, lo.long())
        z_hi = z.gather(-1, (lo.long() + 1).clamp(max=self.config.cope_max_pos - 1))
        return z_lo + (z_hi - z_lo) * (p - lo)


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
    'xpos': XPos,
    'fire': FIRE,
    'fox': FoX,
    'cope': CoPE,
}


# --------------------------------------------------------------------------------------------
# Attention. The reference, every option in one explicit softmax (read it first: lexgpt/reference.py's scores and
# attention_reference), is what each fast route of lexgpt/routes.py equals; routes.attend runs the one that applies.
# --------------------------------------------------------------------------------------------

class CausalSelfAttention(nn.Module):

    def __init__(self, config, opts, layer=0):
        super().__init__()
        self.n_head = config.n_head
        self.n_kv = config.n_kv_head or config.n_head  # grouped-query attention: fewer key/value heads
        self.hd = config.head_size
        qkv_bias = config.bias or config.qkv_bias
        self.c_attn = nn.Linear(config.n_embd, (self.n_head + 2 * self.n_kv) * self.hd, bias=qkv_bias)
        self.c_proj = nn.Linear(self.n_head * self.hd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.dropout = config.dropout
        self.flex = config.flex
        self.opts = opts
        # the layer's own window (layer_attn); whether the evaluation-time options reach it (extend_layers)
        self.window, _, self.extended = config.layer(layer)
        self.ssmax = None
        if config.ssmax:  # SSMax (Nakanishi 2025): s_h from 1 / log(L_tr), a scale of 1 for a query seeing L_tr keys
            self.ssmax = nn.Parameter(torch.full((config.n_head,), 1 / math.log(max(config.block_size, 2))))
        self.q_norm = norm(config, self.hd) if config.qk_norm else None
        self.k_norm = norm(config, self.hd) if config.qk_norm else None
        # the q.k scale is 1/sqrt(hd) in the attention; a model with another (attn_scale) multiplies q to get it
        self.q_mult = config.attn_scale * math.sqrt(self.hd) if config.attn_scale else 1.0

    def project(self, x, pe, layer, pos, rotate_keys=True):
        """q, k, v [B, heads, T, hd] of the layer's input x: QK-norm, scale, rotation (keys left unrotated for a
        relative cache, which rotates them by their slot)."""
        qkv = self.c_attn(x).view(*x.shape[:2], -1, self.hd).transpose(1, 2)
        q, k, v = qkv.split([self.n_head, self.n_kv, self.n_kv], 1)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.q_mult != 1.0:
            q = q * self.q_mult
        q = pe.rotate(q, pos.rel, layer=layer)
        if rotate_keys:
            k = pe.rotate(k, pos.rel, key=True, layer=layer)
        return q, k, v

    def forward(self, x, pe, layer, pos, cache=None, last_k=0):
        """last_k > 0: the queries of the last k positions only (GPT.forward's), against every key."""
        q, k, v = self.project(x, pe, layer, pos, rotate_keys=cache is None or not cache.relative)
        pot = pe.potential(layer, x, cache.last_potential(layer) if cache is not None else None)  # FoX's, or None
        k, v, ki, krel, kpot = self.with_past(k, v, pot, pe, layer, pos, cache)
        rows = slice(-last_k, None) if last_k else slice(None)
        q, qpot = q[:, :, rows], (pot[:, :, rows] if pot is not None else None)
        o = self.opts if self.extended else replace(self.opts, key_window=0, n_starting=0, ceiling=0, topk=0)
        same = q.size(2) == k.size(2)  # keys = cached + new ones: as many as the queries only with no past
        call = AttnCall(layer, pos.idx[rows], pos.rel[:, rows], ki, krel, self.mask_rules(o, cache), qpot, kpot,
                        allow_flex=self.flex, same=same, plain=same and pos.plain)
        if self.ssmax is not None:  # SSMax: the logits of q.k times s_h log(keys the query sees)
            s = self.ssmax[:, None] * keys_seen(call.qi, call.mask_rules).log()[None, :]  # [H, Tq]
            q = q * s[None, :, :, None].to(q.dtype)
        drop = self.dropout if self.training else 0.0
        attend = attention_reference if o.route == 'reference' else routes.attend
        y = attend(q, k, v, pe, call, o, drop)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).flatten(2)))

    def with_past(self, k, v, pot, pe, layer, pos, cache):
        """-> keys, values, their token indices, positions and potentials: with a cache, the cached ones before the
        new ones (a local layer gets back only its window's), a relative cache's keys rotated by their slot."""
        if cache is None:
            return k, v, pos.idx, pos.rel, pot
        k, v, kpot = cache.add(layer, k, v, pot, self.window)
        ki, krel = cache.idx[-k.size(2):], cache.rel[:, -k.size(2):]
        if cache.relative:
            k = pe.rotate(k, krel, key=True, layer=layer)
        return k, v, ki, krel, kpot

    def mask_rules(self, o, cache):
        """The call's (n_starting, width) rules: the layer's own window, the Λ mask, a bounded cache."""
        rules = [(0, self.window)] if self.window else []
        if o.key_window > 0:
            rules.append((o.n_starting, o.key_window))
        if cache is not None and cache.cache_window > 0:
            rules.append((cache.n_starting, cache.cache_window))
        return tuple(rules)


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        hidden = config.mlp_hidden or 4 * config.n_embd
        self.kind = config.mlp
        fc_out = 2 * hidden if config.mlp in GATED else hidden  # a gated MLP's c_fc holds [gate; up]
        self.c_fc = nn.Linear(config.n_embd, fc_out, bias=config.bias)
        self.c_proj = nn.Linear(hidden, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        h = self.c_fc(x)
        if self.kind in GATED:  # SwiGLU, GeGLU (tanh); in place: one T x hidden buffer fewer at the forward's peak
            gate, up = h.chunk(2, dim=-1)
            h = (F.silu(gate) if self.kind == 'swiglu' else F.gelu(gate, approximate='tanh')).mul_(up)
        else:
            h = F.gelu(h, approximate='tanh' if self.kind == 'gelu_tanh' else 'none')
        return self.dropout(self.c_proj(h))


def norm(config, dim=0):
    if config.norm == 'rmsnorm':
        return nn.RMSNorm(dim or config.n_embd, eps=config.norm_eps)
    return nn.LayerNorm(dim or config.n_embd, eps=config.norm_eps, bias=config.bias)


class Block(nn.Module):

    def __init__(self, config, opts, layer=0):
        super().__init__()
        self.ln_1 = norm(config)  # the order of the modules is the order of their random initialisation: keep it
        self.attn = CausalSelfAttention(config, opts, layer)
        self.ln_2 = norm(config)
        self.mlp = MLP(config)
        self.parallel = config.parallel_residual
        # Gemma 2/3 also normalise each branch's output before the residual add
        self.post_attn = norm(config) if config.post_norm else nn.Identity()
        self.post_mlp = norm(config) if config.post_norm else nn.Identity()

    def forward(self, x, pe, layer, pos, cache=None, last_k=0):
        attn = self.post_attn(self.attn(self.ln_1(x), pe, layer, pos, cache, last_k))
        x = x[:, -last_k:] if last_k else x
        if self.parallel:  # GPT-NeoX: both branches read the block's input
            return x + attn + self.post_mlp(self.mlp(self.ln_2(x)))
        x = x + attn  # the branch is freed before the MLP runs
        return x + self.post_mlp(self.mlp(self.ln_2(x)))


@contextmanager
def no_random_init():
    """Modules built inside keep their parameters as allocated instead of drawing random ones, which from_pretrained
    would overwrite at once (load_state_dict is strict: every parameter comes from the file)."""
    names = ('normal_', 'uniform_', 'kaiming_uniform_', 'trunc_normal_', 'zeros_', 'ones_')
    saved = {name: getattr(nn.init, name) for name in names}
    try:
        for name in names:
            setattr(nn.init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, f in saved.items():
            setattr(nn.init, name, f)


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.attn_opts = AttnOptions()
        self.pe = POSITIONAL_ENCODINGS[config.pe](config)
        if config.rope_scaling and 'rotary' not in self.pe.kinds:  # it would change nothing, under a +yarn4 label
            raise ValueError(f"rope_scaling={config.rope_scaling!r} needs a rotary encoding; pe={config.pe!r} has none")
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd), drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, self.attn_opts, i) for i in range(config.n_layer)]), ln_f=norm(config)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie_head:
            self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):  # GPT-2: scale residual projections by depth
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            torch.nn.init.zeros_(module.bias)

    @classmethod
    def from_pretrained(cls, path, **overrides):
        """A checkpoint of a pretrained.FAMILIES family (folder, .gguf file, alias or hub name) as our GPT in eval mode;
        overrides set GPTConfig fields. pretrained_info: family, L_tr, bos/eos ids, source."""
        from lexgpt import pretrained  # only here: the model definition needs none of the checkpoint readers
        args, state, info = pretrained.load(path, GPTConfig.__dataclass_fields__, **overrides)
        with no_random_init():
            model = cls(GPTConfig(**args))
        model.load_state_dict(state)  # strict: every parameter the model has is overwritten here
        model.pretrained_info = info
        return model.eval()

    def get_num_params(self):
        return sum(p.numel() for p in self.parameters())

    def n_layers(self, T):
        """Attention layers that run on a length-T input (RegularGPT's grows with T)."""
        return self.config.n_layer

    def forward(self, idx, targets=None, cache=None, reduction='mean', last_k=0):
        """Logits for every position when targets are given (with the loss), else for the last one only.
        reduction='none' returns the per-token loss [B, T]. With a KVCache, idx continues the cached text.
        last_k > 0: only the last k positions go through the last block and the head (targets [B, k]): the last
        block's output at a position feeds only that position's logits, so its other queries would be wasted."""
        if cache is None:
            pos, state = self.pe.positions(idx, 0, None)
        else:
            pos, state = self.pe.positions(idx, cache.first(), cache.pe_state, cached=True)
        x = self.transformer.drop(self.embed(idx, pos))
        if cache is not None:
            pos = cache.add_positions(pos, state)
        for layer, block in enumerate(self.transformer.h):
            x = block(x, self.pe, layer, pos, cache, last_k if layer == self.config.n_layer - 1 else 0)
        if cache is not None:
            cache.trim()
        return self.output(x, targets, reduction)

    def embed(self, idx, pos):  # token embeddings (times embd_mult, in their dtype as Gemma's) + an absolute encoding's
        x, e = self.transformer.wte(idx), self.pe.embed(pos)
        x = x if self.config.embd_mult == 1.0 else x * torch.tensor(self.config.embd_mult, dtype=x.dtype)
        return x if e is None else x + e

    def output(self, x, targets, reduction):
        """Final norm, head and loss, shared with RegularGPT. ignore_index=-1 skips a target."""
        x = self.transformer.ln_f(x)
        if targets is None:
            return self.lm_head(x[:, [-1], :]), None
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=-1,
                               reduction=reduction)
        return logits, (loss.view(targets.shape) if reduction == 'none' else loss)

    @contextmanager
    def attention(self, **kw):
        """`with model.attention(key_window=256, n_starting=10):` AttnOptions for the block, restored on exit (or
        raise)."""
        names = [f.name for f in fields(AttnOptions)]
        if set(kw) - set(names):
            raise ValueError(f"unknown attention option(s) {sorted(set(kw) - set(names))}; allowed: {names}")
        if kw.get('route', 'auto') not in ROUTE_CHOICES:
            raise ValueError(f"route={kw['route']!r}; allowed: {', '.join(map(repr, ROUTE_CHOICES))}")
        before = replace(self.attn_opts)
        vars(self.attn_opts).update(kw)
        try:
            yield self
        finally:
            vars(self.attn_opts).update(vars(before))

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        # decay matrices of Linear/Embedding layers, not positional parameters (decay pulls them to "no position")
        params = {n: p for n, p in self.named_parameters() if p.requires_grad}
        decay = [p for n, p in params.items() if p.dim() >= 2 and not n.startswith('pe.')]
        no_decay = [p for n, p in params.items() if p.dim() < 2 or n.startswith('pe.')]
        groups = [{'params': decay, 'weight_decay': weight_decay}, {'params': no_decay, 'weight_decay': 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=(device_type == 'cuda'))

    def estimate_mfu(self, fwdbwd_per_iter, dt, peak_flops=312e12):
        """Model flops utilisation against `peak_flops` (default: A100 bf16), PaLM appendix B counting."""
        L, H, Q, T = self.config.n_layer, self.config.n_head, self.config.head_size, self.config.block_size
        flops_per_token = 6 * self.get_num_params() + 12 * L * H * Q * T
        return flops_per_token * T * fwdbwd_per_iter / dt / peak_flops

    @staticmethod
    def sample_next(logits, temperature, top_k):
        """One token per row from the last position's logits [B, V], shared by GPT and RegularGPT; temperature 0:
        the most likely one (the first on a tie), as transformers' greedy generate, with no random draw."""
        if temperature == 0:
            return logits.argmax(-1, keepdim=True)
        logits = logits / max(temperature, 1e-8)
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float('inf')
        return torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, cache_window=0, n_starting=0):
        """Sample continuations with a KV cache. cache_window > 0 bounds memory: every new token sees the
        first n_starting tokens and the last cache_window ones (thesis 4.9.2; LM-Infinite)."""
        cache = KVCache(cache_window=cache_window, n_starting=n_starting)
        logits, _ = self(idx, cache=cache, last_k=1)  # the prompt: only its last position's logits are needed
        for _ in range(max_new_tokens):
            nxt = self.sample_next(logits[:, -1, :], temperature, top_k)
            idx = torch.cat((idx, nxt), dim=1)
            logits, _ = self(nxt, cache=cache)
        return idx


# --------------------------------------------------------------------------------------------
# RegularGPT (thesis ch. 6): K shared blocks reused for K * ceil(log_C T) layers, sliding-dilated
# attention (eq. 6.1, through pe='regular') and no absolute positions: the r_i are the only position signal.
# Three interchangeable forward implementations (config.regular_impl): plain, the reference, where every layer is an
# ordinary Block and the T x T mask comes from Regular.bias; gather and reduce, in regular_fast.py.
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
    config.n_layer is ignored (the model holds K blocks); the depth for length T is self.n_layers(T). Of the
    attention options, 'plain' honours all; 'gather' and 'reduce' honour temperature and the hook, and refuse
    the others."""

    def __init__(self, config):
        if config.pe != 'regular':
            raise ValueError(f"RegularGPT needs pe='regular', got pe={config.pe!r}")
        super().__init__(GPTConfig(**{**vars(config), 'n_layer': config.thickness}))

    def n_layers(self, T):
        return self.config.thickness * n_levels(T, self.config.chunk_size)

    def layers(self, T):
        """(depth, block) pairs for an input of length T: SA^(l*K+k) = SA^(k), FFN likewise (thesis 6.2.2)."""
        K = self.config.thickness
        return ((d, self.transformer.h[d % K]) for d in range(self.n_layers(T)))

    def forward(self, idx, targets=None, cache=None, reduction='mean', last_k=0, regular_impl=None, collect=None):
        """As GPT.forward (last_k: only the last k positions reach the head); regular_impl overrides config.regular_impl
        for this call. 'reduce' yields the final position only, so its targets (if any) are [B, 1]. collect: a list
        that receives every layer's output."""
        impl = regular_impl or self.config.regular_impl
        if impl not in REGULAR_IMPLS:
            raise ValueError(f"unknown regular_impl={impl!r}; choose one of: {', '.join(REGULAR_IMPLS)}")
        if cache is not None:
            raise ValueError("RegularGPT has no KV cache: its depth grows with the input, so each step recomputes "
                             "the prefix")
        o = self.attn_opts
        if o.route == 'reference':
            impl = 'plain'
        if impl != 'plain' and (o.key_window or o.ceiling or o.topk):
            raise ValueError(f"RegularGPT regular_impl={impl!r} honours the temperature and the hook only; for "
                             f"key_window, ceiling or topk use regular_impl='plain'")
        B, T = idx.shape
        x = self.transformer.drop(self.transformer.wte(idx))  # no absolute positions (thesis 6.2)
        keep = collect.append if collect is not None else (lambda _: None)
        if impl == 'plain':
            pos, _ = self.pe.positions(idx, 0, None)
            for depth, block in self.layers(T):
                x = block(x, self.pe, depth, pos)
                keep(x)
        else:  # the same layers, computing only the keys (gather) or queries (reduce) that matter
            x = (regular_fast.regular_gather if impl == 'gather' else regular_fast.regular_reduce)(self, x, keep)
        if impl == 'reduce' and targets is not None and targets.shape != (B, 1):
            raise ValueError(f"regular_impl='reduce' predicts the final position only: targets must be [B, 1], "
                             f"got {list(targets.shape)}")
        return self.output(x[:, -last_k:] if last_k else x, targets, reduction)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, cache_window=0, n_starting=0):
        """Sampling without a cache (see forward); cache_window and n_starting are not supported."""
        if cache_window or n_starting:
            raise ValueError("RegularGPT.generate has no bounded cache: use cache_window=0, n_starting=0")
        for _ in range(max_new_tokens):
            logits = self(idx, regular_impl='plain' if self.config.regular_impl == 'reduce' else None)[0][:, -1, :]
            idx = torch.cat((idx, self.sample_next(logits, temperature, top_k)), dim=1)
        return idx
