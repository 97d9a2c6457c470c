import math
from pathlib import Path

import numpy as np
import pytest
import torch

import helpers
from model import GPT, GPTConfig, KVCache, POSITIONAL_ENCODINGS, T5Bias, alibi_slopes, sandwich_ratios, sinusoid

torch.manual_seed(0)
ALL = list(POSITIONAL_ENCODINGS)
ABSOLUTE = {'learned', 'sinusoidal'}          # positions enter only through the embeddings
RELATIVE = [p for p in ALL if p not in ABSOLUTE]
# the encodings with parameters of their own: read from the modules, so a new learnable encoding is tested too
LEARNABLE = [p for p in ALL if any(True for _ in helpers.tiny(p, build=GPT).pe.parameters())]
REQUIRED = ['none', 'learned', 'sinusoidal', 'rope', 't5', 'alibi', 'kerple_power', 'kerple_log',
            'kerple_3log', 'kerple_biaswht', 'sandwich', 'sandwich_smoothed', 'bipe_rope', 'bipe_alibi']


def tiny(pe, **kw):
    return helpers.tiny(pe, build=GPT, **kw)


def all_logits(model, idx):
    return model(idx, targets=idx)[0]


def test_registry_has_every_required_name_and_rejects_unknown():
    assert set(REQUIRED) <= set(POSITIONAL_ENCODINGS)
    with pytest.raises(ValueError, match="unknown pe='bogus'.*alibi.*kerple_log"):
        GPT(GPTConfig(pe='bogus'))


@pytest.mark.parametrize('kw, message', [
    (dict(block_size=0), 'block_size=0 must be a positive integer'),
    (dict(n_head=0), 'n_head=0 must be a positive integer'),
    (dict(n_embd=30, n_head=4), 'n_embd=30 must be divisible by n_head=4'),
    (dict(dropout=1.0), r'dropout=1.0 must lie in \[0, 1\)'),
    (dict(window=-1), 'window=-1 must be >= 0'),
    (dict(regular_impl='fast'), "unknown regular_impl='fast'; choose one of: plain, gather, reduce"),
    (dict(pe='regular', chunk_size=1), 'chunk_size >= 2'),
    (dict(pe='rope', n_embd=12, n_head=4), 'head size n_embd/n_head=3 must be even'),
])
def test_config_mistakes_are_one_line_errors_naming_the_value(kw, message):
    with pytest.raises(ValueError, match=message) as e:
        GPT(GPTConfig(**kw))
    assert '\n' not in str(e.value)


def test_lists_derived_from_the_registry_are_not_empty():
    assert {'t5', 'kerple_log', 'gauss_wht1', 'regular', 'fire', 'fox', 'cope'} <= set(LEARNABLE)
    assert not {'none', 'alibi', 'rope', 'sinusoidal', 'sandwich'} & set(LEARNABLE)


@pytest.mark.parametrize('pe', ALL)
def test_every_encoding_declares_exactly_the_kinds_it_implements(pe):
    """Both ways: a declared kind is implemented, and an implemented part is declared (the attention routes read
    only the declarations)."""
    enc = tiny(pe, n_layer=8).pe  # 8 layers: RegularGPT's dilation reaches its masked distances below 20
    assert set(enc.kinds) <= {'absolute', 'rotary', 'bias', 'weight', 'linear', 'mask', 'query', 'potential', 'content'}
    d = torch.arange(20).float()
    pos = enc.positions(torch.tensor([[5, 1, 5, 2, 5]]), 0, None)[0]  # 1, 2: BiPE separators
    x = torch.randn(1, 4, 5, 8)
    bias = enc.bias(3, d)
    implemented = {
        'absolute': enc.embed(pos) is not None,
        'rotary': not torch.equal(enc.rotate(x, pos.rel), x),
        'bias': bias is not None,
        'weight': enc.weight(0, d) is not None,
        'linear': enc.slope(0) is not None,
        'mask': bias is not None and bool(torch.isinf(bias).any()),
        # a query-dependent bias differs between two queries at the same distances
        'query': bias is not None and not torch.equal(enc.bias(0, d, torch.tensor(10.0)), enc.bias(0, d, torch.tensor(1000.0))),
        'potential': enc.potential(0, torch.randn(1, 5, 32)) is not None,
        'content': enc.content(0, x, torch.randn(1, 4, 5, 5)) is not None,
    }
    assert {k for k, v in implemented.items() if v} == set(enc.kinds)
    if 'linear' in enc.kinds:  # the slope is the bias: -slope * d
        assert torch.allclose(enc.bias(0, d), -enc.slope(0)[:, None] * d)
    if 'potential' in enc.kinds:
        assert enc.potential(0, torch.randn(1, 5, 32)).shape == (1, 4, 5)


