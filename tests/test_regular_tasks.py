"""regular_tasks.py (thesis 6.4.1): labels against hand examples and reference definitions, the samplers, the length
ranges, the seeded test sets, the window transitions of the PCA plot, and the errors. numpy only, no torch."""
import hashlib
import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from lexgpt.regular_tasks import TASKS as T, get_task

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    assert T[task].label(text) == y


def test_parse_maps_symbols_to_their_index():
    assert T['modular_arithmetic'].parse('3*4-0').tolist() == [[3, 7, 4, 6, 0]]
    assert T['parity_check'].parse('abba').tolist() == [[0, 1, 1, 0]]
    assert T['cycle_navigation'].parse('210').dtype == np.int64


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


def chi2_bound(df, z=5.0):
    """The chi-square quantile ~z standard deviations up (Wilson-Hilferty): a uniform sampler exceeds it with
    probability about 3e-7."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


@pytest.mark.parametrize('name,L,member', [('D_3', 8, lambda s: in_dyck(s, 3)), ('tomita_4', 6, REFERENCE['tomita_4'])],
                         ids=['D_3', 'tomita_4'])
def test_member_sampler_is_uniform(name, L, member):
    """Every member of the length equally likely, by a chi-square bound. At these lengths a random walk that picks
    each next symbol uniformly among those that can still complete a member is far from uniform (D_3: 00001111 is
    no member; tomita_4: no 000)."""
    strings = [''.join(map(str, r)) for r in itertools.product([0, 1], repeat=L)]
    members = sorted(s for s in strings if member(s))
    n = 400 * len(members)
    x = T[name].dfa.sample_members(np.random.default_rng(0), L, n)
    drawn, counts = np.unique([''.join(map(str, r)) for r in x], return_counts=True)
    assert drawn.tolist() == members  # every member, and nothing else
    chi2 = float(((counts - n / len(members)) ** 2 / (n / len(members))).sum())
    assert chi2 < chi2_bound(len(members) - 1), (chi2, chi2_bound(len(members) - 1))


@pytest.mark.parametrize('name', ['even_pairs', 'modular_arithmetic', 'parity_check', 'cycle_navigation'])
def test_transduction_samples_match_the_string_labels(name):
    task = T[name]
    x, y = task.sample(np.random.default_rng(1), 7, 50)
    for r, c in zip(x, y):
        assert task.label(''.join(task.symbols[s] for s in r)) == c
    assert y.min() >= 0 and y.max() < task.n_classes


def test_length_ranges_and_skips():
    train, test = T['modular_arithmetic'].length_ranges()
    assert train == list(range(1, 40, 2)) and test == list(range(41, 500, 20)) + [499]  # every 10th odd length
    train, test = T['D_2'].length_ranges(test_stride=1)
    assert train == list(range(2, 51, 2)) and test == list(range(52, 101, 2))
    assert T['tomita_4'].length_ranges()[0][0] == 3  # lengths 1, 2: every string is a member
    train, test = T['parity_check'].length_ranges(test_stride=1)
    assert train == list(range(1, 41)) and test == list(range(41, 501))
    assert T['parity_check'].length_ranges(6, 51, 54, 2) == (list(range(1, 7)), [51, 53, 54])  # the last stays


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


# md5 of x and y of 32 test strings, as drawn by regular_lang.py before the tasks moved into regular_tasks.py: the
# runs in results/regular were scored on these strings, so new runs stay comparable only while they are unchanged
TEST_SETS = [('parity_check', 41, 0.5, 'ae98376d7183'), ('parity_check', 51, 0.1, '862f62e1bc6e'),
             ('cycle_navigation', 491, 0.5, 'f6941950a30d'), ('modular_arithmetic', 41, 0.5, '200eaf2a8b5f'),
             ('D_2', 52, 0.5, '5c10056f20a3'), ('tomita_3', 100, 0.5, '7919b035b9d4')]


@pytest.mark.parametrize('name,L,p_one,md5', TEST_SETS)
def test_test_sets_are_those_the_results_were_scored_on(name, L, p_one, md5):
    task = T[name]
    task.sample(np.random.default_rng(0), L, 5, p_one)  # drawing other strings first changes nothing
    x, y = task.test_set(L, 32, p_one)
    assert hashlib.md5(x.tobytes() + y.tobytes()).hexdigest()[:12] == md5
    assert (task.labels(x) == y).all()


def test_window_state_is_the_transition_of_the_window():
    parity, cycle = T['parity_check'], T['cycle_navigation']
    x = parity.parse('abbab')[0]
    # b's in the last 2, 4 and (clipped) 10 tokens up to position 4: 'ab', 'bbab', 'abbab'
    assert [parity.window_state(x, 4, w) for w in (2, 4, 10)] == [1, 1, 1]
    assert [parity.window_state(x, 2, w) for w in (1, 2, 3)] == [1, 0, 0]  # 'b', 'bb', 'abb'
    x = cycle.parse('1102')[0]  # moves +1 +1 0 -1
    assert [cycle.window_state(x, 3, w) for w in (1, 2, 3, 4)] == [4, 4, 0, 1]
    for task in (parity, cycle):  # the window of the whole string is its label
        xs, ys = task.sample(np.random.default_rng(5), 13, 20)
        assert [task.window_state(r, 12, 13) for r in xs] == ys.tolist()


def test_clear_errors():
    with pytest.raises(ValueError, match="unknown task 'parity'.*parity_check"):
        get_task('parity')
    with pytest.raises(ValueError, match="modular_arithmetic has no strings of length 4; allowed: odd"):
        T['modular_arithmetic'].sample(np.random.default_rng(0), 4, 2)
    with pytest.raises(ValueError, match="D_2 has no members or no non-members of length 5"):
        T['D_2'].sample(np.random.default_rng(0), 5, 2)
    with pytest.raises(ValueError, match="tomita_5 has no members or no non-members of length 3"):
        T['tomita_5'].test_set(3, 2)
    with pytest.raises(ValueError, match="symbol 'c' is not in task parity_check's alphabet"):
        T['parity_check'].label('abc')
    with pytest.raises(ValueError, match="D_2 has no usable lengths in train 1..1 or test 51..51"):
        T['D_2'].length_ranges(1, 51, 51)
    with pytest.raises(ValueError, match="even_pairs has no transition per window; "
                                         "allowed: parity_check, cycle_navigation$"):
        T['even_pairs'].window_state(np.zeros(3, np.int64), 2, 2)



def test_the_library_needs_no_torch():
    code = "import sys; from lexgpt import regular_tasks; assert 'torch' not in sys.modules"
    assert subprocess.run([sys.executable, '-c', code], cwd=ROOT).returncode == 0
