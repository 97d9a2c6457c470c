"""nope.py on the random model the thesis assumes: Lemma 2.3's variance, and a probe that finds positions only where
the causal attention put them."""
import numpy as np
import pytest

from analysis import nope
from lexgpt.config import ConfigError


def test_nope_variance_matches_lemma_2_3_on_the_random_model():
    d, H, L = 256, 4, 64
    for sigma in (0.02, 0.002):   # logit variance d^2 sigma^4 / H << 1: near-uniform attention (Property 2.1)
        var, lemma = nope.nope_variance(d, H, L, sigma, n_samples=16)
        assert lemma[0] == pytest.approx(d ** 2 * sigma ** 4) and lemma[9] == pytest.approx(d ** 2 * sigma ** 4 / 10)
        assert np.all(np.abs(var / lemma - 1) < 0.15)
    var, lemma = nope.nope_variance(d, H, L, 0.2, n_samples=4)  # peaked attention: the lemma underestimates
    assert np.median(var / lemma) > 3


def test_the_probe_finds_positions_after_attention_but_not_in_the_inputs():
    """Depth 0 is the i.i.d. input vectors, which carry no position: the probe can do no better than the middle,
    MAE L/4. After one causal layer the attention output's variance falls as 1/m (Lemma 2.3), so it does better."""
    L = 16
    mae = nope.nope_probe(d=64, H=2, L=L, sigma=0.05, n_layer=1, steps=400, n_train=512, batch_tokens=1024, n_test=64)
    assert mae.shape == (2, L)
    assert abs(mae[0].mean() - L / 4) < 0.1 * L / 4
    assert mae[1].mean() < 0.9 * L / 4
    # the first token is told apart best: its attention output is its own value vector, the largest of all
    assert mae[1, 0] < 0.6 * mae[0, 0]


def test_main_writes_its_outputs_and_refuses_bad_shapes(tmp_path):
    cfg = dict(nope.DEFAULTS, d=32, heads=2, L=16, samples=2, sigmas=[0.02], probe_d=16, probe_L=8, probe_layers=1,
               probe_steps=3, probe_train=2, out_dir=str(tmp_path))
    res = nope.main(cfg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['nope.json', 'nope.md', 'nope.png']
    assert len(res['variance'][0]['var']) == 16 and np.array(res['probe']['mae']).shape == (2, 8)
    with pytest.raises(ConfigError, match='d=30 is not divisible by heads=4'):
        nope.main(dict(cfg, d=30, heads=4))
    with pytest.raises(ConfigError, match=r'sigmas=\[0.0\]'):
        nope.main(dict(cfg, sigmas=[0.0]))
