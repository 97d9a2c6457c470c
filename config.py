"""
The one configuration mechanism of every script (train.py, sample.py, bench.py, ...).

A script keeps its defaults in a plain dict. The command line then holds, in this order of precedence:
  python train.py configs/tiny.py --pe=rope --max_iters=100
- config files (plain Python, executed; their top-level assignments override the defaults),
- then --key=value overrides (value read with ast.literal_eval, else taken as a string).
Every key must already exist in the defaults and keep the default's type (an int is fine for a float;
a default of None accepts anything), so a typo fails loudly instead of being silently ignored.
"""
import ast
import difflib
import os
import sys


class ConfigError(ValueError):
    pass


def _checked(key, value, defaults, where):
    if key not in defaults:
        near = difflib.get_close_matches(key, defaults, n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ''
        raise ConfigError(f"unknown config key '{key}' in {where}{hint}; allowed keys: {', '.join(sorted(defaults))}")
    default = defaults[key]
    if default is None or value is None:
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return type(default)(value)  # --bipe_sep_ids=[46,10] for a tuple default
    # bool is a subclass of int, but --max_iters=True is a mistake, not a number
    if isinstance(value, type(default)) and not (isinstance(value, bool) and not isinstance(default, bool)):
        return value
    raise ConfigError(f"config key '{key}' in {where} must be of type {type(default).__name__} "
                      f"(like the default {default!r}), got {type(value).__name__} {value!r}")


def parse_config(defaults: dict, argv: list) -> dict:
    """Return a new dict: defaults, then config files from argv, then --key=value overrides from argv."""
    cfg = dict(defaults)
    files = [a for a in argv if not a.startswith('-')]
    overrides = [a for a in argv if a.startswith('-')]
    for arg in overrides:
        if arg in ('-h', '--help'):
            raise SystemExit(f'usage: {os.path.basename(sys.argv[0])} [config_file.py ...] [--key=value ...]; keys and defaults:\n'
                             + '\n'.join(f'  {k} = {v!r}' for k, v in sorted(defaults.items())))
        if not arg.startswith('--') or '=' not in arg:
            raise ConfigError(f"bad argument '{arg}': expected --key=value or a config file path")
    for path in files:
        namespace = {}
        try:
            with open(path) as f:
                exec(compile(f.read(), path, 'exec'), namespace)
        except OSError as e:
            raise ConfigError(f"cannot read config file '{path}': {e.strerror}") from None
        for key, value in namespace.items():
            # helpers such as `import math` or `_x = 2` in a config file are not settings
            if key.startswith('_') or callable(value) or type(value).__name__ == 'module':
                continue
            cfg[key] = _checked(key, value, defaults, f"config file '{path}'")
    for arg in overrides:
        key, text = arg[2:].split('=', 1)
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text  # --pe=alibi, --device=cuda:1
        if isinstance(defaults.get(key), str) and not isinstance(value, str):
            value = text  # --out_dir=123 means the string '123'
        cfg[key] = _checked(key, value, defaults, arg)
    return cfg
