"""
tools/mutation.py's bookkeeping (#75), without mutmut or a real pytest run: a stopped run goes on where it stopped, a
line every `every` seconds while a module's tests run, a missing mutmut is a one-line error, and README.md's parts.
A stand-in for mutmut's mutants and for the pytest of a module's tests keeps each test under a second.
"""
import importlib.metadata
import json
import os
import subprocess

import pytest

from lexgpt.config import ConfigError
from tools import mutation

TOY = ''.join(f'x{i} = {i}\n' for i in range(8))


class ToyMutants:
    """Mutant k sets x_k to k + 100: line k + 1 changes, nothing else."""

    def __init__(self, path, code):
        self.lines = code.splitlines()

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, k):
        after = f'x{k} = {k + 100}'
        new = self.lines[:k] + [after] + self.lines[k + 1:]
        return k + 1, self.lines[k], after, '\n'.join(new) + '\n'


class ToyTests:
    """The module's tests: they catch a changed x_k for even k only. stop_after: a KeyboardInterrupt (a run stopped)
    when the next mutant would start."""

    def __init__(self, stop_after=None):
        self.runs, self.baselines, self.stop_after = [], 0, stop_after

    def __call__(self, tree, tests, timeout, tick=None, every=30.0):
        with open(os.path.join(tree, 'toy.py')) as f:
            code = f.read()
        if code == TOY:
            self.baselines += 1
            return 'passed', None, 1.0
        if self.stop_after is not None and len(self.runs) == self.stop_after:
            raise KeyboardInterrupt
        k = next(i for i, (a, b) in enumerate(zip(code.splitlines(), TOY.splitlines())) if a != b)
        self.runs.append(k)
        tick(31.0)
        return ('failed', f'tests/test_toy.py::test_x{k}', 2.0) if k % 2 == 0 else ('passed', None, 2.0)


@pytest.fixture
def toy(monkeypatch):
    """TARGETS holds one module, toy.py (eight lines), tested by tests/test_toy.py; the scratch tree holds both."""
    code = {'toy.py': TOY, 'tests/test_toy.py': 'def test_x(): pass\n'}

    def snapshot(at, into):
        for path, text in code.items():
            os.makedirs(os.path.dirname(os.path.join(into, path)), exist_ok=True)
            with open(os.path.join(into, path), 'w') as f:
                f.write(text)
    monkeypatch.setattr(mutation, 'TARGETS', dict(toy=('toy.py', ['tests/test_toy.py'])))
    monkeypatch.setattr(mutation, 'snapshot', snapshot)
    monkeypatch.setattr(mutation, 'Mutants', ToyMutants)
    monkeypatch.setattr(mutation, 'mutmut_version', lambda: 'stand-in')
    return code


def cfg(out_dir, **kw):
    return dict(mutation.DEFAULTS, modules=['toy'], n=5, out_dir=str(out_dir), name='wide', **kw)


def rows(path):
    with open(path) as f:
        data = json.load(f)
    return data, [{k: v for k, v in r.items() if k != 'seconds'} for r in data['modules']['toy']['results']]


