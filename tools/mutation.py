"""
The project's own mutation run (#59): single-line defects planted in the code where a silent one changes a reported
number, each run against the test files that cover that code; a surviving mutant is a defect the tests let through.

  python -m tools.mutation --out_dir=results/mutation --name=after                # the tests of this tree
  python -m tools.mutation --at=f78da08 --out_dir=results/mutation --name=before  # code and tests of a commit

The mutants are mutmut's (its operators, mutmut.mutation.file_mutation.create_mutations; pyproject.toml's
[tool.mutmut] names the source folders). mutmut's own runner runs every mutant against every test that reaches it;
here a deterministic sample of n mutants per module (random.Random(seed), n=0: all) runs against that module's
test files alone, with pytest -x and a timeout (timeout_factor x the unmutated run, at least 30 s), one at a time in
a scratch copy of the tree (or of the commit `at`), so the run stays bounded on a shared 2-core machine. A mutant
is killed when pytest fails, survives when it passes; one that runs out of time is run again with twice the time
(other work on the machine slows a run too), and killed only if that runs out as well. Writes <out_dir>/<name>.json
and, for each survivor, the diff and the verdict in EQUIVALENT where one is recorded; with name=after and a
before.json beside it, README.md with both kill rates.
"""
import difflib
import importlib.metadata
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

from lexgpt.common import md_table, read_json, write_outputs
from lexgpt.config import ConfigError, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# module -> (its file, the test files that cover it, or tests in them); a test file missing at `at` is left out.
# test_gemma3's conversions of tiny random models, not its GGUF tests (Gemma 3 270M: minutes on a CPU)
GEMMA3 = [f'tests/test_gemma3.py::{t}' for t in ('test_logits_equal_transformers', 'test_config_reading',
                                                  'test_the_text_part_of_a_vision_language_gemma3',
                                                  'test_an_extension_asked_for_on_the_global_layers_equals_transformers')]
