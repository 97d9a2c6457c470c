"""temperature.py: Algorithm 1, Propositions 5.1/5.2 and the length rule by hand; a model whose rows do not change
with length (windowed ALiBi) gets tau = 1; RegularGPT's statistics follow the layers that actually run."""
import json
import math

import pytest
import torch

from lexgpt import corpus
from analysis import temperature as tp
from lexgpt.config import ConfigError
from helpers import V, make_split, save_ckpt, save_split, tiny


def test_temperature_search_and_length_rule():
    split, model = make_split(), tiny('t5')
    ends, _ = corpus.draw_ends(split, 32, 3, seed=6)
    _, tr = tp.attention_stats(model, split.tokens, ends, 32)
    grid = {t: tp.attention_stats(model, split.tokens, ends, 32, t)[1] for t in tp.TAU_GRID}
    assert tp.search_temperature(tr['pmax'], {t: g['pmax'] for t, g in grid.items()}) == 1.0
    assert tp.search_temperature(tr['entropy'], {t: g['entropy'] for t, g in grid.items()}) == 1.0
    pm = [grid[t]['pmax'] for t in tp.TAU_GRID]
    assert all(a < b for a, b in zip(pm, pm[1:]))   # a lower temperature sharpens attention
    assert tp.TAU_GRID == [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5]
    assert tp.length_rule(4096, 256) == pytest.approx(math.log(256) / math.log(4096)) == pytest.approx(2 / 3)
    assert tp.length_rule(256, 256) == 1.0
    # the closed forms give tau = 1 when nothing changes, and Prop 5.2 by hand
    assert tp.prop52_tau(256, 256, 1.3, 1.3) == pytest.approx(1.0)
    assert tp.prop51_tau(256, 256, 0.2, 1.3, 1.3) == pytest.approx(1.0)
    assert tp.prop52_tau(256, 1024, 1.0, 2.0) == pytest.approx(2 / math.sqrt(1 + 2 * math.log(4)))


def test_prop51_solves_its_fixed_point():
    L_tr, L_ex, p, s_tr, s_ex = 512, 4096, 0.5, 1.0, 1.0
    tau = tp.prop51_tau(L_tr, L_ex, p, s_tr, s_ex)
    rhs = (math.log(L_tr) + math.log(p) + s_tr ** 2 / 2) / (math.log(L_ex) + math.log(p) + s_ex ** 2 / (2 * tau ** 2))
    assert 0 < tau < 1 and tau == pytest.approx(rhs)
    assert math.isnan(tp.prop51_tau(L_tr, L_ex, 0.3, 1.5, 1.8))  # no real root: no temperature aligns P_max
    # and the printout and table say so: B^2 - 4AC = 6.159^2 - 4 * 7.114 * 1.62 = -8.16 by hand
    assert tp.prop51_text(float('nan'), L_tr, L_ex, 0.3, 1.5, 1.8).startswith('no root: B^2 - 4AC = -8.1')


def test_attention_stats_on_a_hand_distribution():
    probs = torch.tensor([[[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]]])  # [1, 1, 3, 3]
    stats = tp.AttnStats(2)
    stats(1, probs, torch.arange(3), torch.arange(3))
    per_layer, _ = stats.means()
    assert per_layer['pmax'][1] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert per_layer['entropy'][1] == pytest.approx((0 + math.log(2) + 1.5 * math.log(2)) / 3)
    one = tp.AttnStats(1)  # a single row: its own P_max, over all layers too
    one(0, probs[:, :, 1:2], torch.arange(1), torch.arange(3))
    assert one.means()[1]['pmax'] == 0.5
    stats = tp.AttnStats(2, first=1)  # rows 1 and 2 only: those that see at least 2 keys
    stats(1, probs, torch.arange(3), torch.arange(3))
    per_layer, pooled = stats.means()
    assert per_layer['pmax'][1] == pytest.approx(0.5) and stats.rows.tolist() == [0, 2]
    assert pooled['entropy'] == pytest.approx(2.5 * math.log(2) / 2)


@pytest.mark.parametrize('pe', ['alibi', 'rope', 't5', 'kerple_biaswht', 'sinusoidal', 'sandwich', 'regular'])
def test_layer0_logits_reproduce_the_models_attention(pe):
    model = tiny(pe)  # RegularGPT: its dense implementation, whose hook sees every key
    idx = torch.randint(0, V, (2, 30))
    seen = {}

    def keep_layer0_last_row(l, p, qi, ki):
        if l == 0:
            seen.setdefault(l, p[:, :, -1].clone())

    with torch.no_grad(), model.attention(hook=keep_layer0_last_row):
        model(idx)
    logits = tp.layer0_last_row_logits(model, idx)
    assert torch.allclose(logits.softmax(-1), seen[0], atol=1e-5)


def run_temperature(tmp_path, model, **kw):
    data = save_split(tmp_path, make_split(doc_lengths=(300, 40, 500, 10, 260, 700, 400)))
    path = save_ckpt(tmp_path, model, 'm')
    return tp.main(dict(tp.DEFAULTS, ckpt=[path], data_dir=data, out_dir=str(tmp_path / 'res'), **kw))[0]


