"""Regular-language tasks of regular_lang.py (thesis 6.4.1): labels, generators, reproducibility, errors."""
import itertools
import json
import os

import numpy as np
import pytest
import torch

import regular_lang as R
from config import ConfigError, parse_config

T = R.TASKS



@pytest.mark.parametrize('task,text,y', [
    ('modular_arithmetic', '2+3*4', 4),     # (2 + 12) mod 5: * before +
    ('modular_arithmetic', '1+2-4', 4),     # thesis 6.4.1's example
    ('modular_arithmetic', '4-2*3', 3),     # 4 - 6 = -2 = 3 mod 5
    ('modular_arithmetic', '3*4*2+1', 0),   # 24 + 1
    ('modular_arithmetic', '2*3-1*4+0', 2),  # 6 - 4
    ('modular_arithmetic', '3', 3),
    ('even_pairs', 'aabba', 1), ('even_pairs', 'ab', 0), ('even_pairs', 'a', 1), ('even_pairs', 'abab', 0),
    ('parity_check', 'aabba', 0), ('parity_check', 'b', 1), ('parity_check', 'bbb', 1), ('parity_check', 'aaa', 0),
    ('cycle_navigation', '010211', 2), ('cycle_navigation', '2', 4), ('cycle_navigation', '22222', 0),
    ('cycle_navigation', '111111', 1), ('cycle_navigation', '0', 0),
    ('tomita_3', '100110', 1), ('tomita_3', '10', 0), ('tomita_3', '110', 1), ('tomita_3', '1000', 0),
    ('tomita_3', '11100', 1), ('tomita_3', '0001', 1),
    ('tomita_4', '1000', 0), ('tomita_4', '1001', 1), ('tomita_4', '00100', 1),
    ('tomita_5', '0011', 1), ('tomita_5', '001', 0), ('tomita_5', '0101', 1), ('tomita_5', '0111', 0),
    ('tomita_6', '011', 0), ('tomita_6', '001101', 1), ('tomita_6', '000', 1), ('tomita_6', '0001', 0),
    ('D_2', '0011', 1), ('D_2', '0101', 1), ('D_2', '001011', 1), ('D_2', '01', 1), ('D_2', '010011', 1),
    ('D_2', '000111', 0), ('D_2', '10', 0), ('D_2', '0110', 0), ('D_2', '001', 0), ('D_2', '0', 0),
    ('D_3', '000111', 1), ('D_3', '00101101', 1), ('D_3', '00001111', 0), ('D_3', '0111', 0),
])
def test_labels_against_hand_examples(task, text, y):
    assert R.label(T[task], text) == y


def in_dyck(s, n):
    """Reference parser of D_n = (a D_{n-1} b)*, D_0 the empty string, over a = '0', b = '1'."""
    def block(i, n):  # parse (a D_{n-1} b)* from i; return the end index or None
        while i < len(s) and s[i] == '0':
            j = block(i + 1, n - 1) if n > 1 else i + 1
            if j is None or j >= len(s) or s[j] != '1':
                return None
            i = j + 1
        return i
    return block(0, n) == len(s)


def runs_ok(s):
    runs = [(k, len(list(g))) for k, g in itertools.groupby(s)]
    return not any(a == ('1', a[1]) and a[1] % 2 and b[0] == '0' and b[1] % 2 for a, b in zip(runs, runs[1:]))


REFERENCE = {
    'tomita_3': runs_ok,
    'tomita_4': lambda s: '000' not in s,
    'tomita_5': lambda s: s.count('0') % 2 == 0 and s.count('1') % 2 == 0,
    'tomita_6': lambda s: (s.count('0') - s.count('1')) % 3 == 0,
}


@pytest.mark.parametrize('name', list(REFERENCE))
def test_tomita_automata_equal_their_definitions(name):
    for L in range(1, 11):
        x = np.array(list(itertools.product([0, 1], repeat=L)))
        want = [REFERENCE[name](''.join(map(str, r))) for r in x]
        assert T[name].labels(x).tolist() == [int(w) for w in want], L
        assert T[name].dfa.count(L)[0] == sum(want)


