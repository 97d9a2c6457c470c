"""
How far a long run is and what it costs. Progress prints on stderr the items done, their rate and the time left;
Meter measures a block's wall time and peak resident memory, which the result JSONs record; check_memory refuses up
front, with its estimate, what would not fit in the memory free here; rss_mb is the resident memory now.
"""
import re
import resource
import sys
import time

import torch

from lexgpt.config import ConfigError


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