@pytest.mark.parametrize('pe', ALL)
def test_causality(pe):
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 16))
    t = 9
    changed = idx.clone()
    changed[:, t] = 1  # a BiPE separator as well, so segment positions after t change too
    with torch.no_grad():
        a, b = all_logits(model, idx), all_logits(model, changed)
    assert torch.allclose(a[:, :t], b[:, :t], atol=1e-6)
    assert not torch.allclose(a[:, t:], b[:, t:], atol=1e-4)


@pytest.mark.parametrize('pe', RELATIVE + ['sinusoidal'])
def test_longer_than_training_length(pe):
    model = tiny(pe)
    with torch.no_grad():
        logits = all_logits(model, torch.randint(0, 64, (1, 64)))
    assert logits.shape == (1, 64, 64) and torch.isfinite(logits).all()


def test_learned_refuses_positions_past_block_size():
    model = tiny('learned')
    all_logits(model, torch.randint(0, 64, (1, 16)))
    with pytest.raises(ValueError, match='positions 0..15 only, got position 16'):
        all_logits(model, torch.randint(0, 64, (1, 17)))


@pytest.mark.parametrize('pe', ALL)
def test_kv_cache_decoding_equals_full_forward(pe):
    model = tiny(pe)
    T = 16 if pe == 'learned' else 40
    idx = torch.randint(0, 64, (2, T))
    idx[:, 5] = 1
    idx[:, 13] = 2
    with torch.no_grad():
        full = all_logits(model, idx)
        cache = KVCache()
        steps = [model(idx[:, :7], cache=cache)[0]]  # a prompt, then one token at a time, then a chunk
        steps += [model(idx[:, t:t + 1], cache=cache)[0] for t in range(7, 12)]
        chunk = model(idx[:, 12:], targets=idx[:, 12:], cache=cache)[0]
    assert torch.allclose(steps[0][:, -1], full[:, 6], atol=1e-5)
    for j, t in enumerate(range(7, 12)):
        assert torch.allclose(steps[j + 1][:, -1], full[:, t], atol=1e-5)
    assert torch.allclose(chunk, full[:, 12:], atol=1e-5)


@pytest.mark.parametrize('pe', ['alibi', 'rope', 'kerple_log', 'bipe_rope'])
def test_bounded_cache_equals_lambda_masked_forward(pe):
    model = tiny(pe)
    idx = torch.randint(0, 64, (1, 48))
    with torch.no_grad():
        with model.attention(local=8, n_starting=3):
            full = all_logits(model, idx)
        cache = KVCache(cache_window=8, n_starting=3)
        model(idx[:, :10], cache=cache)
        for t in range(10, 48):
            out = model(idx[:, t:t + 1], cache=cache)[0]
            assert torch.allclose(out[:, -1], full[:, t], atol=1e-5)
            assert cache.k[0].size(2) <= 3 + 8
    assert cache.idx.tolist() == [0, 1, 2] + list(range(40, 48))


def test_alibi_slopes_against_hand_values():
    assert alibi_slopes(8).tolist() == [2 ** -k for k in range(1, 9)]
    # 12 heads: the 8-head slopes, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...)
    assert torch.allclose(alibi_slopes(12), torch.tensor(
        [2 ** -k for k in range(1, 9)] + [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5]))
    assert alibi_slopes(6).tolist() == [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]


