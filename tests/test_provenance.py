"""Provenance (#39, part 7; #74): every JSON under results/ records the command that made it, and that command is the
line of the step that writes it in the step list (tools/steps.py, tools/steps_pretrained.py, tools/lease.py), so
`bash results.sh <part>` is how to make it again.

A step names the JSON it writes; a committed JSON that no step writes, or whose command is not that of a step that
writes it, is reported, up to options that do not change what is measured: --reuse (present or not depending on
whether the JSON existed before; the rows it keeps were made with the same settings, which extrapolate.py and
passkey.py check) and --threads (torch's CPU threads, a speed setting); and a lease step's budget (`python -m
tools.lease DIR STEP BUDGET ...`), which says how long the step may run, not what it measures: a step that ran out of
time keeps its JSON until a lease with a longer budget measures it again.

Beside that (#71), a JSON's record has to agree with its command: the threads its rows record, the --reuse file,
the settings it records for each --key=value (setting_problems). The runner itself (tools/results.py): --reuse, skips,
waits, failures, variables, tee and background steps, and the states --list shows.
"""
import difflib
import itertools
import json
import os
import re
import shutil
import subprocess

import pytest

from tools import results, steps
from tools.steps import Step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IGNORED = ('--reuse=', '--threads=')
# #57 moved the analyses to analysis/ and the tools to tools/, run with -m, and made every script's default output
# out/; thesis.py's default had been results/thesis. A JSON whose run predates that records its command as
# rewritten by this rule alone (in `command`, the old one in `command_rewritten_from`): the code it ran is the same.
MOVED = {**{f'python {m}.py': f'python -m analysis.{m}'
            for m in ('kernels', 'receptive_field', 'temperature', 'nope', 'passkey', 'thesis')},
         'python bench.py': 'python -m tools.bench', 'python lease.py': 'python -m tools.lease'}
DEFAULT_OUT = {'python -m analysis.thesis': 'results/thesis'}


# ... and renamed the attention's temperature option (sample.py's --temperature is the sampling one)
RENAMED = {'--temperature=': '--attn_temperature='}


def rewritten(command):
    """A command line as it reads after #57: the new module path, the old default folder named, the new option names."""
    for old, new in MOVED.items():
        command = re.sub(rf'(^| ){re.escape(old)}(?= |$)', rf'\g<1>{new}', command)
    if command.startswith(('python extrapolate.py', 'python -m analysis.passkey',
                           'python -m analysis.receptive_field')):
        for old, new in RENAMED.items():
            command = command.replace(' ' + old, ' ' + new)
    for head, out in DEFAULT_OUT.items():
        if command.startswith(head) and '--out_dir=' not in command:
            command += f' --out_dir={out}'
    return command

def normal(command):
    """A command line without the options that do not change what is measured, its --key=value options sorted:
    config.py reads them in any order (the last of a repeated key wins, so then the order stays)."""
    command = re.sub(r'^(python -m tools\.lease \S+ \S+) \d+ ', r'\1 ', command)
    words = [a for a in command.split() if not a.startswith(IGNORED)]
    head = [a for a in words if not a.startswith('--')]  # python, the script, config files
    keys = [a.split('=', 1)[0] for a in words if a.startswith('--')]
    options = [a for a in words if a.startswith('--')]
    return ' '.join(head + (sorted(options) if len(set(keys)) == len(keys) else options))


def result_jsons(root):
    """The JSON files under results/ that git tracks or would add (not ignored), else every one on disk."""
    try:
        listed = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard', '--', 'results'],
                                cwd=root, capture_output=True, text=True, check=True).stdout.split()
        paths = [p for p in listed if os.path.isfile(os.path.join(root, p))]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        paths = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(os.path.join(root, 'results'))
                 for f in fs]
    return sorted(p for p in paths if p.endswith('.json'))


def writers(every):
    """{JSON path: the normal forms of the commands of the steps that write it}."""
    out = {}
    for s in every:
        for path in s.outputs:
            out.setdefault(path, set()).add(normal(steps.resolve(s)))
    return out


