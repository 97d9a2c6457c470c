"""
RULER's synthetic tasks (Hsieh et al. 2024; lexgpt/ruler_tasks.py) on any model the loader takes: each sample fitted
to a length in the model's own tokens, answered by greedy decoding through a KV cache (sample.py's, stopping at the
model's end token or the task's token budget), scored by RULER's metric, for every attention variant and RoPE
extension the other evaluations take, and through the bounded-cache stream.

  python -m analysis.ruler --ckpt=smollm2 --tasks=niah_single_1,vt --lengths=0.25,0.5,1,2 --n=20
  python -m analysis.ruler --ckpt=smollm2 --no_vanilla=True --lm_infinite=True --windowed=True --tasks=vt
  python -m analysis.ruler --ckpt=smollm2 --rope_scaling=yarn --rope_scale=2 --name=ruler_yarn2
  python -m analysis.ruler --ckpt=smollm2 --no_vanilla=True --cache_window=8192 --n_starting=4  # the stream
  python -m analysis.ruler --ckpt=gemma3 --template=base --data=ruler_data/niah_single_1/validation.jsonl

Lengths are multiples of the model's L_tr and include the answer's token budget, as RULER's max_seq_length does.
--template: the model's chat template where it has one (auto; SmolLM2-135M-Instruct's GGUF holds one), or RULER's
base template (Gemma 3 270M, a base model). --data scores RULER's own data (prepare.py's <task>/validation.jsonl;
--lengths and --template then come from the file). Writes <out_dir>/<name>.json (the score of each cell with n and a
95% interval: Wilson's for exact-match rates, a bootstrap for averages), .md and .png, and beside them
<name>-jsonl/<model>_<variant>_<length>x/<task>.jsonl in RULER's format, which its scripts/eval/evaluate.py reads.
The JSON is rewritten after every sample and every cell (marked partial); --reuse=<that JSON> goes on where a run
stopped.
"""
import functools
import json
import os
import re
import sys
import threading
import time
from contextlib import contextmanager

import numpy as np
import torch

from lexgpt import ruler_tasks as rt
from lexgpt.config import ConfigError, run
from lexgpt.device import EVAL_DEVICE
from lexgpt.evaluation import BOS_DEFAULTS, check_settings, ex_len, extension, runs_bos, VARIANT_DEFAULTS, variants
from lexgpt.kv_cache import KVCache
from lexgpt.loading import ckpt_kind, get_tokenizer, load_runs, PRETRAINED
from lexgpt.outputs import length_axis, md_table, plt, write_outputs
from lexgpt.progress import Progress
from lexgpt.resume import Previous
from lexgpt.streaming import stream_refusal

DEFAULTS = dict(
    ckpt=[],                    # checkpoint files, out/<run> folders or pretrained models (smollm2, gemma3, ...)
    tasks=list(rt.TASKS),       # RULER's synthetic tasks (QA needs downloads: only from --data)
    lengths=[0.25, 0.5, 1.0, 2.0],  # input + answer budget, multiples of L_tr
    n=20,                       # samples per (task, length)
    template='auto',            # chat | base | auto (chat where the model has a chat template)
    data=[],                    # RULER jsonl files (prepare.py's <task>/validation.jsonl) scored instead of ours
    seed=42,                    # the samples' seed: the same samples at every length, for every model and method
    rope_scaling='',            # evaluate with a RoPE extension: pi | ntk | dynamic | yarn | llama3 (runs +<s><f>)
    rope_scale=2.0,             # ... at this factor s
    cache_window=0,             # >0: also the bounded-cache stream: each token sees the first n_starting tokens and
                                # the last cache_window, at distances capped at cache_window (extrapolate.py's)
    stream_step=256,            # stream: prompt tokens fed per forward pass through the bounded cache
    threads=0,                  # torch CPU threads (0: torch's default)
    reuse='',                   # a previous JSON of this script with the same settings: its samples are kept
    out_dir='out/ruler',
    name='ruler',               # output file stem
    **VARIANT_DEFAULTS,
    **BOS_DEFAULTS,
    **EVAL_DEVICE,
)
TEMPLATES = ('auto', 'chat', 'base')
BEAT_SECONDS = 20.0  # a line at least this often while a sample runs (a 64k-token prompt is minutes in one pass)