def test_alibi_shift_and_equal_slopes():
    d = torch.tensor([0., 1., 10.])
    shifted = tiny('alibi', alibi_shift=2.0).pe.bias(0, d)
    assert torch.allclose(shifted[:, 1], -alibi_slopes(4) / 4)
    equal = tiny('alibi', alibi_equal_h=3.0).pe.bias(0, d)
    assert torch.allclose(equal, torch.tensor([0., -1 / 8, -10 / 8]).expand(4, 3))


def test_t5_buckets_against_hand_computed_distances():
    d = torch.tensor([0, 1, 15, 16, 20, 32, 64, 100, 127, 128, 1000]).float()
    # 16 + floor(log(d/16) / log(8) * 16): d=20 -> 1.72, 32 -> 5.33, 64 -> 10.67, 100 -> 14.10, 127 -> 15.94
    assert T5Bias.bucket(d).tolist() == [0, 1, 15, 16, 17, 21, 26, 30, 31, 31, 31]


def test_t5_bias_is_shared_across_layers():
    pe = tiny('t5').pe
    d = torch.arange(200).float()
    assert torch.equal(pe.bias(0, d), pe.bias(1, d))
    assert sum(p.numel() for p in pe.parameters()) == 4 * 32


def thesis_sandwich(heads, seq_len, bar_d=128, base=1e4):
    """The numpy reference of thesis section 4.9.5, verbatim in substance."""
    positions = np.arange(seq_len)[..., None]
    i = np.arange(bar_d // 2)
    pos_embs = np.concatenate([np.sin(positions / base ** (2 * i / bar_d)),
                               np.cos(positions / base ** (2 * i / bar_d))], axis=-1)
    sandwich = np.matmul(pos_embs, pos_embs.T)
    compression_ratio = np.arange(1, heads + 1) * 8 / heads
    return sandwich[None, ...] / compression_ratio[..., None, None]


def test_sandwich_matches_thesis_reference():
    H, T = 12, 300
    ref = thesis_sandwich(H, T)
    pe = tiny('sandwich', n_head=H, n_embd=48).pe
    table = pe.bias(0, torch.arange(T).float()).double().numpy()  # [H, T] over distances
    m, n = np.tril_indices(T)
    ours = table[:, m - n]
    # eq. 4.6 subtracts d_bar/2 before dividing by h; softmax ignores that per-head constant
    shift = (128 / 2) / (np.arange(1, H + 1) * 8 / H)
    assert np.allclose(ours, ref[:, m, n] - shift[:, None], atol=1e-3)


def test_sandwich_smoothed_is_the_log_fit_of_sandwich():
    # thesis 4.6.2: least squares of Sandwich at h = 8 against log(1+d) gives about -0.825 log(1+d) - 0.8
    d = torch.arange(8192).float()
    s = tiny('sandwich', n_head=8).pe.bias(0, d)[-1].double().numpy()  # h = 8 for the last of 8 heads
    A = np.stack([np.log1p(d.numpy()), np.ones(len(d))], 1)
    a, b = np.linalg.lstsq(A, s, rcond=None)[0]
    assert abs(a + 0.825) < 0.02 and abs(b + 0.8) < 0.02
    smooth = tiny('sandwich_smoothed', n_head=8).pe.bias(0, d)
    assert torch.allclose(smooth[-1], -0.825 * torch.log1p(d) - 0.8)
    assert torch.allclose(smooth[0], smooth[-1] * 8)  # h = 1 for the first head


# The KERPLE family (model.Kernel, per-head parameters r1, r2, ...) as its papers write it: the bias, the weight on q.k
# (None: no such part) and, per parameter, (initial low, initial high, floor, cap). Formulas: thesis eq. 3.4, 3.5.3 and
# 3.7.3; exponents are capped at 2 (exp(-|x|^p) is positive definite only for p <= 2, KERPLE Fact 5). Initial ranges
# and the floor 1e-2 are the authors' code; the Gaussian rates' U(0, 0.1) and floor 1e-4 are ours.
C1, C2, P2, G = (0, 1, 1e-2, None), (0, 2, 1e-2, None), (0, 2, 1e-2, 2), (0, 0.1, 1e-4, None)
KERNELS = {
    'kerple_power': (lambda d, r: -r[0] * d ** r[1], None, [C1, P2]),
    'kerple_log': (lambda d, r: -r[0] * torch.log(1 + r[1] * d), None, [C2, C1]),
    'kerple_3log': (lambda d, r: -r[0] * torch.log(1 + r[1] * d ** r[2]), None, [C2, C1, P2]),
    'kerple_biaswht': (lambda d, r: -r[0] * d ** r[1], lambda d, r: torch.exp(-r[2] * d ** r[3]), [C1, P2, C1, P2]),
    'gauss_bias2': (lambda d, r: r[0] * torch.exp(-r[1] * d ** 2), None, [C1, G]),
    'gauss_bias3': (lambda d, r: r[0] * torch.exp(-r[1] * d ** r[2]), None, [C1, G, P2]),
    'gauss_wht1': (None, lambda d, r: torch.exp(-r[0] * d ** 2), [G]),
    'gauss_wht2': (None, lambda d, r: torch.exp(-r[0] * d ** r[1]), [G, P2]),
}
KERNEL_NAMES = [p for p in ALL if getattr(POSITIONAL_ENCODINGS[p], 'ranges', None)]  # the model.Kernel encodings
# every other encoding with a bias or a weight, and the test ([file::]name) that checks it by its paper or by hand
FORMULA_TESTS = dict(alibi='test_alibi_slopes_against_hand_values', sandwich='test_sandwich_matches_thesis_reference',
                     t5='test_t5_buckets_against_hand_computed_distances',
                     bipe_alibi='test_bipe_positions_split_at_separators',
                     sandwich_smoothed='test_sandwich_smoothed_is_the_log_fit_of_sandwich',
                     regular='test_regular.py::test_bias_is_eq_6_1',
                     fire='test_later_methods.py::test_fire_bias_in_the_attention_logits_is_the_formula')


def test_every_bias_or_weight_encoding_is_checked_against_its_formula():
    for pe in ALL:
        if {'bias', 'weight'} & set(POSITIONAL_ENCODINGS[pe](GPTConfig(pe=pe)).kinds):
            assert pe in KERNELS or pe in FORMULA_TESTS, f"pe={pe!r} has a bias or weight that no test checks: " + (
                "add its row to KERNELS" if pe in KERNEL_NAMES else "name the test of its formula in FORMULA_TESTS")
    assert set(KERNELS) <= set(KERNEL_NAMES), f"KERNELS rows of no model.Kernel: {set(KERNELS) - set(KERNEL_NAMES)}"
    for test in FORMULA_TESTS.values():
        file, _, name = test.rpartition('::')
        assert f'def {name}(' in Path(__file__).with_name(file or 'test_model.py').read_text(), test


def kernel_row(pe):
    assert pe in KERNELS, (f"pe={pe!r} is a model.Kernel with no row in KERNELS (tests/test_model.py): add its "
                           f"paper's bias and weight formulas and, per parameter, (initial low, high, floor, cap)")
    return KERNELS[pe]


def set_kernel(pe, values):
    """Parameter r_(j+1) of head h becomes values[j][h], in the shared set (or layer 1's with kernel_per_layer)."""
    with torch.no_grad():
        for j, v in enumerate(values):
            getattr(pe, f'r{j + 1}')[-1] = torch.tensor(v)
    return pe


@pytest.mark.parametrize('pe', KERNEL_NAMES)
def test_kernel_is_its_papers_formula_kept_in_range(pe):
    """The bias and weight at values inside the ranges; then a straight-through clamp: a value past a bound is used
    at the bound (head 0 below every floor, head 2 above every cap or 5), yet its raw parameter gets a gradient.
    Head 0 sits just below 0, not at -1: p + (clamp(p) - p) is exact only to float32's precision at |p|."""
    bias, weight, params = kernel_row(pe)
    inside = [[0.5, 1.0, 2.0, 0.3], [1.5, 0.5, 2.0, 0.1], [0.2, 1.0, 1.5, 0.7], [2.0, 1.0, 0.5, 1.2]][:len(params)]
    used = [[floor, 0.5, cap or 5.0, 0.05] for _, _, floor, cap in params]
    for raw, r in ((inside, inside), ([[-1e-3, 0.5, 5.0, 0.05]] * len(params), used)):
        enc, d, r = set_kernel(tiny(pe).pe, raw), torch.tensor([0., 1., 2., 7., 100.]), torch.tensor(r)[..., None]
        for got, want in ((enc.bias(1, d), bias), (enc.weight(1, d), weight)):
            assert got is None if want is None else torch.allclose(got, want(d, r))
        sum(x.sum() for x in (enc.bias(1, d), enc.weight(1, d)) if x is not None).backward()
        assert all((p.grad != 0).all() for p in enc.parameters())


@pytest.mark.parametrize('pe', KERNEL_NAMES)
def test_kernel_parameters_are_shared_across_layers(pe):
    """Thesis Fig. 3.1: one set per head for all layers (a 4-layer, 4-head kerple_log has 8 parameters)."""
    per_head = len(kernel_row(pe)[2])
    shared = tiny(pe, n_layer=4).pe
    assert sum(p.numel() for p in shared.parameters()) == 4 * per_head
    d = torch.arange(50).float()
    tables = [shared.bias(layer, d) if shared.bias(layer, d) is not None else shared.weight(layer, d) for layer in range(4)]
    assert all(torch.equal(tables[0], t) for t in tables[1:])
    per_layer = tiny(pe, n_layer=4, kernel_per_layer=True).pe
    assert sum(p.numel() for p in per_layer.parameters()) == 4 * 4 * per_head


@pytest.mark.parametrize('pe', KERNEL_NAMES)
def test_kernel_initialisation_follows_the_authors_code(pe):
    """Each r_j ~ U(initial low, initial high) of its row: over 512 heads, the mean within 10% of the middle."""
    torch.manual_seed(0)
    enc = POSITIONAL_ENCODINGS[pe](GPTConfig(pe=pe, n_head=512, n_embd=1024))
    for j, (lo, hi, _, _) in enumerate(kernel_row(pe)[2]):
        p = getattr(enc, f'r{j + 1}')
        assert p.min() >= lo and p.max() <= hi and abs(p.mean().item() - (lo + hi) / 2) < 0.1 * (hi - lo), j


def test_t5_bias_is_scaled_by_sqrt_head_dim_from_a_nonzero_start():
    """GPT-NeoX (the thesis' code) adds the table after 1/sqrt(D) but multiplies it by sqrt(D) first."""
    torch.manual_seed(0)
    pe = GPT(GPTConfig(pe='t5', n_head=4, n_embd=64)).pe
    assert pe.table.std() > 0.1  # Xavier normal on a [32, 4] table: std sqrt(2/36) = 0.24
    d = torch.tensor([0., 5., 100.])
    assert torch.allclose(pe.bias(0, d), pe.table[:, [0, 5, 30]] * 4.0)  # sqrt(64 / 4) = 4


def model_with_offset_logits(model, idx, start):
    cache = KVCache()
    cache.next = start
    with torch.no_grad():
        return model(idx, cache=cache)[0]


@pytest.mark.parametrize('pe', ALL)
def test_shift_invariance_of_relative_encodings(pe):
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 12))
    idx[:, 4] = 2
    a, b = model_with_offset_logits(model, idx, 0), model_with_offset_logits(model, idx, 4)
    if pe in ABSOLUTE:  # absolute encodings see the shift; relative ones must not
        assert not torch.allclose(a, b, atol=1e-4)
    else:
        assert torch.allclose(a, b, atol=1e-4)


