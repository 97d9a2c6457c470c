"""
What a GPU lease's step measured (tools/lease.py), read from the script it ran: tools.bench's JSON and the issue's
targets met or missed, pytest's counts, or train.py's size and last evaluation.
"""
import json
import os
import re

ADDITIVE_BIASES = ('alibi', 'kerple_log', 'kerple_power', 't5', 'sandwich')
# #60's targets (one H100 or H200, bf16, ratios within one run): `none` compiled at >= 40% of the card's dense bf16
# peak and no slower than eager; these encodings' training step at most 1.25x none's; a biased eval forward at 32k
# tokens at most 1.5x the unbiased one, with memory linear in the length
MFU_TARGET, TRAIN_RATIO_TARGET, EVAL_RATIO_TARGET = 0.40, 1.25, 1.5
TRAIN_TARGETED = ('alibi', 'kerple_log', 't5')


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
