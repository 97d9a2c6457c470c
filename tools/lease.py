"""
One step of `bash results.sh lease` (#42): run a command under a time budget and keep what it measured.

  python -m tools.lease OUT_DIR STEP BUDGET_S COMMAND...
  python -m tools.lease results/gpu/lease eval 100 python -m tools.bench configs/tiny.py --mode=eval ... \
      --json=<OUT_DIR>/eval.bench.json

A GPU is lent for a few minutes at a time, and a call can be cut at any moment. So each step writes
<out_dir>/<step>.json and <step>.md the moment it ends, and a step whose JSON says "done" under the same command is
skipped: the next lease goes on where this one stopped (delete the JSON to measure a step again; a step whose command
results.sh has changed is measured again). A step that failed or ran out of time writes its JSON too, with the
output's last lines, and is tried again next time.

The JSON holds the command as results.sh ran it, the machine (GPU, Python, torch), the corpus (which Python's
standard library: the device runs another Python than ours), status, seconds, the figures (bench.py's --json file,
pytest's counts, train.py's log) and, where the issue sets targets, each target met or missed in figures.
LEASE_END (seconds since the epoch, set by results.sh) is when the lease's minutes are up: a step whose budget, plus
LEASE_RESERVE seconds for what must follow it (the mid-scale runs' scoring), does not fit in what is left is not
started, so that a later, cheaper one can be. Exit status: 0 done now, 10 done before, 11 not started for lack of
time, 124 out of time, 1 failed.

  python -m tools.lease --check OUT_DIR STEP COMMAND...   # exit 10 if the step is done under that command, else 0
"""
import datetime
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import sys
import time

DONE_BEFORE, NO_TIME = 10, 11
# thesis Table 3.4 (GitHub, 162M parameters, GPT-NeoX on GPUs): seconds per training step; sinusoidal is the
# cheapest there, as 'none' is here, so each encoding's time over it stands beside our ratio to none
THESIS_SEC_PER_STEP = dict(sinusoidal=0.298, alibi=0.302, kerple_log=0.307, kerple_power=0.321, rope=0.332, t5=0.340)
ADDITIVE_BIASES = ('alibi', 'kerple_log', 'kerple_power', 't5', 'sandwich')
# #60's targets (one H100 or H200, bf16, ratios within one run): `none` compiled at >= 40% of the card's dense bf16
# peak and no slower than eager; these encodings' training step at most 1.25x none's; a biased eval forward at 32k
# tokens at most 1.5x the unbiased one, with memory linear in the length
MFU_TARGET, TRAIN_RATIO_TARGET, EVAL_RATIO_TARGET = 0.40, 1.25, 1.5
TRAIN_TARGETED = ('alibi', 'kerple_log', 't5')


def machine():
    """Python, torch and the GPU of this machine, read without importing torch (a step's process does that)."""
    try:
        torch = importlib.metadata.version('torch')
    except importlib.metadata.PackageNotFoundError:
        torch = None
    try:
        gpu = subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'], capture_output=True,
                             text=True, timeout=30).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        gpu = None
    return dict(python=platform.python_version(), torch=torch, gpu=gpu, cpus=os.cpu_count())


def corpus():
    """What the data folder of this lease was made from (its meta.json), e.g. 'Python 3.12.3 stdlib .py files'."""
    path = os.path.join(os.environ.get('LEASE_DATA', 'data/pycode'), 'meta.json')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        meta = json.load(f)
    return dict(source=meta.get('source'), tokens=meta.get('tokens'))


def run(command, budget):
    """-> (exit status, output, seconds). `timeout` stops the command's whole process group at the budget (and
    kills it 10 s later if it has not stopped); 124 or 137 means it ran out of time."""
    t0 = time.time()
    proc = subprocess.Popen(['timeout', '-k', '10', str(budget), 'bash', '-c', command], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors='replace', bufsize=1,
                            env=dict(os.environ, PYTHONUNBUFFERED='1'))
    lines = []
    for line in proc.stdout:  # shown as it comes, so a cut call still shows how far it got
        sys.stdout.write(line)
        lines.append(line)
    return proc.wait(), ''.join(lines), time.time() - t0