def test_a_stopped_run_goes_on_where_it_stopped(toy, tmp_path, monkeypatch, capsys):
    """Stopped after 2 of 5 mutants, the rerun runs only the other 3 (no baseline again), and the JSON ends as one
    uninterrupted run's. Changed test files: nothing kept."""
    whole = ToyTests()
    monkeypatch.setattr(mutation, 'pytest', whole)
    mutation.main(cfg(tmp_path / 'whole'))
    _, expected = rows(tmp_path / 'whole' / 'wide.json')
    assert len(whole.runs) == 5 and whole.baselines == 1
    # even k killed, odd k survived, by ToyTests' rule
    assert [r['killed'] for r in expected] == [r['index'] % 2 == 0 for r in expected]

    stopped = ToyTests(stop_after=2)
    monkeypatch.setattr(mutation, 'pytest', stopped)
    with pytest.raises(KeyboardInterrupt):
        mutation.main(cfg(tmp_path / 'run'))
    data, partial = rows(tmp_path / 'run' / 'wide.json')
    assert data['status'] == 'partial' and partial == expected[:2]
    assert '**A run under way** (2 mutants so far' in (tmp_path / 'run' / 'README.md').read_text()

    rest = ToyTests()
    monkeypatch.setattr(mutation, 'pytest', rest)
    mutation.main(cfg(tmp_path / 'run'))
    data, done = rows(tmp_path / 'run' / 'wide.json')
    assert rest.runs == [r['index'] for r in expected[2:]] and rest.baselines == 0
    assert data['status'] == 'done' and done == expected
    assert data['modules']['toy']['killed'] == sum(r['killed'] for r in expected)
    # the heartbeat while a mutant's tests run: the module, k of n, the kills so far
    assert 'mutation: toy 2/5, ' in capsys.readouterr().err

    toy['tests/test_toy.py'] = 'def test_x(): assert True\n'  # the tests changed: their verdicts may too
    again = ToyTests()
    monkeypatch.setattr(mutation, 'pytest', again)
    mutation.main(cfg(tmp_path / 'run'))
    assert len(again.runs) == 5 and again.baselines == 1


class SlowPopen:
    """A pytest process that has not finished for the first `slow` waits (each as long as asked, up to 10 ms), then
    ends with a failure; kill() ends it at once."""

    def __init__(self, cmd, slow, **kw):
        self.slow, self.waits, self.killed, self.returncode = slow, [], False, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def communicate(self, timeout=None):
        if self.killed:
            return '', None
        self.waits.append(timeout)
        if len(self.waits) <= self.slow:
            import time
            time.sleep(min(timeout, 0.01))
            raise subprocess.TimeoutExpired('pytest', timeout)
        self.returncode = 1
        return 'FAILED tests/test_x.py::test_a - assert 1 == 2\n', None

    def kill(self):
        self.killed = True


def test_a_line_every_interval_while_the_tests_run(monkeypatch):
    """Three waits without an end: three ticks, no wait longer than the interval, then the first failing test. A
    process that outlasts its timeout is killed and reported as one."""
    made = []
    monkeypatch.setattr(mutation.subprocess, 'Popen', lambda cmd, **kw: made.append(SlowPopen(cmd, 3)) or made[-1])
    ticks = []
    status, failing, _ = mutation.pytest('.', ['tests/test_x.py'], 1000, ticks.append, every=30)
    assert (status, failing, len(ticks)) == ('failed', 'tests/test_x.py::test_a', 3)
    assert len(made[0].waits) == 4 and max(made[0].waits) <= 30
    never = lambda cmd, **kw: made.append(SlowPopen(cmd, 10 ** 6)) or made[-1]
    monkeypatch.setattr(mutation.subprocess, 'Popen', never)
    status, failing, sec = mutation.pytest('.', ['tests/test_x.py'], 0.05, lambda s: None, every=0.01)
    assert (status, failing, made[-1].killed) == ('timeout', None, True) and sec >= 0.05


def test_the_progress_line_counts_the_time_left_at_the_rate_seen():
    """10 mutants in 600 s: 60 s each; 50 - 12 left in this module and 100 after it: 138 x 60 s = 2.3 h."""
    clock = mutation.Clock(n_after=100)
    assert clock.line('model', 12, 50, 10) == 'mutation: model 12/50, 10 killed'  # no rate before the first
    clock.seconds, clock.run = 600.0, 10
    assert clock.line('model', 12, 50, 10, running=45) == \
        'mutation: model 12/50, 10 killed; mutant 13 running for 45 s; about 2.3 h left at 60 s a mutant'


def test_no_mutmut_is_a_one_line_error_with_its_install_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(mutation.importlib.metadata, 'version', missing)
    with pytest.raises(ConfigError, match=r'mutmut is not installed.*: python -m pip install mutmut==3\.8\.1$'):
        mutation.mutmut_version()


