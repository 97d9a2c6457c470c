"""Bad input, as a user types it: every script ends with one line 'error: ...' that names the value (a non-zero exit,
no traceback), writes nothing that claims success and destroys nothing. Each row runs the script's own entry point
(config.run) in this process, with sys.argv as the command line; a save that dies half-way needs a real file-size
limit, so it runs as a subprocess."""
import importlib
import json
import os
import resource
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

from lexgpt import config
import train
from test_train import ROOT, small_cfg


@pytest.fixture(scope='module')
def W(tmp_path_factory):
    """A tiny trained checkpoint and the broken inputs of the table, made once."""
    tmp = tmp_path_factory.mktemp('bad')
    cfg = small_cfg(tmp, max_iters=2, eval_interval=2)
    train.main(cfg)
    data = cfg['data_dir']
    (tmp / 'syntax.py').write_text('x = (\n')
    (tmp / 'imp.py').write_text('a = 1\nimport nosuchmodule\n')
    (tmp / 'afile').write_text('')
    os.makedirs(tmp / 'readonly', mode=0o555)
    torch.save(torch.zeros(3), tmp / 'bare.pt')
    (tmp / 'foreign.json').write_text(json.dumps({'results': [{'x': 1}]}))
    # an empty train.bin; a preparation killed half-way (partial bins, no meta.json); bins shorter than meta.json
    # says; document offsets past the end of their .bin; ids beyond meta.json's vocab_size
    folders = {name: tmp / name for name in ('empty', 'half', 'short', 'offsets', 'ids')}
    for name, f in folders.items():
        shutil.copytree(data, f)
    (folders['empty'] / 'train.bin').write_bytes(b'')
    os.remove(folders['half'] / 'meta.json')
    meta = json.loads((folders['short'] / 'meta.json').read_text())
    (folders['short'] / 'meta.json').write_text(json.dumps(dict(meta, tokens=dict(train=5000, val=1500))))
    np.save(folders['offsets'] / 'val_docs.npy', np.array([0, 700, 2500]))
    (folders['ids'] / 'meta.json').write_text(json.dumps(dict(meta, vocab_size=16)))
    return dict(tmp=str(tmp), ckpt=cfg['out_dir'], data=data, **{k: str(v) for k, v in folders.items()})


TRAIN = ['configs/test.py', '--device=cpu', '--max_iters=2', '--eval_interval=2', '--data_dir={data}',
         '--out_dir={tmp}/run', '--block_size=16', '--n_layer=1', '--n_embd=16']
EVAL = ['--ckpt={ckpt}', '--data_dir={data}', '--out_dir={tmp}/res', '--n=2', '--lengths=1']
RO = '/sys/lexgpt_test' if os.geteuid() == 0 else '{tmp}/readonly/run'  # root writes through chmod; not into sysfs

