"""
Benchmarks, one mode per question. Encodings are interleaved in one process (round-robin, medians over
rounds), so that the ratios against pe='none' hold on a shared machine. Training configs work as they are.

  python -m tools.bench configs/tiny.py --mode=train                         # training step per encoding vs none
  python -m tools.bench configs/thesis_162m.py --mode=train --pes=kerple_log+flex,kerple_log+dense   # a learned bias's
        # training by FlexAttention's backward and by SDPA with the [H, T, T] bias materialised (routes' rule)
  python -m tools.bench configs/thesis_162m.py --mode=attention --attn_pe=kerple_log --lengths=512 --attn_batch=32 \
        --attn_impls=causal,flex_grad,dense        # the same two, one attention layer at the 124M model's shape
  python -m tools.bench configs/tiny.py --mode=eval --lengths=8192,32768     # no-grad forward at long lengths vs none
  # one biased layer, each implementation
  python -m tools.bench configs/tiny.py --mode=attention --lengths=256,1024,4096
  python -m tools.bench --mode=regular --lengths=512,2048,8192                # RegularGPT: plain vs gather vs reduce
  # our GPT vs transformers, same weights
  python -m tools.bench --mode=pretrained --pretrained=smollm2 --lengths=2048,8192
  python -m tools.bench configs/tiny.py --mode=stream --pes=alibi,rope --stream_tokens=10000,1000000   # constant cost?
"""
import concurrent.futures
import ctypes
import dataclasses
import json
import math
import multiprocessing
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from lexgpt import routes
from lexgpt import pretrained
from lexgpt.config import ConfigError, run
from lexgpt.corpus import data_folder, load_meta
from lexgpt.device import forward_backward, optimizer_step, pick_device, precision
from lexgpt.outputs import command_line, environment, md_table
from lexgpt.progress import Meter, rss_mb
from lexgpt.reference import AttnCall, AttnOptions, attention_reference
from lexgpt.streaming import stream_steps, stream_losses, stream_refusal
from model import GPT, GPTConfig, POSITIONAL_ENCODINGS, RegularGPT, make_model, n_levels

DEFAULTS = dict(
    mode='train',               # train | eval | attention | regular | pretrained | stream
    # the encodings ('none', the baseline, is added if missing); eval also takes one variant of one encoding,
    # alibi+lm_infinite, and train the route that training calls prefer where both apply (AttnOptions.route), t5+dense,
    # or in a compiled run an uncompiled model, none+eager
    pes=['none', 'alibi', 'kerple_log', 'sandwich', 't5', 'rope'],
    rounds=10,                  # timed rounds (train: steps; eval: forwards) per encoding, after `warmup` rounds
    warmup=2,
    lengths=[256, 1024, 4096],  # eval / attention / regular: sequence lengths
    variants=[''],              # eval: '' (as trained), 'window' (window = block_size), 'lm_infinite' (Λ mask of the
                                # first 10 + last block_size tokens, distance ceiling block_size); 'none' runs plain
    attn_impls=['causal', 'plain', 'sdpa_mask', 'sdpa_mask_grad', 'flex_eager', 'flex_compiled', 'fast'],  # attention
    attn_pe='alibi',            # attention: the bias of the layer (its table learns in sdpa_mask_grad, flex_grad,
                                # dense)
    attn_batch=1,               # attention: batch size (16 with lengths=256 is the tiny config's training shape)
    regular_impls=['plain', 'gather', 'reduce'],  # regular: RegularGPT forward implementations
    chunk_size=2,               # regular: RegularGPT's chunk size C
    pretrained='smollm2',       # pretrained: the checkpoint (alias, .gguf, Hugging Face folder) run by us and by
                                # transformers
    stream_tokens=[10000, 1000000],  # stream: a short and a long stream, interleaved (window: block_size)
    stream_sinks=4,             # stream: starting tokens S kept in the cache
    stream_step=256,            # stream: tokens fed per forward pass
    # the model and batch (a training config sets these; its other keys are ignored here)
    batch_size=16,
    gradient_accumulation_steps=1,
    learning_rate=6e-4,
    weight_decay=0.1,
    beta1=0.9,
    beta2=0.95,
    grad_clip=1.0,
    dataset='pycode',           # its meta.json gives vocab_size when the data is prepared
    data_dir='',
    device='auto',
    dtype='auto',
    compile=False,
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    peak_tflops=0.0,            # train on a GPU: MFU against this peak (H100 SXM, H200: 989 bf16 dense); 0: A100's 312
    json='',                    # also write the figures to this JSON file, with the command and machine
)
for _f in dataclasses.fields(GPTConfig):
    DEFAULTS.setdefault(_f.name, _f.default)
