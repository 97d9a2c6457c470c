import os

import pytest

from lexgpt.config import ConfigError, parse_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULTS = dict(out_dir='out', max_iters=100, learning_rate=6e-4, compile=False, pe='alibi', vocab_size=None,
                sep=(46, 10))


def test_defaults_untouched_without_arguments():
    cfg = parse_config(DEFAULTS, [])
    assert cfg == DEFAULTS and cfg is not DEFAULTS


def test_file_then_command_line(tmp_path):
    path = tmp_path / 'c.py'
    path.write_text("import math\n_helper = 3\nmax_iters = 10 * _helper\npe = 'rope'\nlearning_rate = 1\n")
    # the command line wins over the file even when written before it
    cfg = parse_config(DEFAULTS, ['--pe=t5', str(path), '--compile=True', '--out_dir=out/x'])
    assert cfg['max_iters'] == 30 and cfg['pe'] == 't5' and cfg['compile'] is True and cfg['out_dir'] == 'out/x'
    assert cfg['learning_rate'] == 1.0 and isinstance(cfg['learning_rate'], float)  # int accepted for float


def test_value_parsing():
    cfg = parse_config(DEFAULTS, ['--learning_rate=3e-4', '--vocab_size=256', '--out_dir=123', '--sep=[1,2]'])
    assert cfg['learning_rate'] == 3e-4 and cfg['vocab_size'] == 256
    assert cfg['out_dir'] == '123'  # a string key keeps the text as written
    assert cfg['sep'] == (1, 2)
    assert parse_config(DEFAULTS, ["--pe='rope'"])['pe'] == 'rope'


@pytest.mark.parametrize('argv, words', [
    (['--max_itres=5'], ["'max_itres'", "did you mean 'max_iters'", 'allowed keys', 'learning_rate']),
    (['--max_iters=0.5'], ["'max_iters'", 'int', '0.5']),
    (['--max_iters=True'], ["'max_iters'", 'int']),
    (['--compile=1'], ["'compile'", 'bool']),
    (['--learning_rate=fast'], ["'learning_rate'", 'float', "'fast'"]),
    (['--max_iters', '5'], ["'--max_iters'", '--key=value']),
    (['missing_config.py'], ["'missing_config.py'"]),
])
def test_errors_name_the_key_and_what_is_allowed(argv, words):
    with pytest.raises(ConfigError) as e:
        parse_config(DEFAULTS, argv)
    message = str(e.value)
    assert '\n' not in message
    for w in words:
        assert w in message


def test_bad_key_in_file(tmp_path):
    path = tmp_path / 'bad.py'
    path.write_text("lr = 1e-3\n")
    with pytest.raises(ConfigError, match=r"unknown config key 'lr' in config file .*bad\.py"):
        parse_config(DEFAULTS, [str(path)])


def test_lists_take_comma_separated_values_with_typed_elements():
    defaults = dict(lengths=[1.0, 2.0], ckpt=[], seeds=[0], name='x')
    cfg = parse_config(defaults, ['--lengths=1,2,4', '--ckpt=out/a,out/lm/*-s0', '--seeds=3'])
    assert cfg['lengths'] == [1.0, 2.0, 4.0] and all(isinstance(v, float) for v in cfg['lengths'])
    assert cfg['ckpt'] == ['out/a', 'out/lm/*-s0'] and cfg['seeds'] == [3]
    assert parse_config(defaults, ['--ckpt=out/a'])['ckpt'] == ['out/a']
    with pytest.raises(ConfigError, match=r"'seeds'.*int.*'x'"):
        parse_config(defaults, ['--seeds=1,x'])


def test_other_file_keys_are_skipped_only_when_asked(tmp_path):
    path = tmp_path / 'train_config.py'
    path.write_text("max_iters = 7\neval_interval = 3\n")
    assert parse_config(DEFAULTS, [str(path)], other_file_keys=True)['max_iters'] == 7
    with pytest.raises(ConfigError, match="unknown config key 'eval_interval'"):
        parse_config(DEFAULTS, [str(path)])
    with pytest.raises(ConfigError, match="unknown config key 'eval_interval'"):
        parse_config(DEFAULTS, ['--eval_interval=3'], other_file_keys=True)


def test_help_lists_keys_with_their_comments(tmp_path, monkeypatch):
    script = tmp_path / 'script.py'
    script.write_text("DEFAULTS = dict(\n    lr=0.1,  # the step size\n    name='a',\n)\n")
    monkeypatch.setattr('sys.argv', [str(script), '--help'])
    with pytest.raises(SystemExit) as e:
        parse_config(dict(lr=0.1, name='a'), ['--help'], doc='A script.')
    assert str(e.value).startswith('A script.') and "--lr=0.1  # the step size" in str(e.value)
    assert "--name='a'" in str(e.value)


