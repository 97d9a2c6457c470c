"""kernels.py against hand-computed kernels: ALiBi's slopes, KERPLE-log's closed-form crossing, eq. 6.1's dilations."""
import json
import math

import numpy as np
import pytest
import torch

from analysis import kernels
from lexgpt.config import ConfigError
from helpers import save_ckpt, tiny


def run_kernels(tmp_path, *models, **kw):
    paths = [save_ckpt(tmp_path, m, f'{m.config.pe}{i}') for i, m in enumerate(models)]
    return kernels.main(dict(kernels.DEFAULTS, ckpt=paths, out_dir=str(tmp_path / 'res'), **kw))


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
    assert "pe='rope' has no distance bias" in out and 'rotations of q and k' in out
    assert "pe='none' has no distance bias" in out and 'nothing but the causal mask' in out
