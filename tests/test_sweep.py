"""sweep.py: every grid point runs once with its own arguments and log; finished runs are skipped; failures named."""
import os
import re
import sys

import pytest

import sweep
from lexgpt.config import ConfigError

SCRIPT = """import sys, os
args = dict(a[2:].split('=', 1) for a in sys.argv[1:])
if args.get('fail') == '1':
    sys.exit(3)
os.makedirs(args['out_dir'], exist_ok=True)
with open(os.path.join(args['out_dir'], 'args.txt'), 'a') as f:
    f.write(' '.join(sys.argv[1:]) + ' threads=' + os.environ['OMP_NUM_THREADS'] + '\\n')
"""


def test_grid_runs_each_point_once_and_skips_finished_ones(tmp_path, monkeypatch):
    monkeypatch.setenv('OMP_NUM_THREADS', '3')  # each run gets one thread all the same
    (tmp_path / 'fake.py').write_text(SCRIPT)
    cfg = dict(sweep.DEFAULTS, script=str(tmp_path / 'fake.py'), args=['--common=1'],
               grid=dict(seed=[0, 1], pe=['alibi', 'rope']), out_dir=str(tmp_path / '{pe}-s{seed}'), jobs=2)
    sweep.main(cfg)
    for seed in (0, 1):
        for pe in ('alibi', 'rope'):
            lines = (tmp_path / f'{pe}-s{seed}' / 'args.txt').read_text().splitlines()
            assert lines == [f'--common=1 --seed={seed} --pe={pe} --out_dir={tmp_path}/{pe}-s{seed} threads=1']
            assert os.path.exists(tmp_path / f'{pe}-s{seed}' / 'run.log.done')
    os.remove(tmp_path / 'rope-s1' / 'run.log.done')
    assert len(sweep.main(cfg)) == 4  # the grid; only rope-s1 ran again
    assert len((tmp_path / 'rope-s1' / 'args.txt').read_text().splitlines()) == 2
    assert len((tmp_path / 'alibi-s0' / 'args.txt').read_text().splitlines()) == 1


def test_failures_and_bad_grids_are_named(tmp_path):
    (tmp_path / 'fake.py').write_text(SCRIPT)
    cfg = dict(sweep.DEFAULTS, script=str(tmp_path / 'fake.py'), grid=dict(fail=[0, 1]),
               out_dir=str(tmp_path / 'r{fail}'), jobs=1)
    with pytest.raises(ConfigError, match=r'1 run\(s\) failed: .*r1/run\.log'):
        sweep.main(cfg)
    assert os.path.exists(tmp_path / 'r0' / 'run.log.done') and not os.path.exists(tmp_path / 'r1' / 'run.log.done')
    with pytest.raises(ConfigError, match='share a log file'):
        sweep.main(dict(cfg, out_dir=str(tmp_path / 'same')))
    with pytest.raises(ConfigError, match='non-empty list'):
        sweep.main(dict(cfg, grid=dict(seed=[])))


def test_train_runs_resume_and_fine_tunes_keep_their_source(tmp_path):
    cfg = dict(sweep.DEFAULTS, script='train.py', out_dir=str(tmp_path / 'r{seed}'))
    plain = dict(cfg, args=['configs/tiny.py'])
    tune = dict(cfg, args=['configs/tiny.py', '--init_from=out/lm/rope-s{seed}/ckpt.pt'])
    assert sweep.command(plain, dict(seed=0))[0][-1] == '--init_from=auto'
    # no checkpoint of its own yet: the fine-tune must start from its source, not from scratch
    argv = sweep.command(tune, dict(seed=0))[0]
    assert [a for a in argv if a.startswith('--init_from=')] == ['--init_from=out/lm/rope-s0/ckpt.pt']
    os.makedirs(tmp_path / 'r0')
    (tmp_path / 'r0' / 'ckpt.pt').write_bytes(b'')
    assert sweep.command(tune, dict(seed=0))[0][-1] == '--init_from=auto'  # later flags win: resume its own


def test_a_changed_command_runs_again(tmp_path):
    """.done holds the command it finished: more iterations are not 'finished already'; the same command is."""
    (tmp_path / 'fake.py').write_text(SCRIPT)
    cfg = dict(sweep.DEFAULTS, script=str(tmp_path / 'fake.py'), args=['--iters=1'], grid=dict(seed=[0]),
               out_dir=str(tmp_path / 's{seed}'), jobs=1)
    sweep.main(cfg)
    assert sweep.main(dict(cfg, dry_run=True)) == []  # the same command: finished
    sweep.main(dict(cfg, args=['--iters=2']))
    assert [line.split()[0] for line in (tmp_path / 's0' / 'args.txt').read_text().splitlines()] == \
        ['--iters=1', '--iters=2']
    (tmp_path / 's0' / 'run.log.done').write_text('')  # written before .done recorded the command: finished
    assert sweep.main(dict(cfg, args=['--iters=3'], dry_run=True)) == []


TRAINER = """import sys, time
from lexgpt.config import run
DEFAULTS = dict(max_iters=5, out_dir='', init_from='', seed=0)


def main(cfg):
    for i in range(cfg['max_iters']):
        print(f"iter {i}: loss {3 - i / 10:.4f}, lr 1e-3, 100 ms, 1 tok/s", flush=True)
        time.sleep(0.15)


if __name__ == '__main__':
    run(main, DEFAULTS)
"""


def test_a_sweep_says_where_each_running_run_is(tmp_path, monkeypatch, capsys):
    """#71: while runs train, a line per run at least every PROGRESS_EVERY seconds: step / the steps its own
    settings give (--max_iters here, not the script's default), the last loss and the time left."""
    (tmp_path / 'train.py').write_text(TRAINER)
    monkeypatch.setattr(sweep, 'PROGRESS_EVERY', 0.4)
    monkeypatch.setenv('PYTHONPATH', os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cfg = dict(sweep.DEFAULTS, script=str(tmp_path / 'train.py'), args=['--max_iters=12'], grid=dict(seed=[0, 1]),
               out_dir=str(tmp_path / 's{seed}'), jobs=2)
    sweep.main(cfg)
    out = capsys.readouterr().out
    lines = re.findall(r's(\d)/run\.log: step (\d+)/(\d+), loss ([\d.]+)(, about [\d,]+ s left)?', out)
    assert {seed for seed, *_ in lines} == {'0', '1'}  # every running run, not only the first
    for seed, step, total, loss, left in lines:
        assert total == '12' and float(loss) == pytest.approx(3 - int(step) / 10)
    assert any(left for *_, left in lines)  # once the rate is known, the time left


def test_a_run_whose_log_has_no_steps_shows_its_last_line(tmp_path):
    (tmp_path / 'run.log').write_text('loading data\nbuilding the model\n')
    watch = sweep.Watch([sys.executable, str(tmp_path / 'other.py')], str(tmp_path / 'run.log'))
    assert watch.line() == f"{tmp_path}/run.log: building the model"
