"""
Run a grid of experiments, one torch thread per run and `jobs` runs at a time, as the seeded tables need.

  python sweep.py configs/sweep_lm_tiny.py                 # the language-model table (results/README.md)
  python sweep.py configs/sweep_lm_tiny.py --jobs=1 --dry_run=True

Every point of `grid` (all combinations of its values) becomes one command:
  python <script> <args...> --key=value ...   (plus `--out_dir=<out_dir>` when out_dir is set)
with `{key}` in args, out_dir and log replaced by the point's values. A run that finished (its log has a `.done` file
beside it, holding the same command) is skipped, so an interrupted sweep continues where it stopped; a changed
command runs again. train.py runs get --init_from=auto and resume from their last checkpoint (a fine-tune keeps its
own --init_from until its out_dir has one).
Progress goes to the terminal, each run's output to its log: every PROGRESS_EVERY seconds one line per running run
with where its log says it is (train.py: iteration / max_iters, the last loss and the time left at the rate seen so
far; another script: its log's last line).
"""
import importlib.util
import itertools
import os
import re
import subprocess
import sys
import time

from lexgpt.config import ConfigError, parse_config, run

DEFAULTS = dict(
    script='train.py',          # the script each run executes
    args=[],                    # arguments common to every run: config files and --key=value
    grid={},                    # key -> list of values; every combination is one run
    out_dir='',                 # e.g. 'out/lm/{pe}-s{seed}' ('' passes no --out_dir)
    log='',                     # each run's log file; '' means <out_dir>/run.log
    jobs=2,                     # runs at a time (2 on a 2-core machine)
    dry_run=False,              # print the commands only
)

PROGRESS_EVERY = 20  # seconds between the lines that say where each running run is (#71: never 30 s of silence)
# a script's lines that say where it is (step, loss), and the setting that holds its number of steps
STEP_LINES = {'train.py': (re.compile(r'^iter (\d+): (?:train )?loss ([\d.]+)', re.M), 'max_iters'),
              'regular_lang.py': (re.compile(r' step (\d+) L=\d+ loss ([\d.]+)', re.M), 'max_steps')}


def points(grid):
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def fill(key, text, point):
    """text with {grid key} replaced by the point's value, or a one-line error naming the unknown key."""
    try:
        return text.format(**point)
    except (KeyError, IndexError, ValueError) as e:
        raise ConfigError(f"{key}={text!r}: cannot fill in {e} ({type(e).__name__}); braces name grid keys: "
                          f"{', '.join('{' + k + '}' for k in point)}") from None


def command(cfg, point):
    argv = [sys.executable, cfg['script']] + [fill('args', a, point) for a in cfg['args']] + \
        [f'--{k}={v}' for k, v in point.items()]
    out = fill('out_dir', cfg['out_dir'], point)
    if out:
        argv.append(f'--out_dir={out}')
    if os.path.basename(cfg['script']) == 'train.py':
        # resume a run that was stopped; a fine-tune (its own --init_from=<checkpoint>) starts from that until it
        # has one
        fine_tune = any(a.startswith('--init_from=') for a in argv)
        if not fine_tune or os.path.exists(os.path.join(out, 'ckpt.pt')):
            argv.append('--init_from=auto')
    log = fill('log', cfg['log'], point) if cfg['log'] else os.path.join(out or '.', 'run.log')
    return argv, log


def recorded(argv):
    """What a .done file holds: the command without --init_from=auto, which comes and goes with the checkpoint."""
    return ' '.join(a for a in argv[1:] if a != '--init_from=auto')


def finished(argv, log):
    """A .done file with this command (an empty one predates recording it); a run whose command has changed since
    (more iterations, another setting) is not finished."""
    if not os.path.exists(log + '.done'):
        return False
    with open(log + '.done') as f:
        done = f.read().strip()
    if done and done != recorded(argv):
        print(f"note: {log} finished as `{done}`; the command is now `{recorded(argv)}`: running it again")
        return False
    return True


def total_steps(argv, key):
    """The number of steps a run was given: its script's defaults, then its config files and --key=value (as the
    script itself parses them); None if the script cannot say."""
    try:
        with open(argv[1]) as f:
            if "if __name__ == '__main__':" not in f.read():
                return None  # importing it would run it
        spec = importlib.util.spec_from_file_location('_swept', argv[1])
        script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(script)
        return parse_config(script.DEFAULTS, argv[2:])[key]
    except (OSError, AttributeError, ConfigError, KeyError):
        return None