DEFAULTS['vocab_size'] = None   # None: the dataset's vocabulary when it is prepared, else GPTConfig's


def return_freed_memory():
    """glibc keeps freed blocks for reuse, so a measurement's peak RSS would hide under the previous one's; with a
    fixed mmap threshold every allocation of 128 KiB or more is mapped on its own and unmapped when freed."""
    try:
        ctypes.CDLL('libc.so.6').mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


def model_config(cfg, **kw):
    fields = {f.name for f in dataclasses.fields(GPTConfig)}
    args = {k: v for k, v in cfg.items() if k in fields and v is not None}
    return GPTConfig(**dict(args, **kw))


def encodings(cfg, one_variant=False):
    """The encodings to time, 'none' (the baseline) first. With one_variant (eval) an entry may name one variant of
    one encoding, alibi+lm_infinite, which then runs in that variant alone."""
    pes = list(cfg['pes'])
    bad = [p for p in pes if (p.partition('+')[0] if one_variant else p) not in POSITIONAL_ENCODINGS]
    if bad:
        raise ConfigError(f"pes: unknown encoding(s) {', '.join(bad)}; known: {', '.join(POSITIONAL_ENCODINGS)}")
    return pes if 'none' in pes else ['none'] + pes


def interleaved(names, rounds, warmup, step):
    """Call step(name) for every name in turn, warmup + rounds times (the order rotates each round); -> the
    timed results per name, and per name the per-round time ratios against names[0]."""
    res = {n: [] for n in names}
    for r in range(warmup + rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        got = {n: step(n) for n in order}
        if r >= warmup:
            for n in names:
                res[n].append(got[n])
    ratio = {n: statistics.median(a['s'] / b['s'] for a, b in zip(res[n], res[names[0]])) for n in names}
    return res, ratio


def timed(fn, device):
    if device.startswith('cuda'):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    with Meter() as m:
        fn()
        if device.startswith('cuda'):
            torch.cuda.synchronize()
    mem = torch.cuda.max_memory_allocated() / 2**20 if device.startswith('cuda') else m.delta_mb
    return dict(s=m.seconds, mb=mem)


def bench_train(cfg, device):
    """Training step (forward + backward + AdamW) per encoding on random tokens, interleaved."""
    dtype, ctx = precision('cuda' if device.startswith('cuda') else 'cpu', cfg['dtype'])
    scaler = torch.amp.GradScaler(device.split(':')[0], enabled=dtype == 'float16')
    B, T, n_micro = cfg['batch_size'], cfg['block_size'], cfg['gradient_accumulation_steps']
    models, prefer = {}, {}
    for name in encodings(cfg, one_variant=True):
        # kerple_log+flex: its training calls prefer flex (routes.choose); none+eager: not compiled in a compiled run
        pe, _, prefer[name] = name.partition('+')
        if prefer[name] not in ('', 'flex', 'dense', 'eager'):
            raise ConfigError(f"pes: {name!r} names no route; train takes <pe>, <pe>+flex, <pe>+dense or <pe>+eager")
        torch.manual_seed(cfg['seed'])
        m = make_model(model_config(cfg, pe=pe)).to(device)
        opt = m.configure_optimizers(cfg['weight_decay'], cfg['learning_rate'], (cfg['beta1'], cfg['beta2']),
                                     device.split(':')[0])
        models[name] = (m, torch.compile(m) if cfg['compile'] and prefer[name] != 'eager' else m, opt)
    g = torch.Generator().manual_seed(cfg['seed'])
    V = models['none'][0].config.vocab_size
    batches = [(torch.randint(V, (B, T), generator=g).to(device), torch.randint(V, (B, T), generator=g).to(device))
               for _ in range(n_micro)]

    def step(name):
        m, run_model, opt = models[name]
        with m.attention(route=prefer[name] if prefer[name] in ('flex', 'dense') else 'auto'), \
                routes.recording() as taken:
            r = timed(lambda: (forward_backward(run_model, batches, ctx, scaler),
                               optimizer_step(m, opt, scaler, cfg['grad_clip'])), device)
        return dict(r, route='/'.join(sorted(set(taken))) or 'compiled')  # a compiled step records nothing
    res, ratio = interleaved(list(models), cfg['rounds'], cfg['warmup'], step)
    cuda, peak = device.startswith('cuda'), (cfg['peak_tflops'] or 312) * 1e12  # 312: model.estimate_mfu's A100
    out, rows = {}, []
    for pe, (m, _, _) in models.items():
        s = statistics.median(r['s'] for r in res[pe])
        out[pe] = dict(params=m.get_num_params(), ms_per_step=1000 * s, tokens_per_s=B * T * n_micro / s,
                       ratio_to_none=ratio[pe], peak_mb=max(r['mb'] for r in res[pe]), route=res[pe][0]['route'],
                       mfu=m.estimate_mfu(B * n_micro, s, peak) if cuda else None)
        o = out[pe]
        rows.append([pe, o['route'], f"{o['params'] / 1e6:.2f}M", f"{o['ms_per_step']:.1f}",
                     f"{o['tokens_per_s']:,.0f}", f"{o['ratio_to_none']:.2f}", f"{o['peak_mb']:.0f}"]
                    + ([f"{100 * o['mfu']:.1f}%"] if cuda else []))
    head = ['pe', 'route', 'params', 'ms/step', 'tokens/s', 'time vs none',
            'peak MiB' + (' (allocated)' if cuda else ' (RSS increase)')]
    print(f"\ntraining step on {device} ({dtype}, {torch.get_num_threads()} threads), {cfg['n_layer']} layers x "
          f"{cfg['n_embd']}, batch {B} x {n_micro} x {T} tokens, compile={cfg['compile']}; median of {cfg['rounds']} "
          f"interleaved rounds after {cfg['warmup']}; 'time vs none' is the median per-round ratio\n")
    print(md_table(head + ([f'MFU of {peak / 1e12:g} TFLOPS'] if cuda else []), rows))
    return out


@torch.no_grad()
def bench_eval(cfg, device):
    """No-grad forward of one length-T input (logits of the last position) per encoding and variant, interleaved
    with pe='none', the unbiased kernel every ratio is taken against."""
    _, ctx = precision('cuda' if device.startswith('cuda') else 'cpu', cfg['dtype'])
    pes = encodings(cfg, one_variant=True)
    bad = [v for v in cfg['variants'] + [p.partition('+')[2] for p in pes] if v not in ('', 'window', 'lm_infinite')]
    if bad:
        raise ConfigError(f"variants: unknown {', '.join(bad)}; known: '' (as trained), window, lm_infinite")
    L = cfg['block_size']
    models, opts = {}, {}
    for entry in pes:
        pe, _, only = entry.partition('+')  # alibi+lm_infinite: that variant only
        for var in [only] if only else [''] if pe == 'none' else cfg['variants']:
            name = pe + (f'+{var}' if var else '')
            torch.manual_seed(cfg['seed'])
            models[name] = make_model(model_config(cfg, pe=pe, window=L if var == 'window' else 0)).to(device).eval()
            opts[name] = dict(key_window=L, n_starting=10, ceiling=L) if var == 'lm_infinite' else {}
    rows, out = [], {}
    for T in cfg['lengths']:
        g = torch.Generator().manual_seed(T)
        x = torch.randint(models['none'].config.vocab_size, (1, T), generator=g).to(device)
        taken_routes = {name: set() for name in models}

        def step(name):  # the routes are read off the timed forwards: another length would compile flex again
            with models[name].attention(**opts[name]), ctx, routes.recording() as taken:
                r = timed(lambda: models[name](x), device)
            taken_routes[name].update(taken)
            return r
        res, ratio = interleaved(list(models), cfg['rounds'], cfg['warmup'], step)
        for name in models:
            out[name, T] = dict(s=statistics.median(r['s'] for r in res[name]), mb=max(r['mb'] for r in res[name]),
                                ratio=ratio[name], route='/'.join(sorted(taken_routes[name])))
            print(f"T={T} {name}: {out[name, T]['s']:.3f} s ({ratio[name]:.2f}x none), {out[name, T]['mb']:.0f} MiB",
                  file=sys.stderr, flush=True)
    Ts = cfg['lengths']
    for name in models:
        row = [name, ', '.join(dict.fromkeys(out[name, T]['route'] for T in Ts))]
        row += [f"{out[name, T]['s']:.3f} s / {out[name, T]['ratio']:.2f}x / {out[name, T]['mb']:.0f} MiB" for T in Ts]
        row += [f"{out[name, b]['mb'] / max(out[name, a]['mb'], 1e-9):.2f}" for a, b in zip(Ts, Ts[1:])]
        rows.append(row)
    print(f"\nno-grad forward, batch 1, on {device} ({torch.get_num_threads()} threads), {cfg['n_layer']} layers x "
          f"{cfg['n_embd']}, {cfg['n_head']} heads, untrained; median of {cfg['rounds']} interleaved rounds after "
          f"{cfg['warmup']}; time / median per-round ratio to none / peak memory increase\n")
    print(md_table(['pe', 'route'] + [f'T={T}' for T in Ts] + [f'memory {b}/{a}' for a, b in zip(Ts, Ts[1:])], rows))
    return out


@torch.no_grad()
def bench_pretrained(cfg, device):
    """No-grad forward of one length-T input (the last position's logits) through our conversion of a pretrained
    checkpoint and through transformers' own model of it (its default attention), interleaved; ratios are ours over
    transformers'. transformers (a test requirement) is imported here only."""
    import transformers
    file = pretrained.locate(cfg['pretrained'])
    dtype, ctx = precision('cuda' if device.startswith('cuda') else 'cpu', cfg['dtype'])
    where = dict(gguf_file=os.path.basename(file)) if file.endswith('.gguf') else {}
    folder = os.path.dirname(file) if where else pretrained.resolve(file)
    theirs = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, **where).to(device).eval()
    ours = GPT.from_pretrained(file).to(device)
    run_model = {'transformers': lambda x: theirs(x, use_cache=False, logits_to_keep=1).logits,
                 'ours': lambda x: ours(x)[0]}
    rows, out = [], {}
    for T in cfg['lengths']:
        x = torch.randint(ours.config.vocab_size, (1, T), generator=torch.Generator().manual_seed(T)).to(device)

        def step(name):
            with ctx:
                return timed(lambda: run_model[name](x), device)
        res, ratio = interleaved(list(run_model), cfg['rounds'], cfg['warmup'], step)
        for name in run_model:
            out[name, T] = dict(s=statistics.median(r['s'] for r in res[name]), mb=max(r['mb'] for r in res[name]))
        rows.append([T] + [f"{out[n, T]['s']:.2f} s / {out[n, T]['mb']:.0f} MiB" for n in run_model]
                    + [f"{ratio['ours']:.2f}", f"{out['ours', T]['mb'] / max(out['transformers', T]['mb'], 1e-9):.2f}"])
        print(f"T={T}: " + ', '.join(f"{n} {out[n, T]['s']:.2f} s {out[n, T]['mb']:.0f} MiB" for n in run_model),
              file=sys.stderr, flush=True)
    print(f"\n{cfg['pretrained']} ({ours.get_num_params() / 1e6:.1f}M parameters): no-grad forward, batch 1, on "
          f"{device} "
          f"({torch.get_num_threads()} threads, {dtype}); median of {cfg['rounds']} interleaved rounds after "
          f"{cfg['warmup']}; time / peak memory increase ({'allocated' if device.startswith('cuda') else 'RSS'}); "
          f"transformers {transformers.__version__}, attention {theirs.config._attn_implementation}\n")
    print(md_table(['T', 'transformers', 'ours', 'time ours / theirs', 'memory ours / theirs'], rows))
    return out


