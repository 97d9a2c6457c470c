"""The methods after the seed papers (FIRE, FoX, CoPE, xPos, RoPE extension, randomized positions, SSMax) against
hand-computed values and the properties their papers state. Causality, KV-cache decoding, fast = reference and
gradients are covered for every registered encoding in test_model.py and test_attention.py."""
import math

import pytest
import torch
import torch.nn.functional as F

import helpers
from lexgpt.reference import allowed_keys, keys_seen
from model import GPT, GPTConfig


def tiny(pe, **kw):
    return helpers.tiny(pe, build=GPT, **kw)


def logits(model, idx):
    with torch.no_grad():
        return model(idx, targets=idx)[0]


def test_fox_with_constant_gates_is_alibi_with_slope_minus_log_f():
    fox, alibi = tiny('fox'), tiny('alibi')
    b = torch.tensor([-1.0, 0.5, 2.0, 4.0])
    with torch.no_grad():
        for gate in fox.pe.gate:
            gate.weight.zero_()
            gate.bias.copy_(b)  # f = sigmoid(b) whatever the input
    alibi.load_state_dict({k: v for k, v in fox.state_dict().items() if not k.startswith('pe.')})
    alibi.pe.slopes = -F.logsigmoid(b)  # sum_{t=n+1..m} log f = -(m - n) * slope
    idx = torch.randint(0, 64, (2, 40))
    assert torch.allclose(logits(fox, idx), logits(alibi, idx), atol=1e-5)


def test_fox_gates_depend_on_the_content():
    fox = tiny('fox')
    x = torch.randn(1, 6, 32)
    pot = fox.pe.potential(0, x)
    with torch.no_grad():
        logf = F.logsigmoid(fox.pe.gate[0](x)).transpose(1, 2)
    # bias(m, n) = pot[n] - pot[m] = sum of log f over n+1..m, by hand for m = 5, n = 2
    assert torch.allclose(pot[..., 2] - pot[..., 5], logf[..., 3:6].sum(-1), atol=1e-6)
    assert not torch.allclose(pot, fox.pe.potential(0, x.flip(1)))


@pytest.mark.parametrize('mode', ['pi', 'ntk', 'yarn', 'llama3'])
def test_rope_extensions_at_scale_one_are_rope(mode):
    idx = torch.randint(0, 64, (1, 50))
    assert torch.equal(logits(tiny('rope', rope_scaling=mode, rope_scale=1.0), idx), logits(tiny('rope'), idx))


@pytest.mark.parametrize('kw, message', [
    (dict(rope_scaling='yarn', rope_beta_fast=2.0, rope_beta_slow=4.0), r"rope_beta_fast=2.0, rope_beta_slow=4.0"),
    (dict(rope_scaling='llama3', rope_beta_slow=5.0), r"rope_beta_slow=5.0"),  # above llama3's default 4 for beta_fast
    (dict(rope_scaling='yarn', rope_attn_factor=-1.0), r"rope_attn_factor=-1.0"),
    (dict(rope_scaling='dynamic', pe='bipe_rope'), r"rope_scaling='dynamic' .* pe='bipe_rope'"),
    (dict(rope_scaling='ntk-by-parts'), r"rope_scaling='ntk-by-parts'.*'dynamic', 'yarn', 'llama3'"),
])
def test_rope_extension_settings_are_checked(kw, message):
    with pytest.raises(ValueError, match=message):
        GPTConfig(**dict(dict(pe='rope'), **kw))


def test_position_interpolation_rotates_by_m_over_s():
    pi, rope = tiny('rope', rope_scaling='pi', rope_scale=4.0).pe, tiny('rope').pe
    x = torch.randn(1, 4, 10, 8)
    m = torch.arange(10)[None] * 4
    assert torch.allclose(pi.rotate(x, m), rope.rotate(x, m / 4), atol=1e-6)


def test_ntk_raises_the_base_so_the_slowest_pair_is_interpolated_exactly():
    D, s = 8, 4.0
    ntk, rope = tiny('rope', rope_scaling='ntk', rope_scale=s).pe, tiny('rope').pe
    i = torch.arange(0, D, 2).float()
    assert torch.allclose(ntk.inv_freq, (10000.0 * s ** (D / (D - 2))) ** (-i / D))
    assert torch.allclose(ntk.inv_freq[-1], rope.inv_freq[-1] / s)  # the lowest frequency: exactly PI
    assert torch.allclose(ntk.inv_freq[0], rope.inv_freq[0])          # the highest: untouched


