"""results.sh lease (#42) as a dry run: every step of a GPU session's first command, on the CPU at toy sizes, through
the same code (tools/lease.py's session, from `bash results.sh lease`), so that it cannot rot between the rare leases
of a GPU. No GPU, no network: a tiny Llama made here stands in for SmolLM2, and the corpus is 200 files of this
Python's stdlib."""
import glob
import json
import os
import re
import subprocess
import sys
import time

import pytest

from tools import lease, lease_figures
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIG = 'python -m tools.bench configs/thesis_162m.py'
STEPS = {'tests': 'python -m pytest', 'eval': 'python -m tools.bench configs/tiny.py --mode=eval',
         'eval_128k': 'python -m tools.bench configs/tiny.py --mode=eval', 'train_compiled': f'{BIG} --mode=train',
         'train_eager': f'{BIG} --mode=train', 'pretrained': 'python -m tools.bench --mode=pretrained',
         'attention_124m': f'{BIG} --mode=attention', 'train_routes': f'{BIG} --mode=train',
         'tests_60': 'python -m pytest', 'eval_124m': f'{BIG} --mode=eval', 'train_124m': f'{BIG} --mode=train',
         **{f'mid_{pe}-s0': 'python train.py configs/lease_mid.py' for pe in ('sinusoidal', 'rope')}}


