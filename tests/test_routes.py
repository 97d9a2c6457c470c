"""Every route of routes.py against the reference (reference.attention_reference) on unit-scale q, k, v, for every
encoding and attention setting, with grouped keys and values, and FlexAttention's decoding path."""
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from lexgpt import routes
import helpers
from lexgpt.reference import allowed_keys, attention_reference
from model import KVCache, POSITIONAL_ENCODINGS

ALL = [p for p in POSITIONAL_ENCODINGS if p != 'regular']
tiny = helpers.sharp
SETUPS = [dict(), dict(attn_temperature=0.7), dict(key_window=9), dict(key_window=9, n_starting=3),
          dict(key_window=16, n_starting=2, ceiling=16)]  # the last one is LM-Infinite at L_tr = 16


# ------------------------------------------------------------------------------------------------------------------
# The routes against the reference on unit-scale q, k, v: logits of order 1, so that every part of the attention
# (scale, distance tables, potential, masks) moves the output by far more than the tolerance. In the tiny models
# above attention barely moves the logits, so a wrong scale could hide under atol there.
# ------------------------------------------------------------------------------------------------------------------

# (attention options, how the model runs): 'infer' no_grad over 0..T-1, 'train' with gradients, 'decode' the last 6
# tokens after a KV cache of the first T - 6, 'bounded' one token after a Λ-shaped cache (first 2 + last 12),
# 'stream' the last 6 after a cache-relative one under LM-Infinite's ceiling, as streaming.py runs it: the 2 starting
# tokens lie more than the ceiling away from those queries
DIRECT = {
    'infer': (dict(), 'infer'), 'temperature': (dict(attn_temperature=0.7), 'infer'),
    'window': (dict(key_window=9), 'infer'),
    'lambda': (dict(key_window=9, n_starting=3), 'infer'), 'lm_infinite': (SETUPS[4], 'infer'),
    'topk': (dict(key_window=9, n_starting=2, ceiling=8, topk=3, topk_from_layer=0), 'infer'),
    'train': (dict(), 'train'), 'train_window': (dict(key_window=9, n_starting=3), 'train'),
    'train_ceiling': (dict(ceiling=8), 'train'),
    'decode': (dict(), 'decode'), 'bounded': (dict(), 'bounded'), 'stream': (dict(ceiling=12), 'stream'),
}


def captured_call(model, setup, T=70):
    """(pe, AttnCall, AttnOptions, q shape, k length, grad mode) of layer 0's attention when `model` runs `setup`."""
    opts, how = DIRECT[setup]
    torch.manual_seed(1)
    idx = torch.randint(3, 64, (2, T))
    idx[:, ::7] = 1
    seen, real = [], routes.attend

    def spy(q, k, v, pe, call, o, dropout):
        seen.append((pe, call, replace(o), q.shape, k.size(2), torch.is_grad_enabled()))
        return real(q, k, v, pe, call, o, dropout)
    routes.attend = spy
    try:
        with model.attention(tile=16, **opts):
            if how == 'train':
                model.train()(idx, targets=idx)
                model.eval()
            elif how == 'infer':
                with torch.no_grad():
                    model(idx)
            else:
                with torch.no_grad():
                    cache = KVCache() if how == 'decode' else KVCache(12, 2, relative=how == 'stream')
                    model(idx[:, :T - 6], cache=cache)
                    seen.clear()
                    model(idx[:, T - 6:T - 5] if how == 'bounded' else idx[:, T - 6:], cache=cache)
    finally:
        routes.attend = real
    return seen[0]


def unit_qkv(shape, Tk, grad=False, dtype=torch.float32):
    g = torch.Generator().manual_seed(2)
    B, H, Tq, D = shape
    q = torch.randn(B, H, Tq, D, generator=g, dtype=dtype)
    k, v = (torch.randn(B, H, Tk, D, generator=g, dtype=dtype) for _ in range(2))
    return [x.requires_grad_(grad) for x in (q, k, v)]