class Watch:
    """Where one running run is, from the end of its log; the rate counts the steps seen since the watch began,
    so a resumed run's time left is not fooled by the steps it had done before."""

    def __init__(self, argv, log):
        self.log, self.t0, self.step0 = log, time.time(), None
        self.lines, key = STEP_LINES.get(os.path.basename(argv[1]), (None, None))
        self.total = total_steps(argv, key) if key else None

    def tail(self):
        try:
            with open(self.log, 'rb') as f:
                f.seek(max(0, os.path.getsize(self.log) - 4096))
                return f.read().decode(errors='replace')
        except OSError:
            return ''

    def line(self):
        text, now = self.tail(), time.time()
        steps = self.lines.findall(text) if self.lines else []
        if not steps:
            last = text.strip().splitlines()[-1:] or ['(no output yet)']
            return f"{self.log}: {last[0][:100]}"
        step, loss = int(steps[-1][0]), steps[-1][1]
        if self.step0 is None:
            self.t0, self.step0 = now, step
        where = f"{self.log}: step {step:,}" + (f"/{self.total:,}" if self.total else '') + f", loss {loss}"
        rate = (step - self.step0) / max(now - self.t0, 1e-9)
        if self.total and rate > 0:
            where += f", about {(self.total - step) / rate:,.0f} s left"
        return where


def main(cfg):
    if not cfg['grid'] or not all(isinstance(v, (list, tuple)) and v for v in cfg['grid'].values()):
        raise ConfigError(f"grid={cfg['grid']!r} must map each key to a non-empty list of values")
    if cfg['jobs'] < 1:
        raise ConfigError(f"jobs={cfg['jobs']} must be >= 1")
    runs = [command(cfg, p) for p in points(cfg['grid'])]
    logs = [log for _, log in runs]
    if len(set(logs)) < len(logs):
        raise ConfigError("two runs would share a log file: put every grid key into out_dir or log")
    todo = [(argv, log) for argv, log in runs if not finished(argv, log)]
    print(f"{len(runs)} runs, {len(runs) - len(todo)} finished already, {len(todo)} to go, {cfg['jobs']} at a time")
    if cfg['dry_run']:
        for argv, log in todo:
            print(' '.join(argv[1:]), '>', log)
        return todo
    env = dict(os.environ, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')  # two runs share 2 cores without stalling
    running, failed, t0 = {}, [], time.time()
    watches, shown = {}, time.time()
    while todo or running:
        while todo and len(running) < cfg['jobs']:
            argv, log = todo.pop(0)
            os.makedirs(os.path.dirname(log) or '.', exist_ok=True)
            with open(log, 'a') as f:
                running[subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env)] = (argv, log)
            watches[log] = Watch(argv, log)
            print(f"[{time.time() - t0:7.0f}s] start {' '.join(argv[2:])}", flush=True)
        wait_for_one(running, min(1, PROGRESS_EVERY))
        if time.time() - shown >= PROGRESS_EVERY:
            shown = time.time()
            for argv, log in running.values():
                print(f"[{shown - t0:7.0f}s]   {watches[log].line()}", flush=True)
        for proc in [p for p in running if p.poll() is not None]:
            argv, log = running.pop(proc)
            if proc.returncode == 0:
                with open(log + '.done', 'w') as f:
                    f.write(recorded(argv) + '\n')
                print(f"[{time.time() - t0:7.0f}s] done  {log}", flush=True)
            else:
                failed.append(log)
                print(f"[{time.time() - t0:7.0f}s] FAILED (exit {proc.returncode}): see {log}", flush=True)
    if failed:
        raise ConfigError(f"{len(failed)} run(s) failed: {', '.join(failed)}")
    return runs


def wait_for_one(procs, seconds):
    """Back when one of the processes has ended or after `seconds`, whichever comes first: the next run starts as
    soon as a slot frees."""
    end = time.time() + seconds
    while time.time() < end and all(p.poll() is None for p in procs):
        time.sleep(0.02)


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