def test_yarn_ramp_is_linear_in_the_pair_index_between_32_and_1_turns():
    """YaRN as its authors' code (jquesnelle/yarn) has it: pair j's extrapolation weight is 1 up to floor(j_32) and
    0 from ceil(j_1), linear in j between, j_beta = D ln(L / (2 pi beta)) / (2 ln base) the (fractional) pair that
    turns beta times over L; q and k each times 0.1 ln s + 1."""
    s, L, D = 8.0, 1024, 64
    cfg = dict(n_head=1, n_embd=D, block_size=L, rope_base=10000.0)
    yarn = tiny('rope', rope_scaling='yarn', rope_scale=s, **cfg).pe
    inv = [10000.0 ** (-2 * j / D) for j in range(D // 2)]
    lo = math.floor(D * math.log(L / (2 * math.pi * 32)) / (2 * math.log(10000.0)))
    hi = math.ceil(D * math.log(L / (2 * math.pi * 1)) / (2 * math.log(10000.0)))
    assert (lo, hi) == (5, 18)  # by hand: j_32 = 5.66, j_1 = 17.70
    for j in range(D // 2):
        keep = 1 - min(max((j - lo) / (hi - lo), 0), 1)
        assert yarn.inv_freq[j].item() == pytest.approx(keep * inv[j] + (1 - keep) * inv[j] / s, rel=1e-6), j
    # q.k of the same pair grows by (0.1 ln s + 1)^2: YaRN's logit temperature
    q, k = torch.randn(1, 1, 1, D), torch.randn(1, 1, 1, D)
    zero = torch.zeros(1, 1)
    assert torch.allclose((yarn.rotate(q, zero) * yarn.rotate(k, zero)).sum(),
                          (q * k).sum() * (0.1 * math.log(s) + 1) ** 2, atol=1e-5)


@pytest.mark.parametrize('impl', ['reference', 'auto'])
def test_yarn_under_the_distance_ceiling_scales_q_and_k_once(impl):
    """LM-Infinite's ceiling scores a far key as if it were c away; YaRN's factor on q and k must still enter q.k
    once each: logit(m, n) = (0.1 ln s + 1)^2 (R_m q).(R_n' k) / sqrt(D), n' = m - min(m - n, c), q and k rotated
    here by hand (pair i of the two halves turned by position * inv_freq[i])."""
    s, c, T, D = 4.0, 5, 24, 8
    model = tiny('rope', n_layer=1, rope_scaling='yarn', rope_scale=s)
    idx = torch.randint(0, 64, (1, T))
    seen = {}
    with torch.no_grad():
        model.transformer.h[0].attn.c_attn.weight.mul_(10)  # logits of order 1: attention far from uniform
        with model.attention(hook=lambda l, p, qi, ki: seen.update(p=p), ceiling=c, route=impl):
            model(idx, targets=idx)
        attn = model.transformer.h[0].attn
        hidden = model.transformer.h[0].ln_1(model.transformer.wte(idx))
        q, k, _ = attn.c_attn(hidden).view(1, T, 3, 4, D).permute(2, 0, 3, 1, 4)
    inv = model.pe.inv_freq

    def turn(x, p):  # x [..., D] rotated to the positions p (broadcast against x's leading dimensions)
        ang = p[..., None].float() * inv
        x1, x2 = x[..., :D // 2], x[..., D // 2:]
        return torch.cat([x1 * ang.cos() - x2 * ang.sin(), x1 * ang.sin() + x2 * ang.cos()], -1)
    m, n = torch.arange(T)[:, None], torch.arange(T)[None]
    near = m - (m - n).clamp(max=c)
    want = (0.1 * math.log(s) + 1) ** 2 * (turn(q[..., :, None, :], m.expand(T, T)) *
                                           turn(k[..., None, :, :], near)).sum(-1) / math.sqrt(D)
    want = want.masked_fill(n > m, float('-inf')).softmax(-1)
    assert torch.allclose(seen['p'], want, atol=1e-5), (seen['p'] - want).abs().max()


@pytest.mark.parametrize('opts', [dict(ceiling=5), dict(key_window=16, n_starting=2, ceiling=16),
                                  dict(key_window=4, n_starting=1, ceiling=8, topk=3, topk_from_layer=1)])
def test_yarn_with_lm_infinite_fast_equals_reference(opts):
    model = tiny('rope', rope_scaling='yarn', rope_scale=4.0)
    idx = torch.randint(0, 64, (2, 60))
    out = {}
    with torch.no_grad():
        for impl in ('reference', 'auto'):
            with model.attention(route=impl, tile=16, **opts):
                out[impl] = model(idx, targets=idx)[0]
    assert torch.allclose(out['auto'], out['reference'], atol=1e-4), (out['auto'] - out['reference']).abs().max()


def test_xpos_scales_each_pair_by_zeta_to_the_distance_over_b():
    pe = tiny('xpos', n_head=1, n_embd=8, xpos_scale_base=4.0).pe
    rope = tiny('rope', n_head=1, n_embd=8).pe
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)
    m, n = torch.tensor([[9]]), torch.tensor([[3]])
    zeta = (torch.arange(0, 8, 2).float() / 8 + 0.4) / 1.4
    got = pe.rotate(q, m) * pe.rotate(k, n, key=True)
    plain = rope.rotate(q, m) * rope.rotate(k, n)
    scale = torch.cat([zeta, zeta]) ** ((9 - 3) / 4.0)
    assert torch.allclose(got, plain * scale, atol=1e-6)
    assert (zeta < 1).all()  # so every pair decays with distance


@pytest.mark.parametrize('pe, kw', [('xpos', dict(xpos_scale_base=4.0)),
                                    ('rope', dict(rope_scaling='pi', rope_scale=4.0))])
def test_rotary_logits_are_the_closed_form_at_distance_m_minus_n(pe, kw):
    """From the formulas alone, not from rope.rotate: xPos is RoPE whose pair i gains zeta_i^((m - n) / B),
    zeta_i = (2i/D + 0.4) / 1.4 (Sun et al. 2022); position interpolation turns pair i by (m - n) theta_i / s."""
    enc = tiny(pe, n_head=1, n_embd=8, **kw).pe
    theta = 10000.0 ** (-torch.arange(0, 8, 2).double() / 8) / (4.0 if pe == 'rope' else 1.0)
    zeta = (torch.arange(0, 8, 2).double() / 8 + 0.4) / 1.4
    g = torch.Generator().manual_seed(0)
    for m, n in [(0, 0), (5, 2), (9, 0), (3, 7), (40, 33)]:
        q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
        got = (enc.rotate(q.view(1, 1, 1, 8), torch.tensor([[m]])) *
               enc.rotate(k.view(1, 1, 1, 8), torch.tensor([[n]]), key=True)).sum()
        want = helpers.rotary_closed_form(q, k, m, n, theta, zeta ** ((m - n) / 4.0) if pe == 'xpos' else None)
        assert float(got) == pytest.approx(want, rel=1e-4, abs=1e-4), (m, n)


def test_partial_xpos_stays_relative():
    """rotary_dim=4 of 8: the rotated pairs decay by their own zeta_i = (2i/4 + 0.4) / 1.4 over the rotated dims, the
    4 dims past them neither turn nor decay, so the score depends on m - n alone (a zeta over all 8 dims broke this)."""
    enc = tiny('xpos', n_head=1, n_embd=8, rotary_dim=4, xpos_scale_base=4.0).pe
    theta, zeta = 10000.0 ** (-torch.arange(0, 4, 2).double() / 4), (torch.arange(0, 4, 2).double() / 4 + 0.4) / 1.4
    g = torch.Generator().manual_seed(1)
    for m, n in [(5, 2), (105, 102), (9, 0)]:
        q, k = torch.randn(8, generator=g), torch.randn(8, generator=g)
        got = (enc.rotate(q.view(1, 1, 1, 8), torch.tensor([[m]])) *
               enc.rotate(k.view(1, 1, 1, 8), torch.tensor([[n]]), key=True)).sum()
        want = helpers.rotary_closed_form(q[:4], k[:4], m, n, theta, zeta ** ((m - n) / 4.0)) + float(q[4:] @ k[4:])
        assert float(got) == pytest.approx(want, rel=1e-4, abs=1e-4), (m, n)


def test_cope_positions_count_the_gates():
    """With gates of exactly 0 or 1 and q.e[i] = i, CoPE's term is the number of counted keys between n and m."""
    pe = tiny('cope', n_head=1, n_embd=4, cope_max_pos=8).pe
    with torch.no_grad():
        pe.e[0] = 0.0
        pe.e[0, 0] = torch.arange(8).float()  # e[i] = i * unit vector 0
    q = torch.tensor([1.0, 0, 0, 0]).view(1, 1, 1, 4).expand(1, 1, 5, 4)
    gate = torch.tensor([[1, 0, 1, 1, 0], [1, 1, 0, 1, 1], [0, 0, 1, 0, 1], [1, 1, 1, 1, 1], [0, 1, 0, 1, 0]])
    lg = torch.where(gate.bool(), 50.0, -50.0).float()
    lg = lg.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float('-inf'))[None, None]
    got = pe.content(0, q, lg)[0, 0]
    for m in range(5):
        for n in range(m + 1):
            assert got[m, n].item() == pytest.approx(gate[m, n:m + 1].sum().item(), abs=1e-4)
    # fractional counts fall between two table entries, linearly
    half = pe.content(0, q[:, :, :1], torch.zeros(1, 1, 1, 1))  # one key, gate sigmoid(0) = 0.5
    assert half.item() == pytest.approx(0.5)


def test_fire_input_stays_in_unit_interval_at_every_length():
    pe = tiny('fire').pe
    for T in (16, 100, 4096, 100000):
        m = torch.arange(T, dtype=torch.float32)[:, None] if T <= 4096 else torch.tensor([[T - 1.0]])
        d = torch.arange(T, dtype=torch.float32)[None] if T <= 4096 else torch.tensor([[0.0, 1.0, T / 2, T - 1.0]])
        x = pe.inputs(0, d, m)[d <= m]
        assert x.min() >= 0 and x.max() <= 1 + 1e-6
    # below the threshold L the normaliser is psi(L): the bias is Toeplitz there (shift invariant)
    d = torch.arange(5.0)
    assert torch.allclose(pe.bias(0, d, torch.tensor(8.0)), pe.bias(0, d, torch.tensor(12.0)))
    assert not torch.allclose(pe.bias(0, d, torch.tensor(20.0)), pe.bias(0, d, torch.tensor(400.0)))


def test_fire_bias_in_the_attention_logits_is_the_formula():
    """b(m, n) = f(psi(m - n) / (psi(max(L, m)) + eps)), psi(x) = log(|c x| + 1), L = |a| L0, f = W2 relu(W1 x + b1)
    + b2 (Li et al. 2023, eq. 10 and the paper's code), by hand in float64 from the module's parameters, against
    the reference attention logits of zero q and k, whose only term is the bias. L = 5.5 lies among the 12 query
    positions, so both sides of max(L, m) are exercised."""
    from lexgpt.reference import AttnCall, AttnOptions, scores as attn_logits
    model = tiny('fire', n_head=4, n_embd=32)
    pe = model.pe
    with torch.no_grad():
        pe.c[1] = -0.3  # |c x|: the sign of c does not matter either
        pe.L_mult[1] = -5.5 / 16  # |a| L0: the sign of a does not matter
        for p in pe.f[1].parameters():
            p.normal_(0, 1)
    T, H = 12, 4
    pos = torch.arange(T)
    call = AttnCall(1, pos, pos[None], pos, pos[None])
    with torch.no_grad():
        got = attn_logits(torch.zeros(1, H, T, 8), torch.zeros(1, H, T, 8), pe, call, AttnOptions(), pos, pos)[0]
    c = 0.3
    w1, b1, w2, b2 = (p.detach().double() for p in (pe.f[1][0].weight[:, 0], pe.f[1][0].bias, pe.f[1][2].weight,
                                                   pe.f[1][2].bias))
    for m in range(T):
        for n in range(T):
            if n > m:
                assert (got[:, m, n] == float('-inf')).all()
                continue
            x = math.log(c * (m - n) + 1) / (math.log(c * max(5.5, m) + 1) + 1e-6)
            want = w2 @ torch.relu(w1 * x + b1) + b2
            assert torch.allclose(got[:, m, n].double(), want, atol=1e-5), (m, n)


def test_fire_threshold_moves_like_the_papers_multiplier_under_adam():
    """L = |a| L0 with a learned: Adam's first step moves a by lr, so L by lr * L0 (block_size), as in the paper's
    code; the old parametrisation (L itself learned) moved it by lr."""
    model = tiny('fire', block_size=64)
    opt = torch.optim.Adam(model.pe.parameters(), lr=1e-3, eps=1e-12)  # the untrained MLP's gradients are ~1e-8
    idx = torch.randint(0, 64, (2, 20))  # every query below L = 64: the threshold sets every normaliser
    model(idx, targets=idx)[1].backward()
    before = (model.pe.L_mult * model.pe.L0).abs().detach().clone()
    opt.step()
    moved = ((model.pe.L_mult * model.pe.L0).abs().detach() - before).abs()
    assert torch.allclose(moved, torch.full_like(moved, 1e-3 * 64), rtol=1e-3)


def test_randomized_positions_are_sorted_distinct_and_below_l_max():
    model = tiny('rope', randomized_positions=200).train()
    idx = torch.zeros(8, 16, dtype=torch.long)
    pos = model.pe.positions(idx, 0, None)[0]
    r = pos.rel
    assert r.shape == (8, 16) and (r >= 0).all() and (r < 200).all()
    assert (r[:, 1:] > r[:, :-1]).all()                   # sorted and distinct
    assert len({tuple(row.tolist()) for row in r}) == 8   # a fresh draw per sequence
    assert torch.equal(pos.idx, torch.arange(16))         # masks still use the token order
    model.eval()
    a, b = model.pe.positions(idx, 0, None)[0].rel, model.pe.positions(idx, 0, None)[0].rel
    assert torch.equal(a, b) and a.shape == (1, 16)        # evaluation: one repeatable draw per length
    with pytest.raises(ValueError, match='randomized_positions=8 must be 0 .off. or >= block_size=16'):
        GPTConfig(block_size=16, randomized_positions=8)


@pytest.mark.parametrize('pe', ['sinusoidal', 'learned', 'rope', 'xpos', 'alibi', 'kerple_log', 't5'])
def test_randomized_positions_reach_every_positional_encoding(pe):
    model = tiny(pe, randomized_positions=64).train()
    idx = torch.randint(0, 64, (2, 16))
    torch.manual_seed(1)
    a = model(idx, targets=idx, reduction='none')[1]
    torch.manual_seed(2)
    b = model(idx, targets=idx, reduction='none')[1]
    assert not torch.equal(a, b)  # other positions, other losses
    model.pe.config.randomized_positions = 0  # the same draws without randomization: nothing changes
    torch.manual_seed(1)
    c = model(idx, targets=idx, reduction='none')[1]
    torch.manual_seed(2)
    assert torch.equal(c, model(idx, targets=idx, reduction='none')[1])


def test_ssmax_scales_logits_by_s_log_keys_seen():
    model = tiny('none', n_layer=1, ssmax=True)
    with torch.no_grad():
        model.transformer.h[0].attn.ssmax.copy_(torch.tensor([0.5, 1.0, 1.5, 2.0]))
    idx = torch.randint(0, 64, (1, 12))
    seen = {}
    with torch.no_grad(), model.attention(hook=lambda l, p, qi, ki: seen.update(p=p), route='reference'):
        model(idx)
    attn = model.transformer.h[0].attn
    with torch.no_grad():
        hidden = model.transformer.h[0].ln_1(model.transformer.wte(idx))
        q, k, _ = attn.c_attn(hidden).view(1, 12, 3, 4, 8).permute(2, 0, 3, 1, 4)
    s = torch.tensor([0.5, 1.0, 1.5, 2.0])[:, None, None]
    want = (q[0] @ k[0].transpose(-2, -1) / math.sqrt(8) * s * torch.log(torch.arange(1, 13).float())[:, None])
    want = want.masked_fill(torch.ones(12, 12, dtype=torch.bool).triu(1), float('-inf')).softmax(-1)
    assert torch.allclose(seen['p'][0], want, atol=1e-5)


@pytest.mark.parametrize('mask_rules', [[], [(0, 5)], [(3, 5)], [(2, 40)]])
def test_keys_seen_counts_the_allowed_keys(mask_rules):
    qi = torch.arange(30)
    assert torch.equal(keys_seen(qi, mask_rules), allowed_keys(qi, qi, mask_rules).sum(-1).float())


def test_randomized_positions_with_a_kv_cache_are_the_token_order():
    """Decoding must continue the positions, so a cache uses 0..T-1 from the prompt on, and equals a full forward
    at those positions (the model with randomization off)."""
    from model import KVCache
    model = tiny('alibi', randomized_positions=64)
    idx = torch.randint(0, 64, (1, 20))
    cache = KVCache()
    with torch.no_grad():
        steps = [model(idx[:, :12], cache=cache)[0][:, -1]] + [model(idx[:, t:t + 1], cache=cache)[0][:, -1]
                                                             for t in range(12, 20)]
        model.pe.config.randomized_positions = 0
        full = model(idx, targets=idx)[0]
    assert all(torch.allclose(s, full[:, t], atol=1e-5) for s, t in zip(steps, range(11, 20)))
    with pytest.raises(ValueError, match="pe='bipe_rope' has segment positions"):
        GPTConfig(pe='bipe_rope', randomized_positions=64)
