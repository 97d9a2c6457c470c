"""Provenance (#39, part 7): every JSON under results/ records the command that made it, and that command is one
that results.sh runs, so `bash results.sh <step>` is how to make it again.

results.sh is run dry, every step of it: in a scratch folder that holds a copy of results.sh and of the JSONs under
results/, `python` is a shell function that writes its command line to a file instead of running it (`python -c`,
the helpers that read a JSON such as taus, still runs), every other program but sed and tr is a no-op, and
`[ -f PATH ]` says that inputs (checkpoints, data) exist and outputs (anything under results/) do not, as on a
machine that has the checkpoints and none of the results: every step runs in full and nothing writes where it
could harm. A JSON's command then has to be one of the lines listed, up to two options that do not change what is
measured: --reuse (present or not depending on whether the JSON existed before; the rows it keeps were made with
the same settings, which extrapolate.py and passkey.py check) and --threads (torch's CPU threads, a speed setting);
and a lease step's budget (`python -m tools.lease DIR STEP BUDGET ...`), which says how long the step may run, not what
it measures: a step that ran out of time keeps its JSON until a lease with a longer budget measures it again.

Beside that (#71), a JSON's record has to agree with its command: the threads its rows record, the --reuse file,
the settings it records for each --key=value (setting_problems).
"""
import difflib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

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

# sourced before results.sh; $1 of the script is the step. `builtin [` is the real test inside the override.
PRELUDE = r'''
python() {
  if builtin [ "$1" = -c ]; then "$REAL_PYTHON" "$@"; else printf 'python %s\n' "$*" >> "$DRY_LOG"; fi
}
[() {
  if builtin [ $# = 3 ] && builtin [ "$1" = -f ]; then case $2 in results/*) return 1 ;; *) return 0 ;; esac; fi
  builtin [ "$@"
}
command_not_found_handle() { return 0; }
'''


def steps(script):
    """The step names of results.sh: every `"$what" = NAME` it tests."""
    return list(dict.fromkeys(re.findall(r'"\$what" = (\w+)', script)))


def dry_run(root, scratch):
    """-> {step: [the python command lines results.sh runs in that step, in order]}."""
    with open(os.path.join(root, 'results.sh')) as f:
        script = f.read()
    os.makedirs(scratch, exist_ok=True)
    shutil.copy(os.path.join(root, 'results.sh'), scratch)
    for path in result_jsons(root):  # what `python -c` helpers read (taus); results/ is the scratch copy
        os.makedirs(os.path.join(scratch, os.path.dirname(path)), exist_ok=True)
        shutil.copy(os.path.join(root, path), os.path.join(scratch, path))
    bin_dir = os.path.join(scratch, '.bin')
    os.makedirs(bin_dir, exist_ok=True)
    for tool in ('sed', 'tr'):  # text filters the script pipes through (name lists, opts)
        found = shutil.which(tool)
        if found and not os.path.exists(os.path.join(bin_dir, tool)):
            os.symlink(found, os.path.join(bin_dir, tool))
    with open(os.path.join(scratch, 'prelude.sh'), 'w') as f:
        f.write(PRELUDE)
    out = {}
    for step in steps(script):
        log = os.path.join(scratch, f'{step}.log')
        open(log, 'w').close()
        env = dict(PATH=bin_dir, HOME=scratch, REAL_PYTHON=sys.executable, DRY_LOG=log)
        proc = subprocess.run(['/bin/bash', '-c', 'source prelude.sh; source results.sh "$0"', step], cwd=scratch,
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"dry run of `results.sh {step}` failed: {proc.stderr[-2000:]}"
        with open(log) as f:
            out[step] = f.read().splitlines()
    return out


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


def problems(root, commands):
    """-> one line per JSON whose command is missing or is not a results.sh line (with the nearest line)."""
    known = {normal(c) for cs in commands.values() for c in cs}
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
        elif normal(command) not in known:
            near = difflib.get_close_matches(normal(command), known, n=1, cutoff=0)
            bad.append(f"{path}: `{command}` is not a command of results.sh (nearest: `{near[0] if near else ''}`)")
    return bad


@pytest.fixture(scope='module')
def commands(tmp_path_factory):
    return dry_run(ROOT, str(tmp_path_factory.mktemp('dry')))


def test_dry_run_lists_every_step(commands):
    """The harness itself: every step runs dry to its end and lists the commands it would run."""
    assert {'lm', 'regular', 'regular_runs', 'thesis'} <= set(commands)
    lm = ' '.join(commands['lm'])
    assert '--out_dir=results/ppl' in lm and '--reuse=' not in lm  # outputs are absent in the dry run
    assert any(c.startswith('python -m analysis.thesis') for c in commands['thesis'])
    # loops expand: one regular_lang.py line per run of the Table 6.1 grid
    assert sum('regular_lang.py --task=' in c for c in commands['regular_runs']) > 100


def test_every_result_json_names_its_results_sh_command(commands):
    bad = problems(ROOT, commands)
    assert not bad, f"{len(bad)} JSON file(s) under results/ without a results.sh command:\n" + '\n'.join(bad)


def test_a_planted_defect_is_found(tmp_path, commands):
    """A result whose command results.sh does not run, one with none, and a good one (a copy of a real file)."""
    ok = result_jsons(ROOT)[0]
    os.makedirs(tmp_path / os.path.dirname(ok))
    shutil.copy(os.path.join(ROOT, ok), tmp_path / ok)
    (tmp_path / 'results' / 'x').mkdir()
    (tmp_path / 'results' / 'x' / 'hand.json').write_text(json.dumps(dict(command='python extrapolate.py --n=3')))
    (tmp_path / 'results' / 'x' / 'bare.json').write_text(json.dumps(dict(value=1)))
    bad = problems(str(tmp_path), commands)
    assert len(bad) == 2 and 'hand.json: `python extrapolate.py --n=3` is not a command' in bad[1] \
        and 'bare.json: records no command' in bad[0], bad


def test_normal_form():
    """--reuse and --threads go, the order of distinct options does not matter, that of a repeated one does."""
    assert normal('python extrapolate.py --n=1 --threads=1 --reuse=results/a.json --name=b') == \
        normal('python extrapolate.py --name=b --n=1')
    assert normal('python train.py c.py --n=1 --n=2') != normal('python train.py c.py --n=2 --n=1')
    assert normal('python a.py --n=1') != normal('python b.py --n=1')


def test_a_rewritten_command(tmp_path, commands):
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
    (tmp_path / 'results').mkdir()
    good = dict(command='python -m analysis.thesis --out_dir=results/thesis', command_rewritten_from='python thesis.py')
    (tmp_path / 'results' / 'good.json').write_text(json.dumps(good))
    (tmp_path / 'results' / 'bad.json').write_text(json.dumps(dict(good, command_rewritten_from='python nope.py')))
    bad = problems(str(tmp_path), commands)
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