ATTN_IMPLS = ('causal', 'plain', 'sdpa_mask', 'sdpa_mask_grad', 'flex_eager', 'flex_compiled', 'flex_grad', 'dense',
              'fast')


def attention_impl(impl, q, k, v, pe, compiled=None):
    """One causal attention layer with pe's bias computed by `impl`; all but 'causal' (no bias: the floor every
    bias is measured against) return the same [B, H, T, D] output.
    sdpa_mask(_grad): one SDPA call with a full [H, T, T] float mask gathered from the table (which learns, in
    _grad); dense: routes.dense, the same mask laid out from the table by routes.toeplitz (which learns); flex_*:
    FlexAttention with routes.flex_mods' score_mod (flex_grad: compiled, its table learning, the backward scattering
    every pair's gradient into it); plain / fast: model.py's reference / routes.attend."""
    B, H, T, D = q.shape
    i = torch.arange(T, device=q.device)
    if impl == 'causal':
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if impl in ('sdpa_mask', 'sdpa_mask_grad'):
        d = i[:, None] - i[None]
        tab = pe.bias(0, i.float())
        tab = tab if impl == 'sdpa_mask_grad' else tab.detach()
        mask = tab[:, d.clamp(min=0)].masked_fill(d < 0, float('-inf'))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))
    if impl in ('flex_eager', 'flex_compiled', 'flex_grad'):
        tab = pe.bias(0, i.float())
        mods = routes.flex_mods(i, i[None], i, i[None], [], tab if impl == 'flex_grad' else tab.detach())
        return routes.flex_attend(q, k, v, 1 / math.sqrt(D), *mods, compiled=impl != 'flex_eager')
    call, o = AttnCall(0, i, i[None], i, i[None], same=True, plain=True), AttnOptions()
    if impl == 'dense':
        return routes.dense(q, k, v, pe, call, o, 0.0)
    return attention_reference(q, k, v, pe, call, o) if impl == 'plain' else routes.attend(q, k, v, pe, call, o, 0.0)