@pytest.mark.parametrize('name,max_len', [('D_2', 12), ('D_3', 12), ('D_4', 12), ('D_12', 14)])
def test_dyck_automata_equal_the_recursive_definition(name, max_len):
    task = T[name]
    assert len(task.symbols) == 2  # one kind of bracket: the depth must be counted, no symbol gives it away
    for L in range(1, max_len + 1):
        x = np.array(list(itertools.product([0, 1], repeat=L)))
        want = [in_dyck(''.join(map(str, r)), task.n) for r in x]
        assert task.labels(x).tolist() == [int(w) for w in want], L
        assert task.dfa.count(L)[0] == sum(want)
        if L % 2:
            assert not any(want)  # odd lengths hold no member


@pytest.mark.parametrize('name', ['D_2', 'D_3', 'D_4', 'D_12', 'tomita_3', 'tomita_4', 'tomita_5', 'tomita_6'])
def test_recognition_samples_are_half_members_as_claimed(name):
    task = T[name]
    for L in (task.lengths(1, 12)[:3] + task.lengths(95, 100)[-1:]):
        x, y = task.sample(np.random.default_rng(L), L, 64)
        assert x.shape == (64, L) and y.sum() == 32
        assert (task.labels(x) == y).all()
        if name in REFERENCE:
            assert all(REFERENCE[name](''.join(map(str, r))) == bool(c) for r, c in zip(x, y))


def test_member_sampler_is_uniform():
    # D_2 has 2 members of length 4 (0011, 0101) and 4 of length 6 (010101, 001101, 010011, 001011; 000111 is
    # three deep); each should be equally likely
    for L, k in ((4, 2), (6, 4)):
        x = T['D_2'].dfa.sample_members(np.random.default_rng(0), L, 5000)
        _, counts = np.unique(x, axis=0, return_counts=True)
        assert len(counts) == k and counts.min() > 0.8 * 5000 / k


@pytest.mark.parametrize('name', ['even_pairs', 'modular_arithmetic', 'parity_check', 'cycle_navigation'])
def test_transduction_samples_match_the_string_labels(name):
    task = T[name]
    x, y = task.sample(np.random.default_rng(1), 7, 50)
    for r, c in zip(x, y):
        text = ''.join(task.symbols[s] for s in r)
        assert R.label(task, text) == c
    assert y.min() >= 0 and y.max() < task.n_classes


def test_lengths_and_skips():
    cfg = R.DEFAULTS
    train, test = R.lengths_of(T['modular_arithmetic'], cfg)
    assert train == list(range(1, 40, 2)) and all(L % 2 for L in test) and test[-1] == 499
    train, test = R.lengths_of(T['D_2'], dict(cfg, test_stride=1))
    assert train == list(range(2, 51, 2)) and test == list(range(52, 101, 2))
    assert R.lengths_of(T['tomita_4'], cfg)[0][0] == 3  # lengths 1, 2: every string is a member
    train, test = R.lengths_of(T['parity_check'], dict(cfg, test_stride=1))
    assert train == list(range(1, 41)) and test == list(range(41, 501))


def test_sampling_is_reproducible():
    for name in ('parity_check', 'D_3', 'tomita_5', 'modular_arithmetic'):
        task = T[name]
        L = task.lengths(30, 40)[0]
        a = task.sample(np.random.default_rng(3), L, 16)
        b = task.sample(np.random.default_rng(3), L, 16)
        c = task.sample(np.random.default_rng(4), L, 16)
        assert all(np.array_equal(u, v) for u, v in zip(a, b)) and not np.array_equal(a[0], c[0])
    x, _ = T['parity_check'].sample(np.random.default_rng(0), 200, 50, p_one=0.9)
    assert 0.85 < x.mean() < 0.95


def test_clear_errors():
    with pytest.raises(ValueError, match="unknown task 'parity'.*parity_check"):
        R.get_task('parity')
    with pytest.raises(ValueError, match="modular_arithmetic has no strings of length 4; allowed: odd"):
        T['modular_arithmetic'].sample(np.random.default_rng(0), 4, 2)
    with pytest.raises(ValueError, match="D_2 has no members or no non-members of length 5"):
        T['D_2'].sample(np.random.default_rng(0), 5, 2)
    with pytest.raises(ValueError, match="tomita_5 has no members or no non-members of length 3"):
        T['tomita_5'].sample(np.random.default_rng(0), 3, 2)
    with pytest.raises(ValueError, match="symbol 'c' is not in task parity_check's alphabet"):
        R.label(T['parity_check'], 'abc')
    with pytest.raises(ValueError, match="unknown model 'rnn'"):
        R.build(T['parity_check'], dict(R.DEFAULTS, model='rnn'))
    with pytest.raises(ValueError, match="unknown model 'regulargpt_cx'.*N >= 2"):
        R.build(T['parity_check'], dict(R.DEFAULTS, model='regulargpt_cx'))
    with pytest.raises(ConfigError, match="unknown mode 'foo'"):
        R.main(['--mode=foo'])
    with pytest.raises(ConfigError, match="unknown config key 'stpes'"):
        R.main(['--stpes=3'])