# ------------------------------------------------------------------ the prompt format and decoding

def chat_template(r):
    """The chat template in the model's files (a GGUF's tokenizer.chat_template, a folder's tokenizer_config.json or
    chat_template.jinja), or None: our own checkpoints and base models have none."""
    if ckpt_kind(r.path) not in PRETRAINED:
        return None
    from lexgpt import aliases, pretrained
    file = aliases.locate(r.path)
    if file.endswith('.gguf'):
        from lexgpt.gguf_reader import open_gguf
        field = open_gguf(file).fields.get('tokenizer.chat_template')
        return field.contents() if field is not None else None
    folder = pretrained.resolve(file)
    jinja, settings = os.path.join(folder, 'chat_template.jinja'), os.path.join(folder, 'tokenizer_config.json')
    if os.path.exists(jinja):
        return open(jinja, encoding='utf-8').read()
    found = json.load(open(settings)).get('chat_template') if os.path.exists(settings) else None
    if isinstance(found, list):  # named templates: the default one
        found = next((t['template'] for t in found if t.get('name') == 'default'), None)
    return found


def prompt_format(choice, r):
    """-> ('chat' or 'base', wrap(text) or None): the model's chat template, or RULER's base template (the text as
    it is)."""
    template = chat_template(r)
    choice = ('chat' if template else 'base') if choice == 'auto' else choice
    if choice == 'chat' and not template:
        raise ConfigError(f"template=chat but {r.name} has no chat template in its files; use template=base")
    return choice, rt.chat_wrap(template) if choice == 'chat' else None


@torch.inference_mode()
def prefill(model, prompt, cache, step=0):
    """The prompt into the KV cache, at once or `step` tokens at a time (a stream): its last position's logits."""
    ids = torch.tensor([prompt], dtype=torch.long)
    step = step or ids.size(1)
    for i in range(0, ids.size(1), step):
        logits = model(ids[:, i:i + step], cache=cache, last_k=1)[0]
    return logits


@torch.inference_mode()
def decode(model, logits, cache, budget, stop=()):
    """sample.py's decoding at temperature 0 (GPT.sample_next), a token at a time through the cache: the new ids,
    ending before a stop id or after `budget` of them."""
    out = []
    while len(out) < budget:
        nxt = model.sample_next(logits[:, -1, :].float(), 0, None)
        if int(nxt) in stop:
            break
        out.append(int(nxt))
        if len(out) < budget:
            logits = model(nxt, cache=cache)[0]
    return out


def greedy(model, prompt, budget, stop=(), cache=None, step=0):
    """Greedy decoding after a prompt: the new ids (prefill, then decode)."""
    cache = KVCache() if cache is None else cache
    return decode(model, prefill(model, prompt, cache, step), cache, budget, stop)


def specs(cfg):
    """[(label, attention kwargs fn(L_tr, mult) or None, (W, S) of the stream or None)]: evaluation.py's variants,
    then the bounded-cache stream where cache_window > 0."""
    stream = cfg['cache_window'] > 0
    try:
        out = [(label, kw, None) for label, kw in variants(cfg)]
    except ConfigError:
        if not stream:
            raise
        out = []
    if stream:
        out.append((f"stream(S={cfg['n_starting']},W={cfg['cache_window']})", None,
                    (cfg['cache_window'], cfg['n_starting'])))
    return out


