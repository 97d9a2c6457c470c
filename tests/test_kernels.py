"""kernels.py against hand-computed kernels: ALiBi's slopes, KERPLE-log's closed-form crossing, eq. 6.1's dilations."""
import json
import math

import numpy as np
import pytest
import torch

from analysis import kernels
from lexgpt.config import ConfigError, parse_config
from helpers import save_ckpt, tiny


def run_kernels(tmp_path, *models, **kw):
    paths = [save_ckpt(tmp_path, m, f'{m.config.pe}{i}') for i, m in enumerate(models)]
    return kernels.main(parse_config(kernels.DEFAULTS, [f"--ckpt={','.join(paths)}", f"--out_dir={tmp_path / 'res'}"]
                                     + [f'--{k}={v}' for k, v in kw.items()]))


def test_effective_length_counts_on_hand_set_alibi():
    model = tiny('alibi')   # 4 heads: slopes 2^-2, 2^-4, 2^-6, 2^-8; eff = first d with slope * d > 2
    effs = kernels.effective_lengths(kernels.kernel_tables(model, 600)[0][0])
    assert effs.tolist() == [9, 33, 129, 513]
    assert kernels.head_counts(effs, [0, 8, 9, 32, 33, 200, 513, 600]).tolist() == [0, 0, 1, 1, 2, 3, 4, 4]
    assert np.isinf(kernels.effective_lengths(kernels.kernel_tables(model, 100)[0][0])[3])  # beyond the table: never


def test_effective_length_on_hand_set_kerple_log():
    model = tiny('kerple_log')
    with torch.no_grad():  # -r1 log(1 + r2 d) < -2  <=>  d > (e^(2/r1) - 1) / r2
        model.pe.r1[0] = torch.tensor([1.0, 0.5, 2.0, 0.1])  # the set shared by every layer
        model.pe.r2[0] = torch.tensor([1.0, 2.0, 0.5, 1.0])
    effs = kernels.effective_lengths(kernels.kernel_tables(model, 1000)[1][0])
    want = [math.floor((math.exp(2 / r1) - 1) / r2) + 1 for r1, r2 in [(1, 1), (0.5, 2), (2, 0.5)]]
    assert effs[:3].tolist() == want == [7, 27, 4] and np.isinf(effs[3])


@pytest.mark.parametrize('pe, per_layer, kernels_counted', [
    ('alibi', False, 4), ('t5', False, 4), ('kerple_log', False, 4), ('kerple_log', True, 2 * 4)])
def test_a_kernel_shared_by_all_layers_counts_once_per_head(tmp_path, pe, per_layer, kernels_counted):
    # 2 layers x 4 heads: a shared kernel is 4 kernels (Fig. 3.6 counts H), per-layer ones are L x H
    (res,) = run_kernels(tmp_path, tiny(pe, kernel_per_layer=per_layer), length=4)
    assert res['kernels'] == kernels_counted == sum(len(t['effective_length']) for t in res['tables'])
    assert [t['label'] for t in res['tables']] == (['layer 0', 'layer 1'] if per_layer else ['all layers'])
    md = (tmp_path / 'res' / 'kernels.md').read_text()
    assert ('2 distinct of 2 layers' if per_layer else 'one, shared by all 2 layers') in md
    assert sorted(p.name for p in (tmp_path / 'res').iterdir()) == \
        ['kernels.json', 'kernels.md', 'kernels.png', 'kernels_effective_length.png']


