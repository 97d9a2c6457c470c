"""
Defects planted by hand in the recall probe and the RULER harness (#75): one-line changes to their input generators
and their metrics, each put in a copy of this tree and its test file run (pytest -x); a defect is caught where a test
fails. mutmut's operators (tools/mutation.py) rarely make these: a copy at the wrong distance, a control that is the
repeat, needles at mirrored depths, the two RULER metrics swapped.

    python -m tools.planted --out_dir=results/mutation --name=planted

writes planted.json (each defect, caught or not, by which test) and planted.md; a few minutes on 2 cores. A defect
whose line is no longer in the code is an error naming it: the list follows the code.
"""
import os
import tempfile

from lexgpt.config import ConfigError, run
from lexgpt.outputs import md_table, write_outputs
from tools.mutation import pytest, run_mutated, snapshot

RECALL, RULER = 'tests/test_recall.py', 'tests/test_ruler.py'
# (file, the code before, after, what the defect does, the tests run)
PLANTED = [
    ('analysis/recall_inputs.py', 'lo, p1 = (1 if bos is not None else 0), L - s - d',
     'lo, p1 = (1 if bos is not None else 0), L - s - d - 1',
     'generator: the earlier copy one token further back than the stated distance d', RECALL),
    ('analysis/recall_inputs.py', 'repeat[p1:p1 + s], control[p1:p1 + s] = S, S2',
     'repeat[p1:p1 + s], control[p1:p1 + s] = S, S',
     "generator: the control holds S too, so the repeat is scored twice", RECALL),
    ('analysis/recall.py', 'b, n = ctl - rep, len(pairs)', 'b, n = rep - ctl, len(pairs)',
     'metric: the benefit with its sign flipped (repeat minus control)', RECALL),
    ('analysis/recall.py', 'half = float(stats.t.ppf(0.975, n - 1)', 'half = float(stats.t.ppf(0.95, n - 1)',
     "metric: a 90% interval called 95% (the t quantile of a one-sided 95%)", RECALL),
    ('lexgpt/ruler_tasks.py', 'at = sorted(int(len(sents) * d / 100) for d in depths)',
     'at = sorted(int(len(sents) * (100 - d) / 100) for d in depths)',
     "generator: an essay's needles at mirrored depths (100 - d percent)", RULER),
    ('lexgpt/ruler_tasks.py', 'lines.insert(place + i, needle)', 'lines.insert(place, needle)',
     'generator: a later needle put before the earlier ones it should follow', RULER),
    ('lexgpt/ruler_tasks.py', "return sum(hits) / len(hits) if metric == 'all' else float(any(hits))",
     "return sum(hits) / len(hits) if metric == 'part' else float(any(hits))",
     'metric: string_match_all and string_match_part swapped', RULER),
    ('lexgpt/ruler_tasks.py', 'mid, half = (p + z * z / (2 * n)) / d,', 'mid, half = (p + z * z / n) / d,',
     "metric: Wilson's interval centred at (p + z^2 / n) / d, not (p + z^2 / 2n) / d", RULER),
    ('lexgpt/ruler_tasks.py', 'lambda n: extra + len(encode(wrap(build(n)[0]) + build(n)[1])) + budget)',
     'lambda n: extra + len(encode(wrap(build(n)[0]) + build(n)[1])))',
     "generator: the input fitted without room for the answer's tokens", RULER),
]
DEFAULTS = dict(
    out_dir='out/planted',  # results.sh: results/mutation
    name='planted',
)


def plant(tree, defect, run_tests=pytest):
    """One defect put in tree's file, its tests run, the file put back -> its row."""
    file, before, after, what, tests = defect
    path = os.path.join(tree, file)
    with open(path) as f:
        code = f.read()
    if code.count(before) != 1:
        raise ConfigError(f"{file}: {before!r} is in the code {code.count(before)} times, not once: update PLANTED")
    status, first, seconds = run_mutated(path, code, code.replace(before, after), tree, [tests], file, run_tests)
    return dict(file=file, before=before, after=after, what=what, tests=tests, caught=status != 'passed',
                status=status, by=first, seconds=round(seconds, 1))


def main(cfg, run_tests=pytest):
    rows = []
    with tempfile.TemporaryDirectory(prefix='planted-') as tree:
        snapshot('', tree)
        for k, defect in enumerate(PLANTED):
            rows.append(plant(tree, defect, run_tests))
            r = rows[-1]
            print(f"planted {k + 1}/{len(PLANTED)}: {r['file']}: {r['what']}: "
                  f"{'caught by ' + str(r['by']) if r['caught'] else 'NOT CAUGHT'} ({r['seconds']:.0f} s)", flush=True)
    caught = sum(r['caught'] for r in rows)
    md = (f"# Defects planted by hand in the recall probe and the RULER harness\n\n`python -m tools.planted "
          f"--out_dir={cfg['out_dir']} --name={cfg['name']}`: {caught} of {len(rows)} caught. Each defect put alone "
          f"in a copy of the tree, its test file run (pytest -x); the first failing test named.\n\n"
          + md_table(['file', 'defect', 'before', 'after', 'caught by'],
                     [[r['file'], r['what'], f"`{r['before']}`", f"`{r['after']}`",
                       r['by'] or r['status'] if r['caught'] else '**not caught**'] for r in rows]))
    data = dict(caught=caught, n=len(rows), results=rows)
    write_outputs(cfg['out_dir'], cfg['name'], data, md)
    return data


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