def test_help_joins_a_comment_continued_in_its_column(tmp_path, monkeypatch):
    """A long comment goes on under its own # (lines stay within 120): --help shows all of it, and a comment at the
    keys' indentation (the next group's heading) stays out."""
    script = tmp_path / 'script.py'
    script.write_text("DEFAULTS = dict(\n    lr=0.1,    # the step size,\n               # halved at the end\n"
                      "    # sizes\n    n=2,       # items\n)\n")
    monkeypatch.setattr('sys.argv', [str(script), '--help'])
    with pytest.raises(SystemExit) as e:
        parse_config(dict(lr=0.1, n=2), ['--help'])
    assert "--lr=0.1  # the step size, halved at the end\n" in str(e.value)
    assert "--n=2  # items" in str(e.value) and 'sizes' not in str(e.value)


def test_real_config_files_are_valid():
    import train
    import sweep
    tiny = parse_config(train.DEFAULTS, [os.path.join(ROOT, 'configs', 'tiny.py')])
    assert (tiny['n_layer'], tiny['n_embd'], tiny['block_size'], tiny['pe']) == (4, 128, 256, 'alibi')
    thesis_files = [os.path.join(ROOT, 'configs', f) for f in ('thesis_162m.py', 'regular_128_6.py')]
    thesis = parse_config(train.DEFAULTS, thesis_files)
    assert (thesis['n_layer'], thesis['block_size'], thesis['pe'], thesis['chunk_size']) == (12, 512, 'regular', 128)
    runs = dict(sweep_lm_tiny=45, sweep_lm_long=4, sweep_dyck=36, sweep_lm_wave2=12, sweep_lm_rope_ssmax=3,
                sweep_lm_rope_random=3, sweep_rope_finetune=9, sweep_deletang_random=12, sweep_demo=2,
                sweep_lm_regular=6)
    assert sorted(runs) == sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, 'configs')) if f.startswith('sweep_'))
    for name, n in runs.items():
        cfg = parse_config(sweep.DEFAULTS, [os.path.join(ROOT, 'configs', f'{name}.py')])
        assert len(sweep.points(cfg['grid'])) == n
        script_defaults = __import__(cfg['script'][:-3]).DEFAULTS  # every run's arguments are keys of its script
        for argv, _ in (sweep.command(cfg, p) for p in sweep.points(cfg['grid'])):
            parse_config(script_defaults, [a for a in argv[2:] if not a.startswith('--init_from=out/')])


def scripts():
    """Every file a user runs through lexgpt.config.run: a DEFAULTS and a __main__ block."""
    found = []
    for folder in ('', 'analysis', 'tools', 'data'):
        for name in sorted(os.listdir(os.path.join(ROOT, folder or '.'))):
            path = os.path.join(ROOT, folder, name)
            if name.endswith('.py') and os.path.isfile(path):
                text = open(path).read()
                if "\nif __name__ == '__main__':" in text and '\nDEFAULTS = ' in text:
                    found.append(os.path.join(folder, name))
    return found


@pytest.mark.parametrize('script', scripts())
def test_every_scripts_help_starts_with_its_docstring(script, monkeypatch):
    """`python <script>.py --help` (or python -m ...) shows the script's docstring, its examples first, above the
    keys: the one place a user reads what a script does before running it."""
    import ast
    import runpy
    path = os.path.join(ROOT, script)
    doc = ast.get_docstring(ast.parse(open(path).read()), clean=False)
    monkeypatch.setattr('sys.argv', [path, '--help'])
    with pytest.raises(SystemExit) as e:
        runpy.run_path(path, run_name='__main__')
    assert doc and str(e.value.code).startswith(doc.strip() + '\n\nusage: ')


@pytest.mark.parametrize('script', [s for s in scripts() if "cfg['out_dir']" in open(os.path.join(ROOT, s)).read()])
def test_every_script_that_writes_has_an_out_dir_default_under_out(script):
    """A script's default output goes under out/ (results/ is results.sh's alone); '' where the script derives the
    folder from its inputs (extrapolate.py, sweep.py, data/prepare.py's data/<corpus>)."""
    import importlib
    defaults = importlib.import_module(script[:-3].replace(os.sep, '.')).DEFAULTS
    assert 'out_dir' in defaults and (defaults['out_dir'] in ('', 'out') or defaults['out_dir'].startswith('out/'))