TARGETS = dict(
    evaluation=('lexgpt/evaluation.py', ['tests/test_extrapolate.py', 'tests/test_resume.py',
                                         'tests/test_receptive_field.py']),
    thesis=('analysis/thesis.py', ['tests/test_thesis.py']),
    rope_scaling=('lexgpt/rope_scaling.py', ['tests/test_rope_scaling.py', 'tests/test_layers.py']),
    pretrained=('lexgpt/pretrained.py', ['tests/test_pretrained.py', 'tests/test_pretrained_scripts.py', *GEMMA3]),
    streaming=('lexgpt/streaming.py', ['tests/test_stream.py']),
)
DEFAULTS = dict(
    modules=list(TARGETS),      # which of TARGETS, one after the other
    n=20,                       # mutants sampled per module (0: all of them)
    seed=0,                     # the sample's seed: the same mutants on every run of the same code
    at='',                      # a git commit whose code and tests are mutated and run ('': this tree as it is)
    timeout_factor=3.0,         # a mutant's pytest is stopped after this many times the unmutated run (>= 30 s)
    out_dir='out/mutation',
    name='mutation',            # output file stem
    annotate=False,             # only set <name>.json's survivor notes (EQUIVALENT, KILLED_SINCE) and README.md anew
)
# survivors that no test can kill: (file, the line before, the line after) -> why the mutant computes the same
EQUIVALENT = {
    ('lexgpt/evaluation.py', 'if norm is None or span >= x.size(1):', 'if norm is None and span >= x.size(1):'):
        "every model here has transformer.ln_f, so the head always runs in slices; one slice when they would all fit, "
        "the plain forward's losses (test_every_token_losses_run_the_head_a_slice_at_a_time): memory, not numbers",
    ('lexgpt/evaluation.py', "w = cfg.get('windowed_at', 0)", "w = cfg.get('windowed_at', )"):
        "None and 0 both mean L_tr through `w or L_tr`, in the label and the window alike",
    ('lexgpt/evaluation.py', "w = cfg.get('windowed_at', 0)", "w = cfg.get('windowed_at', None)"):
        "None and 0 both mean L_tr through `w or L_tr`, in the label and the window alike",
    ('lexgpt/evaluation.py',
     "span = max(1, HEAD_ELEMENTS // (head.out_features * x.size(0))) if head is not None else x.size(1)",
     "span = max(1, HEAD_ELEMENTS // (head.out_features * x.size(0))) if head is not None else x.size(None)"):
        "every model here (GPT, RegularGPT) has an lm_head: the else branch is never taken",
    ('analysis/thesis.py', 'v = np.array(list(by_seed.values()), dtype=float)',
     'v = np.array(list(by_seed.values()), )'):
        "read_evals stores every perplexity as float(...): the array is float64 either way",
    ('lexgpt/rope_scaling.py', 'mid = (wavelen >= L / fast) & (wavelen <= L / slow)',
     'mid = (wavelen >= L / fast) & (wavelen < L / slow)'):
        "differs only where a wavelength 2 pi base^(2i/D) equals L / slow exactly, which no float pair does "
        "(Llama 3.1's own apply_scaling and transformers take the band with <= as here)",
    ('lexgpt/streaming.py', "fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=True, height_ratios=[3, 2])",
     "fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=None, height_ratios=[3, 2])"):
        "the PNG's two panels stop sharing an x axis; both are drawn over the same bucket ends: no number changes",
    ('lexgpt/streaming.py',
     'ax.set_title(f"one stream of {cfg[\'tokens\']} tokens through a bounded cache", fontsize=10)',
     'ax.set_title(f"one stream of {cfg[\'tokens\']} tokens through a bounded cache", fontsize=None)'):
        "the PNG's title in matplotlib's default size: no number changes",
    ('lexgpt/streaming.py', 'bucket_edges=edges.tolist(), results=so_far),', 'results=so_far),'):
        "a stopped stream's partial JSON lacks the bucket edges, which --reuse does not read; the finished JSON has "
        "them",
    ('lexgpt/streaming.py', "ax.set(xscale='log', yscale='log', ylabel='perplexity in the bucket')",
     "ax.set(xscale='log', ylabel='perplexity in the bucket')"):
        "the PNG's perplexity axis becomes linear: no number changes",
    ('lexgpt/streaming.py', "tax.set(xlabel='stream position (bucket end)', ylabel='tokens/s')",
     "tax.set(ylabel='tokens/s')"):
        "the PNG loses its x-axis label: no number changes",
}
# survivors of the committed run that a test added since kills (each checked by applying the mutant and running its
# module's test files): (file, before, after) -> the test
KILLED_SINCE = {
    ('lexgpt/streaming.py', 'raise ConfigError(f"reuse: {cfg[\'reuse\']} is not a stream JSON of extrapolate.py '
     '(protocol=stream, rows with "\n                          f"ckpt, row, iters)")', 'raise ConfigError(None)'):
        'tests/test_stream.py::test_extrapolate_stream_bad_settings_are_one_line',
    ('lexgpt/streaming.py', 'raise ConfigError(f"stream_rows={\',\'.join(cfg[\'stream_rows\'])}; allowed: '
     '{\', \'.join(STREAM_ROWS)}")', 'raise ConfigError(f"stream_rows={\',\'.join(cfg[\'stream_rows\'])}; '
     'allowed: {\', \'.join(None)}")'):
        'tests/test_stream.py::test_extrapolate_stream_bad_settings_are_one_line',
    ('lexgpt/streaming.py', "settings = dict(split=cfg['split'], tokens=cfg['tokens'], n_starting=cfg['n_starting'],",
     "settings = dict(split=None, tokens=cfg['tokens'], n_starting=cfg['n_starting'],"):
        'tests/test_stream.py::test_extrapolate_stream_rows_equal_full_forwards_per_bucket',
    ('lexgpt/streaming.py', "ends = [f'{e / 1e6:g}M' if e >= 10 ** 6 else f'{e // 1000}k' if e >= 1000 else str(e) "
     "for e in edges[1:]]", "ends = [f'{e / 1e6:g}M' if e >= 10 ** 6 else f'{e // 1000}k' if e >= 1000 else str(e) "
     "for e in edges[2:]]"):
        'tests/test_stream.py::test_extrapolate_stream_rows_equal_full_forwards_per_bucket',
}


