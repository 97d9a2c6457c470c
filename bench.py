"""
Benchmarks.
mode='train': training throughput (forward + backward + optimizer step) and peak memory of each positional
encoding, for the model and batch of any training config, on random tokens.
mode='attention': one ALiBi-biased causal attention layer computed by each candidate implementation (explicit
matmul-softmax, SDPA with a full float mask, FlexAttention eager and compiled, model.py's query-blocked SDPA)
at growing lengths: the measurement behind model.py's choice of attention path.

  python bench.py configs/tiny.py
  python bench.py configs/thesis_162m.py --pes=none,alibi,rope --bench_steps=20
  python bench.py configs/tiny.py --mode=attention --attn_lengths=256,1024,4096
Each measurement runs in a fresh process, so that peak memory is its own and one run cannot warm another's caches.
"""
import concurrent.futures
import dataclasses
import functools
import json
import math
import multiprocessing
import os
import resource
import sys
import time

import torch
import torch.nn.functional as F

import train
from config import ConfigError, parse_config
from model import (ALiBi, AttnOptions, CausalSelfAttention, GPT, GPTConfig, POSITIONAL_ENCODINGS, make_model,
                   alibi_slopes)

DEFAULTS = dict(
    train.DEFAULTS,  # so every training config file works here as it is
    mode='train',
    pes='none,alibi,kerple_log,sandwich,t5,rope',  # comma-separated; 'none' is added when missing (the baseline)
    bench_steps=10,  # timed optimizer steps per encoding
    bench_warmup=3,  # untimed steps first (allocator warmup, torch.compile)
    attn_lengths='256,1024,4096',  # mode='attention': sequence lengths
    attn_impls='plain,sdpa_mask,flex_eager,flex_compiled,blocked',
)
ATTN_IMPLS = ('plain', 'sdpa_mask', 'flex_eager', 'flex_compiled', 'blocked')


def rss_high_water_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports kilobytes


def bench_train_one(cfg, pe):
    """One encoding, in its own process: timings of bench_steps steps after bench_warmup, and peak memory."""
    device = train.pick_device(cfg['device'])
    device_type = 'cuda' if device.startswith('cuda') else 'cpu'
    dtype, ctx = train.precision(device_type, cfg['dtype'])
    scaler = torch.amp.GradScaler(device_type, enabled=dtype == 'float16')
    # one step of a very small model first, so one-time library initialisation is not counted as the encoding's
    tiny = GPT(GPTConfig(vocab_size=cfg['vocab_size'], block_size=8, n_layer=1, n_head=1, n_embd=8, pe=pe))
    tiny_opt = tiny.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device_type)  # the first one imports a lot
    tiny(torch.zeros(1, 8, dtype=torch.long), torch.zeros(1, 8, dtype=torch.long))[1].backward()
    torch.nn.utils.clip_grad_norm_(tiny.parameters(), 1.0)
    tiny_opt.step()
    del tiny, tiny_opt
    rss_before = rss_high_water_mb()
    if device_type == 'cuda':
        torch.cuda.reset_peak_memory_stats(device)
    torch.manual_seed(cfg['seed'])
    fields = {f.name for f in dataclasses.fields(GPTConfig)}
    model = make_model(GPTConfig(**dict({k: v for k, v in cfg.items() if k in fields}, pe=pe))).to(device)
    optimizer = model.configure_optimizers(cfg['weight_decay'], cfg['learning_rate'],
                                           (cfg['beta1'], cfg['beta2']), device_type)
    step_model = torch.compile(model) if cfg['compile'] else model
    B, T, n_micro = cfg['batch_size'], cfg['block_size'], cfg['gradient_accumulation_steps']
    g = torch.Generator().manual_seed(cfg['seed'])
    batches = [(torch.randint(cfg['vocab_size'], (B, T), generator=g).to(device),
                torch.randint(cfg['vocab_size'], (B, T), generator=g).to(device)) for _ in range(n_micro)]
    for step in range(cfg['bench_warmup'] + cfg['bench_steps']):
        if step == cfg['bench_warmup']:
            if device_type == 'cuda':
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        train.forward_backward(step_model, batches, ctx, scaler)
        train.optimizer_step(model, optimizer, scaler, cfg['grad_clip'])
    if device_type == 'cuda':
        torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / cfg['bench_steps']
    result = dict(pe=pe, params=model.get_num_params(), ms=1000 * dt, tok_s=B * T * n_micro / dt)
    if device_type == 'cuda':
        result['mem_mb'] = torch.cuda.max_memory_allocated(device) / 2**20
        result['mfu'] = model.estimate_mfu(B * n_micro, dt)
    else:
        result['mem_mb'] = rss_high_water_mb() - rss_before
        result['base_mb'] = rss_before
    return result


