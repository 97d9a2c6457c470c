"""
The one configuration mechanism of every script (train.py, extrapolate.py, the analyses, data/prepare.py, ...).

A script keeps its defaults in a plain dict, one `key=value,  # comment` per line. The command line then holds:
  python train.py configs/tiny.py --pe=rope --max_iters=100
- config files (plain Python, executed; their top-level assignments override the defaults),
- then --key=value overrides (value read with ast.literal_eval, else taken as a string).
Every key must already exist in the defaults and keep the default's type (an int is fine for a float; a default
of None stands for an optional number or list of numbers), so a typo fails loudly instead of being silently
ignored. A list default takes a comma-separated value: --lengths=1,2,4 or --ckpt=out/a,out/b. --help prints the
keys, defaults and comments.
"""
import ast
import difflib
import os
import re
import sys
import traceback


class ConfigError(ValueError):
    """A bad setting; scripts print it as one line."""


class Settings(dict):
    """A script's settings as parse_config gives them: a dict that also knows which keys a config file or the
    command line set (`given`), so that a setting left unset can keep a checkpoint's value."""
    given = frozenset()


def given(settings, defaults):
    """The keys a config file or the command line set (--window=0 too, though it equals the default), and any key
    whose value differs from the default (a caller changed the dict, or built it without parse_config)."""
    changed = {k for k, v in settings.items() if k not in defaults or v != defaults[k]}
    return set(getattr(settings, 'given', ())) | changed


def _typed(key, value, default, where):
    if value is None:
        return value
    if default is None:  # an optional number (lr_decay_iters, top_k, vocab_size) or list of numbers (bipe_sep_ids)
        items = value if isinstance(value, (list, tuple)) else [value]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            raise ConfigError(f"config key '{key}' in {where} must be a number (or a list of numbers), or None "
                              f"(the default), got {type(value).__name__} {value!r}")
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            value = [value]  # --lengths=4 means [4]
        if default:  # elements keep the type of the default's elements
            value = [_typed(key, v, default[0], where) for v in value]
        return type(default)(value)
    # bool is a subclass of int, but --max_iters=True is a mistake, not a number
    if isinstance(value, type(default)) and not (isinstance(value, bool) and not isinstance(default, bool)):
        return value
    raise ConfigError(f"config key '{key}' in {where} must be of type {type(default).__name__} "
                      f"(like the default {default!r}), got {type(value).__name__} {value!r}")


def _checked(key, value, defaults, where):
    if key not in defaults:
        near = difflib.get_close_matches(key, defaults, n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ''
        raise ConfigError(f"unknown config key '{key}' in {where}{hint}; allowed keys: {', '.join(sorted(defaults))}")
    return _typed(key, value, defaults[key], where)


def _parse_value(text, default):
    try:
        value = ast.literal_eval(text)
        # a string key keeps the text as written (--out_dir=123 is '123'), unless it was quoted (--pe='rope')
        return text if isinstance(default, str) and not isinstance(value, str) else value
    except (ValueError, SyntaxError):
        pass
    if isinstance(default, (list, tuple)):  # --ckpt=out/a,out/b: each part a literal where it reads as one
        parts = []
        for part in text.split(','):
            try:
                parts.append(ast.literal_eval(part))
            except (ValueError, SyntaxError):
                parts.append(part)
        return parts
    return text  # --pe=alibi, --device=cuda:1


def _comments():
    """key -> the comment on its line in the defaults of the running script, or of the shared keys (device.py's
    EVAL_DEVICE, evaluation.py's VARIANT_DEFAULTS), with the comment lines under it that start in the same column."""
    notes, here = {}, os.path.dirname(os.path.abspath(__file__))
    for path in (sys.argv[0], os.path.join(here, 'device.py'), os.path.join(here, 'evaluation.py')):
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        for m in re.finditer(r'^\s+(\w+)=.*?#\s*(.*)$', text, re.M):
            if m.group(1) not in notes:  # the first one is the defaults' line
                notes[m.group(1)] = m.group(2) + _continued(text, m.end())
    return notes


def _continued(text, end):
    """The comment lines right after position `end` whose # is in the column of the # on end's line, joined."""
    start = text.rfind('\n', 0, end) + 1
    column = text.index('#', start) - start
    more = ''
    for line in text[end + 1:].split('\n'):
        if not (line[:column].isspace() and line[column:column + 1] == '#'):
            break
        more += ' ' + line[column + 1:].strip()
    return more


def usage(defaults, doc=''):
    notes = _comments()
    keys = '\n'.join(f'  --{k}={v!r}' + (f'  # {notes[k]}' if k in notes else '') for k, v in defaults.items())
    return (doc.strip() + '\n\n' if doc else '') + \
        f'usage: {os.path.basename(sys.argv[0])} [config_file.py ...] [--key=value ...]; keys and defaults:\n' + keys


def parse_config(defaults: dict, argv: list, doc: str = '', other_file_keys=False) -> Settings:
    """Return new Settings: defaults, then config files from argv, then --key=value overrides from argv.
    other_file_keys=True skips keys of config files that this script does not have (bench.py reads training
    configs), while the command line stays strict."""
    cfg, set_keys = Settings(defaults), set()
    files = [a for a in argv if not a.startswith('-')]
    overrides = [a for a in argv if a.startswith('-')]
    for arg in overrides:
        if arg in ('-h', '--help'):
            raise SystemExit(usage(defaults, doc))
        if not arg.startswith('--') or '=' not in arg:
            raise ConfigError(f"bad argument '{arg}': expected --key=value or a config file path")
    for path in files:
        namespace = {}
        try:
            with open(path) as f:
                exec(compile(f.read(), path, 'exec'), namespace)
        except OSError as e:
            raise ConfigError(f"cannot read config file '{path}': {e.strerror}") from None
        except Exception as e:  # a syntax error, a failing import: the file's fault, not a bug of the script
            line = getattr(e, 'lineno', None) or next(
                (t.lineno for t in traceback.extract_tb(e.__traceback__) if t.filename == path), '?')
            raise ConfigError(f"config file '{path}' line {line} fails: {type(e).__name__}: {e}") from None
        for key, value in namespace.items():
            # helpers such as `import math` or `_x = 2` in a config file are not settings
            if key.startswith('_') or callable(value) or type(value).__name__ == 'module':
                continue
            if other_file_keys and key not in defaults:
                continue
            cfg[key] = _checked(key, value, defaults, f"config file '{path}'")
            set_keys.add(key)
    for arg in overrides:
        key, text = arg[2:].split('=', 1)
        cfg[key] = _checked(key, _parse_value(text, defaults.get(key)), defaults, arg)
        set_keys.add(key)
    cfg.given = frozenset(set_keys)
    return cfg


def run(main, defaults, doc='', other_file_keys=False):
    """The entry point of every script: parse sys.argv and call main(cfg). Bad input (a ConfigError, ValueError, or
    an OSError: a missing file, a read-only folder, a full disk) ends the script with one line on stderr that names
    the bad value; anything else is a bug and keeps its traceback."""
    try:
        return main(parse_config(defaults, sys.argv[1:], doc, other_file_keys))
    except (ValueError, OSError, FloatingPointError) as e:  # OSError: out_dir a file or read-only, a full disk
        sys.exit(f'error: {e}')