def test_a_model_that_does_not_change_with_length_gets_tau_1(tmp_path, monkeypatch, capsys):
    """Windowed ALiBi with window = L_tr: every row that sees L_tr keys attends in the same way at any length, so
    Algorithm 1 must keep tau = 1 at 4 L_tr. Averaged over every causal row instead, the short peaked rows that
    dominate at L_tr make the longer input look dispersed, and a lower tau comes out. The closed forms are drawn at
    L_tr x 2^(k/4) up to the longest length; progress counts the temperatures of the grid."""
    model = tiny('alibi', window=16)
    monkeypatch.setattr('lexgpt.progress.PROGRESS_SECONDS', 0.0)
    res = run_temperature(tmp_path, model, lengths=[4], n=8, n_tr=192)
    assert [c['L_ex'] for c in res['closed_form_curves']] == [round(16 * 2 ** (k / 4)) for k in range(9)]
    assert f'm L_ex=64: 1/{len(tp.TAU_GRID)} temperatures' in capsys.readouterr().err
    got = res['lengths'][0]
    assert got['L_ex'] == 64 and got['tau_pmax'] == 1.0 and got['tau_entropy'] == 1.0
    drift = run_temperature(tmp_path, model, lengths=[4], n=8, rows='all')['lengths'][0]
    assert drift['tau_pmax'] < 1.0 and drift['tau_entropy'] < 1.0
    assert sorted(p.name for p in (tmp_path / 'res').iterdir()) == ['attention.json', 'attention.md', 'attention.png']
    saved = json.loads((tmp_path / 'res' / 'attention.json').read_text())
    assert saved['split'].endswith(':test') and saved['tau_grid'] == list(tp.TAU_GRID)  # what was measured, on what


def test_regular_gpt_statistics_follow_its_depth(tmp_path, capsys):
    C = 2
    res = run_temperature(tmp_path, tiny('regular', chunk_size=C), lengths=[1, 4], n=4, n_tr=8)
    depth = lambda T: math.ceil(math.log(T, C))  # thesis 6.2.2: ceil(log_C T) levels, K = 1 layer each
    assert res['at_L_tr']['depth'] == depth(16) == len(res['at_L_tr']['per_layer']['pmax']) == 4
    four = res['lengths'][1]
    assert four['depth'] == depth(64) == len(four['per_layer_tau1']['pmax']) == 6
    # eq. 6.1: a row sees at most C keys, so its P_max is at least 1/C and its entropy at most log C
    for p in (res['at_L_tr']['per_layer'], four['per_layer_tau1']):
        assert min(p['pmax']) >= 1 / C - 1e-9 and max(p['entropy']) <= math.log(C) + 1e-9
    md = (tmp_path / 'res' / 'attention.md').read_text()
    assert '| 5 | - | - | ' in md  # layer 5 runs at 64 tokens only
    assert 'Propositions 5.1/5.2' in capsys.readouterr().out  # layer 0 masks keys: closed forms n/a


def test_bad_settings_name_the_value(tmp_path):
    with pytest.raises(ConfigError, match="rows='middle'; allowed: full, last, all"):
        tp.main(dict(tp.DEFAULTS, rows='middle'))
    with pytest.raises(ConfigError, match=r"lengths=\[0.5, 2\]: give multiples of L_tr, each >= 1 with rows='full'"):
        tp.main(dict(tp.DEFAULTS, lengths=[0.5, 2]))


def test_the_figure_draws_the_closed_forms_as_lines_and_algorithm_1_as_marks():
    """figure() on a hand result: Propositions 5.1/5.2 and the length rule as lines over the dense curve's lengths,
    Algorithm 1's temperatures as marks alone at the measured lengths, on a log2 x axis and tau's 0.4..1.6."""
    res = dict(ckpt='m', L_tr=16, lengths=[dict(L_ex=32, tau_pmax=0.9, tau_entropy=0.95),
                                           dict(L_ex=64, tau_pmax=0.8, tau_entropy=0.85)],
               closed_form_curves=[dict(L_ex=L, prop51=1 - i / 10, prop52=1 - i / 20, length_rule=1 - i / 5)
                                   for i, L in enumerate((16, 32, 64))])
    (ax,) = tp.figure([res]).axes
    got = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()), line.get_linestyle(),
                              line.get_marker()) for line in ax.get_lines()}
    xs = [16, 32, 64]
    assert got == {'Prop. 5.1 (P_max)': (xs, [1.0, 0.9, 0.8], '-', 'None'),
                   'Prop. 5.2 (entropy)': (xs, [1.0, 0.95, 0.9], '-', 'None'),
                   r'$\log_{L_{ex}} L_{tr}$': (xs, [1.0, 0.8, 0.6], '--', 'None'),
                   'Alg. 1 P_max': ([32, 64], [0.9, 0.8], 'None', 'o'),
                   'Alg. 1 entropy': ([32, 64], [0.95, 0.85], 'None', 'x')}
    assert (ax.get_xscale(), ax.get_ylim(), ax.get_xlabel(), ax.get_ylabel()) == ('log', (0.4, 1.6), 'L_ex',
                                                                                 'temperature tau')
    assert ax.get_title() == 'm (L_tr=16; y clipped to 0.4..1.6)'