# script, command line ({...}: the fixture's paths; later flags win), words the one-line error must hold
CASES = [
    ('train', TRAIN + ['{tmp}/syntax.py'], ['syntax.py', 'line 1', 'SyntaxError']),
    ('sample', ['{tmp}/imp.py'], ['imp.py', 'line 2', 'nosuchmodule']),
    ('sweep', ['{tmp}/syntax.py'], ['syntax.py', 'SyntaxError']),
    ('train', TRAIN + ['--vocab_size=32'], ['vocab_size=32', '>= 64']),
    ('train', TRAIN + ['--data_dir={ids}'], ['holds token id', 'vocab_size=16']),
    ('train', TRAIN + ['--lr_decay_iters=abc'], ['lr_decay_iters', "'abc'", 'number']),
    ('sample', ['--ckpt={ckpt}', '--top_k=abc'], ['top_k', "'abc'", 'number']),
    ('train', TRAIN + ['--device=bogus'], ["device='bogus'", 'cpu, cuda']),
    ('train', TRAIN + ['--out_dir={tmp}/afile'], ['afile', 'is a file']),
    ('train', TRAIN + ['--out_dir=' + RO], [RO]),
    ('sample', ['--ckpt={tmp}/bare.pt'], ['bare.pt', 'not written by train.py']),
    ('sample', ['--ckpt={ckpt}', '--top_k=0'], ['top_k=0', '>= 1']),
    ('sample', ['--ckpt={ckpt}', '--top_k=-3'], ['top_k=-3', '>= 1']),
    ('sample', ['--ckpt={ckpt}', '--temperature=-1'], ['temperature=-1', '>= 0']),
    ('bench', ['--mode=eval', '--lengths=0'], ['lengths=[0]', '>= 2']),
    ('bench', ['--batch_size=0'], ['batch_size=0', '>= 1']),
    ('regular_lang', ['--batch_size=0'], ['batch_size=0', '>= 1']),
    ('regular_lang', ['--test_samples=0'], ['test_samples=0', '>= 1']),
    ('regular_lang', ['--max_steps=0'], ['max_steps=0', '>= 1']),
    ('extrapolate', ['--mode=merge', '--inputs={tmp}/foreign.json'], ['foreign.json', 'not a ppl JSON']),
    ('extrapolate', EVAL + ['--reuse={tmp}/foreign.json'], ['foreign.json', 'not a ppl JSON']),
    ('sweep', ['configs/sweep_demo.py', '--out_dir={tmp}/{{pee}}', '--dry_run=True'], ["'pee'", '{{pe}}']),
    ('train', TRAIN + ['--data_dir={empty}'], ['train.bin', 'is empty']),
    ('train', TRAIN + ['--data_dir={half}'], ['half', 'no meta.json']),
    ('extrapolate', EVAL + ['--data_dir={half}', '--split=val'], ['half', 'no meta.json']),
    ('train', TRAIN + ['--data_dir={short}'], ['train.bin', 'holds 6000 tokens', 'says 5000']),
    ('extrapolate', EVAL + ['--data_dir={offsets}', '--split=val'], ['val_docs.npy', 'offsets']),
    ('extrapolate', EVAL + ['--data_dir={offsets}', '--split=val', '--protocol=nonoverlap'], ['val_docs.npy']),
    ('train', TRAIN + ['--lr_decay_iters=-5'], ['lr_decay_iters=-5', '>= 0']),
    ('train', TRAIN + ['--warmup_iters=-1'], ['warmup_iters=-1', '>= 0']),
    ('train', TRAIN + ['--grad_clip=-1'], ['grad_clip=-1', '>= 0']),
    ('train', TRAIN + ['--max_iters=0'], ['max_iters=0', 'positive']),
    ('train', TRAIN + ['--block_size=0'], ['block_size=0 must be a positive integer']),
    ('train', TRAIN + ['--n_head=3'], ['n_embd=16 must be divisible by n_head=3']),
    ('train', TRAIN + ['--learning_rate=1e30', '--max_iters=4'], ['non-finite', 'no checkpoint was written']),
    ('extrapolate', EVAL + ['--rope_scaling=yarn'], ["rope_scaling='yarn'", "pe='alibi'", 'rotary']),
    ('passkey', ['--ckpt={ckpt}', '--lengths=0', '--out_dir={tmp}/pk'], ['lengths=[0.0]', 'positive']),
    ('kernels', ['--ckpt={ckpt}', '--length=1e9', '--out_dir={tmp}/k'], ['length=1e+09', 'GiB']),  # ~8 TB
    # #59, as a new user tried them: each stops before any length is scored (test_the_issues_bad_inputs_...)
    ('extrapolate', EVAL + ['--split=val', '--protocol=nonoverlap', '--lengths=1,-2'], ['lengths: -2 is not a']),
    ('extrapolate', EVAL + ['--split=nosuch'], ["split='nosuch'; allowed: train, val, test"]),
    ('extrapolate', EVAL + ['--split=val', '--n=100000', '--lengths=8'], ['n=100000', '128 tokens of context',
                                                                           'allowed n <= ']),
    ('receptive_field', ['--ckpt={ckpt}', '--split=nosuch'], ["split='nosuch'; allowed: train, val, test"]),
    ('temperature', ['--ckpt={ckpt}', '--data_dir={data}', '--split=val', '--n=100000'], ['n=100000', 'allowed n']),
    ('passkey', ['--ckpt={ckpt}', '--rope_scaling=yarm'], ["rope_scaling='yarm'", 'pi, ntk, dynamic, yarn']),
    ('kernels', ['--ckpt={ckpt}', '--length=-1'], ['length: -1 is not a positive multiple of L_tr']),
    ('sample', ['--ckpt={ckpt}', '--start='], ["start='' is empty"]),
]
ISSUE_59 = CASES[-8:-5]


MODULES = dict(bench='tools.bench', passkey='analysis.passkey', kernels='analysis.kernels',
               receptive_field='analysis.receptive_field', temperature='analysis.temperature')


def error_line(monkeypatch, script, argv):
    """Run `python <script>.py argv` through its entry point -> the message it exits with."""
    mod = importlib.import_module(MODULES.get(script, script))
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, 'argv', [mod.__file__] + argv)
    with pytest.raises(SystemExit) as e:
        config.run(mod.main, mod.DEFAULTS, mod.__doc__, other_file_keys=script == 'bench')
    return e.value.code


@pytest.mark.parametrize('script,argv,words', CASES, ids=[f'{s}: {w[0]}' for s, _, w in CASES])
def test_bad_input_is_one_line(W, monkeypatch, tmp_path, script, argv, words):
    msg = error_line(monkeypatch, script, [a.format(**W) for a in argv])
    assert isinstance(msg, str) and msg.startswith('error: ') and '\n' not in msg, msg  # a str exits with status 1
    for w in words:
        assert w.format(**W) in msg, (w, msg)
    assert not os.path.exists(os.path.join(W['tmp'], 'run', 'ckpt.pt'))  # nothing that claims success