def answer(r, spec, m, prompt, budget, stop, cfg):
    """The model's greedy answer to a prompt under one variant at length m x L_tr: (new ids, times: seconds of the
    prefill and of the whole, and CPU seconds of the process, all threads: the cost on a busy machine)."""
    label, kw, stream = spec
    t0, cpu = time.perf_counter(), time.process_time()
    W, S = stream or (0, 0)
    cache = KVCache(W, S, relative=True) if stream else KVCache()
    # the stream as lexgpt/streaming.py's stream_losses: distances capped at W where sinks would stretch them
    with r.model.attention(**(dict(ceiling=W if S else 0) if stream else kw(r.L_tr, m))):
        logits = prefill(r.model, prompt, cache, cfg['stream_step'] if stream else 0)
        t1 = time.perf_counter()
        ids = decode(r.model, logits, cache, budget, stop)
    now = time.perf_counter()
    return ids, dict(seconds=round(now - t0, 2), prefill_seconds=round(t1 - t0, 2),
                     cpu_seconds=round(time.process_time() - cpu, 2))


@contextmanager
def heartbeat(what):
    """A line on stderr every BEAT_SECONDS while the block runs, what() saying where it is: a prompt of 64k tokens
    goes through the model in one pass of minutes, with no step to report."""
    stop, t0 = threading.Event(), time.perf_counter()

    def beat():
        while not stop.wait(BEAT_SECONDS):
            print(f"  {what()}, {time.perf_counter() - t0:,.0f} s on this cell", file=sys.stderr, flush=True)
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


# ------------------------------------------------------------------ cells: one (model, variant, task, length)

def make_samples(cfg, task, L, tok, wrap, bos):
    """The cell's n samples in RULER's jsonl fields, fitted to L tokens of the model's tokenizer (BOS counted)."""
    out, guess = [], None
    for i in range(cfg['n']):
        sample, guess = rt.make_sample(task, i, L, tok.encode, wrap, int(bos is not None), cfg['seed'], guess)
        out.append(sample)
    return out


def data_cells(cfg, r, tok, bos):
    """--data: each file one cell, its task named by the file, its length the longest of its samples."""
    cells = []
    for path in cfg['data']:
        task, rows = rt.task_of_path(path), rt.read_jsonl(path)[:cfg['n']]
        budget = rt.tokens_to_generate(task)
        for row in rows:
            row.setdefault('length', len(tok.encode(row['input'] + row.get('answer_prefix', ''))) + budget
                           + int(bos is not None))
        L = max(row['length'] for row in rows)
        cells.append((task, round(L / r.L_tr, 4), L, lambda rows=rows: rows))
    return cells


def cell_row(head, samples, metric):
    scores = [s['score'] for s in samples]
    binary = metric == 'part' or all(len(s['outputs']) == 1 for s in samples)
    score, ci, kind = rt.cell_score(scores, binary)
    mean = lambda key: float(np.mean([s[key] for s in samples if key in s] or [np.nan]))
    return dict(head, n=len(samples), score=score, ci95=ci, interval=kind, seconds_per_sample=mean('seconds'),
                cpu_seconds_per_sample=mean('cpu_seconds'), samples=samples)


def run_cell(cfg, r, spec, head, samples, tok, bos, prev, save):
    """Decode and score each sample of a cell, taking those the --reuse file holds; save(row so far) after each."""
    metric = rt.KINDS[rt.kind_of(head['task'])]['metric']
    old = {s['index']: s for s in (prev.take(cell_key(head), head['iters']) or {}).get('samples', [])}
    budget, stop, done = rt.tokens_to_generate(head['task']), {tok.eot} - {None}, []
    what = f"{r.name} {head['variant']} {head['task']} {head['mult']:g}x"
    progress = Progress(what, len(samples), 'samples')
    with heartbeat(lambda: f"{what}: sample {len(done) + 1} of {len(samples)}"):
        for s in samples:
            kept = old.get(s['index'])
            if kept is not None and kept['outputs'] != s['outputs']:
                raise ConfigError(f"reuse={prev.path!r}: sample {s['index']} of {what} has other answers there "
                                  f"({kept['outputs']} against {s['outputs']}): another tokenizer or template?")
            if kept is None:
                prompt = ([] if bos is None else [bos]) + tok.encode(s['input'] + s.get('answer_prefix', ''))
                ids, times = answer(r, spec, head['mult'], prompt, budget, stop, cfg)
                pred = tok.decode(ids)
                kept = dict(index=s['index'], length=s['length'], prompt_tokens=len(prompt), outputs=s['outputs'],
                            pred=pred, score=rt.match(pred, s['outputs'], metric), new_tokens=len(ids),
                            **times)
                save(cell_row(dict(head, partial=True), done + [kept], metric))
            done.append(kept)
            progress.done()
    row = cell_row(head, done, metric)
    print(f"{what}: {row['score']:.1f} [{row['ci95'][0]:.1f}, {row['ci95'][1]:.1f}] (n={row['n']}), "
          f"{row['seconds_per_sample']:.1f} s ({row['cpu_seconds_per_sample']:.1f} CPU s) a sample", flush=True)
    return row