@pytest.mark.parametrize('pe', LEARNABLE)
def test_gradient_reaches_kernel_parameters(pe):
    model = tiny(pe)
    model.train()
    idx = torch.randint(0, 64, (2, 16))
    model(idx, targets=idx)[1].backward()
    grads = [p.grad for p in model.pe.parameters()]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)


@pytest.mark.parametrize('pe', ALL)
@pytest.mark.parametrize('window', [0, 5])
def test_fast_attention_equals_plain_reference(pe, window):
    model = tiny(pe, window=window)
    T = 16 if pe == 'learned' else 50
    idx = torch.randint(0, 64, (2, T))
    with torch.no_grad():
        with model.attention(impl='plain'):
            ref = all_logits(model, idx)
        with model.attention(block_elems=2 * 4 * 50 * 7):  # forces query blocks of 16 rows
            fast = all_logits(model, idx)
    assert torch.allclose(fast, ref, atol=1e-5)


def test_windowed_attention_bounds_the_receptive_field():
    # one layer with window w: the output at t depends on tokens t-w+1..t only (thesis 4.3.3)
    model = tiny('none', n_layer=1, window=4)
    idx = torch.randint(0, 64, (1, 20))
    changed = idx.clone()
    changed[0, 10] = (idx[0, 10] + 1) % 64
    with torch.no_grad():
        a, b = all_logits(model, idx), all_logits(model, changed)
    moved = (a - b).abs().amax(-1)[0] > 1e-6
    assert moved.nonzero().flatten().tolist() == [10, 11, 12, 13]


