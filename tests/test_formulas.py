"""Each encoding against its paper's formula: hand-computed values, the authors' reference code, and for the KERPLE
family one table (KERNELS) of each kernel's bias and weight, initial ranges and clamps."""
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import helpers
from model import GPT, GPTConfig, POSITIONAL_ENCODINGS, T5Bias, alibi_slopes, sinusoid

torch.manual_seed(0)
ALL = list(POSITIONAL_ENCODINGS)


def tiny(pe, **kw):
    return helpers.tiny(pe, build=GPT, **kw)


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
                     bipe_alibi='test_model.py::test_bipe_positions_split_at_separators',
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
        assert f'def {name}(' in Path(__file__).with_name(file or Path(__file__).name).read_text(), test


def kernel_row(pe):
    assert pe in KERNELS, (f"pe={pe!r} is a model.Kernel with no row in KERNELS (tests/test_formulas.py): add its "
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
    tables = [shared.bias(layer, d) if shared.bias(layer, d) is not None else shared.weight(layer, d)
              for layer in range(4)]
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