def problems(root, every):
    """-> one line per JSON whose command is missing, that no step writes, or whose command is not that of a step that
    writes it (with the nearest)."""
    made_by = writers(every)
    bad = []
    for path in result_jsons(root):
        try:
            with open(os.path.join(root, path)) as f:
                data = json.load(f)
        except ValueError as e:
            bad.append(f"{path}: not JSON ({e})")
            continue
        command = data.get('command') if isinstance(data, dict) else None
        if not isinstance(command, str):
            bad.append(f"{path}: records no command")
        elif 'command_rewritten_from' in data and rewritten(data['command_rewritten_from']) != command:
            bad.append(f"{path}: `{command}` is not what the move's rule makes of `{data['command_rewritten_from']}`")
        elif path not in made_by:
            bad.append(f"{path}: no step writes it (its command: `{command}`)")
        elif normal(command) not in made_by[path]:
            near = difflib.get_close_matches(normal(command), made_by[path], n=1, cutoff=0)
            bad.append(f"{path}: `{command}` is not the command of a step that writes it (nearest: `{near[0]}`)")
    return bad


@pytest.fixture(scope='module')
def every():
    return results.all_steps()


def test_the_step_list(every):
    """The list itself: every part, each loop expanded, every JSON named once per command that writes it."""
    parts = set(s.part for s in every)
    assert {'lm', 'analysis', 'regular', 'regular_runs', 'stream', 'thesis', 'smollm2', 'gemma3', 'gemma3_4x_nobos',
            'pretrained_gpu', 'gpu', 'lease', 'bench', 'repro', 'mutation', 'erf_tables'} <= parts
    assert all(set(g) <= parts for g in results.GROUPS.values())
    assert all(s.command.startswith(('python ', 'cp ')) and s.cost for s in every)
    assert sum(s.command.startswith('python regular_lang.py --task=') for s in every) > 100  # one per run
    assert [s.command for s in every if s.part == 'thesis'][-1] == 'python -m analysis.thesis --out_dir=results/thesis'
    assert all(s.outputs[0].endswith('.json') for s in every if '--out_dir=results' in s.command)
    # a step that keeps its JSON's rows names that JSON: a typo would start it afresh
    assert all(s.reuse == s.outputs[0] for s in every if s.reuse)


def test_every_result_json_names_the_command_of_its_step(every):
    bad = problems(ROOT, every)
    assert not bad, f"{len(bad)} JSON file(s) under results/ without their step's command:\n" + '\n'.join(bad)


def test_a_planted_defect_is_found(tmp_path, every):
    """A result that no step writes, one whose step runs another command, one with none, and a good one (a copy of a
    real file)."""
    ok = result_jsons(ROOT)[0]
    os.makedirs(tmp_path / os.path.dirname(ok))
    shutil.copy(os.path.join(ROOT, ok), tmp_path / ok)
    (tmp_path / 'results' / 'x').mkdir()
    (tmp_path / 'results' / 'x' / 'hand.json').write_text(json.dumps(dict(command='python extrapolate.py --n=3')))
    (tmp_path / 'results' / 'x' / 'bare.json').write_text(json.dumps(dict(value=1)))
    (tmp_path / 'results' / 'ppl').mkdir()
    (tmp_path / 'results' / 'ppl' / 'rope_pi.json').write_text(json.dumps(dict(
        command='python extrapolate.py --ckpt=out/lm/rope-s[0-9]* --rope_scaling=pi --rope_scale=2 --name=rope_pi')))
    bad = problems(str(tmp_path), every)
    assert len(bad) == 3, bad
    assert 'rope_pi.json: `python extrapolate.py --ckpt' in bad[0] and 'not the command of a step' in bad[0]
    assert '--rope_scale=4' in bad[0]  # the nearest: the step's own line
    assert 'bare.json: records no command' in bad[1] and 'hand.json: no step writes it' in bad[2], bad