def test_attention_hook_temperature_and_lambda_mask():
    model = tiny('alibi')
    idx = torch.randint(0, 64, (1, 30))
    seen = {}

    def hook(layer, probs, qi, ki):
        seen[layer] = (probs.clone(), qi.clone(), ki.clone())

    with torch.no_grad():
        with model.attention(hook=hook, local=6, n_starting=2):
            all_logits(model, idx)
        p, qi, ki = seen[1]
        assert torch.allclose(p.sum(-1), torch.ones_like(p.sum(-1)))
        allowed = (qi[:, None] >= ki[None]) & ((qi[:, None] - ki[None] < 6) | (ki[None] < 2))
        assert (p[..., ~allowed] == 0).all() and (p[..., allowed] > 0).all()
        # a lower temperature sharpens attention: larger maximum probability on average
        with model.attention(hook=hook):
            all_logits(model, idx)
        base = seen[1][0].amax(-1).mean()
        with model.attention(hook=hook, temperature=0.5):
            all_logits(model, idx)
        assert seen[1][0].amax(-1).mean() > base
    with pytest.raises(ValueError, match="unknown attention option"):
        with model.attention(temprature=0.5):
            pass


@pytest.mark.parametrize('pe', ['alibi', 'rope'])
def test_distance_ceiling(pe):
    """LM-Infinite: with ceiling c, a key further than c is scored as if it were exactly c away."""
    model = tiny(pe, n_layer=1)
    idx = torch.randint(0, 64, (1, 24))
    seen = {}
    with torch.no_grad():
        with model.attention(hook=lambda l, p, qi, ki: seen.update(p=p), ceiling=5):
            all_logits(model, idx)
        with_ceiling = seen['p']
        with model.attention(hook=lambda l, p, qi, ki: seen.update(p=p)):
            all_logits(model, idx)
        plain = seen['p']
    assert torch.allclose(with_ceiling[..., :6, :], plain[..., :6, :], atol=1e-6)  # nothing is beyond 5 yet
    assert not torch.allclose(with_ceiling, plain, atol=1e-4)
    # reference: recompute the last row's logits by hand with distances clamped at 5
    attn = model.transformer.h[0].attn
    x = model.transformer.ln_1 if False else model.transformer.h[0].ln_1(model.transformer.wte(idx))
    q, k, _ = attn.c_attn(x).view(1, 24, 3, 4, 8).permute(2, 0, 3, 1, 4)
    pos = torch.arange(24)
    with torch.no_grad():
        if pe == 'rope':
            qpos = torch.full((1, 1), 23)
            kpos = torch.clamp(pos, min=23 - 5)[None]  # moving a far key closer is the same as clamping m-n
            logits = (model.pe.rotate(q[:, :, -1:], qpos) @ model.pe.rotate(k, kpos).transpose(-2, -1)) / math.sqrt(8)
        else:
            logits = (q[:, :, -1:] @ k.transpose(-2, -1)) / math.sqrt(8) \
                + model.pe.bias(0, (23 - pos).clamp(max=5).float())[None, :, None, :]
    assert torch.allclose(logits.softmax(-1)[0, :, 0], with_ceiling[0, :, -1], atol=1e-5)


