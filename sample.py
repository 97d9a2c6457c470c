"""
Sample from a trained model, as far beyond its training length as you like.

  python sample.py --ckpt=out/tiny-alibi --start="def " --max_new_tokens=2000 --cache_window=256
  python sample.py --ckpt=out/tiny-alibi --start=FILE:prompt.txt --num_samples=3 --temperature=0.8 --top_k=40
  python sample.py --ckpt=gemma3 --start="def fibonacci(n):" --temperature=0   # a pretrained model, greedy
A pretrained model whose tokenizer puts a BOS before a text (Gemma 3) gets it before the prompt (--bos=False: not).
cache_window=L keeps only the first n_starting tokens and the last L ones in the KV cache (constant memory);
0 keeps everything.
"""
import time

import torch

from lexgpt.config import ConfigError, run
from lexgpt.device import pick_device, precision
from lexgpt.evaluation import bos_id, BOS_DEFAULTS, prompt_with_bos
from lexgpt.loading import get_tokenizer, load_model

DEFAULTS = dict(
    ckpt='out/tiny-alibi',      # a checkpoint file, a directory holding ckpt.pt, or a pretrained model
                                # (smollm2, .gguf, HF)
    start='\n',                 # the prompt; FILE:path reads it from a file
    max_new_tokens=500,
    temperature=0.8,            # 0: always the most likely token (greedy)
    top_k=None,                 # None: sample from the whole distribution
    cache_window=0,             # >0: keep the first n_starting and the last cache_window tokens in the KV cache
    n_starting=0,
    num_samples=1,
    seed=1337,
    device='auto',
    dtype='auto',
    **BOS_DEFAULTS,
)


def prompt_ids(tok, start, bos=None):
    """The ids of the prompt text `start` as the model's tokenizer gives them, bos (an id) first where it puts one."""
    prompt = prompt_with_bos(tok.encode(start), bos)
    if not prompt:
        raise ConfigError("start='' is empty: the model needs at least one token to continue")
    return prompt


def main(cfg):
    """Print num_samples continuations and return them as a LongTensor [num_samples, prompt + max_new_tokens], the
    prompt with its BOS where the model's tokenizer puts one (not printed)."""
    for key in ('max_new_tokens', 'num_samples', 'cache_window', 'n_starting'):
        positive = key in ('max_new_tokens', 'num_samples')
        if cfg[key] < (1 if positive else 0):
            raise ConfigError(f"{key}={cfg[key]} must be {'positive' if positive else '>= 0'}")
    if cfg['top_k'] is not None and (cfg['top_k'] != int(cfg['top_k']) or cfg['top_k'] < 1):
        raise ConfigError(f"top_k={cfg['top_k']} must be a whole number >= 1, or None (the whole distribution)")
    if cfg['temperature'] < 0:
        raise ConfigError(f"temperature={cfg['temperature']} must be >= 0 (0: always the most likely token)")
    device = pick_device(cfg['device'])
    _, ctx = precision('cuda' if device.startswith('cuda') else 'cpu', cfg['dtype'])
    start = cfg['start']
    if start.startswith('FILE:'):  # read before a model is loaded (a pretrained one takes minutes)
        with open(start[5:], encoding='utf-8') as f:
            start = f.read()
    if not start:
        raise ConfigError(f"start={cfg['start']!r} is empty: the model needs at least one token to continue")
    torch.manual_seed(cfg['seed'])
    model, _, meta = load_model(cfg['ckpt'])
    model.to(device)
    tok, bos = get_tokenizer(meta.get('tokenizer', 'bytes')), bos_id(model, cfg['bos'])
    prompt = prompt_ids(tok, start, bos)
    idx = torch.tensor([prompt] * cfg['num_samples'], dtype=torch.long, device=device)
    t0 = time.time()
    with ctx:
        out = model.generate(idx, cfg['max_new_tokens'], temperature=cfg['temperature'], top_k=cfg['top_k'],
                             cache_window=cfg['cache_window'], n_starting=cfg['n_starting'])
    dt = time.time() - t0
    shown = 0 if bos is None else 1  # the BOS is no text to print
    for row in out.tolist():
        print(tok.decode(row[shown:]))
        print('-' * 40)
    n = cfg['num_samples'] * cfg['max_new_tokens']
    print(f"{n} tokens in {dt:.2f} s: {n / dt:.1f} tokens/s (block_size {model.config.block_size}, "
          f"cache_window {cfg['cache_window'] or 'off'}, n_starting {cfg['n_starting']}, {device})")
    return out


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
