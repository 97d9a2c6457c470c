"""RoPE's frequencies and extensions against transformers' modeling_rope_utils, the code that converted and released
checkpoints rotate with (an independent reference, used in tests only: the model never imports it)."""
import pytest
import torch

import helpers
from model import GPT, GPTConfig, KVCache
from lexgpt.rope_scaling import frequencies as rope_frequencies, over_checkpoint

transformers = pytest.importorskip('transformers')
from transformers import LlamaConfig  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb  # noqa: E402

L = 256  # the original (training) length


def hf_config(D, base, rope_type='default', max_len=L, **params):
    return LlamaConfig(hidden_size=2 * D, num_attention_heads=2, head_dim=D, max_position_embeddings=max_len,
                       rope_parameters=dict(rope_type=rope_type, rope_theta=base, **params))


def ours(D, base, **kw):
    return GPTConfig(n_embd=2 * D, n_head=2, block_size=L, rope_base=base, **kw)


def assert_same(got, want):
    # bit for bit: 1 / base^(2i/D) and base^(-2i/D) differ by one float32 ulp in some pairs (item 5 of issue 27)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got, want), ((got - want).abs() / want).max()


GRID = [(D, base, s) for D in (16, 32, 64) for base in (1e4, 5e5) for s in (2.0, 4.0, 8.0)]


@pytest.mark.parametrize('pe', ['rope', 'xpos', 'bipe_rope'])
def test_plain_frequencies_are_one_over_base_to_the_power(pe):
    for D in (16, 32, 64):
        for base in (1e4, 5e5):
            enc = GPT(ours(D, base, pe=pe, n_layer=1)).pe
            want, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(hf_config(D, base))
            assert_same(getattr(enc, 'inner', enc).inv_freq, want)


@pytest.mark.parametrize('ours_name, hf_name, params', [
    ('pi', 'linear', {}),
    ('yarn', 'yarn', dict(original_max_position_embeddings=L)),
    ('llama3', 'llama3', dict(original_max_position_embeddings=L, low_freq_factor=1.0, high_freq_factor=4.0)),
])
def test_scalings_equal_transformers(ours_name, hf_name, params):
    """Inverse frequencies and the attention factor, head dims 16/32/64, bases 1e4 and 5e5, s = 2, 4, 8, with
    transformers' defaults (yarn: beta_fast 32, beta_slow 1, factor 0.1 ln s + 1, truncate)."""
    for D, base, s in GRID:
        cfg = hf_config(D, base, hf_name, int(L * s), factor=s, **params)
        want, want_factor = ROPE_INIT_FUNCTIONS[hf_name](cfg, 'cpu')
        got, factor = rope_frequencies(ours(D, base, rope_scaling=ours_name, rope_scale=s), D)
        assert_same(got, want)
        assert factor == pytest.approx(want_factor, rel=1e-12)
        assert not torch.allclose(got, rope_frequencies(ours(D, base), D)[0])  # the scaling does act


def test_yarn_and_llama3_settings_reach_the_frequencies():
    for D, base, s in GRID[::4]:
        for truncate in (True, False):
            want, want_factor = ROPE_INIT_FUNCTIONS['yarn'](hf_config(
                D, base, 'yarn', int(L * s), factor=s, original_max_position_embeddings=L, beta_fast=16.0,
                beta_slow=2.0, attention_factor=1.3, truncate=truncate), 'cpu')
            got, factor = rope_frequencies(ours(D, base, rope_scaling='yarn', rope_scale=s, rope_beta_fast=16.0,
                                                rope_beta_slow=2.0, rope_attn_factor=1.3, rope_truncate=truncate), D)
            assert_same(got, want)
            assert factor == want_factor == 1.3
        cfg = hf_config(D, base, 'llama3', factor=s, original_max_position_embeddings=64,
                        low_freq_factor=2.0, high_freq_factor=8.0)
        want, _ = ROPE_INIT_FUNCTIONS['llama3'](cfg, 'cpu')
        got, _ = rope_frequencies(ours(D, base, rope_scaling='llama3', rope_scale=s, rope_original_len=64,
                                       rope_beta_fast=8.0, rope_beta_slow=2.0), D)
        assert_same(got, want)


