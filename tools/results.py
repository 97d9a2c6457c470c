"""
Rebuild the committed results: the steps of tools/steps.py (which says what a step is and how to add one), run part
by part. `bash results.sh PART` is the same command.

  python -m tools.results lm              # a part's steps in order (default: all = lm, analysis, regular, stream)
  python -m tools.results --list          # every step: done, partial (with the n it reached) or missing, its cost
  python -m tools.results thesis --list   # ... of one part
  python -m tools.results pretrained --dry_run   # the commands, as they would run now (with --reuse, skips, waits)

Every step runs with OMP_NUM_THREADS=1 (and its own variables), from the repository's top folder. A step that fails
stops its part, unless it says keep_going (a GPU's steps). Parts:
  lm, analysis, regular, stream         the tiny models (configs/sweep_lm_*.py, configs/sweep_dyck.py write them)
  regular_runs                          trains every run JSON of results/regular (about 10 hours)
  thesis                                the thesis' tables under their own protocols (hours of CPU, resumable)
  smollm2, smollm2_bench, gemma3, gemma3_stream, gemma3_4x, gemma3_4x_nobos, gemma3_bench, gemma3_cells
                                        the pretrained models on CPU (pretrained: all of them, hours of CPU)
  erf_tables                            the receptive-field pages redone from their JSONs (seconds)
  pretrained_gpu, gpu, lease            a GPU's work; lease: what a session with a GPU runs first (tools/lease.py)
  bench, repro, mutation                speed on a quiet machine; what reproduces across machines; the mutation run
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import threading
import time

from tools import lease, steps_pretrained as pre, steps as tiny, steps_tasks as tasks
from tools.steps import ROOT, resolve

GROUPS = {'all': ('lm', 'analysis', 'regular', 'stream'),
          'pretrained': ('smollm2', 'smollm2_bench', 'gemma3', 'gemma3_stream', 'gemma3_4x', 'gemma3_4x_nobos',
                         'gemma3_bench', 'gemma3_cells')}
SESSIONS = {'lease': lease.session}  # parts that run their steps their own way (budgets, runs side by side)


def all_steps():
    """Every step, in the order the parts run."""
    return tiny.lm() + tiny.analysis() + tiny.regular() + tiny.regular_runs() + pre.pretrained_cpu() + \
        tiny.erf_tables() + pre.pretrained_gpu() + pre.gpu() + lease.steps() + tiny.stream() + tiny.bench() + \
        tiny.repro() + tiny.mutation() + tiny.thesis() + tasks.recall() + tasks.ruler()


def steps_of(part, every=None):
    """The steps of a part or a group of parts, in order."""
    every = all_steps() if every is None else every
    names = dict.fromkeys(s.part for s in every)
    if part not in names and part not in GROUPS:
        raise SystemExit(f"results: no part {part!r}; the parts: {', '.join(names)}; groups: {', '.join(GROUPS)}")
    return [s for p in GROUPS.get(part, (part,)) for s in every if s.part == p]


# ---- the state of a step's outputs ----

def json_state(path):
    """'done', or 'partial ...' for a JSON marked partial, a lease step not done, or cells short of their n
    (tools/cells.py: inputs, keys, tokens or segments scored)."""
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, dict):
        return 'done'
    if data.get('status') not in (None, 'done'):
        return f"partial ({data['status']})"
    short = []
    if '--mode=merge' not in data.get('command', ''):  # a merge's state is its inputs'
        from tools import cells
        try:
            short = [(done, asked) for *_, done, asked in cells.cells_of(path)[1] if done != asked]
        except (KeyError, TypeError, ValueError) as e:  # a JSON that tools.cells does not read
            short = [] if not data.get('partial') else [(f'? ({type(e).__name__})', '?')]
    if short:
        done, asked = min(short, key=lambda c: (str(c[0]), str(c[1])))
        return f'partial n={done}/{asked} ({len(short)} cells short)'
    return 'partial' if data.get('partial') else 'done'


def state(s):
    """One step's state from its outputs: missing, partial or done (no outputs: '-')."""
    if not s.outputs:
        return '-'
    states = []
    for path in s.outputs:
        full = os.path.join(ROOT, path)
        states.append('missing' if not os.path.exists(full) else json_state(full) if path.endswith('.json') else 'done')
    return next((x for x in states if x == 'missing'), None) or next((x for x in states if x != 'done'), 'done')