def option(text, key, script=''):
    """The value of --key=value in a command line (of `script`, if given), or None."""
    found = re.findall(rf'{re.escape(script)}[^&;]*?--{key}=(\S+)' if script else rf'--{key}=(\S+)', text)
    return found[-1] if found else None


def pytest_figures(output):
    """pytest's closing line (-q) and its summary (-rfEs) -> counts, failing tests and skip reasons; None if pytest
    never got to the end."""
    closing = [l for l in output.splitlines() if re.search(r'\d+ (passed|failed|skipped|errors?|deselected)', l)
               and re.search(r' in [\d.]+s', l)]
    if not closing:
        return None
    counts = dict(passed=0, failed=0, skipped=0, errors=0, deselected=0)
    for n, kind in re.findall(r'(\d+) (passed|failed|skipped|errors?|deselected)', closing[-1]):
        counts['errors' if kind.startswith('error') else kind] += int(n)
    counts['failing'] = re.findall(r'^(?:FAILED|ERROR) (\S+)', output, re.M)
    counts['skip_reasons'] = sorted(set(re.findall(r'^SKIPPED \[\d+\] [^:]+:\d+: (.*)$', output, re.M)))
    return counts


def train_figures(out_dir, output):
    """train.py: its size and tokens (as it printed them) and its log.json's last evaluation."""
    fig = {}
    m = re.search(r'([\d.]+)M parameters.*?(\d+) tokens per iteration', output)
    if m:
        fig.update(params_m=float(m.group(1)), tokens_per_iter=int(m.group(2)))
    log = os.path.join(out_dir, 'log.json')
    if os.path.exists(log):
        with open(log) as f:
            rows = json.load(f)
        evals = [r for r in rows if r.get('val_loss') is not None]
        if evals:
            fig.update(iters=evals[-1]['iter'], val_loss=evals[-1]['val_loss'], train_loss=evals[-1]['train_loss'],
                       train_seconds=evals[-1]['time'])
            if 'tokens_per_iter' in fig:
                fig['tokens'] = fig['tokens_per_iter'] * fig['iters']
    return fig


def targets(bench):
    """The issue's targets, met or missed, from bench.py's figures: [(what, value, target, met or None)]."""
    out, res = [], bench.get('results')
    gpu = bench.get('device', '').startswith('cuda')  # on a CPU (a dry run) the figures are shown, not judged
    if bench.get('mode') == 'eval':
        Ts = sorted({r['T'] for r in res})
        at = {(r['name'], r['T']): r for r in res}
        for name in dict.fromkeys(r['name'] for r in res):
            if name in ADDITIVE_BIASES and 32768 in Ts:
                ratio = at[name, 32768]['ratio']
                out.append((f'{name}: eval forward at 32768 tokens over the unbiased kernel', f'{ratio:.2f}x',
                            f'<= {EVAL_RATIO_TARGET}x', ratio <= EVAL_RATIO_TARGET if gpu else None))
            if len(Ts) > 1:  # linear: memory grows like the length, not its square (allowing 25% for fixed costs)
                a, b = Ts[0], Ts[-1]
                grow = at[name, b]['mb'] / max(at[name, a]['mb'], 1e-9)
                out.append((f'{name}: peak memory {b} / {a} tokens', f'{grow:.2f}', f'<= {1.25 * b / a:g} (linear)',
                            grow <= 1.25 * b / a if gpu else None))
    if bench.get('mode') == 'train':
        out += train_targets(res, bench['settings'], gpu)
    return out


