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


def llama_with_bos(folder):
    """A tiny random Llama saved by transformers; its byte-level tokenizer.json's template puts <s> (id 0) first, as
    Llama 1-2's do, so the loader gives the model that BOS (pretrained.folder_bos)."""
    transformers = pytest.importorskip('transformers')
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    vocab = {'<s>': 0, '</s>': 1, **{c: i + 2 for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.add_special_tokens(['<s>', '</s>'])
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    tok.post_processor = processors.TemplateProcessing(single='<s> $A', special_tokens=[('<s>', 0)])
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=16, num_attention_heads=2, num_hidden_layers=1, intermediate_size=32,
        max_position_embeddings=32, bos_token_id=0, eos_token_id=1)).save_pretrained(folder)
    tok.save(os.path.join(folder, 'tokenizer.json'))
    return str(folder)


def test_the_bos_put_before_the_prompt_is_not_printed(tmp_path, capsys):
    """A model whose tokenizer puts <s> first reads it before the prompt, and the text printed is each sample after
    it: the prompt as typed and what follows, no '<s>' (which the tokenizer's decode would spell out)."""
    from lexgpt.loading import get_tokenizer
    folder = llama_with_bos(tmp_path / 'llama')
    out = sample.main(dict(sample.DEFAULTS, ckpt=folder, start='def f(x):', max_new_tokens=8, num_samples=2,
                           device='cpu'))
    tok = get_tokenizer(folder)
    assert out[:, 0].tolist() == [0, 0] and tok.decode([0]) == '<s>'
    printed = capsys.readouterr().out
    assert printed.startswith(''.join(tok.decode(row[1:]) + '\n' + '-' * 40 + '\n' for row in out.tolist()))
    assert printed.startswith('def f(x):') and printed.count('def f(x):') == 2


def test_command_line(tmp_path):
    write_checkpoint(tmp_path)
    r = subprocess.run([sys.executable, 'sample.py', f'--ckpt={tmp_path}', '--max_new_tokens=40', '--cache_window=4',
                        '--device=cpu'], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1].startswith('40 tokens in')