def test_topk_middle_tokens_at_half_the_ceiling_from_a_layer_on():
    """LM-Infinite App. A: in layers >= h only, each head also attends to the k middle tokens (outside the Λ mask)
    of highest logit, scored as if they were L/2 away (ceiling L)."""
    model = tiny('alibi', n_layer=2)
    idx = torch.randint(0, 64, (1, 30))
    seen = {}
    with torch.no_grad():
        with model.attention(hook=lambda l, p, qi, ki: seen.update({l: p}), local=4, n_starting=1, ceiling=8, topk=3,
                             topk_from_layer=1):
            all_logits(model, idx)
            # layer 1's input: layer 0's output under the same options
            x = model.transformer.h[0](model.transformer.wte(idx), model.pe, 0, model.pe.positions(idx, 0, None)[0])
        assert (seen[0][0, :, -1] > 0).sum(-1).tolist() == [1 + 4] * 4      # below the threshold: the Λ mask only
        assert (seen[1][0, :, -1] > 0).sum(-1).tolist() == [1 + 4 + 3] * 4
        # layer 1's last row by hand: q.k/sqrt(D) + bias(min(d, 8)) on the Λ keys, bias(4) on the 3 best middle keys
        block = model.transformer.h[1]
        q, k, _ = block.attn.c_attn(block.ln_1(x)).view(1, 30, 3, 4, 8).permute(2, 0, 3, 1, 4)
        qk = (q[0, :, -1:] @ k[0].transpose(-2, -1))[:, 0] / math.sqrt(8)    # [H, 30]
        d = (29 - torch.arange(30)).float()
        lam = (d < 4) | (torch.arange(30) < 1)
        want = torch.full((4, 30), float('-inf'))
        want[:, lam] = (qk + model.pe.bias(1, d.clamp(max=8)))[:, lam]
        mid = qk.masked_fill(lam, float('-inf'))
        top = mid.topk(3, dim=-1).indices
        want.scatter_(1, top, mid.gather(1, top) + model.pe.bias(1, torch.tensor([4.0])))
    assert torch.allclose(seen[1][0, :, -1], want.softmax(-1), atol=1e-5)