def show_list(chosen):
    counts = {}
    for s in chosen:
        st = state(s)
        counts[st.split()[0]] = counts.get(st.split()[0], 0) + 1
        print(f"{s.part:<16} {st:<34} {s.cost:>8}  {s.outputs[0] if s.outputs else s.command}")
    print(', '.join(f'{n} {k}' for k, n in counts.items()))


# ---- running ----

def command_line(s, dry=False):
    """The line a step runs now: {taus} filled in, --reuse=FILE appended when FILE exists (its rows are kept)."""
    command = resolve(s, dry=dry)
    if s.reuse and os.path.exists(os.path.join(ROOT, s.reuse)):
        command += f' --reuse={s.reuse}'
    return command


def why_not(s):
    """Why a step does not run now (None: it runs)."""
    if s.skip_if and os.path.exists(os.path.join(ROOT, s.skip_if)):
        return f'{s.skip_if} exists'
    return s.wait() if s.wait else None


def environment(s):
    env = dict(os.environ, OMP_NUM_THREADS='1')
    for key, value in s.env:
        env.pop(key) if value is None else env.update({key: value})
    return env


def execute(s, command):
    """Run one command line (no shell: the globs in --ckpt are the scripts' to expand) -> its exit status."""
    args = shlex.split(command)
    args[0] = sys.executable if args[0] == 'python' else args[0]
    if not s.tee:
        return subprocess.run(args, env=environment(s), cwd=ROOT).returncode
    os.makedirs(os.path.dirname(os.path.join(ROOT, s.tee)), exist_ok=True)
    with subprocess.Popen(args, env=environment(s), cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc, \
            open(os.path.join(ROOT, s.tee), 'w') as page:
        for text in proc.stdout:  # tools.bench's page: shown and kept
            sys.stdout.write(text)
            page.write(text)
    return proc.returncode


def run_one(s, label):
    """Run a step, saying when it starts and ends -> its exit status."""
    command = command_line(s)
    print(f'{label} start: {command}', flush=True)
    t0 = time.time()
    rc = execute(s, command)
    print(f"{label} {'done' if rc == 0 else f'FAILED (exit {rc})'} in {time.time() - t0:.0f} s", flush=True)
    return rc


def run_chain(chain):
    """Background steps one after the other; the first that fails ends the chain."""
    for s, label in chain:
        if run_one(s, label) != 0:
            return


def run_part(part):
    """Run a part's steps in order -> the exit status (that of the first failing step that stops it)."""
    if part in SESSIONS:
        os.environ['OMP_NUM_THREADS'] = '1'
        return SESSIONS[part]()
    chosen, background = steps_of(part), []
    i = 0
    while i < len(chosen):
        s, label = chosen[i], f'[{i + 1}/{len(chosen)}] {chosen[i].part}:'
        if s.join:
            [t.join() for t in background]
        if why_not(s):
            print(f'{label} skipped: {why_not(s)}', flush=True)
        elif s.background:  # it and the background steps right after it run beside the steps that follow them
            chain = [(s, label)]
            while i + 1 < len(chosen) and chosen[i + 1].background:
                i += 1
                chain.append((chosen[i], f'[{i + 1}/{len(chosen)}] {chosen[i].part}:'))
            background.append(threading.Thread(target=run_chain, args=(chain,)))
            background[-1].start()
        else:
            rc = run_one(s, label)
            if rc != 0 and not s.keep_going:
                [t.join() for t in background]
                return rc
        i += 1
    [t.join() for t in background]
    return 0


def dry_run(part):
    for s in steps_of(part):
        reason = why_not(s)
        env = ''.join(f'env -u {k} ' if v is None else f'{k}={v} ' for k, v in s.env)
        print(f'# {s.part}, skipped now: {reason}' if reason else f'# {s.part}, {s.cost}')
        print(env + command_line(s, dry=True) + (f' | tee {s.tee}' if s.tee else '') + (' &' if s.background else ''))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('part', nargs='?', default=None, help='a part or group (default: all; --list: every step)')
    parser.add_argument('--list', action='store_true', help="each step's state (done, partial with n, missing)")
    parser.add_argument('--dry_run', action='store_true', help='print the commands instead of running them')
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    if args.list:
        show_list(steps_of(args.part) if args.part else all_steps())
        return 0
    if args.dry_run:
        dry_run(args.part or 'all')
        return 0
    return run_part(args.part or 'all')


if __name__ == '__main__':
    sys.exit(main())
