"""regular_lang.py (thesis ch. 6): the models, training and evaluation, the saved weights, the analyses, the tables
and the command line. The tasks themselves are tested in test_regular_tasks.py."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import regular_lang as R
from lexgpt.config import ConfigError, parse_config
from lexgpt.regular_tasks import TASKS as T, get_task
from test_bad_inputs import error_line

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
    return R.main(parse_config(R.DEFAULTS, argv))


def test_clear_errors():
    with pytest.raises(ValueError, match="unknown model 'rnn'"):
        R.build(T['parity_check'], dict(R.DEFAULTS, model='rnn'))
    with pytest.raises(ValueError, match="unknown model 'regulargpt_cx'.*N >= 2"):
        R.build(T['parity_check'], dict(R.DEFAULTS, model='regulargpt_cx'))
    with pytest.raises(ValueError, match="transformer_pe='regular' is RegularGPT's"):
        R.build(T['parity_check'], dict(R.DEFAULTS, model='transformer', transformer_pe='regular'))
    with pytest.raises(ConfigError, match="unknown mode 'foo'; allowed: train, table"):
        main(['--mode=foo'])
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        main(['--mode=table', '--tasks=parity_check,nope'])


def test_command_line_errors_are_one_line(monkeypatch):
    r = subprocess.run([sys.executable, 'regular_lang.py', '--stpes=3'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.startswith("error: unknown config key 'stpes'") and \
        r.stderr.count('\n') == 1, r.stderr
    # the same entry point in this process: a message exits with status 1, printed as its one line
    msg = error_line(monkeypatch, 'regular_lang', ['--mode=bench'])
    assert msg.startswith("error: unknown mode 'bench'; allowed: train, table") and '\n' not in msg, msg


TINY = ['--n_embd=16', '--n_head=2', '--n_layer=1', '--lstm_hidden=16', '--batch_size=8', '--max_steps=3',
        '--test_max_len=48', '--test_samples=4', '--p_sweep=[0.5]', '--threads=1',
        '--analyze_len=60']


def test_train_run_is_reproducible_and_writes_results(tmp_path):
    args = TINY + [f'--out_dir={tmp_path}', '--task=parity_check', '--model=regulargpt', '--seed=1']
    main(args)
    first = json.load(open(tmp_path / 'parity_check__regulargpt_c2__s1.json'))
    main(args)
    again = json.load(open(tmp_path / 'parity_check__regulargpt_c2__s1.json'))
    assert first['loss_curve'] == again['loss_curve'] and first['per_length'] == again['per_length']
    # lengths 41..48 at stride 10: 41 and the last; the score is their mean; 4 strings each, so quarters
    assert list(first['per_length']) == ['41', '48'] and first['n_test_lengths'] == 2
    assert first['train_lengths'] == [1, 40] and first['test_lengths'] == [41, 48]
    assert first['score'] == pytest.approx(np.mean(list(first['per_length'].values())))
    accs = list(first['per_length'].values()) + [first['same_length_acc']] + list(first['p_sweep']['0.5'].values())
    assert all(4 * a == int(4 * a) for a in accs) and set(first['p_sweep']['0.5']) == {'same', 'extrapolation'}
    for png in ('parity_check__regulargpt_c2__s1.png', 'parity_check__regulargpt_c2__s1_pca.png',
                'parity_check__regulargpt_c2__s1_erf.png'):
        assert (tmp_path / png).stat().st_size < 300_000
    assert first['pca']['n_classes_seen'] == 2  # PARITY has two transitions (thesis 6.6.3)
    # ERF at the training length 40, analyze_len / 2 and analyze_len; the normalised gradient sums to 1 (c_0)
    assert sorted(first['erf'], key=int) == ['30', '40', '60']
    for L, e in first['erf'].items():
        assert abs(e['c_first'] - 1) < 1e-5 and 1 <= e['erf90'] <= int(L) and e['c_half'] <= 1 + 1e-6


def test_saved_weights_reproduce_the_reported_accuracies(tmp_path):
    main(TINY + [f'--out_dir={tmp_path}', '--task=cycle_navigation', '--model=lstm', '--save_model=True'])
    res = json.load(open(tmp_path / 'cycle_navigation__lstm__s0.json'))
    cfg = parse_config(R.DEFAULTS, TINY + ['--task=cycle_navigation', '--model=lstm'])
    task = get_task('cycle_navigation')
    model = R.build(task, cfg)
    model.load_state_dict(torch.load(tmp_path / 'cycle_navigation__lstm__s0.pt', weights_only=True))
    acc = R.evaluate(model, task, [int(L) for L in res['per_length']], cfg)
    assert {str(L): a for L, a in acc.items()} == res['per_length']


def test_table_mode_trains_missing_runs_and_tabulates_them(tmp_path):
    args = TINY + [f'--out_dir={tmp_path}', '--mode=table', '--tasks=tomita_6,cycle_navigation',
                   '--models=regulargpt_c3,transformer,lstm', '--seeds=0', '--analyze=False',
                   '--test_min_len=51', '--test_max_len=54', '--train_max_len=6']
    main(args)
    text = (tmp_path / 'table.md').read_text()
    for t in ('tomita_6', 'cycle_navigation'):
        cells = []
        for m in ('regulargpt_c3', 'transformer', 'lstm'):
            res = json.load(open(tmp_path / f'{t}__{m}__s0.json'))
            assert res['train_lengths'][1] == 6 and res['test_lengths'] == [51, 54]
            cells.append(f"{100 * res['score']:.1f} / {100 * res['score']:.1f} (1)")  # one seed: Max = Avg
        assert f"| {t} | {' | '.join(cells + list(R.THESIS_6_1[t]))} |" in text
        assert os.path.exists(tmp_path / f'{t}_lengths.png')
    assert json.load(open(tmp_path / 'cycle_navigation__lstm__s0.json'))['per_length'].keys() == {'51', '54'}
    # a second call reuses the run files instead of training again
    stamps = {f: os.stat(tmp_path / f).st_mtime_ns for f in os.listdir(tmp_path) if f.endswith('__s0.json')}
    main(args)
    assert len(stamps) == 6 and stamps == {f: os.stat(tmp_path / f).st_mtime_ns for f in stamps}


def test_depth_table_groups_lengths_by_levels(tmp_path):
    # lengths 3 and 4 need ceil(log2 L) = 2 levels, 5 needs 3; training up to length 2 needs 1
    for seed, acc in ((0, {'3': 1.0, '4': 0.5, '5': 0.0}), (1, {'3': 1.0, '4': 1.0, '5': 0.5})):
        res = dict(task='parity_check', model='regulargpt_c2', seed=seed, score=float(np.mean(list(acc.values()))),
                   per_length=acc, train_lengths=[1, 2], config=dict(dropout=0.1 * seed))
        json.dump(res, open(tmp_path / f'parity_check__regulargpt_c2__s{seed}.json', 'w'))
    main([f'--out_dir={tmp_path}', '--mode=table', '--train_missing=False', '--tasks=parity_check',
          '--models=regulargpt_c2,lstm', '--seeds=0,1'])
    text = (tmp_path / 'table.md').read_text()
    assert '| parity_check | regulargpt_c2 | 1 | 87.5 | 25.0 |' in text  # (1 + .5 + 1 + 1) / 4 and (0 + .5) / 2
    assert '| parity_check | 83.3 / 66.7 (2, dropout 0/0.1) | - |' in text  # seed means 50.0 and 83.3


def test_regulargpt_input_is_padded_to_a_power_of_C_because_masking_cannot_count():
    torch.manual_seed(0)
    model = R.build(T['parity_check'], dict(R.DEFAULTS, model='regulargpt_c3')).eval()
    x = torch.ones(2, 5, dtype=torch.long)
    xp = model.prepare(x)
    pad = len(T['parity_check'].symbols) + T['parity_check'].n_classes
    assert xp.shape == (2, 9) and (xp[:, :4] == pad).all() and torch.equal(xp[:, 4:], x)
    assert model.prepare(torch.ones(1, 9, dtype=torch.long)).shape == (1, 9)
    two = R.build(T['parity_check'], dict(R.DEFAULTS, model='regulargpt')).eval()
    with torch.no_grad():
        # masked missing keys: 'bbb' and 'bbbb' are indistinguishable, whatever the weights
        assert torch.allclose(two.net(torch.ones(1, 3, dtype=torch.long))[0],
                              two.net(torch.ones(1, 4, dtype=torch.long))[0])
        # padded with the pad symbol they are not
        assert not torch.allclose(two(torch.ones(1, 3, dtype=torch.long)), two(torch.ones(1, 4, dtype=torch.long)))


@pytest.mark.parametrize('model', ['regulargpt', 'transformer'])
def test_dropout_reaches_the_model(model):
    # --dropout is active in training (two passes differ) and off at test time (two passes agree)
    x = torch.from_numpy(T['parity_check'].sample(np.random.default_rng(0), 20, 8)[0])
    for p in (0.0, 0.3):
        torch.manual_seed(0)
        net = R.build(T['parity_check'], dict(R.DEFAULTS, model=model, dropout=p))
        assert torch.equal(net(x), net(x)) == (p == 0.0)
        net.eval()
        assert torch.equal(net(x), net(x))


def test_transformer_with_randomized_positions(tmp_path):
    """transformer_randL: Ruoss et al.'s positions for the Transformer baseline, sampled in training, one seeded
    draw per length in testing (so the reported accuracies repeat)."""
    task = R.get_task('parity_check')
    net = R.build(task, dict(R.DEFAULTS, model='transformer_rand1024'))
    assert net.net.config.randomized_positions == 1024 and net.net.config.pe == 'rope'
    x = torch.from_numpy(task.sample(np.random.default_rng(0), 30, 4)[0])
    net.eval()
    with torch.no_grad():
        assert torch.equal(net(x), net(x))
    net.train()
    torch.manual_seed(0)
    a = net(x)
    torch.manual_seed(1)
    assert not torch.equal(a, net(x))
    with pytest.raises(ValueError, match=r"transformer_randL needs L >= the longest test length 500"):
        R.build(task, dict(R.DEFAULTS, model='transformer_rand100'))