def test_normal_form():
    """--reuse and --threads go, the order of distinct options does not matter, that of a repeated one does."""
    assert normal('python extrapolate.py --n=1 --threads=1 --reuse=results/a.json --name=b') == \
        normal('python extrapolate.py --name=b --n=1')
    assert normal('python train.py c.py --n=1 --n=2') != normal('python train.py c.py --n=2 --n=1')
    assert normal('python a.py --n=1') != normal('python b.py --n=1')
    assert normal('python -m tools.lease results/gpu/lease eval 100 python x.py') == \
        normal('python -m tools.lease results/gpu/lease eval 300 python x.py')


def test_a_rewritten_command(tmp_path, every):
    """The move's rule on real lines, and a JSON whose `command` is not what the rule makes of its old one."""
    assert rewritten('python kernels.py --ckpt=a --out_dir=results/kernels') == \
        'python -m analysis.kernels --ckpt=a --out_dir=results/kernels'
    assert rewritten('python thesis.py') == 'python -m analysis.thesis --out_dir=results/thesis'
    assert rewritten('python lease.py results/gpu/lease eval 100 python bench.py configs/tiny.py') == \
        'python -m tools.lease results/gpu/lease eval 100 python -m tools.bench configs/tiny.py'
    assert rewritten('python extrapolate.py --temperature_bench.py=1') == \
        'python extrapolate.py --temperature_bench.py=1'
    assert rewritten('python extrapolate.py --ckpt=a --temperature=2:0.9') == \
        'python extrapolate.py --ckpt=a --attn_temperature=2:0.9'
    assert rewritten('python sample.py --temperature=0') == 'python sample.py --temperature=0'
    (tmp_path / 'results' / 'thesis').mkdir(parents=True)
    good = dict(command='python -m analysis.thesis --out_dir=results/thesis', command_rewritten_from='python thesis.py')
    (tmp_path / 'results' / 'thesis' / 'thesis.json').write_text(json.dumps(good))
    (tmp_path / 'results' / 'bad.json').write_text(json.dumps(dict(good, command_rewritten_from='python nope.py')))
    bad = problems(str(tmp_path), every)
    assert len(bad) == 1 and bad[0].startswith('results/bad.json') and 'python nope.py' in bad[0], bad


def test_no_script_writes_into_results_by_default():
    """Only results.sh writes results/ (it names --out_dir): a script's default output folder lies under out/."""
    scripts = ['extrapolate.py', 'regular_lang.py', 'train.py', 'sample.py', 'sweep.py'] + \
        [os.path.join(d, f) for d in ('analysis', 'tools') for f in sorted(os.listdir(os.path.join(ROOT, d)))
         if f.endswith('.py') and f != '__init__.py']
    found = []
    for path in scripts:
        with open(os.path.join(ROOT, path)) as f:
            text = f.read()
        for m in re.finditer(r"^\s+(out_dir|json|name)=(['\"])(.*?)\2", text, re.M):
            if m.group(3).startswith('results'):
                found.append(f"{path}: {m.group(1)}={m.group(3)!r}")
        found += [f"{path}: {m.group(0)}" for m in re.finditer(r"os\.path\.join\('results'", text)]
    assert not found, found
    import extrapolate
    for mode, protocol in itertools.product(extrapolate.MODES, extrapolate.PROTOCOLS):
        folder = extrapolate.output_folder(dict(extrapolate.DEFAULTS, mode=mode, protocol=protocol))
        assert folder.split(os.sep)[0] == 'out', (mode, protocol, folder)


def unrecorded_bos(root):
    """-> one line per Gemma 3 measurement (#58) whose JSON does not record settings.bos, the BOS id put first or
    null for none. Exempt: the tools' JSONs (tools.bench times random ids; tools.cells tabulates other files)."""
    bad = []
    for path in result_jsons(root):
        with open(os.path.join(root, path)) as f:
            data = json.load(f)
        command = data.get('command', '') if isinstance(data, dict) else ''
        if 'gemma3' not in command or command.startswith('python -m tools.'):
            continue
        if 'bos' not in (data.get('settings') or {}):
            bad.append(f"{path}: `{command}` records no settings.bos")
    return bad


def test_every_gemma3_result_records_bos():
    bad = unrecorded_bos(ROOT)
    assert not bad, '\n'.join(bad)


