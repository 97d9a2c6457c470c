"""
The files a run writes and reads back. write_outputs writes a result's JSON (with the command that made it and the
environment its last digits depend on), its markdown table and its plot; read_json reads one back with a one-line
error that names the option; matching expands an option's path or glob pattern into the files it names (results and
checkpoints alike). expand, rows_of and lookup read the result rows of the files an option names, and protocol_notes
says which file a row came from where their settings differ (the pages that set one analysis' JSONs beside another's).
fmt_ppl, md_table and plt are how the tables and figures are made.
"""
import glob
import json
import math
import os
import sys

import numpy as np
import torch

from lexgpt.config import ConfigError


def plt():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as pyplot
    return pyplot


def length_axis(ax, mults, label='L_ex / L_tr'):
    """A log x axis with a tick at each length measured and no others (a log axis' own ticks cost seconds to lay
    out), and a grid."""
    ax.set(xscale='log', xlabel=label)
    ax.set_xticks(mults, [f'{m:g}' for m in mults])
    ax.minorticks_off()
    ax.grid(alpha=0.3)


def fmt_ppl(p, like=None):
    """A perplexity with about four significant digits; `like` formats a spread with the decimals of its mean."""
    if p is None or not math.isfinite(p):
        return 'n/a'
    q = p if like is None else like
    return format(p, '.3f' if q < 10 else '.2f' if q < 100 else '.4g' if q < 1e6 else '.2e')


def md_table(header, rows):
    lines = ['| ' + ' | '.join(map(str, header)) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(map(str, r)) + ' |' for r in rows]
    return '\n'.join(lines) + '\n'


def read_json(path, option):
    """A JSON file named by the option `option`, or a one-line error that names both."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{option}={path!r} cannot be read as JSON ({e})") from None


def matching(pattern, option=''):
    """(paths, wild): a path as it is (wild False), or a glob pattern's matches in sorted order (wild True). A glob
    that matches nothing gives no paths, or, given the option it came from, a one-line error that names it."""
    wild = any(c in pattern for c in '*?[')
    paths = sorted(glob.glob(pattern)) if wild else [pattern]
    if not paths and option:
        raise ConfigError(f"{option}={pattern!r}: no file matches")
    return paths, wild


def expand(patterns, option):
    """[(path, data)] of the files or globs of one option, in the order given; a bad path is a one-line error."""
    return [(h, read_json(h, option)) for p in patterns for h in matching(p, option)[0]]


def rows_of(path, data, option, need):
    """A JSON's result rows, each with the keys `need`, or a one-line error that names the file."""
    rows = data.get('results') if isinstance(data, dict) else None
    if not isinstance(rows, list) or any(not isinstance(r, dict) or set(need) - set(r) for r in rows):
        raise ConfigError(f"{option}={path!r}: not the JSON expected here (rows with {', '.join(need)})")
    return rows


def lookup(files, option, need, value, key):
    """{key(row): row, with the file it came from as 'source'} over every file's rows whose `value` is measured (a row
    under way has none); the first file holding a key wins."""
    out = {}
    for path, data in files:
        for r in rows_of(path, data, option, need):
            if r.get(value) is not None:
                out.setdefault(key(r), dict(r, source=path))
    return out


def protocol_words(data):
    """How an extrapolate.py JSON scored: its protocol, and the tokens scored of how many segments."""
    last_k, n = ((data.get('settings') or {}).get(k) for k in ('last_k', 'n'))
    return f"{data.get('protocol')} protocol, the last {last_k} token(s) of {n} segments"


def protocol_notes(used, ppl_files):
    """A later perplexity file (extrapolate.py's JSON) may fill in what the first lacks under other settings (segments,
    tokens scored a segment): a line per (label, the files its rows came from) in `used` that took one, naming the
    file and its settings."""
    other = {p: protocol_words(d) for p, d in ppl_files if protocol_words(d) != protocol_words(ppl_files[0][1])}
    return [f"{label}: perplexity from {p} ({other[p]})" for label, sources in used for p in sources if p in other]


def command_line():
    """The command that is running, as a user would type it again: `python train.py ...` for a top-level script,
    `python -m analysis.kernels ...` for a module run with -m. Every result JSON records it."""
    spec = getattr(sys.modules['__main__'], '__spec__', None)
    script = f'-m {spec.name}' if spec is not None and spec.name != '__main__' else os.path.basename(sys.argv[0])
    return ' '.join(['python', script] + sys.argv[1:])


def cpu_model():
    """The processor's name from /proc/cpuinfo (MKL picks its code by vendor and model), or '' where it says none."""
    try:
        with open('/proc/cpuinfo') as f:
            return next((line.split(':', 1)[1].strip() for line in f if line.startswith('model name')), '')
    except OSError:
        return ''


def environment():
    """What a figure's last digits depend on besides the command: torch's build, the CPU kernels it picked (AVX2,
    AVX512: their softmax rounds differently), the code path MKL's matrix products take if one was forced (README.md,
    Reproducibility) and numpy's version. Every result JSON and checkpoint records it."""
    return dict(torch=str(torch.__version__), numpy=np.__version__, cpu=cpu_model(),
                cpu_capability=torch.backends.cpu.get_cpu_capability(),
                mkl_instructions=os.environ.get('MKL_ENABLE_INSTRUCTIONS'))  # None: MKL picks its own code path


def write_outputs(out_dir, stem, data, markdown=None, fig=None, say=True):
    """<out_dir>/<stem>.json (with the command that made it), .md and .png; returns the path without extension.
    data=None: no JSON (a table redone from its JSON, which keeps its command). say=False: no 'wrote' line (a JSON
    kept as a run goes)."""
    os.makedirs(out_dir or '.', exist_ok=True)
    base = os.path.join(out_dir, stem)
    written = []
    if data is not None:
        with open(base + '.json.tmp', 'w') as f:  # then renamed: a run stopped mid-write leaves the last JSON whole
            # a merge of other JSONs keeps the environment they were measured in
            json.dump({'command': command_line(), 'environment': environment(), **data}, f, indent=1, default=float)
        os.replace(base + '.json.tmp', base + '.json')
        written.append(base + '.json')
    if markdown is not None:
        with open(base + '.md', 'w') as f:
            f.write(markdown)
        written.append(base + '.md')
    if fig is not None:
        fig.savefig(base + '.png', dpi=100)
        plt().close(fig)
        written.append(base + '.png')
    if say:
        print('wrote ' + ', '.join(written))
    return base