def direct_pair(pe_name, setup):
    """Fast and reference attention of one captured call (for training also the gradients into q, k, v and the
    positional parameters: FoX's reach them through its potential) as lists of named parts, and the fast route."""
    model = tiny(pe_name)
    pe, call, o, shape, Tk, grad = captured_call(model, setup)
    q, k, v = unit_qkv(shape, Tk, grad)
    w = torch.randn(q.shape, generator=torch.Generator().manual_seed(3))
    names = ['out'] + (['q', 'k', 'v'] + [n for n, _ in pe.named_parameters()] if grad else [])
    outs = []
    with torch.set_grad_enabled(grad):
        for fn in (lambda *a: routes.attend(*a, 0.0), attention_reference):
            y = fn(q, k, v, pe, call, o)
            g = torch.autograd.grad((y * w).sum(), [q, k, v] + list(pe.parameters()), allow_unused=True,
                                    materialize_grads=True, retain_graph=True) if grad else []
            outs.append([y.detach()] + list(g))
        taken = routes.choose(q, pe, call, o)
    return names, outs, taken


@pytest.mark.parametrize('pe', ALL)
@pytest.mark.parametrize('setup', list(DIRECT))
def test_every_route_equals_the_reference_on_unit_scale_inputs(pe, setup):
    names, (fast, ref), taken = direct_pair(pe, setup)
    assert ref[0].abs().max() > 0.5  # order-1 outputs, so 1e-5 is a tight tolerance
    for name, a, b in zip(names, fast, ref):
        # relative to the part's size; a parameter's gradient sums over every logit, so 1e-4 there
        tol = (1e-5 if name in ('out', 'q', 'k', 'v') else 1e-4) * max(1.0, float(b.abs().max()))
        assert (a - b).abs().max() <= tol, (taken, name, (a - b).abs().max())


def test_a_rotary_stream_scores_its_far_keys_in_the_blocks_route():
    """The 'stream' setup exercises blocks' far-key branch, so that the equality tests above cover it: a rotary
    model's call there takes blocks, not explicit, and its queries see the 2 starting tokens, and only those, further
    than the ceiling."""
    pe, call, o, shape, Tk, grad = captured_call(tiny('rope'), 'stream')
    d = call.qrel[:, :, None] - call.krel[:, None, :]
    far = allowed_keys(call.qi, call.ki, call.mask_rules) & (d > o.ceiling)
    with torch.no_grad():
        assert routes.choose(torch.zeros(shape), pe, call, o) == 'blocks' and not grad
    assert far.any() and far.any(1).any(0).sum() == 2, far.any(1).any(0)  # the 2 starting tokens, nothing else


@pytest.mark.parametrize('setup,T', [(s, 70) for s in ('infer', 'window', 'topk', 'train', 'decode', 'bounded',
                                                         'stream')] + [('infer', 4)])