def test_unrecorded_bos_is_found(tmp_path):
    """Planted: a Gemma 3 measurement without settings.bos is named; with it (null: none put first) and a bench
    JSON are not."""
    (tmp_path / 'results').mkdir()
    files = {'new.json': dict(command='python extrapolate.py --ckpt=gemma3 --name=x', settings=dict(split='train')),
             'nobos.json': dict(command='python extrapolate.py --ckpt=gemma3 --name=y', settings=dict(bos=None)),
             'bench.json': dict(command='python -m tools.bench --pretrained=gemma3', settings={})}
    for name, data in files.items():
        (tmp_path / 'results' / name).write_text(json.dumps(data))
    bad = unrecorded_bos(str(tmp_path))
    assert len(bad) == 1 and bad[0].startswith('results/new.json'), bad


def flag_value(text):
    """A command-line value as config.py reads it: int, float, bool, None, else a string; a comma makes a list."""
    if ',' in text:
        return [flag_value(t) for t in text.split(',')]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {'True': True, 'False': False, 'None': None}.get(text, text)


def same_setting(key, flag, recorded):
    """Whether a command's --key=flag is what the JSON's settings[key] records. A split is recorded with its corpus
    ('pycode-gemma3:train' for --split=train); --bos=False is recorded as null (no BOS), --bos=True as the id put
    first; a one-item list may be recorded as its item's list."""
    value = flag_value(flag)
    if key == 'split' and isinstance(recorded, str):
        return recorded == flag or recorded.endswith(':' + flag)
    if key == 'bos' and isinstance(value, bool):
        return recorded is None if not value else isinstance(recorded, int) and not isinstance(recorded, bool)
    return value == recorded or (not isinstance(value, list) and [value] == recorded)


def recorded_threads(data):
    """The thread counts a JSON's own measurements record (`threads` anywhere in it), leaving out the rows another
    run made (`reused_from`): those keep their own run's."""
    found, todo = set(), [data]
    while todo:
        o = todo.pop()
        if isinstance(o, dict):
            if 'reused_from' in o:
                continue
            if isinstance(o.get('threads'), int) and not isinstance(o['threads'], bool):
                found.add(o['threads'])
            todo.extend(o.values())
        elif isinstance(o, list):
            todo.extend(o)
    return found


def setting_problems(root):
    """-> one line per JSON whose record disagrees with its command (#71): a --threads=N where the rows it made record
    other threads (`command` and, for a file renamed since, `command_as_run`: what ran), a --reuse= file that is not
    there, a --key=value that the JSON's `settings` records otherwise."""
    bad = []
    for path in result_jsons(root):
        with open(os.path.join(root, path)) as f:
            data = json.load(f)
        if not isinstance(data, dict) or not isinstance(data.get('command'), str):
            continue  # test_every_result_json_names_its_results_sh_command says so
        threads = recorded_threads(data)
        for field in ('command', 'command_as_run'):
            m = re.search(r'(?:^| )--threads=(\d+)(?= |$)', data.get(field) or '')
            if m and threads - {int(m.group(1))}:
                bad.append(f"{path}: its {field} says --threads={m.group(1)}, its rows record {sorted(threads)}")
        command = data['command']
        for reuse in re.findall(r'(?:^| )--reuse=(\S+)', command):
            if not os.path.isfile(os.path.join(root, reuse)):
                bad.append(f"{path}: its command's --reuse={reuse} is not a file")
        settings = data.get('settings') if isinstance(data.get('settings'), dict) else {}
        for key, flag in re.findall(r'(?:^| )--(\w+)=(\S*)', command):
            if key in settings and not same_setting(key, flag, settings[key]):
                bad.append(f"{path}: its command says --{key}={flag}, its settings record {settings[key]!r}")
    return bad


def test_every_json_records_the_settings_its_command_names():
    bad = setting_problems(ROOT)
    assert not bad, '\n'.join(bad)


def test_same_setting_rules():
    assert same_setting('split', 'train', 'pycode-gemma3:train') and not same_setting('split', 'train', 'pycode:test')
    assert same_setting('bos', 'False', None) and same_setting('bos', 'True', 2) and not same_setting('bos', 'False', 2)
    assert same_setting('variants', ',window', ['', 'window']) and same_setting('lengths', '4', [4])
    assert same_setting('tokens', '200000', 200000) and not same_setting('n', '4', 1)