def train_targets(res, settings, gpu):
    """MFU and compiled-against-eager for a compiled `none` (the eager one: none+eager in the same run), and the
    step of each targeted encoding (any route it was told to prefer: kerple_log+dense) over none's."""
    out, none = [], res.get('none', {})
    if settings.get('compile') and none.get('mfu') is not None:
        peak = settings.get('peak_tflops') or 312
        out.append((f"none, compiled: MFU against {peak:g} TFLOPS", f"{100 * none['mfu']:.1f}%",
                    f'>= {100 * MFU_TARGET:g}%', none['mfu'] >= MFU_TARGET if gpu else None))
    if settings.get('compile') and 'none+eager' in res:
        ratio = none['ms_per_step'] / res['none+eager']['ms_per_step']
        out.append(('none: compiled step over eager', f'{ratio:.2f}x', '<= 1x', ratio <= 1.0 if gpu else None))
    for name, r in res.items():
        if name.partition('+')[0] in TRAIN_TARGETED:
            out.append((f"{name}: training step over none ({r.get('route', '?')})", f"{r['ratio_to_none']:.2f}x",
                        f'<= {TRAIN_RATIO_TARGET}x', r['ratio_to_none'] <= TRAIN_RATIO_TARGET if gpu else None))
    return out


def figures(text, output, rc):
    """-> (figures, targets, done): what the step measured, from whichever script it ran."""
    bench_json = option(text, 'json')
    if bench_json and os.path.exists(bench_json):
        with open(bench_json) as f:
            bench = json.load(f)
        os.remove(bench_json)  # it lives on inside the step's JSON
        return bench, targets(bench), rc == 0
    if re.match(r'(python3? -m )?pytest ', text):
        # failing tests are a result (done); a pytest that stopped, or collected nothing but errors, is not
        counts = pytest_figures(output)
        if counts is None:
            return None, [], False
        ran = counts['passed'] + counts['failed'] > 0
        met = counts['failed'] == counts['errors'] == 0 if ran else None  # all skipped: no GPU, nothing tested
        said = (f"{counts['passed']} passed, {counts['failed']} failed, {counts['errors']} errors, "
                f"{counts['skipped']} skipped")
        return counts, [('the CUDA-gated tests', said, 'all pass', met)], ran or not counts['errors']
    out_dir = option(text, 'out_dir', 'train.py')
    return (dict(train=train_figures(out_dir, output)) if out_dir else {}), [], rc == 0


def markdown(rec, output):
    lines = [f"# {rec['step']}: {rec['status']} in {rec['seconds']:.0f} s (budget {rec['budget_s']} s)", '',
             f"`{rec['step_command']}` (results.sh lease)", '',
             f"Machine: {rec['machine']['gpu'] or 'no GPU'}, Python {rec['machine']['python']}, torch "
             f"{rec['machine']['torch']}; data: {(rec['corpus'] or {}).get('source')}"
             + ('. A dry run (LEASE_DRY=1): toy sizes on the CPU, not a measurement.' if rec['dry_run'] else '.'), '']
    if rec['targets']:
        lines += ['| target | measured | wanted | met |', '|---|---|---|---|']
        lines += [f"| {t['what']} | {t['value']} | {t['target']} | "
                  f"{'-' if t['met'] is None else 'yes' if t['met'] else '**no**'} |" for t in rec['targets']]
        lines.append('')
    fig = rec['figures'] or {}
    if fig.get('mode') == 'train':
        lines += ['Ratio to the cheapest encoding: ours to none, thesis Table 3.4 (sec/step, 162M, GPT-NeoX) to '
                  'sinusoidal:', '', '| pe | ours / none | thesis / sinusoidal |', '|---|---|---|']
        for pe, r in fig['results'].items():
            thesis = THESIS_SEC_PER_STEP.get(pe.partition('+')[0])
            theirs = f"{thesis / THESIS_SEC_PER_STEP['sinusoidal']:.2f}" if thesis else '-'
            lines.append(f"| {pe} | {r['ratio_to_none']:.2f} | {theirs} |")
        lines.append('')
    t = fig.get('train') or {}
    if t.get('iters'):
        lines += [f"Trained {t.get('params_m')}M parameters for {t['iters']} iterations "
                  f"({t.get('tokens', 0) / 1e6:.1f}M "
                  f"tokens) in {t['train_seconds']:.0f} s: validation loss {t['val_loss']:.4f}.", '']
    # the tables the step printed, each with the line that says what it holds; else the output's last lines
    out, tables = output.splitlines(), []
    for i, line in enumerate(out):
        if line.startswith('|') and (i == 0 or not out[i - 1].startswith('|')):  # a table starts
            tables += [out[i - 2], ''] if i >= 2 and out[i - 2].strip() and not out[i - 2].startswith('|') else []
        if line.startswith('|'):
            tables += [line] + ([''] if i + 1 == len(out) or not out[i + 1].startswith('|') else [])
    lines += tables if tables and rec['status'] == 'done' else ['```', *out[-30:], '```']
    return '\n'.join(lines).rstrip() + '\n'