def bench_train(cfg):
    pes = [p.strip() for p in cfg['pes'].split(',') if p.strip()]
    bad = [p for p in pes if p not in POSITIONAL_ENCODINGS]
    if bad:
        raise ConfigError(f"pes: unknown encoding(s) {', '.join(bad)}; known: {', '.join(POSITIONAL_ENCODINGS)}")
    if 'none' not in pes:
        pes.insert(0, 'none')
    if cfg['bench_steps'] < 1 or cfg['bench_warmup'] < 0:
        raise ConfigError(f"bench_steps={cfg['bench_steps']} must be >= 1 and bench_warmup={cfg['bench_warmup']} >= 0")
    if cfg['vocab_size'] is None:  # the dataset's vocabulary when it is prepared, else GPTConfig's
        meta = os.path.join(cfg['data_dir'] or os.path.join('data', cfg['dataset']), 'meta.json')
        cfg['vocab_size'] = json.load(open(meta))['vocab_size'] if os.path.exists(meta) else GPTConfig.vocab_size
    if cfg['bipe_sep_ids'] is None:
        cfg['bipe_sep_ids'] = GPTConfig.bipe_sep_ids
    device = train.pick_device(cfg['device'])
    results = []
    for pe in pes:
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn')) as pool:
            results.append(pool.submit(bench_train_one, cfg, pe).result())
        print(f"{pe}: {results[-1]['tok_s']:,.0f} tokens/s", flush=True)
    base = next(r for r in results if r['pe'] == 'none')['tok_s']
    cuda = device.startswith('cuda')
    print(f"\ntraining step (forward + backward + AdamW) on {device}, dtype {train.precision('cuda' if cuda else 'cpu', cfg['dtype'])[0]}, "
          f"{cfg['n_layer']} layers x {cfg['n_embd']} dims, batch {cfg['batch_size']} x {cfg['gradient_accumulation_steps']} "
          f"micro-batches x {cfg['block_size']} tokens, compile={cfg['compile']}; mean of {cfg['bench_steps']} steps "
          f"after {cfg['bench_warmup']} warmup steps\n")
    mem = 'peak MiB (max_memory_allocated)' if cuda else 'peak RSS increase MiB'
    print(f"| pe | params | ms/step | tokens/s | vs none | {mem} |" + (' MFU |' if cuda else ''))
    print('|---|---:|---:|---:|---:|---:|' + ('---:|' if cuda else ''))
    for r in results:
        print(f"| {r['pe']} | {r['params'] / 1e6:.2f}M | {r['ms']:.1f} | {r['tok_s']:,.0f} | {r['tok_s'] / base:.2f} "
              f"| {r['mem_mb']:.0f} |" + (f" {100 * r['mfu']:.1f}% |" if cuda else ''))
    if not cuda:
        print(f"\nCPU memory: each encoding ran in a fresh process; the column is its peak resident set size "
              f"(getrusage ru_maxrss) minus the peak before the model was built (after a warm-up step of a very small model: ~{results[0]['base_mb']:.0f} MiB of "
              f"Python + torch), so it covers weights, AdamW state, activations and allocator slack.")
    return results


def attention_impl(impl, q, k, v, compiled=None):
    """One ALiBi-biased causal attention computed by `impl`; all return the same [B, H, T, D] output."""
    B, H, T, D = q.shape
    slopes = alibi_slopes(H).to(q.device)
    d = (torch.arange(T)[:, None] - torch.arange(T)[None]).to(q.device)
    if impl == 'plain':  # explicit scores and a full [H, T, T] bias
        att = q @ k.transpose(-2, -1) / math.sqrt(D) - slopes[:, None, None] * d
        return att.masked_fill(d < 0, float('-inf')).softmax(-1) @ v
    if impl == 'sdpa_mask':  # one fused call with a full [H, T, T] float mask
        mask = (-slopes[:, None, None] * d).masked_fill(d < 0, float('-inf'))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask[None])
    if impl in ('flex_eager', 'flex_compiled'):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, T, T, device=q.device.type)
        return (compiled or flex_attention)(q, k, v, block_mask=bm,
                                            score_mod=lambda s, b, h, qi, ki: s - slopes[h] * (qi - ki))
    # 'blocked': model.py's path, SDPA per query block with the bias gathered from a distance table
    attn, pe = _attention_layer(H, D, q.device.type)
    i = torch.arange(T, device=q.device)
    return attn.attend(q, k, v, pe, 0, i, i[None], i, i[None], None)