def test_bipe_positions_split_at_separators():
    pe = tiny('bipe_alibi').pe
    idx = torch.tensor([[5, 6, 1, 7, 8, 2, 9, 9, 9]])  # 1 and 2 end segments
    pos, state = pe.positions(idx, 0, None)
    assert pos.rel.tolist() == [[0, 0, 0, 1, 1, 1, 2, 2, 2]]
    assert pos.abs.tolist() == [[0, 1, 2, 0, 1, 2, 0, 1, 2]]
    assert pe.bias(0, torch.tensor([0., 2.]))[0].tolist() == [0.0, -0.5]  # ALiBi's, slope 2^-2 for head 0 of 4
    # continuing from a state gives the positions of the whole sequence
    first, st = pe.positions(idx[:, :5], 0, None)
    rest, _ = pe.positions(idx[:, 5:], 5, st)
    assert rest.rel.tolist() == [[1, 2, 2, 2]] and rest.abs.tolist() == [[2, 0, 1, 2]]


def test_generate_far_beyond_block_size_with_bounded_cache():
    model = tiny('alibi')
    out = model.generate(torch.zeros(1, 3, dtype=torch.long), 100, cache_window=16, n_starting=2)
    assert out.shape == (1, 103)
    with pytest.raises(ValueError, match='positions 0..15 only'):
        tiny('learned').generate(torch.zeros(1, 3, dtype=torch.long), 20)


def lambda_logits(model, idx, local, n_starting):
    """The last position's logits of a full forward under the Λ mask: what a bounded cache must reproduce."""
    with torch.no_grad(), model.attention(local=local, n_starting=n_starting, impl='plain'):
        return all_logits(model, idx)[:, -1]


