"""--reuse, the one way a long run resumes and a table grows (extrapolate.py's ppl and stream protocols,
analysis/passkey.py, analysis/receptive_field.py).

A previous JSON of the same script, made with the same settings, gives back its rows: a row is taken as it is where
its key (run, variant, length...) and the run's training iteration match. Rows of runs that a ckpt pattern names
but whose folders are not on this machine are kept, so a table grows by the seeds trained here. While a run goes on
it rewrites its JSON after every new row with `so_far`, which carries the file's rows not reached yet: a stopped run
loses none, and the same command with --reuse of its own file goes on where it stopped.
"""
import fnmatch
import glob
import os
import time

from lexgpt.config import ConfigError
from lexgpt.loading import ckpt_kind, PRETRAINED, run_folder
from lexgpt.outputs import read_json


class Previous:
    """The --reuse file of one run (path '' for none). key(row) names a row; check(data) says why a JSON is not this
    script's kind (or '' where it is); rows(data) lists its rows (default: data['results'])."""

    def __init__(self, path, key, check=lambda data: '', rows=None):
        self.path, self.key, self.data, self.by_key = path, key, {}, {}
        self.list_rows = rows or (lambda data: data['results'])
        if not path:
            return
        if not os.path.isfile(path):
            raise ConfigError(f"reuse={path!r} does not exist: give a JSON that this script wrote")
        self.data = read_json(path, 'reuse')
        why = check(self.data)
        if why:
            raise ConfigError(f"reuse={path!r} {why}")
        self.by_key = {key(r): r for r in self.list_rows(self.data)}

    def __bool__(self):
        return bool(self.data)

    def settings(self, defaults=None):
        """The settings the file was made with; defaults fill those that files older than a setting lack."""
        return {**(defaults or {}), **self.data.get('settings', {})}

    def check_settings(self, settings, defaults=None, made=None):
        """Refuses a file made with other settings. made: the file's settings as this run reads them, where a setting
        has changed its meaning since (default: the file's, with defaults filling those it lacks)."""
        made = self.settings(defaults) if made is None else made
        if self.data and made != settings:
            raise ConfigError(f"reuse={self.path!r} was made with settings {made}, this run has {settings}")

    def take(self, key, iters=None, what=''):
        """The file's row under key where the run's training iteration is the same (None: not there), saying so."""
        row = self.by_key.get(key)
        if row is None or (isinstance(row, dict) and row.get('iters', iters) != iters):
            return None
        if what:
            print(f"{what}: taken from {self.path}")
        return row

    def rest(self, rows):
        """The file's rows whose keys `rows` lack: what a partial JSON carries until the run reaches them."""
        have = {self.key(r) for r in rows}
        return [r for r in self.list_rows(self.data or {'results': []}) if self.key(r) not in have]

    def so_far(self, rows):
        return rows + self.rest(rows)

    def absent_runs(self, patterns, label=''):
        """-> (the ckpt patterns to load, the names of runs kept from the file): a run a pattern names (its name plus
        label) whose folder is not on this machine keeps its rows; a pretrained model is always loaded."""
        names = dict.fromkeys(r['ckpt'] for r in self.list_rows(self.data) if r['ckpt'].endswith(label)) \
            if self.data else {}
        load, kept = [], []
        for p in patterns:
            if not names or ckpt_kind(p) in PRETRAINED:
                load.append(p)
                continue
            parent, stem = run_folder(p)
            run = lambda n: n[:len(n) - len(label)] if label else n
            gone = [n for n in names if fnmatch.fnmatchcase(run(n), stem)
                    and not os.path.exists(os.path.join(parent, run(n)))]
            for n in gone:
                print(f"note: {os.path.join(parent, run(n))} is not here: its rows are kept from {self.path}")
                names.pop(n)
            kept += gone
            if not gone or glob.glob(p):  # something to load, or nothing kept (load_runs says what is missing)
                load.append(p)
        return load, kept


def throttled(seconds, save):
    """-> f(*args): save(*args) once at least `seconds` have passed since the last save (or since f was made), else
    nothing: a cell or row under way rewrites its partial JSON often enough to lose little, rarely enough to cost
    nothing."""
    last = [time.perf_counter()]

    def f(*args):
        if time.perf_counter() - last[0] >= seconds:
            save(*args)
            last[0] = time.perf_counter()
    return f


def cells_so_far(rows, prev):
    """A partial JSON of runs whose rows hold cells (analysis.recall, analysis.passkey): the rows scored so far with
    every reused cell they do not hold yet after their own, in the row of its run and variant (one row each, a row of
    its own where that run has not begun): a stopped run loses none. prev: a Previous keyed by (row, cell) pairs."""
    out = [dict(r, cells=list(r['cells'])) for r in rows]
    by_key = {(r['ckpt'], r['variant']): r for r in out}
    for row, cell in prev.rest([(r, c) for r in rows for c in r['cells']]):
        key = (row['ckpt'], row['variant'])
        if key not in by_key:
            by_key[key] = dict(row, cells=[])
            out.append(by_key[key])
        by_key[key]['cells'].append(cell)
    return out


def kept_record(prev, head, cells, record):
    """A run whose cells all came from the --reuse file (prev, keyed as cells_so_far's) keeps that file's record of
    what they cost (its seconds, threads, memory: progress.Meter's), not the moments it took to read them back."""
    old = next((o for o in (prev.data or {}).get('results', [])
                if (o['ckpt'], o['variant']) == (head['ckpt'], head['variant'])), None)
    if old is None or old.get('cells') != cells or 'seconds' not in old:
        return record
    return {k: old[k] for k in record if k in old}