@functools.lru_cache
def _attention_layer(H, D, device):
    # built once, so that the 'blocked' timing does not include initialising projection weights
    cfg = GPTConfig(n_head=H, n_embd=H * D, pe='alibi')
    return CausalSelfAttention(cfg, AttnOptions()).to(device), ALiBi(cfg).to(device)


def bench_attention_one(cfg, impl, T, backward):
    """Time (best of several calls, robust to other load on the machine) and peak memory of one impl at length T."""
    device = train.pick_device(cfg['device'])
    H, D = cfg['n_head'], cfg['n_embd'] // cfg['n_head']
    compiled = None
    if impl == 'flex_compiled':
        from torch.nn.attention.flex_attention import flex_attention
        compiled = torch.compile(flex_attention, dynamic=False)
    g = torch.Generator().manual_seed(0)
    q, k, v = [torch.randn(1, H, T, D, generator=g).to(device).requires_grad_(backward) for _ in range(3)]

    def step():
        out = attention_impl(impl, q, k, v, compiled)
        if backward:
            out.sum().backward()
        if device.startswith('cuda'):
            torch.cuda.synchronize()
    try:
        t0 = time.perf_counter()
        step()  # includes compilation for flex_compiled
        first = time.perf_counter() - t0
    except (NotImplementedError, RuntimeError) as e:
        return dict(impl=impl, T=T, backward=backward, error=str(e).splitlines()[0][:80])
    times = []
    for _ in range(max(3, cfg['bench_steps'] // 2)):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    mem = torch.cuda.max_memory_allocated(device) / 2**20 if device.startswith('cuda') else rss_high_water_mb()
    return dict(impl=impl, T=T, backward=backward, ms=1000 * min(times), first_s=first, mem_mb=mem)


def bench_attention(cfg):
    impls = [i.strip() for i in cfg['attn_impls'].split(',') if i.strip()]
    bad = [i for i in impls if i not in ATTN_IMPLS]
    if bad:
        raise ConfigError(f"attn_impls: unknown {', '.join(bad)}; known: {', '.join(ATTN_IMPLS)}")
    lengths = [int(t) for t in str(cfg['attn_lengths']).split(',')]
    device = train.pick_device(cfg['device'])
    rows = []
    for backward in (False, True):
        for T in lengths:
            for impl in impls:
                with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn')) as pool:
                    rows.append(pool.submit(bench_attention_one, cfg, impl, T, backward).result())
                print(rows[-1], flush=True)
    mem = 'peak MiB (max_memory_allocated)' if device.startswith('cuda') else 'peak RSS MiB (whole process)'
    print(f"\none causal ALiBi attention layer on {device}, batch 1, {cfg['n_head']} heads x "
          f"{cfg['n_embd'] // cfg['n_head']} dims; best of several calls; ratio = time / time of 'blocked'\n")
    print(f"| pass | T | impl | ms | vs blocked | first call s | {mem} |\n|---|---:|---|---:|---:|---:|---:|")
    for r in rows:
        base = next((b['ms'] for b in rows if b['impl'] == 'blocked' and b['T'] == r['T']
                     and b['backward'] == r['backward'] and 'ms' in b), float('nan'))
        kind = 'fwd+bwd' if r['backward'] else 'fwd'
        if 'error' in r:
            print(f"| {kind} | {r['T']} | {r['impl']} | n/a: {r['error']} | | | |")
        else:
            print(f"| {kind} | {r['T']} | {r['impl']} | {r['ms']:.1f} | {r['ms'] / base:.2f} | {r['first_s']:.1f} "
                  f"| {r['mem_mb']:.0f} |")
    return rows


MODES = {'train': bench_train, 'attention': bench_attention}

if __name__ == '__main__':
    try:
        cfg = parse_config(DEFAULTS, sys.argv[1:])
        if cfg['mode'] not in MODES:
            raise ConfigError(f"mode={cfg['mode']!r} is not one of {', '.join(MODES)}")
        MODES[cfg['mode']](cfg)
    except ConfigError as e:
        sys.exit(f'error: {e}')
