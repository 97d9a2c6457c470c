"""
Sample from a trained model, as far beyond its training length as you like.

  python sample.py --ckpt=out/tiny-alibi --start="def " --max_new_tokens=2000 --cache_window=256
  python sample.py --ckpt=out/tiny-alibi --start=FILE:prompt.txt --num_samples=3 --temperature=0.8 --top_k=40
cache_window=L keeps only the first n_starting tokens and the last L ones in the KV cache (constant memory);
0 keeps everything.
"""
import json
import os
import sys
import time

import torch

from config import ConfigError, parse_config
from model import GPT
from train import pick_device, precision

DEFAULTS = dict(
    ckpt='out/tiny-alibi',  # a checkpoint file, or a directory holding ckpt.pt
    start='\n',  # the prompt; FILE:path reads it from a file
    max_new_tokens=500,
    temperature=0.8,
    top_k=None,  # None: sample from the whole distribution
    cache_window=0,
    n_starting=0,
    num_samples=1,
    seed=1337,
    device='auto',
    dtype='auto',
)


def load_tokenizer(ckpt_path):
    """(encode, decode) for the tokenizer the model was trained with: the meta saved in the checkpoint, else
    the meta.json of its dataset, else bytes."""
    ckpt = torch.load(ckpt_path, map_location='cpu', mmap=True, weights_only=False)  # mmap: reads only what's used
    meta = ckpt.get('meta') or {}
    config = ckpt.get('config') or {}
    if not meta and config:
        path = os.path.join(config.get('data_dir') or os.path.join('data', config.get('dataset', '')), 'meta.json')
        meta = json.load(open(path)) if os.path.exists(path) else {}
    tokenizer = meta.get('tokenizer', 'bytes')
    if tokenizer == 'bytes':
        return (lambda s: list(s.encode('utf-8'))), (lambda ids: bytes(ids).decode('utf-8', errors='replace'))
    if tokenizer == 'gpt2':
        import tiktoken
        enc = tiktoken.get_encoding('gpt2')
        return (lambda s: enc.encode(s, allowed_special={'<|endoftext|>'})), enc.decode
    raise ConfigError(f"unknown tokenizer {tokenizer!r} in the checkpoint's meta; known: bytes, gpt2")


def main(cfg):
    """Print num_samples continuations and return them as a LongTensor [num_samples, prompt + max_new_tokens]."""
    path = os.path.join(cfg['ckpt'], 'ckpt.pt') if os.path.isdir(cfg['ckpt']) else cfg['ckpt']
    if not os.path.exists(path):
        raise FileNotFoundError(f"no checkpoint at {path}")
    for key in ('max_new_tokens', 'num_samples', 'cache_window', 'n_starting'):
        if cfg[key] < (1 if key in ('max_new_tokens', 'num_samples') else 0):
            raise ConfigError(f"{key}={cfg[key]} must be {'positive' if key in ('max_new_tokens', 'num_samples') else '>= 0'}")
    device = pick_device(cfg['device'])
    _, ctx = precision('cuda' if device.startswith('cuda') else 'cpu', cfg['dtype'])
    torch.manual_seed(cfg['seed'])
    model = GPT.from_checkpoint(path, map_location='cpu').to(device).eval()
    encode, decode = load_tokenizer(path)
    start = cfg['start']
    if start.startswith('FILE:'):
        with open(start[5:], encoding='utf-8') as f:
            start = f.read()
    prompt = encode(start)
    if not prompt:
        raise ConfigError("start='' is empty: the model needs at least one token to continue")
    idx = torch.tensor([prompt] * cfg['num_samples'], dtype=torch.long, device=device)
    t0 = time.time()
    with ctx:
        out = model.generate(idx, cfg['max_new_tokens'], temperature=cfg['temperature'], top_k=cfg['top_k'],
                             cache_window=cfg['cache_window'], n_starting=cfg['n_starting'])
    dt = time.time() - t0
    for row in out.tolist():
        print(decode(row))
        print('-' * 40)
    n = cfg['num_samples'] * cfg['max_new_tokens']
    print(f"{n} tokens in {dt:.2f} s: {n / dt:.1f} tokens/s (block_size {model.config.block_size}, "
          f"cache_window {cfg['cache_window'] or 'off'}, n_starting {cfg['n_starting']}, {device})")
    return out


if __name__ == '__main__':
    try:
        main(parse_config(DEFAULTS, sys.argv[1:]))
    except (ConfigError, FileNotFoundError) as e:
        sys.exit(f'error: {e}')