def talkative(pe):
    """A tiny GPT whose greedy continuation keeps changing token: an untied head (a tied one repeats the last token)
    and attention 4x its initial size."""
    model = helpers.tiny(pe, strong=True, build=GPT, tie_head=False)
    with torch.no_grad():
        for block in model.transformer.h:
            block.attn.c_attn.weight.mul_(4.0)
            block.attn.c_proj.weight.mul_(4.0)
    torch.manual_seed(0)
    return model


@pytest.mark.parametrize('pe', ['alibi', 'rope', 'fox'])
def test_greedy_generation_equals_argmax_of_lambda_masked_forwards(pe):
    """top_k=1 with a bounded cache (first 2 + last 8 tokens) picks, at every step, the argmax of a full forward of
    the text so far under the Λ mask: the cache holds the right tokens at the right positions, starting tokens too."""
    model = talkative(pe)
    prompt = torch.randint(3, 64, (2, 5))
    out = model.generate(prompt, 30, top_k=1, cache_window=8, n_starting=2)
    assert torch.equal(out[:, :5], prompt)
    assert (out[:, 6:] != out[:, 5:-1]).sum() >= 10  # not one token repeated, which would hide a wrong token fed back
    for t in range(5, 35):
        assert torch.equal(out[:, t], lambda_logits(model, out[:, :t], 8, 2).argmax(-1)), t


def test_sampled_tokens_stay_in_the_top_k():
    model = talkative('alibi')
    out = model.generate(torch.randint(3, 64, (4, 3)), 25, temperature=2.0, top_k=3, cache_window=8, n_starting=2)
    ranks = []
    for t in range(3, 28):
        order = lambda_logits(model, out[:, :t], 8, 2).argsort(-1, descending=True)
        ranks += (order == out[:, t:t + 1]).float().argmax(-1).tolist()
    assert max(ranks) <= 2 and min(ranks) == 0 and len(set(ranks)) == 3  # inside the top 3, and not only the top 1
    logits = torch.tensor([[0.0, 3.0, 1.0, 2.9, -1.0]]).repeat(2000, 1)
    drawn = GPT.sample_next(logits, 1.0, 2).flatten()
    share = (drawn == 1).float().mean()  # tokens 1 and 3 only, in the ratio e^3 : e^2.9
    assert set(drawn.tolist()) == {1, 3} and abs(share - 1 / (1 + math.exp(-0.1))) < 0.04


def test_sinusoid_against_hand_values():
    """Eq. 4.5 with d = 4: p[m] = (sin m, cos m, sin(m / 100), cos(m / 100)), base 10000^(2/4) = 100."""
    got = sinusoid(torch.tensor([0, 1, 3, 250]), 4).double()
    for row, m in zip(got, (0, 1, 3, 250)):
        want = torch.tensor([math.sin(m), math.cos(m), math.sin(m / 100), math.cos(m / 100)], dtype=torch.float64)
        assert torch.allclose(row, want, atol=1e-5), m
    assert got[1].tolist() == pytest.approx([0.841471, 0.540302, 0.0099998, 0.99995], abs=1e-6)


def test_rope_logit_is_the_closed_form_at_distance_m_minus_n():
    """Su et al. eq. 16: q and k rotated at m and n score as the closed form at distance m - n, theta_i =
    10000^(-2i/D); the same pairs far from 0 give the same value (relative)."""
    pe = tiny('rope', n_head=1, n_embd=8).pe
    theta = 10000.0 ** (-torch.arange(0, 8, 2).double() / 8)
    g = torch.Generator().manual_seed(0)
    for m, n in [(0, 0), (5, 2), (9, 0), (3, 7), (1003, 1000)]:
        q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
        rq = pe.rotate(q.view(1, 1, 1, 8), torch.tensor([[m]]))
        rk = pe.rotate(k.view(1, 1, 1, 8), torch.tensor([[n]]), key=True)
        assert float((rq * rk).sum()) == pytest.approx(helpers.rotary_closed_form(q, k, m, n, theta), abs=1e-4), (m, n)
