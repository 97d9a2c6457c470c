"""results.sh lease (#42) as a dry run: every step of a GPU session's first command, on the CPU at toy sizes, through
the same lines of results.sh and lease.py, so that the script cannot rot between the rare leases of a GPU. No GPU,
no network: a tiny Llama made here stands in for SmolLM2, and the corpus is 200 files of this Python's stdlib."""
import glob
import json
import os
import re
import subprocess
import sys

import pytest

from tools import lease
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = {'tests': 'python -m pytest', 'eval': 'python -m tools.bench configs/tiny.py --mode=eval',
         'eval_128k': 'python -m tools.bench configs/tiny.py --mode=eval',
         'train_compiled': 'python -m tools.bench configs/thesis_162m.py --mode=train',
         'train_eager': 'python -m tools.bench configs/thesis_162m.py --mode=train',
         'pretrained': 'python -m tools.bench --mode=pretrained', 'mid_sinusoidal-s0': 'python train.py configs/lease_mid.py'}


def dry_run(out, llama, **env):
    env = dict(os.environ, LEASE_DRY='1', LEASE_OUT=str(out), LEASE_PRETRAINED=llama, **env)
    env.pop('OUT', None)  # the device call's folder: a dry run sends nothing anywhere
    return subprocess.run(['bash', 'results.sh', 'lease'], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope='module')
def dry(tmp_path_factory):
    transformers = pytest.importorskip('transformers')
    import torch
    root = tmp_path_factory.mktemp('lease')
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=300, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                   num_hidden_layers=2, intermediate_size=48, max_position_embeddings=64)
    transformers.LlamaForCausalLM(cfg).save_pretrained(root / 'llama')
    done = dry_run(root / 'out', str(root / 'llama'))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root, done.stdout


def test_every_step_writes_its_json_and_markdown_with_its_command(dry):
    root, printed = dry
    for step, command in STEPS.items():
        with open(root / 'out' / f'{step}.json') as f:
            rec = json.load(f)
        assert rec['status'] == 'done', (step, rec['output_tail'])
        assert rec['command'] == f"python -m tools.lease {root / 'out'} {step} {rec['budget_s']} {rec['step_command']}"
        assert rec['step_command'].startswith(command) and rec['dry_run'] and rec['machine']['python']
        assert rec['corpus']['source'].startswith(f'Python {sys.version.split()[0]} stdlib')  # which stdlib it was
        assert (root / 'out' / f'{step}.md').read_text().startswith(f'# {step}: done')
    figures = lambda step: json.load(open(root / 'out' / f'{step}.json'))['figures']
    assert figures('tests')['skipped'] > 0 and figures('tests')['failed'] == 0  # on a CPU every CUDA test skips
    eval_rows = figures('eval')['results']
    assert {r['name'] for r in eval_rows} == {'none', 'alibi', 'kerple_log', 't5', 'sandwich', 'rope', 'alibi+lm_infinite'}
    assert list(figures('train_eager')['results']) == ['none', 'rope', 'alibi', 'kerple_log', 't5']
    assert figures('mid_sinusoidal-s0')['train']['iters'] == 2
    table = json.load(open(root / 'out' / 'mid_nonoverlap.json'))  # extrapolate.py's own table, with its command
    assert table['command'].startswith('python extrapolate.py') and {r['mult'] for r in table['results']} == {1, 2, 4, 8, 16}
    assert not list((root / 'out').glob('*.bench.json'))  # bench.py's figures went into the step's JSON


def test_a_second_lease_skips_what_is_done_and_starts_nothing_without_time(dry):
    root, _ = dry
    again = dry_run(root / 'out', str(root / 'llama'), LEASE_S='0')
    assert again.returncode == 0, again.stderr
    for step in STEPS:
        assert f'lease: {step} done before' in again.stdout
    assert 'lease: mid_rope-s0 needs up to 360 s' in again.stdout  # the table's next run waits for a lease with time