@pytest.mark.parametrize('C, K', [(2, 1), (3, 2)])
def test_regular_gpt_shows_its_bias_at_every_depth_by_eq_6_1(tmp_path, C, K):
    model = tiny('regular', chunk_size=C, thickness=K)
    (res,) = run_kernels(tmp_path, model, length=3)  # T = 48 tokens, distances 0..47
    T = 48
    levels = math.ceil(math.log(T) / math.log(C) - 1e-9)  # ceil(log_C T): 6 for C = 2, 4 for C = 3
    assert [t['layers'] for t in res['tables']] == [[depth] for depth in range(K * levels)]
    assert [t['label'] for t in res['tables']] == [f'depth {depth}' for depth in range(K * levels)]
    for depth, t in enumerate(res['tables']):
        step = C ** (depth // K)  # layer l*K + k: dilation C^l, the k-th shared parameter set
        assert t['distances'] == [i * step for i in range(C) if i * step < T]
        want = model.pe.r[depth % K].detach().numpy()[:, :len(t['distances'])]
        assert np.allclose(t['bias'], want, atol=1e-4)
    saved = json.loads((tmp_path / 'res' / 'kernels.json').read_text())
    assert saved['results'][0]['tables'][-1]['reach'] == max(res['tables'][-1]['distances'])
    assert 'Masked kernels' in (tmp_path / 'res' / 'kernels.md').read_text()


def test_encodings_without_a_kernel_are_explained(tmp_path, capsys):
    with pytest.raises(ConfigError, match='none of the checkpoints has a bias or weight kernel'):
        run_kernels(tmp_path, tiny('rope'), tiny('none'))
    out = capsys.readouterr().out
    said = {line.split(':')[0]: line for line in out.splitlines()}  # each checkpoint's own line
    assert "pe='rope' has no distance bias" in said['rope0'] and 'rotations of q and k' in said['rope0']
    assert "pe='none' has no distance bias" in said['none1'] and 'nothing but the causal mask' in said['none1']


def test_the_json_holds_each_kernel_at_its_named_distances(tmp_path, capsys):
    """A bias-and-weight kernel (KERPLE's bias with a weight, shared by both layers: one table) at 32 L_tr: the JSON
    names the run and its largest distance, and holds b and w at d = 1, L_tr, 4 L_tr (and b at 16 L_tr), to 4
    decimals, read off the model's own tables."""
    model = tiny('kerple_biaswht')
    (res,) = run_kernels(tmp_path, model, length=32)
    (b, w), D = kernels.kernel_tables(model, 511)[0], 511
    assert (res['ckpt'], res['max_distance'], [t['label'] for t in res['tables']]) == ('kerple_biaswht0', D,
                                                                                       ['all layers'])
    entry = res['tables'][0]
    assert entry['bias_at'] == {k: b[:, x].round(4).tolist() for k, x in (('d=1', 1), ('L_tr', 16), ('4L_tr', 64),
                                                                          ('16L_tr', 256))}
    assert entry['weight_at'] == {k: w[:, x].round(4).tolist() for k, x in (('d=1', 1), ('L_tr', 16), ('4L_tr', 64))}
    assert f"wrote {tmp_path / 'res' / 'kernels'}_effective_length.png" in capsys.readouterr().out


def test_the_memory_check_asks_for_128_bytes_a_layer_head_and_distance(tmp_path, monkeypatch):
    """RegularGPT (C = 2) at 33 tokens has ceil(log2 33) = 6 layers of 4 heads: 128 x 6 x 4 x 33 bytes, named."""
    asked = []
    monkeypatch.setattr(kernels, 'check_memory', lambda nbytes, what: asked.append((nbytes, what)))
    run_kernels(tmp_path, tiny('regular', chunk_size=2), length=2.0625)
    assert asked == [(128 * 6 * 4 * 33, 'length=2.0625 (33 distances of regular0)')]


def test_the_figures_draw_each_head_its_threshold_and_the_head_counts(tmp_path):
    """figures(): a row per run (a second for weights), a panel per distinct table, empty panels off; each head's
    b(d) - b(0) against d with the -2 line and L_tr dotted; each head's weight; a masked kernel at the distances its
    depth sees; Fig. 3.6's step curve of head counts per run, named."""
    models = [tiny('alibi'), tiny('kerple_biaswht', kernel_per_layer=True), tiny('regular', chunk_size=2)]
    runs = [kernels.load_runs([save_ckpt(tmp_path, m, name)])[0] for m, name in zip(models, ('a', 'kw', 'r'))]
    measured = [kernels.measure(r, 4) for r in runs]
    fig, fig2 = kernels.figures(measured)
    axes = np.array(fig.axes).reshape(4, -1)  # rows: alibi, kerple bias, kerple weight, regular
    d = np.arange(64)
    (_, b, _), = measured[0][1]['tables']
    heads = [line for line in axes[0, 0].get_lines() if line.get_label().startswith('head')]
    assert [line.get_label() for line in heads] == [f'head {h}' for h in range(4)]
    assert all(np.array_equal(line.get_xdata(), d) and np.allclose(line.get_ydata(), b[h] - b[h, 0])
               for h, line in enumerate(heads))
    styles = {(tuple(line.get_xdata()), tuple(line.get_ydata())): line.get_linestyle() for line in
              axes[0, 0].get_lines() if not line.get_label().startswith('head')}
    assert styles == {((0, 1), (-2.0, -2.0)): '--', ((16, 16), (0, 1)): ':'}
    assert axes[0, 0].get_title() == 'a all layers: bias' and not axes[0, 1].axison  # alibi has one table
    _, b1, w1 = measured[1][1]['tables'][1]
    assert axes[1, 1].get_title() == 'kw layer 1: bias' and axes[2, 1].get_title() == 'kw layer 1: weight'
    weights = [line for line in axes[2, 1].get_lines() if line.get_linestyle() == '-']
    assert all(np.array_equal(line.get_xdata(), d) and np.allclose(line.get_ydata(), w1[h])
               for h, line in enumerate(weights)) and len(weights) == 4
    assert any(line.get_linestyle() == ':' for line in axes[2, 1].get_lines())
    masked = measured[2][0]['tables'][1]  # depth 1 of RegularGPT: distances 0 and 2
    assert [list(line.get_xdata()) for line in axes[3, 1].get_lines() if line.get_label() == 'head 0'] == [
        masked['distances']]
    steps = {line.get_label(): line for line in fig2.axes[0].get_lines()}
    assert set(steps) == {'a', 'kw'}  # RegularGPT's masked kernels have no effective length
    assert np.array_equal(steps['a'].get_ydata(), kernels.head_counts(measured[0][1]['effs'], d))