def test_the_readme_keeps_59s_table_and_shows_every_survivor_of_the_wide_run(tmp_path):
    """#59's part is the committed README's text, word for word, from its JSONs; the wide run's table counts an
    equivalent survivor out of the rate (2 killed of 3: 67%), and its page lists the survivors only, a survivor nobody
    explained saying so."""
    committed = os.path.join(mutation.ROOT, 'results', 'mutation')
    for name in ('before', 'after'):
        with open(os.path.join(committed, name + '.json')) as f:
            (tmp_path / (name + '.json')).write_text(f.read())
    with open(os.path.join(committed, 'after.json')) as f:
        part_59 = mutation.readme_59(str(tmp_path), json.load(f))
    with open(os.path.join(committed, 'README.md')) as f:
        assert part_59 in f.read()
    (key, note), = [(k, v) for k, v in mutation.EQUIVALENT.items() if k[2] == "w = cfg.get('windowed_at', None)"]
    row = lambda i, killed, before='a = 1', after='a = 2': dict(index=i, line=i, before=before, after=after,
                                                                 killed=killed)
    results = [row(0, True), row(1, True), row(2, False, key[1], key[2]), row(3, False, 'b = 1', 'b = 0')]
    wide = dict(command='python -m tools.mutation --name=wide', tool='stand-in', at='abc1234', n=4, seed=0,
                status='done', modules=dict(evaluation=dict(file=key[0], tests=['tests/test_x.py'], mutants=9,
                                                            sampled=4, killed=2, results=results)))
    (tmp_path / 'wide.json').write_text(json.dumps(wide))
    mutation.readme(str(tmp_path))
    text = (tmp_path / 'README.md').read_text()
    assert text.index('(#75)') < text.index('#59') and part_59 in text
    assert ('| evaluation | lexgpt/evaluation.py | 9 | 4/4 | 2 | 1 | 0 | 67% | [survivors](wide/evaluation.md) | - | '
            'tests/test_x.py |') in text
    page = (tmp_path / 'wide' / 'evaluation.md').read_text()  # the survivors, a page per module
    assert note in page and '| 3 | `b = 1` | `b = 0` | **not explained** |' in page and '| 1 |' not in page


def test_a_module_whose_tests_fail_unmutated_is_named_and_the_run_goes_on(toy, tmp_path, monkeypatch):
    """Its tests fail before any mutation: the module is named with the failing test, and the run ends as done."""
    monkeypatch.setattr(mutation, 'pytest', lambda *a, **kw: ('failed', 'tests/test_toy.py::test_x', 1.0))
    data = mutation.main(cfg(tmp_path))
    assert data['status'] == 'done' and data['modules'] == {}
    why = 'toy: tests/test_toy.py do not pass before any mutation (tests/test_toy.py::test_x)'
    assert data['not_run'] == dict(toy=why)
    assert 'Not run, its tests fail unmutated: toy (' in (tmp_path / 'README.md').read_text()


def test_each_killed_since_note_is_checked_on_its_own_mutant(tmp_path, capsys):
    """A KILLED_SINCE note stands only if its test fails with the mutant put back: the stand-in test fails when x1 is
    changed and passes otherwise; the file is as it was afterwards; a line no longer in the file is said so."""
    (tmp_path / 'toy.py').write_text(TOY)
    seen = []

    def run_tests(tree, tests, timeout, tick):
        tick(31.0)  # a test that runs past 30 s: the heartbeat says which
        code = (tmp_path / 'toy.py').read_text()
        seen.append((tests, code != TOY))
        return ('failed' if 'x1 = 101' in code else 'passed'), None, 1.0
    rows = [dict(line=2, before='x1 = 1', after='x1 = 101', killed=False, killed_since_by='tests/t.py::a'),
            dict(line=4, before='x3 = 3', after='x3 = 103', killed=False, killed_since_by='tests/t.py::b'),
            dict(line=9, before='x9 = 9', after='x9 = 109', killed=False, killed_since_by='tests/t.py::c'),
            dict(line=5, before='x4 = 4', after='x4 = 104', killed=False, killed_since_by=None)]
    data = dict(modules=dict(toy=dict(file='toy.py', results=rows)))
    mutation.check_killers(data, str(tmp_path), run_tests)
    assert 'toy.py:2: tests/t.py::a running for 31 s' in capsys.readouterr().err
    assert [r.get('killed_since_checked') for r in rows] == [True, False, 'line gone', None]
    assert seen == [(['tests/t.py::a'], True), (['tests/t.py::b'], True)]
    assert (tmp_path / 'toy.py').read_text() == TOY
    verdicts = [mutation.why(dict(r, equivalent=None)) for r in rows]
    assert verdicts[0].endswith('(checked: it fails with the mutant)') and 'passes with the mutant' in verdicts[1]
    assert 'changed since' in verdicts[2] and verdicts[3] == '**not explained**'


