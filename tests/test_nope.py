"""nope.py on the random model the thesis assumes: Lemma 2.3's variance, and a probe that finds positions only where
the causal attention put them."""
import json
import os

import numpy as np
import pytest
import torch

from analysis import nope
from lexgpt.config import ConfigError, parse_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def test_main_writes_its_outputs_and_refuses_bad_shapes(tmp_path, monkeypatch):
    """Through the command line: the probe gets the settings given, the JSON names them beside the MAE and its
    mean per depth, and the table gives the logit variance d^2 sigma^4 / H of Lemma 2.2 (32^2 0.02^4 / 2)."""
    probed, real, threads = [], nope.nope_probe, []
    monkeypatch.setattr(nope, 'nope_probe', lambda *a, **kw: probed.append((a, kw)) or real(*a, **kw))
    monkeypatch.setattr(nope.torch, 'set_num_threads', threads.append)
    cfg = parse_config(nope.DEFAULTS, ['--d=32', '--heads=2', '--L=16', '--samples=2', '--sigmas=0.02', '--probe_d=16',
                                       '--probe_L=8', '--probe_layers=1', '--probe_steps=3', '--probe_train=2',
                                       '--threads=1', f'--out_dir={tmp_path}'])
    res = nope.main(cfg)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['nope.json', 'nope.md', 'nope.png']
    assert len(res['variance'][0]['var']) == 16 and np.array(res['probe']['mae']).shape == (2, 8)
    assert probed == [((16, 4, 8, 0.02, 1, 3, 2, 2048, 1e-3), dict(seed=1337))] and threads == [1]
    written = json.loads((tmp_path / 'nope.json').read_text())
    assert written['settings'] == {k: cfg[k] for k in cfg if k not in ('threads', 'out_dir', 'name')}
    assert {written['settings'][k] for k in ('seed', 'probe_batch', 'probe_lr')} == {1337, 2048, 1e-3}
    probe = written['probe']
    assert {k: probe[k] for k in ('d', 'heads', 'L', 'sigma', 'steps')} == dict(d=16, heads=4, L=8, sigma=0.02, steps=3)
    assert np.allclose(probe['mae_mean'], np.mean(probe['mae'], axis=1), atol=1e-3)
    assert '| 0.02 | 8.19e-05 |' in (tmp_path / 'nope.md').read_text()
    with pytest.raises(ConfigError, match='d=30 is not divisible by heads=4'):
        nope.main(dict(cfg, d=30, heads=4))
    with pytest.raises(ConfigError, match=r'sigmas=\[0.0\]'):
        nope.main(dict(cfg, sigmas=[0.0]))
    with pytest.raises(ConfigError, match='probe_lr=0.0 must be positive'):
        nope.main(dict(cfg, probe_lr=0.0))
    with pytest.raises(ConfigError, match='probe_batch=0 must be a positive integer'):
        nope.main(dict(cfg, probe_batch=0))


def test_the_committed_variance_check_is_what_the_defaults_compute():
    """results/nope/nope.json, made with the defaults (d = 768, H = 12, L = 512, 32 samples, seed 1337), recomputed
    on its first 64 positions: the model is causal and has no positions, so they see nothing of the 448 after them
    and a 64-token run of the same draws gives their outputs at an eighth of the cost."""
    committed = json.load(open(os.path.join(ROOT, 'results', 'nope', 'nope.json')))
    assert committed['command'] == 'python -m analysis.nope --out_dir=results/nope'  # the defaults, nothing else
    D = nope.DEFAULTS
    assert [row['sigma'] for row in committed['variance']] == D['sigmas']
    x = torch.randn(D['samples'], D['L'], D['d'], generator=torch.Generator().manual_seed(D['seed'] + 1))[:, :64]
    for row in committed['variance']:
        var = nope.layer0_variance(nope.random_nope(D['d'], D['heads'], 64, row['sigma'], 1, D['seed']), x)
        assert np.allclose(var, row['var'][:64], rtol=1e-5, atol=0)


def test_the_figure_draws_the_lemma_beside_the_simulation_and_the_middle_baseline():
    """report()'s figure on hand numbers: log variance against log m, simulated and Lemma 2.3 (dashed, same colour);
    the probe's MAE per depth (a moving average over L/32 positions) with the L/4 of predicting the middle dotted."""
    cfg = dict(nope.DEFAULTS, d=4, heads=2, L=3, probe_L=64)
    lemma = [16 * 0.1 ** 4 / m for m in (1, 2, 3)]
    res = dict(variance=[dict(sigma=0.1, var=[2 * v for v in lemma], lemma=lemma)])
    mae = np.stack([np.full(64, 16.0), np.arange(64.0)])
    _, fig = nope.report(cfg, res, mae)
    ax1, ax2 = fig.axes
    sim, lem = ax1.get_lines()
    assert np.allclose(sim.get_xdata(), np.log([1, 2, 3])) and np.allclose(sim.get_ydata(), np.log(2 * np.array(lemma)))
    assert np.allclose(lem.get_ydata(), np.log(lemma)) and lem.get_linestyle() == '--'
    assert lem.get_color() == sim.get_color()
    inputs, one, middle = ax2.get_lines()
    assert np.allclose(inputs.get_ydata(), 16.0) and np.allclose(one.get_ydata(), np.arange(0.5, 63))  # k = 2
    assert list(one.get_xdata()) == list(range(1, 64)) and inputs.get_label() == 'inputs (0 layers)'
    assert list(middle.get_ydata()) == [16.0, 16.0] and middle.get_linestyle() == ':'


def test_the_probe_trains_as_the_thesis_does_32_sequences_a_step_at_lr_1e_3(monkeypatch):
    """Thesis 2.8.1: Adam at learning rate 1e-3 and a batch of 32 sequences; at the probe's L = 64, 2,048 rows (token
    positions) a step."""
    sizes, lrs, randint, adam = [], [], torch.randint, torch.optim.Adam
    monkeypatch.setattr(torch, 'randint', lambda high, size, **kw: sizes.append(size) or randint(high, size, **kw))
    monkeypatch.setattr(torch.optim, 'Adam', lambda params, lr: lrs.append(lr) or adam(params, lr=lr))
    nope.nope_probe(L=64, n_layer=1, steps=2, n_train=1, n_test=1)
    assert sizes == [(32 * 64,)] * 2 and lrs == [1e-3]