def test_grouped_keys_and_values_in_every_route(setup, T):
    """Grouped-query attention: given H/2 key/value heads, every route (causal SDPA with enable_gqa, tiled, explicit,
    blocks) equals the reference given each query head h its own copy of key/value head h // 2 (Llama's order); also
    at T = H = 4 tokens, where a length read for the heads count would pass as equal."""
    model = tiny('rope')
    pe, call, o, shape, Tk, grad = captured_call(model, setup, T)
    q, k, v = unit_qkv(shape, Tk)
    H = q.size(1)
    kg, vg = k[:, :H // 2], v[:, :H // 2]
    own = torch.arange(H) // 2
    with torch.set_grad_enabled(grad):
        got = routes.attend(q, kg, vg, pe, call, o, 0.0)
        want = attention_reference(q, kg[:, own], vg[:, own], pe, call, o)
    assert want.abs().max() > 0.5 and (got - want).abs().max() <= 1e-5, (routes.choose(q, pe, call, o), setup)


@pytest.mark.filterwarnings('ignore:flex_attention called without torch.compile')
@pytest.mark.parametrize('pe', ['rope', 'alibi', 'kerple_log', 'gauss_wht1', 'kerple_biaswht', 'fox', 'bipe_alibi'])
def test_flex_route_decoding_equals_the_reference_on_unit_scale_inputs(pe, monkeypatch):
    """The GPU route's score_mod and mask_mod (eager FlexAttention on CPU) where the model-level test above does not
    reach: a query after a Λ-shaped KV cache, on unit-scale inputs; one encoding for each part of score_mod (none,
    ALiBi's closed-form bias, a distance table read past the cached keys' count, a weight, both, FoX's potential, BiPE's
    per-sequence positions)."""
    model = tiny(pe, n_embd=64)  # head dimension 16, as a GPU's flex needs
    pe_, call, o, shape, Tk, _ = captured_call(model, 'bounded', T=40)
    q, k, v = unit_qkv(shape, Tk)
    real_flex = routes.flex_attend
    monkeypatch.setattr(routes, 'flex_attend', lambda *a: real_flex(*a, compiled=False))
    with torch.no_grad():
        got = routes.flex_route(q, k, v, pe_, call, o, 0.0)
        want = attention_reference(q, k, v, pe_, call, o)
    assert want.abs().max() > 0.5 and torch.allclose(got, want, atol=1e-5, rtol=1e-5), (got - want).abs().max()
    monkeypatch.setattr(torch.Tensor, 'is_cuda', property(lambda self: True))  # and a GPU's dispatcher takes it
    assert routes.choose(q, pe_, call, o) == 'flex'


def test_a_gpu_sends_head_dimensions_under_16_past_flex(monkeypatch):
    """FlexAttention's GPU kernel refuses head dimensions under 16 when it compiles (torch 2.11 on an H100 raised
    'NYI' for the 8 of the tiny test models), so a GPU's dispatcher sends such calls to another route."""
    taken = {}
    for n_embd in (32, 64):  # 4 heads: dimension 8 and 16
        pe_, call, o, shape, _, _ = captured_call(tiny('alibi', n_embd=n_embd), 'bounded', T=40)
        with monkeypatch.context() as m:
            m.setattr(torch.Tensor, 'is_cuda', property(lambda self: True))
            taken[n_embd] = routes.choose(torch.randn(shape), pe_, call, o)
    assert taken[64] == 'flex' and taken[32] not in ('flex', 'causal'), taken


@pytest.mark.parametrize('pe', ['t5', 'kerple_log', 'kerple_power', 'kerple_3log', 'gauss_bias3', 'sandwich'])
@pytest.mark.parametrize('setup', ['train', 'train_window', 'train_ceiling'])
def test_dense_route_equals_the_reference_in_float64_gradients_included(pe, setup):
    """Training with a distance table at positions 0..T-1 takes the dense route (the [H, T, T] bias as SDPA's mask,
    its gradient summed back into the table along the diagonals); in float64 it equals the reference in the output
    and in the gradients of q, k, v and of every parameter of the encoding, to rounding."""
    model = tiny(pe).double()
    pe_, call, o, shape, Tk, grad = captured_call(model, setup)
    q, k, v = unit_qkv(shape, Tk, grad, torch.float64)
    w = torch.randn(q.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    params = list(pe_.parameters())
    assert grad and routes.choose(q, pe_, call, o) == 'dense'
    got, want = ([y.detach()] + list(torch.autograd.grad((y * w).sum(), [q, k, v] + params))
                 for y in (routes.attend(q, k, v, pe_, call, o, 0.0), attention_reference(q, k, v, pe_, call, o)))
    assert len(got) == 4 + len(params) and want[0].abs().max() > 0.5
    for a, b in zip(got, want):
        assert (a - b).abs().max() <= 1e-12 * max(1.0, float(b.abs().max())), (a - b).abs().max()


def test_toeplitz_lays_a_table_along_the_diagonals():
    """routes.toeplitz by hand: entry [h, m, n] is tab[h, m - n] below and on the diagonal, 0 above it."""
    tab = torch.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    lower = torch.tensor([[1.0, 0, 0], [2.0, 1.0, 0], [3.0, 2.0, 1.0]])
    want = torch.stack([lower, 10 * lower])
    assert torch.equal(routes.toeplitz(tab, 3), want)
    assert torch.equal(routes.toeplitz(tab, 2), want[:, :2, :2])  # the first T distances of a longer table


@pytest.mark.filterwarnings('ignore:flex_attention called without torch.compile')
def test_alibi_flex_score_mod_is_its_closed_form(monkeypatch):
    """FlexAttention's score_mod for ALiBi is -slope_h * (m - n) (eq. 4.3) from the slopes alone, not a gather from a
    distance table: flex_route hands flex_mods no table, and the score_mod gives the hand-computed bias, slopes
    2^(-8(h+1)/H) for H = 4 heads, at a few (h, m, n), over a temperature of 0.5."""
    model = tiny('alibi', n_embd=64)
    pe_, call, o, shape, Tk, _ = captured_call(model, 'infer', T=40)
    o = replace(o, attn_temperature=0.5)
    got, real_mods = [], routes.flex_mods
    monkeypatch.setattr(routes, 'flex_mods', lambda *a: got.append(a) or real_mods(*a))
    monkeypatch.setattr(routes, 'flex_attend', lambda q, k, v, scale, score_mod, mask_mod: score_mod)
    score_mod = routes.flex_route(*unit_qkv(shape, Tk), pe_, call, o, 0.0)
    bias_tab, weight_tab = got[0][5:7]
    assert bias_tab is None and weight_tab is None
    for h, m, n in ((0, 5, 5), (0, 9, 2), (2, 30, 1), (3, 39, 0)):
        bias = score_mod(torch.tensor(0.0), torch.tensor(0), torch.tensor(h), torch.tensor(m), torch.tensor(n))
        assert float(bias) == pytest.approx(-2.0 ** (-8 * (h + 1) / 4) * (m - n) / 0.5, rel=1e-6), (h, m, n)


def test_a_gpu_trains_learned_tables_dense_and_the_rest_through_flex(monkeypatch):
    """The rule between dense and flex for a training call on a GPU (routes' docstring): dense where a parameter of
    the bias learns (KERPLE, T5), flex for a fixed table (Sandwich) and a potential (ALiBi); AttnOptions.route says
    which one a call that both take prefers, so that bench.py measures either; a call that needs no gradient keeps
    flex."""
    taken = {}
    for pe in ('kerple_log', 't5', 'sandwich', 'alibi'):
        pe_, call, o, shape, _, _ = captured_call(tiny(pe, n_embd=64), 'train', T=40)
        with monkeypatch.context() as m:
            m.setattr(torch.Tensor, 'is_cuda', property(lambda self: True))
            for prefer in ('auto', 'flex', 'dense'):
                taken[pe, prefer] = routes.choose(torch.randn(shape), pe_, call, replace(o, route=prefer))
            with torch.no_grad():
                taken[pe, 'no_grad'] = routes.choose(torch.randn(shape), pe_, call, o)
    want = {('kerple_log', 'auto'): 'dense', ('t5', 'auto'): 'dense', ('sandwich', 'auto'): 'flex',
            ('sandwich', 'dense'): 'dense', ('alibi', 'dense'): 'flex'}  # ALiBi's potential has no dense route
    for (pe, prefer), name in taken.items():
        assert name == want.get((pe, prefer), 'dense' if prefer == 'dense' else 'flex'), (pe, prefer, name)


@pytest.mark.parametrize('rules, T', [([(0, 512)], 32768), ([(4, 512)], 32768), ([(4, 512)], 1100),
                                      ([(10, 32768)], 65536), ([], 4096), ([(4096, 512)], 32768)])
def test_query_blocks_of_a_window_are_few_and_within_the_bound(rules, T):
    # Gemma 3's local layers at 32k under a gradient (the ERF): a block's keys are copied out and kept for the
    # backward, so blocks sized by T (32 rows beside 544 keys) kept 17 copies of the keys. Sized by the window, a block
    # still holds at most block_elems logits, where key_range gathers the window and where it takes every key.
    # Many sinks: 4,096 + a window of 512 sized by the window alone would give 512 rows x 5,119 keys, 2.5x the bound
    B, H, elems = 1, 4, 1 << 22
    q, k = torch.empty(B, H, T, 0), torch.empty(B, H, T, 0)
    pos = torch.arange(T)
    call = SimpleNamespace(qi=pos, ki=pos, mask_rules=rules)
    o = SimpleNamespace(block_elems=elems, topk=0)
    blocks = [(len(rows), T if isinstance(keys, slice) else len(keys))
              for rows, keys in routes.query_blocks(q, k, call, o)]
    assert sum(n for n, _ in blocks) == T
    assert all(B * H * n * keys <= elems for n, keys in blocks), max(n * keys for n, keys in blocks)
    if rules == [(0, 512)]:  # sized by T: 1024 blocks of 32 rows; by the window: 64 of 512, 1023 keys at most
        assert len(blocks) == 64 and max(keys for _, keys in blocks) == 1023, blocks[:3]