def test_a_step_out_of_time_is_kept_as_such_and_tried_again(tmp_path, monkeypatch):
    monkeypatch.delenv('LEASE_END', raising=False)
    assert lease.main(str(tmp_path), 'slow', 1, 'echo started; sleep 5') == 124
    rec = json.load(open(tmp_path / 'slow.json'))
    assert rec['status'] == 'timeout' and 'started' in rec['output_tail'] and rec['seconds'] < 4
    assert lease.main(str(tmp_path), 'slow', 5, 'echo quick') == 0  # not skipped: it never finished
    assert json.load(open(tmp_path / 'slow.json'))['status'] == 'done'
    assert lease.main(str(tmp_path), 'slow', 5, 'echo quick') == lease.DONE_BEFORE


def test_a_step_killed_after_its_budget_is_a_timeout(tmp_path, monkeypatch):
    """A step that ignores the TERM at its budget is killed 10 s later by `timeout -k`, which then exits 137 (coreutils:
    128 + 9): out of time too. The command exits 137 itself here, so that the test need not wait out the 10 s."""
    monkeypatch.delenv('LEASE_END', raising=False)
    assert lease.main(str(tmp_path), 'killed', 5, 'echo started; exit 137') == 124
    rec = json.load(open(tmp_path / 'killed.json'))
    assert (rec['rc'], rec['status']) == (137, 'timeout') and 'started' in rec['output_tail']
    assert lease.main(str(tmp_path), 'broken', 5, 'exit 3') == 1
    assert json.load(open(tmp_path / 'broken.json'))['status'] == 'failed'


def test_a_pytest_run_with_only_failures_ran_its_tests():
    """Failing tests are a result: a summary of failures alone counts as a run (done, its target missed), and so does
    one with failures and errors; errors alone are not."""
    out = 'FAILED tests/test_attention.py::test_cuda_x[alibi] - AssertionError\n2 failed in 3.10s\n'
    counts, met, done = lease.figures('python -m pytest -q tests/test_attention.py', out, 1)
    assert (counts['passed'], counts['failed'], done) == (0, 2, True)
    assert met == [('the CUDA-gated tests', '0 passed, 2 failed, 0 errors, 0 skipped', 'all pass', False)]
    done = lease.figures('python -m pytest -q tests/x.py', '1 failed, 1 error in 1.00s\n', 1)[2]
    assert done and not lease.figures('python -m pytest -q tests/x.py', '1 error in 1.00s\n', 2)[2]


def test_pytest_counts_and_failures_are_read_from_its_summary():
    out = ('FAILED tests/test_attention.py::test_cuda_x[alibi] - AssertionError\n'
           'SKIPPED [3] tests/test_pretrained.py:208: needs a CUDA GPU\n'
           '1 failed, 25 passed, 3 skipped, 600 deselected, 2 warnings in 41.20s\n')
    counts = lease.pytest_figures(out)
    assert (counts['passed'], counts['failed'], counts['skipped'], counts['errors']) == (25, 1, 3, 0)
    assert counts['failing'] == ['tests/test_attention.py::test_cuda_x[alibi]']
    assert counts['skip_reasons'] == ['needs a CUDA GPU']
    assert lease.pytest_figures('Traceback (most recent call last):\n') is None  # stopped before its summary


def test_the_lease_runs_every_cuda_test():
    """The tests step names the files that hold the CUDA-gated tests: one moved to another file would go unrun."""
    with open(os.path.join(ROOT, 'results.sh')) as f:
        lines = f.read().splitlines()
    at = next(i for i, l in enumerate(lines) if l.strip().startswith('lease tests '))
    named = set(re.findall(r'tests/\w+\.py', lines[at - 1] + lines[at]))  # the files may be set on the line before
    for path in glob.glob(os.path.join(ROOT, 'tests', 'test_*.py')):
        with open(path) as f:
            if re.search(r'^def test_cuda', f.read(), re.M):
                assert os.path.relpath(path, ROOT) in named, f'{path} has CUDA tests; add it to the lease tests line'
