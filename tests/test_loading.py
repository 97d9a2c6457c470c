"""loading.py: safe checkpoint loading (weights_only, one-line errors naming the file), runs named by globs, the
tokenizer; outputs.matching, the glob expansion that load_runs and the result readers share."""
import os
import subprocess
import sys

import pytest
import torch

from lexgpt import loading, outputs
from lexgpt.config import ConfigError
from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = dict(vocab_size=256, block_size=16, n_layer=1, n_head=2, n_embd=16, pe='alibi')


def save(path, **extra):
    torch.manual_seed(0)
    model = GPT(GPTConfig(**ARGS))
    torch.save(dict(model=model.state_dict(), model_args=dict(ARGS), config=dict(dataset='pycode'),
                    meta=dict(tokenizer='bytes'), **extra), path)
    return model


class Payload:
    """Unpickling this object would create a file: the code a malicious checkpoint could run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, 'w'))


def test_load_checkpoint_round_trip(tmp_path):
    model = save(tmp_path / 'ckpt.pt')
    loaded, config, meta = loading.load_model(str(tmp_path))  # a folder holding ckpt.pt works too
    assert not loaded.training and config == dict(dataset='pycode') and meta == dict(tokenizer='bytes')
    x = torch.randint(0, 256, (1, 20))
    with torch.no_grad():
        assert torch.equal(loaded(x)[0], model.eval()(x)[0])
    run = loading.Run(str(tmp_path / 'ckpt.pt'), window=4)  # overrides change settings that are not weights
    assert run.model.config.window == 4 and run.L_tr == 16 and run.pe == 'alibi'


def test_a_checkpoint_that_would_run_code_is_refused(tmp_path):
    marker = tmp_path / 'pwned'
    save(tmp_path / 'ckpt.pt', extra=Payload(str(marker)))
    with pytest.raises(ConfigError, match=r'cannot read checkpoint .*ckpt\.pt'):
        loading.load_model(str(tmp_path / 'ckpt.pt'))
    assert not marker.exists()


def test_truncated_or_foreign_checkpoints_give_one_line_naming_the_file(tmp_path):
    save(tmp_path / 'good.pt')
    data = (tmp_path / 'good.pt').read_bytes()
    (tmp_path / 'cut.pt').write_bytes(data[:len(data) // 2])
    torch.save({'weights': torch.ones(2)}, tmp_path / 'other.pt')
    with pytest.raises(ConfigError, match=r'cut\.pt: it is truncated'):
        loading.read_checkpoint(str(tmp_path / 'cut.pt'))
    with pytest.raises(ConfigError, match=r'other\.pt has no model_args or model'):
        loading.read_checkpoint(str(tmp_path / 'other.pt'))
    with pytest.raises(FileNotFoundError, match=r"no checkpoint at '.*missing'"):
        loading.read_checkpoint(str(tmp_path / 'missing'))
    r = subprocess.run([sys.executable, 'sample.py', f'--ckpt={tmp_path / "cut.pt"}', '--device=cpu'], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ''
    assert len(r.stderr.strip().splitlines()) == 1 and 'cut.pt' in r.stderr and 'truncated' in r.stderr


def test_checkpoint_that_does_not_fit_its_settings(tmp_path):
    save(tmp_path / 'ckpt.pt')
    ckpt = torch.load(tmp_path / 'ckpt.pt', weights_only=True)
    ckpt['model_args']['n_layer'] = 2
    torch.save(ckpt, tmp_path / 'deeper.pt')
    with pytest.raises(ConfigError, match=r'deeper\.pt does not fit its model settings'):
        loading.load_model(str(tmp_path / 'deeper.pt'))
    # a FIRE checkpoint from before its threshold became a multiplier (issue 27): retrain; one line names both keys
    fire = dict(ARGS, pe='fire')
    state = {k: v for k, v in GPT(GPTConfig(**fire)).state_dict().items() if k not in ('pe.L_mult', 'pe.L0')}
    torch.save(dict(ckpt, model=dict(state, **{'pe.L': torch.full((1,), 16.0)}), model_args=fire), tmp_path / 'fire.pt')
    with pytest.raises(ConfigError, match=r'fire\.pt does not fit its model settings: Missing key\(s\) in state_dict: '
                                          r'"pe\.L_mult", "pe\.L0"\. Unexpected key\(s\) in state_dict: "pe\.L"\.$'):
        loading.load_model(str(tmp_path / 'fire.pt'))
    ckpt['model_args'] = dict(ARGS, future_option=1)
    torch.save(ckpt, tmp_path / 'newer.pt')
    with pytest.raises(ConfigError, match=r"does not know: \['future_option'\]"):
        loading.load_model(str(tmp_path / 'newer.pt'))


def test_load_runs_expands_globs_and_groups_seeds(tmp_path):
    for name in ('alibi-s0', 'alibi-s1', 'rope'):
        os.makedirs(tmp_path / name)
        save(tmp_path / name / 'ckpt.pt')
    runs = loading.load_runs([str(tmp_path / 'alibi-s*'), str(tmp_path / 'rope')])
    assert [r.name for r in runs] == ['alibi-s0', 'alibi-s1', 'rope']
    assert [r.group for r in runs] == ['alibi', 'alibi', 'rope']
    with pytest.raises(ConfigError, match=r"ckpt='.*t5-s\*': no file matches"):
        loading.load_runs([str(tmp_path / 't5-s*')])


def test_matching_takes_a_path_as_it_is_and_a_glob_sorted(tmp_path):
    """A path is taken even where nothing is there (its reader says so); a glob's matches come sorted, and a glob that
    matches nothing is [] or, given its option, a one-line error naming it."""
    for name in ('b.json', 'a.json'):
        (tmp_path / name).write_text('{}')
    missing, both = str(tmp_path / 'c.json'), [str(tmp_path / 'a.json'), str(tmp_path / 'b.json')]
    assert outputs.matching(missing, 'inputs') == ([missing], False)
    assert outputs.matching(str(tmp_path / '*.json'), 'inputs') == (both, True)
    assert outputs.matching(str(tmp_path / 'c*')) == ([], True)
    with pytest.raises(ConfigError, match=r"inputs='.*c\*': no file matches"):
        outputs.matching(str(tmp_path / 'c*'), 'inputs')


def test_a_glob_leaves_out_runs_that_are_still_training(tmp_path):
    # train.py saves at every evaluation: a seed at iteration 200 of 3200 must not enter a mean over seeds
    for name, it in (('alibi-s0', 3200), ('alibi-s1', 200)):
        os.makedirs(tmp_path / name)
        save(tmp_path / name / 'ckpt.pt', iter_num=it)
        ckpt = torch.load(tmp_path / name / 'ckpt.pt', weights_only=True)
        torch.save(dict(ckpt, config=dict(dataset='pycode', max_iters=3200)), tmp_path / name / 'ckpt.pt')
    os.makedirs(tmp_path / 'alibi-s2')  # started, nothing saved yet
    assert [r.name for r in loading.load_runs([str(tmp_path / 'alibi-s*')])] == ['alibi-s0']
    named = loading.load_runs([str(tmp_path / 'alibi-s1')])  # named without a wildcard: evaluated as asked
    assert [(r.name, r.iters, r.finished) for r in named] == [('alibi-s1', 200, False)]
    with pytest.raises(ConfigError, match=r'every run that ckpt=.*alibi-s1\* matches is still training'):
        loading.load_runs([str(tmp_path / 'alibi-s1*')])


def test_bytes_tokenizer_round_trip_and_unknown_name():
    tok = loading.get_tokenizer('bytes')
    assert tok.encode('pass_key = 7\n') == list(b'pass_key = 7\n') and tok.decode(tok.encode('é.')) == 'é.'
    assert (tok.vocab_size, tok.eot, tok.sep_ids) == (256, 0, [46, 10])
    with pytest.raises(ConfigError, match="unknown tokenizer 'bpe'; allowed: bytes, gpt2"):
        loading.get_tokenizer('bpe')
