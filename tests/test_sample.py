import os
import subprocess
import sys

import pytest
import torch

import model as model_module
import sample
from lexgpt.config import ConfigError, parse_config
from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))



def write_checkpoint(tmp_path, pe='alibi'):
    args = dict(vocab_size=256, block_size=16, n_layer=2, n_head=2, n_embd=16, pe=pe)
    torch.manual_seed(0)
    model = GPT(GPTConfig(**args))
    path = str(tmp_path / 'ckpt.pt')
    torch.save(dict(model=model.state_dict(), model_args=args, meta=dict(tokenizer='bytes', vocab_size=256)), path)
    return path


def test_generates_far_beyond_block_size_with_a_bounded_cache(tmp_path, monkeypatch, capsys):
    write_checkpoint(tmp_path)
    sizes = []
    real_trim = model_module.KVCache.trim

    def recording_trim(self):
        real_trim(self)
        sizes.append(max(k.shape[2] for k in self.k.values()))
        n = self.next  # tokens seen so far: the cache keeps the first 2 and the last 8 of them, K and V alike
        assert self.idx.tolist() == (list(range(n)) if n <= 10 else [0, 1] + list(range(n - 8, n)))
        assert all(t.shape[2] == len(self.idx) for t in list(self.k.values()) + list(self.v.values()))
    monkeypatch.setattr(model_module.KVCache, 'trim', recording_trim)
    cfg = parse_config(sample.DEFAULTS, [f'--ckpt={tmp_path}', '--start=def f(x):', '--max_new_tokens=60',
                                         '--cache_window=8', '--n_starting=2', '--num_samples=3', '--device=cpu'])
    out = sample.main(cfg)
    prompt = len('def f(x):')
    assert out.shape == (3, prompt + 60)  # 69 tokens from a model trained on 16
    assert out[:, :prompt].tolist() == [list(b'def f(x):')] * 3
    assert len(sizes) == 61 and max(sizes) == 2 + 8  # first 2 + last 8 keys, whatever the length
    printed = capsys.readouterr().out
    assert printed.count('def f(x):') == 3 and '180 tokens in' in printed and 'tokens/s' in printed


def test_same_seed_same_text_and_errors(tmp_path):
    write_checkpoint(tmp_path)
    cfg = dict(sample.DEFAULTS, ckpt=str(tmp_path / 'ckpt.pt'), max_new_tokens=20, top_k=5, device='cpu')
    assert torch.equal(sample.main(cfg), sample.main(cfg))
    with pytest.raises(ConfigError, match="start='' is empty"):
        sample.main(dict(cfg, start=''))
    with pytest.raises(ConfigError, match='cache_window=-1 must be >= 0'):
        sample.main(dict(cfg, cache_window=-1))
    with pytest.raises(FileNotFoundError, match='no checkpoint at'):
        sample.main(dict(cfg, ckpt=str(tmp_path / 'missing.pt')))


def test_command_line(tmp_path):
    write_checkpoint(tmp_path)
    r = subprocess.run([sys.executable, 'sample.py', f'--ckpt={tmp_path}', '--max_new_tokens=40', '--cache_window=4',
                        '--device=cpu'], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith('40 tokens in')