def test_a_record_that_disagrees_with_its_command_is_found(tmp_path):
    """Planted: stream_gemma3_nobos.json as it was before #71 (its command said --threads=1 and reused a file that
    was not there, its rows recorded 2 threads), a settings value the command contradicts, a reused row (another
    run's threads: not counted) and a good copy of a real file."""
    (tmp_path / 'results' / 'stream').mkdir(parents=True)
    with open(os.path.join(ROOT, 'results/stream/stream_gemma3_nobos.json')) as f:
        good = json.load(f)
    old = dict(good, command=good['command'].replace('--threads=2', '--threads=1').replace(
        '--reuse=results/stream/stream_gemma3_nobos.json', '--reuse=results/stream/stream_gemma3.json'))
    del old['command_as_run']
    files = {'stream/stream_gemma3_nobos.json': good, 'stream/old.json': old,
             'stream/tokens.json': dict(good, settings=dict(good['settings'], tokens=100000)),
             'reused.json': dict(command='python extrapolate.py --threads=1 --n=4', settings=dict(n=4),
                                 results=[dict(threads=1), dict(threads=2, reused_from='results/x.json')])}
    for name, data in files.items():
        (tmp_path / 'results' / name).write_text(json.dumps(data))
    bad = setting_problems(str(tmp_path))
    assert sorted(b.split(':')[0] for b in bad) == ['results/stream/old.json'] * 2 + ['results/stream/tokens.json'], bad
    assert any('--threads=1, its rows record [2]' in b for b in bad), bad
    assert any('--reuse=results/stream/stream_gemma3.json is not a file' in b for b in bad), bad
    assert any('--tokens=200000, its settings record 100000' in b for b in bad), bad


# ---- the runner (tools/results.py) ----

def fake_part(monkeypatch, *fake):
    monkeypatch.setattr(results, 'all_steps', lambda: list(fake))


def test_a_part_runs_in_order_and_stops_at_a_failure(tmp_path, monkeypatch, capfd):
    """Each step with OMP_NUM_THREADS=1 and its own variables (None: unset), --reuse=FILE once FILE exists, stdout
    copied to its tee file; skip_if and wait skip a step and say why; a failing step stops the part unless it says
    keep_going; background steps run one after the other beside the next ones, until a step with join."""
    log, page, reused = tmp_path / 'log', tmp_path / 'page.md', tmp_path / 'r.json'
    reused.write_text('{}')
    say = lambda text, **kw: Step('x', f'python -c "print({text!r})" --log={log}', '1 s', **kw)  # noqa: E731
    env = "import os,sys; print(os.environ['OMP_NUM_THREADS'], os.environ.get('MKL_X'), sys.argv[1:])"
    slow = f"import time; time.sleep(2); open('{log}', 'a').write('background ')"
    fake_part(monkeypatch,
              Step('x', f'python -c "{env}"', '1 s', env=(('MKL_X', 'AVX2'),), reuse=str(reused), tee=str(page)),
              Step('x', f'python -c "{slow}"', '1 s', background=True),
              Step('x', f"python -c \"open('{log}', 'a').write('after ')\"", '1 s'),
              say('skipped', skip_if=str(reused)), say('waits', wait=lambda: 'a run is training'),
              Step('x', f"python -c \"open('{log}', 'a').write('joined ')\"", '1 s', join=True),
              Step('x', 'python -c "import sys; sys.exit(3)"', '1 s', keep_going=True),
              Step('x', 'python -c "import sys; sys.exit(4)"', '1 s'), say('never'))
    monkeypatch.setenv('MKL_X', 'outer'), monkeypatch.setenv('OMP_NUM_THREADS', '3')  # each step gets 1 all the same
    assert results.run_part('x') == 4
    out = capfd.readouterr().out
    assert f"1 AVX2 ['--reuse={reused}']" in page.read_text()  # the step's variables, its --reuse, its page
    assert log.read_text() == 'after background joined '  # beside the next step, waited for before the joining one
    assert f'[4/9] x: skipped: {reused} exists' in out and '[5/9] x: skipped: a run is training' in out
    assert '[7/9] x: FAILED (exit 3)' in out and '[8/9] x: FAILED (exit 4)' in out and 'never' not in out
    fake_part(monkeypatch, Step('x', 'python -c "import os; print(os.environ.get(\'MKL_X\'))"', '1 s',
                                env=(('MKL_X', None),)))
    assert results.run_part('x') == 0 and 'None' in capfd.readouterr().out.splitlines()[1]