def snapshot(at, into):
    """The tree to mutate: git's tracked and untracked-not-ignored files of this worktree, or the commit `at`."""
    if at:
        archive = subprocess.run(['git', 'archive', at], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(['tar', '-x', '-C', into], input=archive, check=True)
        return
    files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard'], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split('\n')
    for f in filter(os.path.isfile, (os.path.join(ROOT, f) for f in files if f)):
        dest = os.path.join(into, os.path.relpath(f, ROOT))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(f, dest)


def pytest(tree, tests, timeout):
    """-> (status: passed | failed | timeout, the first failing test or None, seconds)."""
    t0 = time.perf_counter()
    cmd = [sys.executable, '-m', 'pytest', '-x', '-q', '-p', 'no:cacheprovider', *tests]
    try:
        r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, OMP_NUM_THREADS='1'))
    except subprocess.TimeoutExpired:
        return 'timeout', None, time.perf_counter() - t0
    failed = re.findall(r'^(?:FAILED|ERROR) (\S+)', r.stdout, re.M)
    return ('passed' if r.returncode == 0 else 'failed'), (failed[0] if failed else None), time.perf_counter() - t0


def mutants(path, code):
    """mutmut's mutants of one file, in its order -> [(line, the line before, the line after, the mutated code)].
    Its string mutants ('XX' around a literal, its case changed) are left out: they change labels and prose, and a
    misspelt key fails loudly; the numbers a page reports come from the operators, names, numbers and calls."""
    import libcst
    from mutmut.mutation.file_mutation import create_mutations, deep_replace
    cwd = os.getcwd()
    os.chdir(ROOT)  # mutmut reads its settings from pyproject.toml in the working directory
    try:
        module, found, _, _ = create_mutations(path, code)
    finally:
        os.chdir(cwd)
    out, lines = [], code.splitlines()
    for m in (m for m in found if not isinstance(m.original_node, libcst.SimpleString)):
        new = deep_replace(module, m.original_node, m.mutated_node).code
        diff = difflib.SequenceMatcher(None, lines, new.splitlines(), autojunk=False)
        op = next(o for o in diff.get_opcodes() if o[0] != 'equal')
        out.append((op[1] + 1, '\n'.join(lines[op[1]:op[2]]).strip(),
                    '\n'.join(new.splitlines()[op[3]:op[4]]).strip(), new))
    return out


def mutate_module(cfg, tree, name):
    """One module's sample against its test files -> its JSON entry."""
    path, tests = TARGETS[name]
    tests = [t for t in tests if os.path.isfile(os.path.join(tree, t.split('::')[0]))]
    with open(os.path.join(tree, path)) as f:
        code = f.read()
    status, failing, base = pytest(tree, tests, 600)
    if status != 'passed':
        raise ConfigError(f"{name}: {' '.join(tests)} do not pass before any mutation ({failing or status})")
    found = mutants(path, code)
    picked = sorted(random.Random(cfg['seed']).sample(range(len(found)), min(cfg['n'] or len(found), len(found))))
    rows, limit = [], max(30.0, cfg['timeout_factor'] * base)
    try:
        for i, k in enumerate(picked):
            line, before, after, new = found[k]
            with open(os.path.join(tree, path), 'w') as f:
                f.write(new)
            status, failing, sec = pytest(tree, tests, limit)
            if status == 'timeout':
                status, failing, sec = pytest(tree, tests, 2 * limit)
            rows.append(dict(index=k, line=line, before=before, after=after, killed=status != 'passed',
                             how=status, killed_by=failing, seconds=round(sec, 1)))
            print(f"  {name} {i + 1}/{len(picked)}: line {line}: {'killed' if status != 'passed' else 'SURVIVED'} "
                  f"({failing or status}, {sec:.0f} s)", file=sys.stderr, flush=True)
    finally:
        with open(os.path.join(tree, path), 'w') as f:
            f.write(code)
    killed = sum(r['killed'] for r in rows)
    return dict(file=path, tests=tests, mutants=len(found), sampled=len(picked), killed=killed,
                survived=len(rows) - killed, kill_rate=killed / max(len(rows), 1), baseline_seconds=round(base, 1),
                timeout_seconds=round(limit, 1), results=rows)


