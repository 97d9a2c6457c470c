"""Per-layer attention (GPTConfig.layer_attn, extend_layers, the local layers' KV cache) on its own, without
transformers: a hybrid RoPE model whose layers 0 and 2 have windows of their own (5 and 3 tokens) and RoPE bases of
their own (10 and 100), layer 1 the config's (no window, base 1000). Each layer's attention is recomputed here from
its projections by the formulas (RoPE, Su et al. 2021 sec. 3.4: pair (x_j, x_{j+D/2}) turned by m base^(-2j/D);
softmax over the keys the window allows), and a cached decode is checked against the full forward."""
import pytest
import torch

from helpers import V, tiny
from model import KVCache

T, D = 20, 8  # input length; head size (n_embd 32 / 4 heads)
LAYERS = ((5, 10.0), (0, 0.0), (3, 100.0))  # (window, base) per layer; 0: the config's (no window, rope_base)
OWN = [(5, 10.0), (0, 1000.0), (3, 100.0)]   # what each layer must use


def hybrid(**kw):
    return tiny('rope', n_layer=3, rope_base=1000.0, layer_attn=LAYERS, **kw)


def turned(x, base):
    """RoPE by hand: [B, H, T, D] with position m turned by m * base^(-2j/D) in the pair (j, j + D/2)."""
    theta = base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    ang = torch.arange(x.size(2), dtype=torch.float64)[:, None] * theta  # [T, D/2]
    x1, x2 = x.double()[..., :D // 2], x.double()[..., D // 2:]
    return torch.cat([x1 * ang.cos() - x2 * ang.sin(), x1 * ang.sin() + x2 * ang.cos()], -1)


def by_hand(attn, x, window, base):
    """One layer's output: softmax(q.k / sqrt(D)) over the keys n <= m with m - n < window (all if 0), then c_proj."""
    B, H = x.size(0), 4
    q, k, v = attn.c_attn(x).view(B, T, 3 * H, D).transpose(1, 2).double().split(H, 1)
    q, k = turned(q, base), turned(k, base)
    d = torch.arange(T)[:, None] - torch.arange(T)[None, :]
    ok = (d >= 0) & ((d < window) if window else True)
    att = (q @ k.transpose(-2, -1) / D ** 0.5).masked_fill(~ok, float('-inf')).softmax(-1)
    return attn.c_proj((att @ v.double()).transpose(1, 2).reshape(B, T, H * D).float())


@pytest.mark.parametrize('route', ['auto', 'reference'])
def test_each_layer_attends_within_its_window_at_its_own_base(route):
    """A local layer equals full attention under its window's mask, and every layer turns q and k at the base its
    config names: each layer's output against the formula, through the fast routes and the reference."""
    model = hybrid()
    x = torch.randn(2, T, 32, generator=torch.Generator().manual_seed(0))
    pos, _ = model.pe.positions(torch.zeros(2, T, dtype=torch.long), 0, None)
    with torch.no_grad(), model.attention(route=route):
        for i, (window, base) in enumerate(OWN):
            attn = model.transformer.h[i].attn
            torch.testing.assert_close(attn(x, model.pe, i, pos), by_hand(attn, x, window, base), atol=1e-5, rtol=0)


def test_the_frequencies_are_each_layers_own_and_an_extension_reaches_only_the_layers_named():
    """inv_freq [layer] = base^(-2j/D) at the layer's base; position interpolation at s = 4 (Chen et al. 2023: every
    frequency / s) on the layers extend_layers names (local: those with a window of their own), the others as they
    were; and the evaluation-time options (a window of 2 here) reach those layers alone."""
    plain = lambda base: base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    own = torch.stack([plain(b) for _, b in OWN])
    torch.testing.assert_close(hybrid().pe.inv_freq.double(), own, rtol=1e-6, atol=0)
    for which, named in (('all', {0, 1, 2}), ('global', {1}), ('local', {0, 2})):
        model = hybrid(rope_scaling='pi', rope_scale=4.0, extend_layers=which)
        want = torch.stack([plain(b) / (4.0 if i in named else 1.0) for i, (_, b) in enumerate(OWN)])
        torch.testing.assert_close(model.pe.inv_freq.double(), want, rtol=1e-6, atol=0)
        reach = {}

        def hook(layer, probs, qi, ki):  # the farthest key a query gives weight to
            d = (qi[:, None] - ki[None, :]) * (probs.amax((0, 1)) > 0)
            reach[layer] = max(reach.get(layer, 0), int(d.max()))
        with torch.no_grad(), model.attention(key_window=2, hook=hook):
            model(torch.randint(0, V, (1, T), generator=torch.Generator().manual_seed(1)))
        assert reach == {i: 1 if i in named else (w or T) - 1 for i, (w, _) in enumerate(OWN)}, which


@pytest.mark.parametrize('bound', [(0, 0), (8, 2)], ids=['whole', 'window8-sinks2'])
def test_a_cached_decode_keeps_each_local_layer_to_its_window(bound):
    """A prompt, then one token at a time: the logits equal the full forward's (under the same Λ mask where the cache
    is bounded), while each local layer holds only its window of keys and the global one everything (or its
    n_starting + cache_window)."""
    W, S = bound
    model = hybrid()
    idx = torch.randint(0, V, (2, T), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        with model.attention(key_window=W, n_starting=S):
            full = model(idx, targets=idx)[0]
        cache, prompt = KVCache(cache_window=W, n_starting=S), 6
        steps = [model(idx[:, :prompt], cache=cache)[0][:, -1]]
        for t in range(prompt, T):
            steps.append(model(idx[:, t:t + 1], cache=cache)[0][:, -1])
            held = [cache.k[i].size(2) for i in range(3)]
            assert held == [min(5, t + 1), min(t + 1, S + W) if W else t + 1, min(3, t + 1)], (t, held)
    torch.testing.assert_close(torch.stack(steps, 1), full[:, prompt - 1:], atol=1e-5, rtol=0)