def test_list_states(tmp_path, monkeypatch):
    """--list: missing; a JSON marked partial; a lease step that ran out of time; cells short of their n (a passkey
    JSON with 1 of 4 keys scored in one cell); a finished file."""
    monkeypatch.setattr(results, 'ROOT', str(tmp_path))
    (tmp_path / 'partial.json').write_text(json.dumps(dict(command='python x.py', partial=True, results=[])))
    (tmp_path / 'lease.json').write_text(json.dumps(dict(command='python -m tools.lease a b 1 c', status='timeout')))
    (tmp_path / 'done.json').write_text(json.dumps(dict(command='python x.py', results=[])))
    cell = dict(mult=1, depth=0.5, L_ex=64, keys_so_far=[1])
    (tmp_path / 'keys.json').write_text(json.dumps(dict(command='python -m analysis.passkey', keys=[1, 2, 3, 4],
                                                        lengths=[1], depths=[0.5], results=[dict(
                                                            ckpt='a', variant='vanilla', cells=[cell])])))
    got = {name: results.state(Step('x', 'python x.py', '1 s', outputs=(name,)))
           for name in ('nowhere.json', 'partial.json', 'lease.json', 'keys.json', 'done.json')}
    assert got == {'nowhere.json': 'missing', 'partial.json': 'partial', 'lease.json': 'partial (timeout)',
                   'keys.json': 'partial n=1/4 (2 cells short)', 'done.json': 'done'}, got
    assert results.state(Step('x', 'python x.py', '1 s', outputs=('done.json', 'nowhere.json'))) == 'missing'


def test_thesis_waits_for_finished_runs(tmp_path, monkeypatch):
    """An encoding's tables wait until a run has finished (loss.png) and none is still training; a windowed table
    until every run its list names has finished."""
    monkeypatch.chdir(tmp_path)
    assert steps.thesis_wait('lm/a-s[0-9]*') == 'thesis: no finished run lm/a-s[0-9]* yet'
    for run, done in (('a-s0', True), ('a-s1', False), ('b-s0', True)):
        os.makedirs(f'lm/{run}')
        if done:
            open(f'lm/{run}/loss.png', 'w').close()
    assert steps.thesis_wait('lm/a-s[0-9]*') == 'thesis: lm/a-s[0-9]* waits, lm/a-s1 is still training'
    assert steps.thesis_wait('lm/b-s[0-9]*') is None
    assert 'waits until each' in steps.thesis_wait('lm/b-s[0-9]*', 'lm/b-s[0-9]*,lm/c-s[0-9]*')
    open('lm/a-s1/loss.png', 'w').close()
    assert steps.thesis_wait('lm/a-s[0-9]*', 'lm/a-s[0-9]*,lm/b-s[0-9]*') is None


def test_results_sh_runs_the_runner():
    """`bash results.sh PART` (as the pages say) is the runner; --dry_run fills in an earlier step's taus."""
    done = subprocess.run(['bash', 'results.sh', 'analysis', '--dry_run'], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    with open(os.path.join(ROOT, 'results/attention/attention.json')) as f:
        row = next(r for r in json.load(f)['results'] if r['ckpt'] == 't5-s0')
    taus = ','.join('%g:%g' % (length['mult'], length['tau_pmax']) for length in row['lengths'])
    assert f'--attn_temperature={taus} --out_dir=results/ppl --name=t5_temperature' in done.stdout
    assert 'python -m analysis.passkey --ckpt=out/lm/alibi-s0,out/lm/t5-s0 --out_dir=results/passkey' in done.stdout
