"""
What every script needs, whatever it works on: the device and precision, one training step (train.py, bench.py),
result files (JSON with the command that made them, markdown tables, plots), and time and memory.
The corpora are corpus.py's, what a checkpoint name loads is loading.py's, the protocols are evaluation.py's.
"""
import json
import math
import os
import re
import resource
import sys
import time
from contextlib import nullcontext

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from lexgpt.config import ConfigError


# --------------------------------------------------------------------------------------------
# Device and precision
# --------------------------------------------------------------------------------------------

def pick_device(device):
    if device == 'auto':
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError):
        kind = None
    if kind not in ('cpu', 'cuda', 'mps'):
        raise ConfigError(f"device={device!r} is not one of auto, cpu, cuda, cuda:<index>, mps")
    if kind == 'cuda' and not torch.cuda.is_available():
        raise ConfigError(f"device={device!r} but torch sees no CUDA GPU here; use device=cpu or auto")
    return device


def precision(device_type, dtype):
    """Resolve dtype='auto' and return (name, autocast context): bf16 where supported, fp16 on older GPUs
    (the caller then needs a GradScaler), float32 on CPU."""
    if dtype == 'auto':
        dtype = 'float32' if device_type == 'cpu' else ('bfloat16' if torch.cuda.is_bf16_supported() else 'float16')
    if dtype not in ('float32', 'bfloat16', 'float16'):
        raise ConfigError(f"dtype={dtype!r} is not one of auto, float32, bfloat16, float16")
    if dtype == 'float32':
        return dtype, nullcontext()
    return dtype, torch.autocast(device_type=device_type, dtype=getattr(torch, dtype))


# the evaluation scripts' options: cuda and bfloat16 for a large model
EVAL_DEVICE = dict(device='cpu', dtype='float32')


def on_device(model, device='cpu', dtype='float32'):
    """Run model's forward on `device` under `dtype`'s autocast, taking and giving CPU tensors (outputs in float32),
    so that the scripts' data and numpy code stay as they are. float32 on the CPU leaves the model untouched."""
    device = pick_device(device)
    _, ctx = precision(device.split(':')[0], dtype)
    if device == 'cpu' and dtype == 'float32':
        return model
    forward = model.to(device).forward
    move = lambda t, where: t.to(where) if torch.is_tensor(t) else t

    def moved(*args, **kw):
        with ctx:
            out = forward(*(move(a, device) for a in args), **{k: move(v, device) for k, v in kw.items()})
        return tuple(None if t is None else t.float().cpu() for t in out)
    model.forward = moved
    return model


# --------------------------------------------------------------------------------------------
# One training step (train.py, bench.py)
# --------------------------------------------------------------------------------------------

def forward_backward(model, batches, ctx, scaler):
    """Accumulate the gradient of the mean loss over the micro-batches and return that mean loss (detached).
    Under DDP the gradients are all-reduced (averaged over processes) only during the last backward."""
    total = 0.0
    for i, (x, y) in enumerate(batches):
        if isinstance(model, DDP):
            model.require_backward_grad_sync = i == len(batches) - 1
        with ctx:
            _, loss = model(x, y)
            loss = loss / len(batches)
        scaler.scale(loss).backward()
        total = total + loss.detach()
    return total


def optimizer_step(model, optimizer, scaler, grad_clip):
    """Clip the (unscaled) gradient norm to grad_clip (0: no clipping), step, and clear the gradients."""
    if grad_clip > 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)


# --------------------------------------------------------------------------------------------
# Results: files, tables, plots, time and memory
# --------------------------------------------------------------------------------------------

def plt():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as pyplot
    return pyplot


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


def check_memory(nbytes, what):
    """Refuse up front, with the estimate, what would need more memory than the machine has free (MemAvailable of
    /proc/meminfo; no check where that is unknown): a one-line error instead of the kernel's OOM kill."""
    try:
        with open('/proc/meminfo') as f:
            free = int(re.search(r'MemAvailable:\s+(\d+)', f.read()).group(1)) * 1024
    except (OSError, AttributeError):
        return
    if nbytes > free:
        raise ConfigError(f"{what} needs about {nbytes / 2**30:,.1f} GiB of memory, more than the "
                          f"{free / 2**30:.1f} GiB available here; use a smaller one")


def _status_kb(field):
    try:
        with open('/proc/self/status') as f:
            return int(re.search(rf'{field}:\s+(\d+)', f.read()).group(1))
    except (OSError, AttributeError):
        return None


def rss_mb(field='RssAnon'):
    """Resident memory now, MB. RssAnon (the heap: tensors, the cache) is what a process grows by; VmRSS also counts
    shared-library pages, which the kernel drops and maps back as other processes need memory."""
    return (_status_kb(field) or 0) / 1024


PROGRESS_SECONDS = 10.0  # at most one progress line per this many seconds (tests set 0: a line per step)


class Progress:
    """Where a long evaluation is, on stderr: `done(k)` after each k items; a line at most every PROGRESS_SECONDS
    with the items done, their rate and the time left at that rate, so a run of minutes is never silent and one of
    seconds stays quiet. `note` adds what the caller knows so far (a running perplexity)."""

    def __init__(self, what, total, unit='items', start=0):
        """start: items done before (a resumed run); the rate counts only the ones done here."""
        self.what, self.total, self.unit, self.count, self.start = what, total, unit, start, start
        self.t0 = self.shown = time.perf_counter()

    def done(self, k=1, note=''):
        self.count += k
        now = time.perf_counter()
        if now - self.shown < PROGRESS_SECONDS or self.count >= self.total:
            return
        self.shown, rate = now, (self.count - self.start) / max(now - self.t0, 1e-9)
        print(f"  {self.what}: {self.count:,}/{self.total:,} {self.unit}, {rate:,.2f}/s, about "
              f"{(self.total - self.count) / rate:,.0f} s left" + (f", {note}" if note else ''), file=sys.stderr,
              flush=True)


class Meter:
    """Wall time and peak resident memory (RSS) of a block. The kernel's peak (VmHWM) is reset first by writing 5 to
    /proc/self/clear_refs, so `peak_mb` is the whole process' peak *during this block* and `delta_mb` its excess
    over the RSS at the start. Where the reset is not allowed we fall back to ru_maxrss, which only ever grows,
    and `method` says so."""

    def __enter__(self):
        try:
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
            self.method = 'VmHWM, reset per block'
        except OSError:
            self.method = 'ru_maxrss (process lifetime peak, not reset)'
        self.rss0 = (_status_kb('VmRSS') or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        hwm = _status_kb('VmHWM') if self.method.startswith('VmHWM') else None
        self.peak_mb = (hwm or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
        self.delta_mb = self.peak_mb - self.rss0
        return False

    def record(self):
        return dict(seconds=round(self.seconds, 2), threads=torch.get_num_threads(), peak_rss_mb=round(self.peak_mb, 1),
                    delta_rss_mb=round(self.delta_mb, 1))