def bench_attention_one(cfg, impl, T, backward):
    """Time (best of several calls) and peak memory of one implementation at length T, in a fresh process."""
    device = pick_device(cfg['device'])
    H, D = cfg['n_head'], cfg['n_embd'] // cfg['n_head']
    torch.manual_seed(0)
    pe = POSITIONAL_ENCODINGS[cfg['attn_pe']](model_config(cfg, pe=cfg['attn_pe'])).to(device)
    g = torch.Generator().manual_seed(0)
    dtype = getattr(torch, precision(device.split(':')[0], cfg['dtype'])[0])  # q, k, v as a training step has them
    q, k, v = [torch.randn(cfg['attn_batch'], H, T, D, generator=g).to(device, dtype).requires_grad_(backward)
               for _ in range(3)]

    def step():
        with torch.set_grad_enabled(backward):
            out = attention_impl(impl, q, k, v, pe)
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
    for _ in range(max(3, cfg['rounds'] // 2)):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    mem = torch.cuda.max_memory_allocated(device) / 2**20 if device.startswith('cuda') else \
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return dict(impl=impl, T=T, backward=backward, ms=1000 * min(times), first_s=first, mem_mb=mem)


def bench_attention(cfg, device):
    """One biased attention layer by each candidate implementation, each in a fresh process (own peak memory): the
    measurement behind model.py's choice of paths. 'vs causal' is the time over that of the unbiased kernel."""
    bad = [i for i in cfg['attn_impls'] if i not in ATTN_IMPLS]
    if bad:
        raise ConfigError(f"attn_impls: unknown {', '.join(bad)}; known: {', '.join(ATTN_IMPLS)}")
    rows = []
    for backward in (False, True):
        for T in cfg['lengths']:
            for impl in cfg['attn_impls']:
                if impl in ('sdpa_mask_grad', 'flex_grad') and not backward:
                    continue  # the same forward as sdpa_mask, flex_compiled
                with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn')) as pool:
                    rows.append(pool.submit(bench_attention_one, cfg, impl, T, backward).result())
                print(rows[-1], file=sys.stderr, flush=True)
    table = []
    for r in rows:
        base = next((b['ms'] for b in rows if b['impl'] == 'causal' and b['T'] == r['T']
                     and b['backward'] == r['backward'] and 'ms' in b), float('nan'))
        kind = 'fwd+bwd' if r['backward'] else 'fwd'
        table.append([kind, r['T'], r['impl']] + ([f"n/a: {r['error']}", '', '', ''] if 'error' in r else
                     [f"{r['ms']:.1f}", f"{r['ms'] / base:.2f}", f"{r['first_s']:.1f}", f"{r['mem_mb']:.0f}"]))
    print(f"\none causal attention layer with pe={cfg['attn_pe']} on {device} ({torch.get_num_threads()} threads), "
          f"batch {cfg['attn_batch']}, {cfg['n_head']} heads x {cfg['n_embd'] // cfg['n_head']} dims; best of "
          f"several calls\n")
    print(md_table(['pass', 'T', 'impl', 'ms', 'vs causal', 'first call s', 'peak MiB (process)'], table))
    return rows


@torch.no_grad()
def bench_regular(cfg, device):
    """Forward time of one length-T string through RegularGPT per implementation, all in the same process."""
    C = cfg['chunk_size']
    torch.manual_seed(0)
    net = RegularGPT(model_config(cfg, vocab_size=16, pe='regular', chunk_size=C, thickness=1)).to(device).eval()
    bad = [i for i in cfg['regular_impls'] if i not in ('plain', 'gather', 'reduce')]
    if bad:
        raise ConfigError(f"regular_impls: unknown {', '.join(bad)}; known: plain, gather, reduce")
    out, rows = {}, []
    for T in cfg['lengths']:
        x = torch.randint(0, 16, (1, T)).to(device)
        res, ratio = interleaved(list(cfg['regular_impls']), cfg['rounds'], cfg['warmup'],
                                 lambda impl: timed(lambda: net(x, regular_impl=impl), device))
        out[T] = {i: statistics.median(r['s'] for r in res[i]) for i in res}
        rows.append([T, n_levels(T, C)] + [f'{out[T][i]:.3f}' for i in res] + [f'{1 / ratio[i]:.1f}x' for i in res][1:]
                    + [f"{1e6 * out[T]['gather'] / (T * C * n_levels(T, C)):.2f}" if 'gather' in out[T] else '-'])
        print(f'T={T}: ' + ', '.join(f'{i} {out[T][i]:.3f}s' for i in res), file=sys.stderr, flush=True)
    impls = list(cfg['regular_impls'])
    print(f"\nRegularGPT forward on {device} ({torch.get_num_threads()} threads), batch 1, n_embd={cfg['n_embd']}, "
          f"{cfg['n_head']} heads, C={C}, K=1; median of {cfg['rounds']} interleaved rounds, seconds\n")
    head = ['T', 'layers'] + impls + [f'{impls[0]} / {i}' for i in impls[1:]] + ['gather us / (T*C*log_C T)']
    print(md_table(head, rows))
    return out


def bench_stream(cfg, device):
    """Tokens/s and peak RSS of a stream through the bounded cache-relative KV cache (extrapolate.py protocol=stream)
    at two stream lengths, interleaved, per encoding, random weights and tokens: constant cost is a ratio near 1."""
    lengths = sorted(cfg['stream_tokens'])
    if len(lengths) != 2 or lengths[0] < 1:
        raise ConfigError(f"stream_tokens={cfg['stream_tokens']}: give two positive lengths, e.g. 10000,1000000")
    W, S, fed = cfg['block_size'], cfg['stream_sinks'], cfg['stream_step']
    torch.manual_seed(cfg['seed'])
    rows, out = [], {}
    for pe in [p for p in encodings(cfg) if p in cfg['pes']]:
        model = make_model(model_config(cfg, pe=pe)).to(device).eval()
        if stream_refusal(model):
            raise ConfigError(stream_refusal(model))
        text = torch.randint(model.config.vocab_size, (lengths[1] + 1,)).numpy().astype(np.uint16)

        def step(n):
            cpu, anon = time.process_time(), 0.0
            with Meter() as m:
                for _ in stream_losses(model, stream_steps([text], n, fed), W, S):
                    anon = max(anon, rss_mb())  # after every step: the heap's peak, which page reclaim leaves alone
            return dict(s=m.seconds, tps=n / m.seconds, cpu_tps=n / (time.process_time() - cpu), mb=m.peak_mb,
                        anon=anon)
        step(lengths[0])  # the first stream of a process pays for allocations that later ones reuse: not timed
        res, _ = interleaved(lengths, cfg['rounds'], cfg['warmup'], step)
        med = {key: {n: statistics.median(r[key] for r in res[n]) for n in lengths} for key in ('tps', 'cpu_tps')}
        mb, anon = ({n: max(r[k] for r in res[n]) for n in lengths} for k in ('mb', 'anon'))
        out[pe] = dict(tokens_per_s=med['tps'], tokens_per_cpu_s=med['cpu_tps'], peak_rss_mb=mb, peak_rss_anon_mb=anon)
        cols = (med['tps'], med['cpu_tps'], mb, anon)
        rows.append([pe] + [f'{d[n]:,.{1 if i > 1 else 0}f}' for i, d in enumerate(cols) for n in lengths]
                    + [f'{d[lengths[1]] / d[lengths[0]]:.3f}' for d in cols])
        print(f"{pe}: {out[pe]}", file=sys.stderr, flush=True)
    a, b = lengths
    print(f"\nStream through the bounded cache on {device} ({torch.get_num_threads()} threads), S={S}, W={W}, "
          f"steps of {fed} tokens, random weights and tokens; median tokens per second (wall clock, and per CPU "
          f"second of this process, "
          f"which a busy machine disturbs less) and largest peak RSS (MB; anon: the heap alone, sampled after every "
          f"step) of {cfg['rounds']} interleaved rounds\n")
    names = ('tok/s', 'tok/CPU s', 'RSS', 'anon RSS')
    print(md_table(['pe'] + [f'{k} @{n}' for k in names for n in (a, b)] + [f'{k} {b}/{a}' for k in names], rows))
    return out


MODES = {'train': bench_train, 'eval': bench_eval, 'attention': bench_attention, 'regular': bench_regular,
         'pretrained': bench_pretrained, 'stream': bench_stream}


def main(cfg):
    if cfg['mode'] not in MODES:
        raise ConfigError(f"mode={cfg['mode']!r} is not one of {', '.join(MODES)}")
    if cfg['threads']:
        torch.set_num_threads(cfg['threads'])
    return_freed_memory()
    if cfg['vocab_size'] is None:
        meta = load_meta(data_folder(cfg['dataset'], cfg['data_dir']))
        cfg = dict(cfg, vocab_size=meta.get('vocab_size', GPTConfig.vocab_size))
    if cfg['rounds'] < 1 or cfg['warmup'] < 0:
        raise ConfigError(f"rounds={cfg['rounds']} must be >= 1 and warmup={cfg['warmup']} >= 0")
    for key in ('batch_size', 'gradient_accumulation_steps', 'attn_batch', 'block_size'):
        if cfg[key] < 1:  # batch_size=0 would time nothing and report 0 tok/s
            raise ConfigError(f"{key}={cfg[key]} must be >= 1")
    if not cfg['lengths'] or min(cfg['lengths']) < 2:
        raise ConfigError(f"lengths={cfg['lengths']} must all be >= 2 tokens")
    device = pick_device(cfg['device'])
    out = MODES[cfg['mode']](cfg, device)
    if cfg['json']:
        write_json(cfg['json'], cfg, device, out)
    return out


def write_json(path, cfg, device, out):
    """--json: the figures, with the command, machine and settings that made them (results.sh lease reads them)."""
    if isinstance(out, dict) and any(isinstance(k, tuple) for k in out):  # (name, T) keys: JSON has string keys only
        out = [dict(name=k[0], T=k[1], **v) for k, v in out.items()]
    data = dict(command=command_line(), mode=cfg['mode'],
                device=device, gpu=torch.cuda.get_device_name(device) if device.startswith('cuda') else None,
                python=platform.python_version(), **environment(), settings=cfg, results=out)
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with open(path + '.tmp', 'w') as f:  # then renamed: a run stopped mid-write leaves no half file
        json.dump(data, f, indent=1, default=str)
    os.replace(path + '.tmp', path)
    print(f'wrote {path}', file=sys.stderr)


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__, other_file_keys=True)