def test_a_check_stands_only_for_the_test_it_ran():
    """A survivor's note checked with one test, then given another in KILLED_SINCE: the old check is dropped, so the
    README does not call the new test checked; the same test keeps its check."""
    key = next(iter(mutation.KILLED_SINCE))
    row = dict(line=1, before=key[1], after=key[2], killed=False, killed_since_by='tests/other.py::t',
               killed_since_checked=True)
    same = dict(row, killed_since_by=mutation.KILLED_SINCE[key])
    data = mutation.annotate(dict(modules=dict(m=dict(file=key[0], results=[row, same]))))
    assert 'killed_since_checked' not in row and same['killed_since_checked'] is True
    assert mutation.why(row) == f'killed now by {mutation.KILLED_SINCE[key]}' and '(checked' in mutation.why(same)
    assert data['modules']['m']['results'] == [row, same]


def test_each_planted_defect_is_in_the_code_once_and_in_the_tree_only_while_its_tests_run(tmp_path, monkeypatch):
    """tools/planted.py with a stand-in for pytest: every PLANTED line is in today's code exactly once (else the step
    stops on it); while the tests run the file holds the defect, after they run it holds the code again; a defect
    whose tests fail or time out is caught, one whose tests pass is reported not caught, and a line no longer in the
    code is a one-line error naming it."""
    from tools import planted
    for file, before, *_ in planted.PLANTED:
        with open(os.path.join(mutation.ROOT, file)) as f:
            assert f.read().count(before) == 1, (file, before)
    files = sorted({d[0] for d in planted.PLANTED})

    def copy(at, into):
        for file in files:
            os.makedirs(os.path.join(into, os.path.dirname(file)), exist_ok=True)
            with open(os.path.join(mutation.ROOT, file)) as src, open(os.path.join(into, file), 'w') as dst:
                dst.write(src.read())
    seen = []

    def fake_pytest(tree, tests, timeout, tick=None):  # the first defect fails a test, the second times out
        file, before, after = planted.PLANTED[len(seen)][:3]
        with open(os.path.join(tree, file)) as f, open(os.path.join(mutation.ROOT, file)) as g:
            seen.append(f.read() == g.read().replace(before, after))
        return [('failed', f'{tests[0]}::test_x', 1.0), ('timeout', None, 600.0)][len(seen) - 1] if len(seen) <= 2 \
            else ('passed', None, 1.0)
    monkeypatch.setattr(planted, 'snapshot', copy)
    data = planted.main(dict(planted.DEFAULTS, out_dir=str(tmp_path)), run_tests=fake_pytest)
    assert seen == [True] * len(planted.PLANTED)
    assert [r['caught'] for r in data['results']] == [True, True] + [False] * (len(planted.PLANTED) - 2)
    md = (tmp_path / 'planted.md').read_text()
    assert '| tests/test_recall.py::test_x |' in md and '| timeout |' in md
    assert f"2 of {len(planted.PLANTED)} caught" in md and md.count('**not caught**') == len(planted.PLANTED) - 2
    tree = tmp_path / 'tree'
    copy('', str(tree))
    stale = ('lexgpt/ruler_tasks.py', 'no such line', 'x', 'a defect', 'tests/test_ruler.py')
    with pytest.raises(ConfigError, match="lexgpt/ruler_tasks.py: 'no such line' is in the code 0 times"):
        planted.plant(str(tree), stale, fake_pytest)
    with open(tree / 'lexgpt' / 'ruler_tasks.py') as f, open(os.path.join(mutation.ROOT, 'lexgpt/ruler_tasks.py')) as g:
        assert f.read() == g.read()