def annotate(data):
    """Each survivor's note: why it is equivalent (EQUIVALENT), or the test added since that kills it (KILLED_SINCE)."""
    for m in data['modules'].values():
        for r in (r for r in m['results'] if not r['killed']):
            r['equivalent'] = EQUIVALENT.get((m['file'], r['before'], r['after']))
            r['killed_since_by'] = KILLED_SINCE.get((m['file'], r['before'], r['after']))
    return data


def readme(cfg, data):
    """README.md: the kill rate per module before and after, and every survivor of the after run with its verdict."""
    before = os.path.join(cfg['out_dir'], 'before.json')
    old = read_json(before, 'out_dir') if os.path.isfile(before) else dict(modules={}, command='-')
    rate = lambda m: f"{m['killed']}/{m['sampled']} ({100 * m['kill_rate']:.0f}%)" if m else '-'
    rows = [[name, m['file'], m['mutants'], rate(old['modules'].get(name)), rate(m), ', '.join(m['tests'])]
            for name, m in data['modules'].items()]
    why = lambda r: r['equivalent'] or (f"killed now by {r['killed_since_by']}" if r['killed_since_by'] else
                                         '**not explained**')
    code = lambda text: '`' + ' '.join(text.split()).replace('|', '\\|') + '`'
    surv = [[name, r['line'], code(r['before']), code(r['after']), why(r)]
            for name, m in data['modules'].items() for r in m['results'] if not r['killed']]
    return (f"# Mutation run\n\n`{data['command']}` and, for the first column, `{old['command']}`. {data['tool']}, "
            f"its string mutants left out (labels and prose); a sample of n = {cfg['n'] or 'all'} mutants per module "
            f"(seed {cfg['seed']}), each against the module's test files alone (pytest -x, a timeout). The commit "
            f"before the tests of #59 and this tree mutate the code each holds: where the code changed, the samples "
            f"differ.\n\n"
            + md_table(['module', 'file', 'mutants', 'killed before #59', 'killed now', 'tests'], rows)
            + "\nThe survivors of the second run, each with why no test can kill it (it computes the same numbers) or "
              "the test added since that kills it:\n\n"
            + (md_table(['module', 'line', 'before', 'after', 'why'], surv) if surv else 'none\n'))


def main(cfg):
    unknown = [m for m in cfg['modules'] if m not in TARGETS]
    if unknown or not cfg['modules']:
        raise ConfigError(f"modules={','.join(cfg['modules'])}; allowed: {', '.join(TARGETS)}")
    if cfg['n'] < 0 or cfg['timeout_factor'] <= 0:
        raise ConfigError(f"n={cfg['n']} must be >= 0 and timeout_factor={cfg['timeout_factor']} > 0")
    if cfg['annotate']:
        path = os.path.join(cfg['out_dir'], cfg['name'] + '.json')
        data = annotate(read_json(path, 'out_dir'))
        with open(path, 'w') as f:  # the command that measured it stays
            json.dump(data, f, indent=1)
        with open(os.path.join(cfg['out_dir'], 'README.md'), 'w') as f:
            f.write(readme(cfg, data))
        return data
    tool = f"mutmut {importlib.metadata.version('mutmut')}'s mutation operators, run by tools/mutation.py"
    data = dict(tool=tool, at=cfg['at'], n=cfg['n'], seed=cfg['seed'], modules={})
    with tempfile.TemporaryDirectory(prefix='mutation-') as tree:
        snapshot(cfg['at'], tree)
        for name in cfg['modules']:
            data['modules'][name] = mutate_module(cfg, tree, name)
            m = data['modules'][name]
            print(f"{name}: {m['killed']} of {m['sampled']} sampled mutants killed ({m['mutants']} in all)", flush=True)
    base = write_outputs(cfg['out_dir'], cfg['name'], annotate(data))
    if cfg['name'] == 'after':
        with open(os.path.join(cfg['out_dir'], 'README.md'), 'w') as f:
            f.write(readme(cfg, dict(data, command=read_json(base + '.json', 'out_dir')['command'])))
    return data


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