def cell_key(row):
    return row['ckpt'], row['variant'], row['task'], row['mult']


def jsonl_path(cfg, row):
    cell = re.sub(r'[^\w.+@-]+', '_', f"{row['ckpt']}_{row['variant']}_{row['mult']:g}x").strip('_')
    return os.path.join(cfg['out_dir'], f"{cfg['name']}-jsonl", cell, f"{row['task']}.jsonl")


def write_cell_jsonl(cfg, row, samples):
    """RULER's prediction rows (call_api.py's fields: index, input, outputs, length, pred, others) of a cell."""
    preds = {s['index']: s['pred'] for s in row['samples']}
    rt.write_jsonl(jsonl_path(cfg, row), [dict(index=s['index'], input=s['input'], outputs=s['outputs'],
                                               length=s['length'], pred=preds[s['index']],
                                               answer_prefix=s.get('answer_prefix', ''), others=s.get('others', {}))
                                          for s in samples if s['index'] in preds])


# ------------------------------------------------------------------ the report

def averages(rows):
    """RULER's average over the tasks of each (model, variant, length), complete cells only."""
    out = {}
    for row in rows:
        if not row.get('partial') and row['score'] is not None:
            out.setdefault((row['ckpt'], row['variant'], row['mult']), []).append(row['score'])
    return [dict(ckpt=k[0], variant=k[1], mult=k[2], score=float(np.mean(v)), tasks=len(v)) for k, v in out.items()]


# RULER's effective length is the longest length whose average beats Llama-2-7B's at 4k (85.6), a bar set by a 7B
# model that a 135M one never clears; ours is relative to the model's own average at its shortest length (0.25 L_tr)
EFFECTIVE_SHARE = 0.85


def effective_lengths(avgs):
    """(ckpt, variant) -> the longest length (in L_tr) at which the RULER average, there and at every shorter length,
    is at least EFFECTIVE_SHARE x the average at the shortest length measured; None where that one is 0, or where it
    is the only one (a method run past L_tr only: tools/steps_tasks.PAST_ONLY)."""
    out = {}
    for key in dict.fromkeys((a['ckpt'], a['variant']) for a in avgs):
        by_mult = sorted((a['mult'], a['score']) for a in avgs if (a['ckpt'], a['variant']) == key)
        base, effective = (by_mult[0][1] if len(by_mult) > 1 else 0), None
        for mult, score in by_mult:
            if base <= 0 or score < EFFECTIVE_SHARE * base:
                break
            effective = mult
        out[key] = effective
    return out


def payload(cfg, settings, rows, partial=False):
    avgs = averages(rows)
    effective = [dict(ckpt=k[0], variant=k[1], effective_length=v, share=EFFECTIVE_SHARE)
                 for k, v in effective_lengths(avgs).items()]
    return dict(settings=settings, tasks=cfg['tasks'], lengths=cfg['lengths'], n=cfg['n'], results=rows,
                averages=avgs, effective=effective, **(dict(partial=True) if partial else {}))


def shown(row):
    """A cell of the page: score [interval] (n), 'running' where its run has not ended; n/a where none has begun."""
    if row is None or row['score'] is None:
        return 'n/a'
    lo, hi = row['ci95']
    return f"{row['score']:.1f} [{lo:.1f}, {hi:.1f}] ({row['n']}{', running' if row.get('partial') else ''})"


