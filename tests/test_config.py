import os

import pytest

from config import ConfigError, parse_config

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


def test_real_config_files_are_valid():
    import train
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in ('tiny', 'test', 'thesis_162m'):
        cfg = parse_config(train.DEFAULTS, [os.path.join(root, 'configs', f'{name}.py')])
        assert cfg['max_iters'] > 0