def test_dynamic_ntk_equals_transformers_at_1x_to_16x():
    """The base grows with the input's length T past L: base (s T / L - (s - 1))^(D / (D - 2)); below L, plain RoPE."""
    for D, base, s in GRID:
        cfg = hf_config(D, base, 'dynamic', factor=s)
        for T in (L // 2, L, L + 1, 2 * L, 4 * L, 8 * L, 16 * L):
            want, _ = ROPE_INIT_FUNCTIONS['dynamic'](cfg, 'cpu', seq_len=T)
            assert_same(rope_frequencies(ours(D, base, rope_scaling='dynamic', rope_scale=s), D, T)[0], want)
        assert torch.equal(rope_frequencies(ours(D, base, rope_scaling='dynamic', rope_scale=s), D, L)[0],
                           rope_frequencies(ours(D, base), D)[0])


def test_dynamic_ntk_rotates_a_forward_as_transformers_rotary_module():
    model = helpers.tiny('rope', build=GPT, rope_scaling='dynamic', rope_scale=4.0)  # L_tr = 16, head dim 8
    rot = LlamaRotaryEmbedding(LlamaConfig(hidden_size=32, num_attention_heads=4, max_position_embeddings=16,
                                           rope_parameters=dict(rope_type='dynamic', rope_theta=1e4, factor=4.0)))
    for T in (8, 16, 32, 64, 128, 256):
        x = torch.randn(1, 4, T, 8)
        pos, _ = model.pe.positions(torch.zeros(1, T, dtype=torch.long), 0, None)
        want, _ = apply_rotary_pos_emb(x, x, *rot(x, torch.arange(T)[None]))
        assert torch.allclose(model.pe.rotate(x, pos.rel), want, atol=1e-5), T


def test_dynamic_ntk_decoding_keeps_the_rotation_each_key_was_cached_with():
    """Decoding past L, each new token is rotated with the base of its own length (its position + 1) and the cached
    keys keep theirs, as transformers' decoder does (its rotary module called with the prompt, then one position at
    a time; keys are cached rotated). So the cache no longer equals a full forward past L, by design."""
    P, steps = 20, 6  # a prompt past L_tr = 16
    model = helpers.tiny('rope', build=GPT, rope_scaling='dynamic', rope_scale=4.0, n_layer=1)
    idx = torch.randint(0, 64, (1, P + steps))
    cache = KVCache()
    with torch.no_grad():
        model(idx[:, :P], cache=cache)
        for t in range(P, P + steps):
            model(idx[:, t:t + 1], cache=cache)
        x = model.transformer.h[0].ln_1(model.transformer.wte(idx))  # layer 0's input: no position in it
        k = model.transformer.h[0].attn.c_attn(x)[..., 32:64].view(1, P + steps, 4, 8).transpose(1, 2)
    rot = LlamaRotaryEmbedding(LlamaConfig(hidden_size=32, num_attention_heads=4, max_position_embeddings=16,
                                           rope_parameters=dict(rope_type='dynamic', rope_theta=1e4, factor=4.0)))
    calls = [torch.arange(P)] + [torch.tensor([t]) for t in range(P, P + steps)]
    cos, sin = (torch.cat(parts, 1) for parts in zip(*[rot(k, p[None]) for p in calls]))
    _, want = apply_rotary_pos_emb(k, k, cos, sin)
    assert torch.allclose(cache.k[0], want, atol=1e-5)
    _, full = apply_rotary_pos_emb(k, k, *LlamaRotaryEmbedding(rot.config)(k, torch.arange(P + steps)[None]))
    assert not torch.allclose(cache.k[0][:, :, :P], full[:, :, :P], atol=1e-3)  # the prompt's base was P's


def test_ntk_turns_the_slowest_pair_s_times_slower_and_the_fastest_as_before():
    """NTK-aware scaling (bloc97; YaRN paper sec. 3.1): base' = base s^(D/(D-2)), so that the last pair, at
    base^(-(D-2)/D), turns s times slower and the first, at 1, as before. transformers has no static NTK to compare."""
    for D, base, s in GRID:
        plain = rope_frequencies(ours(D, base), D)[0].double()
        ntk = rope_frequencies(ours(D, base, rope_scaling='ntk', rope_scale=s), D)[0].double()
        assert ntk[0] == plain[0] == 1.0
        assert ntk[-1].item() == pytest.approx(plain[-1].item() / s, rel=1e-5)


def test_an_extension_over_a_checkpoint_counts_from_the_length_it_was_trained_on():
    """rope_scaling.over_checkpoint: an extension asked for at evaluation replaces the checkpoint's whole and counts
    from the checkpoint's own training length, not from a block_size given with it; one already set stays."""
    trained = dict(block_size=256, rope_base=1e4, rope_scaling='pi', rope_scale=2.0, rope_beta_fast=8.0)
    got = over_checkpoint(trained, dict(rope_scaling='yarn', rope_scale=4.0, block_size=1024))
    assert (got['rope_original_len'], got['block_size'], got['rope_scale']) == (256, 1024, 4.0)
    assert 'rope_beta_fast' not in got  # the old extension's settings go with it
    assert over_checkpoint(dict(trained, rope_original_len=128), dict(rope_scaling='ntk'))['rope_original_len'] == 128
    assert over_checkpoint(dict(block_size=256), dict(rope_scale=3.0)) == dict(block_size=256, rope_scale=3.0)


def test_bad_rope_settings_are_one_line_errors_naming_the_values():
    """GPTConfig refuses a scale under 1 and a negative setting, the original length included, each in one line
    naming the values and what is allowed (rope_scaling.check)."""
    with pytest.raises(ValueError, match=r"^rope_scaling='yarn', rope_scale=0.5: allowed '', 'pi', 'ntk', 'dynamic', "
                                         r"'yarn', 'llama3' with rope_scale >= 1$"):
        ours(16, 1e4, rope_scaling='yarn', rope_scale=0.5)
    with pytest.raises(ValueError, match=r"^rope_beta_fast=0.0, rope_beta_slow=0.0, rope_attn_factor=0.0, "
                                         r"rope_original_len=-1: each must be >= 0"):
        ours(16, 1e4, rope_scaling='pi', rope_scale=2.0, rope_original_len=-1)


def test_yarn_caps_its_band_at_the_last_pair_as_transformers_does():
    """At a small base over a long original length the slow end of YaRN's band, dim ln(L / 2 pi) / (2 ln base), lies
    past the last pair (D = 16, base 10, L = 1,024: 17.7 > 15): the ramp is capped at dim - 1, as transformers' yarn
    caps it, and the frequencies are transformers' bit for bit."""
    D, base, s, L_orig = 16, 10.0, 4.0, 1024
    for truncate in (True, False):
        want, _ = ROPE_INIT_FUNCTIONS['yarn'](hf_config(D, base, 'yarn', int(L_orig * s), factor=s, truncate=truncate,
                                                        original_max_position_embeddings=L_orig), 'cpu')
        got, _ = rope_frequencies(ours(D, base, rope_scaling='yarn', rope_scale=s, rope_original_len=L_orig,
                                       rope_truncate=truncate), D)
        assert_same(got, want)