def write(path, text):
    with open(path + '.tmp', 'w') as f:  # then renamed: a call cut mid-write leaves the last file whole
        f.write(text)
    os.replace(path + '.tmp', path)


def done_before(out_dir, step, command):
    """Whether <out_dir>/<step>.json says done, under this command (one that results.sh has changed since is not)."""
    path = os.path.join(out_dir, step + '.json')
    if not os.path.exists(path):
        return False
    with open(path) as f:
        before = json.load(f)
    if before.get('status') == 'done' and before.get('step_command') != command:
        print(f"lease: {step} was done under another command ({before.get('step_command')}); measured again")
    return before.get('status') == 'done' and before.get('step_command') == command


def main(out_dir, step, budget, command):
    path = os.path.join(out_dir, step + '.json')
    if done_before(out_dir, step, command):
        print(f"lease: {step} done before ({path}); skipped")
        return DONE_BEFORE
    left = float(os.environ['LEASE_END']) - time.time() if os.environ.get('LEASE_END') else float('inf')
    reserve = int(os.environ.get('LEASE_RESERVE') or 0)
    if left < budget + reserve:
        after = f" and {reserve} s for what follows it" if reserve else ''
        print(f"lease: {step} needs up to {budget} s{after}, {max(left, 0):.0f} s are left; not started (next lease)")
        return NO_TIME
    print(f"lease: {step} (budget {budget} s, {left:.0f} s left): {command}", flush=True)
    rc, output, seconds = run(command, budget)
    fig, met, done = figures(command, output, rc)
    status = 'done' if done else 'timeout' if rc in (124, 137) else 'failed'
    # `command` is the line of results.sh (what makes this file again: bash results.sh lease, once it is deleted);
    # `step_command` the part that measures
    rec = dict(step=step, command=f'python -m tools.lease {out_dir} {step} {budget} {command}', step_command=command,
               status=status, rc=rc, seconds=round(seconds, 1), budget_s=budget,
               dry_run=bool(os.environ.get('LEASE_DRY')), when=datetime.datetime.now().isoformat(timespec='seconds'),
               machine=machine(), corpus=corpus(), figures=fig,
               targets=[dict(what=w, value=v, target=t, met=m) for w, v, t, m in met], output_tail=output[-4000:])
    os.makedirs(out_dir, exist_ok=True)
    write(path, json.dumps(rec, indent=1, default=str) + '\n')
    write(os.path.join(out_dir, step + '.md'), markdown(rec, output))
    print(f"lease: {step} {status} in {seconds:.0f} s; wrote {path} and {step}.md")
    return 0 if done else 124 if status == 'timeout' else 1


if __name__ == '__main__':
    if len(sys.argv) >= 5 and sys.argv[1] == '--check':
        sys.exit(DONE_BEFORE if done_before(sys.argv[2], sys.argv[3], ' '.join(sys.argv[4:])) else 0)
    if len(sys.argv) < 5 or not sys.argv[3].isdigit():
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), ' '.join(sys.argv[4:])))