def report(cfg, settings, rows, partial=False):
    """The markdown table (a task a row, a length a column, each model and variant its own table) and the figure
    (score against length, a line per model and variant, a panel per task group and the average). partial: a run
    under way, its page redone as each cell ends (said at the top; a cell still running is marked)."""
    md = (f"RULER (Hsieh et al. 2024) synthetic tasks, greedy decoding, RULER's metric x 100 [95% interval: Wilson "
          f"for exact-match rates, bootstrap for averages] (n); lengths in L_tr, input and answer budget.\n\n")
    if partial:
        md = ("**Partial**: a run under way (its JSON goes on with --reuse); the cells finished so far, a cell being "
              "run marked as such, n/a where none has begun.\n\n" + md)
    avg = {(a['ckpt'], a['variant'], a['mult']): a for a in averages(rows)}
    panels = {**{g: ts for g, ts in rt.GROUPS.items() if set(ts) & {r['task'] for r in rows}}, 'average': None}
    fig, axes = plt().subplots(1, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False, layout='constrained')
    for i, (ckpt, variant) in enumerate(dict.fromkeys((r['ckpt'], r['variant']) for r in rows)):
        mine = [r for r in rows if (r['ckpt'], r['variant']) == (ckpt, variant)]
        mults = sorted({r['mult'] for r in mine})
        cell = {(r['task'], r['mult']): r for r in mine}
        table = [[t] + [shown(cell.get((t, m))) for m in mults] for t in dict.fromkeys(r['task'] for r in mine)]
        table.append(['average'] + [f"{avg[ckpt, variant, m]['score']:.1f} ({avg[ckpt, variant, m]['tasks']} tasks)"
                                    if (ckpt, variant, m) in avg else 'n/a' for m in mults])
        L = {r['mult']: r['L_ex'] for r in mine}
        eff = effective_lengths(averages(mine)).get((ckpt, variant))
        md += f"### {ckpt} [{variant}], template {mine[0]['template']}\n\n" + md_table(
            ['task'] + [f"{m:g} (L={L[m]})" for m in mults], table) + '\n' + (
            f"Effective length: {eff:g} L_tr (the average at least {EFFECTIVE_SHARE:g} x its own at {mults[0]:g} "
            f"L_tr, there and at every shorter length).\n\n" if eff is not None else '')
        for ax, (panel, tasks) in zip(axes[0], panels.items()):
            ys = [np.mean([cell[t, m]['score'] for t in tasks if (t, m) in cell and cell[t, m]['score'] is not None]
                          or [np.nan]) if tasks else avg.get((ckpt, variant, m), {}).get('score', np.nan)
                  for m in mults]
            ax.plot(mults, ys, marker='o', ms=3, color=f'C{i % 10}', label=f'{ckpt} [{variant}]')
    mults = sorted({r['mult'] for r in rows})
    for ax, panel in zip(axes[0], panels):
        length_axis(ax, mults, 'length / L_tr')
        ax.set(ylim=(-3, 103), title=panel, ylabel='score' if panel == next(iter(panels)) else '')
    axes[0, -1].legend(fontsize=6)
    if not partial:
        print('\n' + md)
    write_outputs(cfg['out_dir'], cfg['name'], payload(cfg, settings, rows, partial), md, fig, say=not partial)


# ------------------------------------------------------------------ main

def check(cfg):
    """The settings, each bad value in one line, before any model is loaded."""
    bad = [t for t in cfg['tasks'] if t not in rt.TASKS]
    if bad and not cfg['data']:
        raise ConfigError(f"tasks: {bad[0]!r}; allowed: {', '.join(rt.TASKS)} (QA only from --data)")
    if cfg['template'] not in TEMPLATES:
        raise ConfigError(f"template={cfg['template']!r}; allowed: {', '.join(TEMPLATES)}")
    for key in ('n', 'stream_step'):
        if cfg[key] < 1:
            raise ConfigError(f"{key}={cfg[key]} must be >= 1")
    if cfg['cache_window'] < 0:
        raise ConfigError(f"cache_window={cfg['cache_window']} must be >= 0 (0: no stream)")
    for path in cfg['data']:
        rt.task_of_path(path)
        rt.read_jsonl(path)
    check_settings(cfg)