TINY = ['--n_embd=16', '--n_head=2', '--n_layer=1', '--lstm_hidden=16', '--batch_size=8', '--max_steps=3',
        '--test_max_len=48', '--test_samples=4', '--p_sweep=[0.5]', '--threads=1',
        '--analyze_len=60']


def test_train_run_is_reproducible_and_writes_results(tmp_path):
    args = TINY + [f'--out_dir={tmp_path}', '--task=parity_check', '--model=regulargpt', '--seed=1']
    R.main(args)
    first = json.load(open(tmp_path / 'parity_check__regulargpt_c2__s1.json'))
    R.main(args)
    again = json.load(open(tmp_path / 'parity_check__regulargpt_c2__s1.json'))
    assert first['loss_curve'] == again['loss_curve'] and first['per_length'] == again['per_length']
    assert list(first['per_length']) == ['41', '48'] and 0 <= first['score'] <= 1
    assert set(first['p_sweep']['0.5']) == {'same', 'extrapolation'}
    for png in ('parity_check__regulargpt_c2__s1.png', 'parity_check__regulargpt_c2__s1_pca.png',
                'parity_check__regulargpt_c2__s1_erf.png'):
        assert (tmp_path / png).stat().st_size < 300_000
    assert abs(first['erf']['40']['c_first'] - 1) < 1e-5


def test_saved_weights_reproduce_the_reported_accuracies(tmp_path):
    R.main(TINY + [f'--out_dir={tmp_path}', '--task=cycle_navigation', '--model=lstm', '--save_model=True'])
    res = json.load(open(tmp_path / 'cycle_navigation__lstm__s0.json'))
    cfg = parse_config(R.DEFAULTS, TINY + ['--task=cycle_navigation', '--model=lstm'])
    task = R.get_task('cycle_navigation')
    model = R.build(task, cfg)
    model.load_state_dict(torch.load(tmp_path / 'cycle_navigation__lstm__s0.pt'))
    acc = R.evaluate(model, task, [int(L) for L in res['per_length']], cfg)
    assert {str(L): a for L, a in acc.items()} == res['per_length']


def test_table_and_bench_modes(tmp_path):
    R.main(TINY + [f'--out_dir={tmp_path}', '--mode=table', "--tasks=['tomita_6','cycle_navigation']",
                   "--models=['regulargpt_c3','transformer','lstm']", '--seeds=[0]', '--analyze=False',
                   '--test_min_len=51', '--test_max_len=54', '--train_max_len=6'])
    text = (tmp_path / 'table.md').read_text()
    assert '| tomita_6 |' in text and '| cycle_navigation |' in text and 'regulargpt_c3' in text
    assert os.path.exists(tmp_path / 'tomita_6_lengths.png')
    R.main([f'--out_dir={tmp_path}', '--mode=bench', '--bench_lengths=[16,32]', '--bench_repeats=1', '--bench_embd=16',
            '--bench_head=2'])
    assert '| 32 | 5 |' in (tmp_path / 'bench.md').read_text()


def test_depth_table_groups_lengths_by_levels(tmp_path):
    # lengths 3 and 4 need ceil(log2 L) = 2 levels, 5 needs 3; training up to length 2 needs 1
    for seed, acc in ((0, {'3': 1.0, '4': 0.5, '5': 0.0}), (1, {'3': 1.0, '4': 1.0, '5': 0.5})):
        run = dict(task='parity_check', model='regulargpt_c2', seed=seed, score=float(np.mean(list(acc.values()))),
                   per_length=acc, train_lengths=[1, 2], config=dict(dropout=0.1 * seed))
        json.dump(run, open(tmp_path / f'parity_check__regulargpt_c2__s{seed}.json', 'w'))
    R.main([f'--out_dir={tmp_path}', '--mode=table', '--train_missing=False', "--tasks=['parity_check']",
            "--models=['regulargpt_c2','lstm']", '--seeds=[0,1]'])
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
        assert torch.allclose(two.net(torch.ones(1, 3, dtype=torch.long))[0], two.net(torch.ones(1, 4, dtype=torch.long))[0])
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