# the evaluation scripts' shared check (lexgpt.evaluation.check_settings) on settings as the scripts hold them; each
# expected line written out by hand from the rule: the bad value, then what is allowed
VARIANTS = dict(no_vanilla=False, windowed=False, lm_infinite=False, topk=0)
SETTINGS = [
    (dict(lengths=[1.0, -2.0]), "lengths: -2 is not a positive multiple of L_tr; give e.g. --lengths=1,2,4"),
    (dict(length=-1.0), "length: -1 is not a positive multiple of L_tr; give e.g. --length=4"),
    (dict(rope_scaling='yarn', rope_scale=0.5),
     "rope_scaling='yarn', rope_scale=0.5; allowed: pi, ntk, dynamic, yarn, llama3 (or '') with rope_scale >= 1"),
    (dict(VARIANTS, attn_temperature='hot'),
     "bad attn_temperature 'hot' in 'hot': expected a number like 0.9 or per-length pairs like 2:0.95,4:0.9"),
    (dict(VARIANTS, attn_temperature='', no_vanilla=True),
     "no_vanilla=True leaves nothing to evaluate; add windowed, lm_infinite, topk or attn_temperature"),
]


@pytest.mark.parametrize('cfg, line', SETTINGS, ids=[line.split(';')[0] for _, line in SETTINGS])
def test_check_settings_names_the_bad_value_and_the_allowed_ones(cfg, line):
    from lexgpt.evaluation import check_settings
    with pytest.raises(config.ConfigError) as e:
        check_settings(cfg)
    assert str(e.value) == line
    # the keys a script lacks are skipped: fine values alone (no split, no variant keys, rope_scale at its bound) pass
    assert check_settings(dict(lengths=[1.0, 2.0], rope_scaling='yarn', rope_scale=1.0)) is None


@pytest.mark.parametrize('script,argv,words', ISSUE_59, ids=[w[0] for _, _, w in ISSUE_59])
def test_the_issues_bad_inputs_stop_before_any_length_is_scored(W, monkeypatch, capsys, script, argv, words):
    """#59: --lengths=1,-2 scored 1x first; --split=nosuch said to prepare the data; --n=100000 ran silent for 300 s.
    Now each is its one line with nothing scored or written before it."""
    msg = error_line(monkeypatch, script, [a.format(**W) for a in argv])
    assert all(w in msg for w in words), msg
    assert 'L_ex=' not in capsys.readouterr().out and not os.path.exists(os.path.join(W['tmp'], 'res'))


@pytest.mark.parametrize('script', ['extrapolate', 'receptive_field', 'temperature'])
def test_a_bad_split_is_refused_before_any_model_loads(W, monkeypatch, script):
    """#59's settings checked before work: loading a pretrained model takes minutes, so --split=nosuch must stop
    before the first model is built. Loading the split checks its name again, so without the early check the same
    line still comes, only after the model has loaded: the models built before the error are counted here."""
    import model
    built, init = [], model.GPT.__init__
    monkeypatch.setattr(model.GPT, '__init__', lambda self, *a, **kw: built.append(1) or init(self, *a, **kw))
    argv = ['--ckpt={ckpt}', '--data_dir={data}', '--split=nosuch', '--out_dir={tmp}/early']
    msg = error_line(monkeypatch, script, [a.format(**W) for a in argv])
    assert msg == "error: split='nosuch'; allowed: train, val, test" and built == []


def test_a_save_that_dies_half_way_keeps_the_last_checkpoint(W, tmp_path):
    """A file-size limit (as a full disk) cuts the next save: one line, and the checkpoint before it loads unchanged."""
    run = tmp_path / 'run'
    shutil.copytree(W['ckpt'], run)
    before = (run / 'ckpt.pt').read_bytes()
    limit = len(before) // 4
    r = subprocess.run([sys.executable, 'train.py', 'configs/test.py', f"--data_dir={W['data']}", f'--out_dir={run}',
                        '--init_from=resume', '--max_iters=4'], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert r.returncode != 0 and 'Traceback' not in r.stderr, r.stderr
    assert r.stderr.strip().count('\n') == 0 and 'cannot write checkpoint' in r.stderr
    assert 'previous checkpoint is left as it was' in r.stderr
    assert (run / 'ckpt.pt').read_bytes() == before and not (run / 'ckpt.pt.tmp').exists()


def test_fine_tune_names_the_settings_it_does_not_use(W, tmp_path, capsys):
    """init_from=<checkpoint>: the architecture is the checkpoint's; a differing pe or width is said, not ignored."""
    cfg = small_cfg(tmp_path, init_from=os.path.join(W['ckpt'], 'ckpt.pt'), pe='rope', n_embd=64, max_iters=1)
    train.main(cfg)
    note = [line for line in capsys.readouterr().out.splitlines() if line.startswith('note: fine-tuning')]
    assert len(note) == 1 and "pe='rope' (checkpoint: 'alibi')" in note[0] and 'n_embd=64 (checkpoint: 16)' in note[0]