def dry_run(out, llama, **env):
    env = dict(os.environ, LEASE_DRY='1', LEASE_OUT=str(out), LEASE_PRETRAINED=llama, **env)
    env.pop('OUT', None)  # the device call's folder: a dry run sends nothing anywhere
    return subprocess.run(['bash', 'results.sh', 'lease'], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


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
    assert {r['name'] for r in eval_rows} == {'none', 'alibi', 'kerple_log', 't5', 'sandwich', 'rope',
                                              'alibi+lm_infinite'}
    assert list(figures('train_eager')['results']) == ['none', 'rope', 'alibi', 'kerple_log', 't5']
    # #60: a learned bias by either route (on a CPU both take dense: flex is a GPU's), none compiled and not
    routes = {name: r['route'] for name, r in figures('train_routes')['results'].items()}
    assert routes == {'none': 'causal', 'alibi': 'folded', 'kerple_log+flex': 'dense', 'kerple_log+dense': 'dense',
                      't5+flex': 'dense', 't5+dense': 'dense', 'sandwich+flex': 'dense', 'sandwich+dense': 'dense'}
    assert {r['impl'] for r in figures('attention_124m')['results']} == {'dense'}
    assert {r['T'] for r in figures('eval_124m')['results']} == {64, 128, 256}
    assert 'none+eager' in figures('train_124m')['results']
    targets = json.load(open(root / 'out' / 'train_124m.json'))['targets']
    assert [t['what'] for t in targets if t['what'].startswith(('kerple_log', 't5', 'alibi'))] == [
        'alibi: training step over none (folded)', 'kerple_log: training step over none (dense)',
        't5: training step over none (dense)'] and all(t['met'] is None for t in targets)  # a CPU's: not judged
    assert figures('mid_sinusoidal-s0')['train']['iters'] == 2 and figures('mid_rope-s0')['train']['iters'] == 2
    table = json.load(open(root / 'out' / 'mid_nonoverlap.json'))  # extrapolate.py's own table, with its command
    assert table['command'].startswith('python extrapolate.py')
    assert {r['mult'] for r in table['results']} == {1, 2, 4, 8, 16}
    assert {r['ckpt'] for r in table['results']} == {'sinusoidal-s0', 'rope-s0'}  # the side-by-side runs, scored once
    assert not list((root / 'out').glob('*.bench.json'))  # bench.py's figures went into the step's JSON


def test_a_dry_run_runs_each_command_once(dry):
    """tests_60 is tests' command, on a CPU (nothing compiled) train_eager is train_compiled's, and at toy lengths
    eval_128k is eval's, but for their --json files: each is written as done by the earlier step, not run; every other
    step, each with its own command, runs."""
    root, printed = dry
    recs = {step: json.load(open(root / 'out' / f'{step}.json')) for step in STEPS}
    copied = {step: rec['same_as'] for step, rec in recs.items() if 'same_as' in rec}
    assert copied == {'tests_60': 'tests', 'train_eager': 'train_compiled', 'eval_128k': 'eval'}
    bare = lambda step: re.sub(r' --json=\S+', '', recs[step]['step_command'])
    for step, earlier in copied.items():
        assert bare(step) == bare(earlier)
        assert recs[step]['figures'] == recs[earlier]['figures'] and recs[step]['seconds'] == 0
        assert f"not a measurement; {earlier}'s run." in (root / 'out' / f'{step}.md').read_text()
    ran = [step for step in STEPS if f'lease: {step} (budget' in printed]
    assert sorted(ran) == sorted(set(STEPS) - set(copied))
    assert len({bare(step) for step in ran}) == len(ran) == len({bare(step) for step in STEPS})  # each command once


def test_a_second_lease_skips_what_is_done_and_starts_nothing_without_time(dry):
    root, _ = dry
    again = dry_run(root / 'out', str(root / 'llama'), LEASE_S='0')
    assert again.returncode == 0, again.stderr
    for step in STEPS:  # a mid-scale run done is not even a candidate for the next batch (lease.py --check)
        again_too = f'lease: {step} done before' in again.stdout
        assert again_too or step.startswith('mid_') and f' {step} ' not in again.stdout
    # the table's next runs wait for a lease with time to train them and to score them
    assert 'lease: mid_alibi-s0 needs up to 120 s and 60 s for what follows it, 0 s are left' in again.stdout


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
    counts, met, done = lease_figures.figures('python -m pytest -q tests/test_attention.py', out, 1)
    assert (counts['passed'], counts['failed'], done) == (0, 2, True)
    assert met == [('the CUDA-gated tests', '0 passed, 2 failed, 0 errors, 0 skipped', 'all pass', False)]
    done = lease_figures.figures('python -m pytest -q tests/x.py', '1 failed, 1 error in 1.00s\n', 1)[2]
    assert done and not lease_figures.figures('python -m pytest -q tests/x.py', '1 error in 1.00s\n', 2)[2]


def test_pytest_counts_and_failures_are_read_from_its_summary():
    out = ('FAILED tests/test_attention.py::test_cuda_x[alibi] - AssertionError\n'
           'SKIPPED [3] tests/test_pretrained.py:208: needs a CUDA GPU\n'
           '1 failed, 25 passed, 3 skipped, 600 deselected, 2 warnings in 41.20s\n')
    counts = lease_figures.pytest_figures(out)
    assert (counts['passed'], counts['failed'], counts['skipped'], counts['errors']) == (25, 1, 3, 0)
    assert counts['failing'] == ['tests/test_attention.py::test_cuda_x[alibi]']
    assert counts['skip_reasons'] == ['needs a CUDA GPU']
    assert lease_figures.pytest_figures('Traceback (most recent call last):\n') is None  # stopped before its summary


def test_the_lease_runs_every_cuda_test():
    """The tests steps name the files that hold the CUDA-gated tests: one moved to another file would go unrun."""
    named = set(lease.CUDA_TESTS.split())
    commands = [command for step, _, command in lease.fixed_steps(lease.plan()) if step.startswith('tests')]
    assert len(commands) == 2 and all(lease.CUDA_TESTS in c and c.endswith('-k cuda') for c in commands)
    for path in glob.glob(os.path.join(ROOT, 'tests', 'test_*.py')):
        with open(path) as f:
            if re.search(r'^def test_cuda', f.read(), re.M):
                assert os.path.relpath(path, ROOT) in named, f'{path} has CUDA tests; add it to lease.CUDA_TESTS'


def test_the_targets_of_60_are_judged_on_a_gpu_only():
    """#60's targets from a compiled training run with none's eager step beside it, and from an eval run: MFU >= 40%,
    compiled no slower than eager, the targeted biases' steps <= 1.25x none (whatever route they were told to prefer),
    <= 1.5x the unbiased eval forward at 32k, memory linear; the same figures from a CPU are shown, not judged."""
    run = lambda ms, ratio, **kw: dict(ms_per_step=ms, ratio_to_none=ratio, route='compiled', **kw)
    train = dict(mode='train', device='cuda', settings=dict(compile=True, peak_tflops=989), results={
        'none': run(50.0, 1.0, mfu=0.41), 'none+eager': run(49.0, 0.98, mfu=0.42), 'rope': run(52.0, 1.04),
        'kerple_log+dense': run(60.0, 1.2), 't5': run(65.0, 1.3)})
    got = {w: (v, t, met) for w, v, t, met in lease_figures.targets(train)}
    assert got == {'none, compiled: MFU against 989 TFLOPS': ('41.0%', '>= 40%', True),
                   'none: compiled step over eager': ('1.02x', '<= 1x', False),
                   'kerple_log+dense: training step over none (compiled)': ('1.20x', '<= 1.25x', True),
                   't5: training step over none (compiled)': ('1.30x', '<= 1.25x', False)}
    rows = [dict(name=n, T=T, ratio=r, mb=mb) for n, T, r, mb in (
        ('none', 8192, 1.0, 100), ('none', 32768, 1.0, 400), ('alibi', 8192, 1.1, 100), ('alibi', 32768, 1.4, 500),
        ('t5', 8192, 2.0, 100), ('t5', 32768, 1.6, 9000))]
    got = {w: (v, met) for w, v, t, met in lease_figures.targets(dict(mode='eval', device='cuda', results=rows))}
    assert got['alibi: eval forward at 32768 tokens over the unbiased kernel'] == ('1.40x', True)
    assert got['t5: eval forward at 32768 tokens over the unbiased kernel'] == ('1.60x', False)
    assert got['t5: peak memory 32768 / 8192 tokens'] == ('90.00', False)  # 90x for 4x the tokens: not linear
    assert all(met is None for *_, met in lease_figures.targets(dict(train, device='cpu')))


def test_check_and_reserve(tmp_path, monkeypatch, capsys):
    """--check: done under the same command only; a step with LEASE_RESERVE seconds to leave for what follows it
    is not started where budget and reserve do not fit."""
    monkeypatch.delenv('LEASE_END', raising=False)
    assert lease.main(str(tmp_path), 'quick', 5, 'echo one') == 0
    assert lease.done_before(str(tmp_path), 'quick', 'echo one')
    assert not lease.done_before(str(tmp_path), 'quick', 'echo two')  # the step list changed the command
    assert 'measured again' in capsys.readouterr().out
    monkeypatch.setenv('LEASE_END', str(time.time() + 30))
    monkeypatch.setenv('LEASE_RESERVE', '40')
    assert lease.main(str(tmp_path), 'later', 5, 'echo three') == lease.NO_TIME
    assert 'needs up to 5 s and 40 s for what follows it' in capsys.readouterr().out