def problem(data):
    ok = isinstance(data, dict) and all(isinstance(r, dict) and {'task', 'samples', 'variant'} <= set(r)
                                        for r in data.get('results', [None]))
    return '' if ok else "is not a JSON of analysis.ruler (rows with task, variant and samples)"


def cells_of(cfg, r, tok, wrap, bos):
    """[(task, mult, L, samples())]: ours at each length, or the --data files'. Samples are made once per run."""
    if cfg['data']:
        return data_cells(cfg, r, tok, bos)
    for m in cfg['lengths']:  # every cell's first sample, so that a length too short for a task stops us at once
        for t in cfg['tasks']:
            rt.make_sample(t, 0, ex_len(m, r.L_tr), tok.encode, wrap, int(bos is not None), cfg['seed'])
    made = {}

    def samples(task, L):
        if (task, L) not in made:
            made[task, L] = make_samples(cfg, task, L, tok, wrap, bos)
        return made[task, L]
    return [(t, m, ex_len(m, r.L_tr), functools.partial(samples, t, ex_len(m, r.L_tr)))
            for m in cfg['lengths'] for t in cfg['tasks']]


def main(cfg):
    """Every model x variant x length x task: its samples decoded and scored; returns the rows."""
    check(cfg)
    if cfg['threads'] > 0:
        torch.set_num_threads(cfg['threads'])
    label, extend = extension(cfg)
    runs = load_runs(cfg['ckpt'], label=label, device=cfg['device'], dtype=cfg['dtype'], **extend)
    bos = runs_bos(runs, cfg['bos'])
    settings = dict(seed=cfg['seed'], template=cfg['template'], bos=bos,
                    data=[os.path.abspath(p) for p in cfg['data']])
    prev = Previous(cfg['reuse'], key=cell_key, check=problem)
    prev.check_settings(settings)
    rows = []

    def save_json(rows_now):
        write_outputs(cfg['out_dir'], cfg['name'], payload(cfg, settings, prev.so_far(rows_now), partial=True),
                      say=False)

    for r in runs:
        tok = get_tokenizer(r.meta.get('tokenizer', 'bytes'))
        if r.model.config.vocab_size < tok.vocab_size:
            raise ConfigError(f"{r.name}: a vocabulary of {r.model.config.vocab_size}, smaller than its tokenizer's "
                              f"{tok.vocab_size}")
        fmt, wrap = prompt_format('base' if cfg['data'] else cfg['template'], r)
        cells = cells_of(cfg, r, tok, wrap, bos)
        for spec in specs(cfg):
            if spec[2] and (why := stream_refusal(r.model)):
                raise ConfigError(f"{r.name}: {why}")
            for task, m, L, samples in cells:
                head = dict(ckpt=r.name, group=r.group, pe=r.pe, L_tr=r.L_tr, iters=r.iters, variant=spec[0],
                            template='data' if cfg['data'] else fmt, task=task, mult=m, L_ex=L)

                def save(row, samples=samples):
                    write_cell_jsonl(cfg, row, samples())
                    save_json(rows + [row])
                try:
                    row = run_cell(cfg, r, spec, head, samples(), tok, bos, prev, save)
                except ValueError as e:  # learned positions past block_size; RegularGPT's missing cache
                    if isinstance(e, ConfigError):
                        raise
                    print(f"{r.name} {spec[0]} {task} {m:g}x: skipped ({e})")
                    continue
                rows.append(row)
                write_cell_jsonl(cfg, row, samples())
                # the cell is final now, not only once the next one has a sample; its page and figure too
                report(cfg, settings, prev.so_far(rows), partial=True)
    report(cfg, settings, prev.so_far(rows))
    return rows


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
