"""
Synthetic passkey retrieval (Mohtashami & Jaggi 2023; LM-Infinite 5.2; thesis 5.5.2): a random key hidden at some
depth of a long filler text, asked for at the end. Scored by teacher forcing, which equals greedy decoding: a key
counts as found when every one of its tokens is the model's top choice given the correct ones before it.

  python -m analysis.passkey --ckpt=out/tiny-alibi --lengths=0.5,1,2,4
  python -m analysis.passkey --ckpt=out/tiny-rope --lengths=1,4 --lm_infinite=True --style=text
  # a pretrained model
  python -m analysis.passkey --ckpt=smollm2 --lengths=0.25,2 --depths=0.5 --n=1 --lm_infinite=True

Lengths are multiples of each checkpoint's training length L_tr; depth 0 puts the key right after the intro, depth 1
right before the question. Attention variants add panels next to the vanilla model. Writes <out_dir>/<name>.json,
.md and .png; the JSON is written as the keys are scored (marked partial), and --reuse=<that JSON> goes on where a
stopped run left off, inside a cell too.
"""
import math

import numpy as np
import torch

from lexgpt.config import ConfigError, run
from lexgpt.corpus import load_meta
from lexgpt.device import EVAL_DEVICE
from lexgpt.evaluation import (BOS_DEFAULTS, check_settings, ex_len, extension, prompt_with_bos,
                               runs_bos, VARIANT_DEFAULTS, variants)
from lexgpt.loading import get_tokenizer, load_runs
from lexgpt.outputs import md_table, plt, write_outputs
from lexgpt.progress import Meter, Progress
from lexgpt.resume import Previous, cells_so_far, kept_record

DEFAULTS = dict(
    ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')
    data_dir='',                # a data folder whose meta.json names the tokenizer ('' : the checkpoint's)
    lengths=[0.5, 1.0, 2.0, 4.0],  # prompt lengths, multiples of L_tr
    depths=[0.0, 0.25, 0.5, 0.75, 1.0],  # where the key sits: 0 = first, 1 = last
    n=10,                       # keys per (length, depth) cell
    batch_tokens=16384,         # tokens per forward pass (at least one prompt)
    digits=5,                   # digits per key
    style='code',               # code | text: the filler and the question
    rope_scaling='',            # evaluate with a RoPE extension: pi | ntk | dynamic | yarn | llama3
                                # (runs named +<scaling><s>)
    rope_scale=4.0,             # ... at this factor s
    regular_impl='gather',      # RegularGPT: gather (fast) or plain (dense; the only one that honours windowed/LM-Inf)
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    reuse='',                   # a previous JSON with the same style and keys: its cells are kept, not scored again.
                                # The JSON is rewritten after each scored cell, so a stopped run keeps what it scored
    out_dir='out/passkey',
    name='passkey',             # output file stem
    **VARIANT_DEFAULTS,
    **BOS_DEFAULTS,
    **EVAL_DEVICE,
)

# The question ends with the needle's own prefix, so a model that can look back and copy finds the key.
PASSKEY_STYLES = {
    'text': dict(intro='There is a pass key hidden in this text. Find it and remember it.\n',
                 filler='The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.\n',
                 needle='The pass key is {key}. Remember it. {key} is the pass key.\n',
                 question='What is the pass key? The pass key is '),
    'code': dict(intro='# a pass key is hidden in this file; find it\n',
                 filler='x = x + 1  # the grass is green, the sky is blue\n',
                 needle='pass_key = {key}  # remember it\n',
                 question='# the pass key was set by the line\n# pass_key = '),
}


def passkey_prompt(style, n_tokens, depth, key, encode, bos=None):
    """-> (prompt ids, answer ids, needle offset). Fillers fill the prompt so that prompt + answer - 1 (the model's
    input when the answer is scored) fits in n_tokens; the needle follows round(depth * n_fillers) fillers. bos (an
    id): the prompt starts with it, before the intro, as the model's tokenizer puts it before a text."""
    t = PASSKEY_STYLES[style]
    intro, filler, needle, question, answer = map(encode, [t['intro'], t['filler'], t['needle'].format(key=key),
                                                           t['question'], key])
    intro = prompt_with_bos(intro, bos)
    fixed = len(intro) + len(needle) + len(question) + len(answer) - 1
    n_fill = max(0, (n_tokens - fixed) // len(filler))
    k = int(round(depth * n_fill))
    return intro + filler * k + needle + filler * (n_fill - k) + question, answer, len(intro) + len(filler) * k


def per_pass(batch_tokens, n_prompt, n_answer):
    """How many prompts of n_prompt tokens (answers of n_answer) go in one forward pass: at most batch_tokens tokens,
    at least one prompt (four 64k-token prompts at once would take four times the memory)."""
    return max(1, batch_tokens // (n_prompt + n_answer - 1))


@torch.inference_mode()
def score_answers(model, prompts, answers, batch_tokens=16384):
    """Teacher-forced scoring of each answer after its prompt (a forward pass per shape, of at most batch_tokens tokens
    or one row). Greedy decoding reproduces the answer iff each answer token is the argmax given the correct tokens
    before it, so `exact` is the greedy-decoding accuracy. -> per example: exact, digit accuracy, mean log-prob and
    mean rank (0 = top)."""
    shapes = {}
    for i, (p, a) in enumerate(zip(prompts, answers)):
        shapes.setdefault((len(p), len(a)), []).append(i)
    res = [None] * len(prompts)
    for (lp, la), same in shapes.items():
        rows = per_pass(batch_tokens, lp, la)
        for ids in (same[k:k + rows] for k in range(0, len(same), rows)):
            x = torch.tensor([list(prompts[i]) + list(answers[i][:-1]) for i in ids], dtype=torch.long)
            # the last la positions predict the answer; with targets the forward returns the logits of all la
            logits, _ = model(x, targets=x[:, -la:], reduction='none', last_k=la)
            logp = logits.float().log_softmax(-1)
            ans = torch.tensor([list(answers[i]) for i in ids], dtype=torch.long)
            lp_ans = logp.gather(-1, ans[..., None])[..., 0]
            rank = (logp > lp_ans[..., None]).sum(-1)
            for j, i in enumerate(ids):
                res[i] = dict(exact=bool((rank[j] == 0).all()), digit_acc=float((rank[j] == 0).double().mean()),
                              logprob=float(lp_ans[j].mean()), rank=float(rank[j].double().mean()))
    return res


def scored_in_passes(model, made, batch_tokens, before=(), save=lambda so_far: None):
    """score_answers over a cell's (prompt, answer, offset) triples, a forward pass's worth of keys at a time, after
    the results `before` of the keys a stopped run scored; save(results so far) after each pass but the last, so that
    a stopped cell keeps its keys (a 64k-token prompt is minutes of CPU)."""
    prompts, answers = [p for p, _, _ in made], [a for _, a, _ in made]
    rows, res = per_pass(batch_tokens, len(prompts[0]), len(answers[0])), list(before)
    for i in range(len(res), len(made), rows):
        res += score_answers(model, prompts[i:i + rows], answers[i:i + rows], batch_tokens)
        if len(res) < len(made):
            save(res)
    return res


def measure(cfg, run, label, kw, keys, encode, prev, save, bos=None):
    """One run under one attention variant: a cell per (length, depth) with its accuracy and log-probs, taken from
    the --reuse file `prev` where it holds the cell, or gone on with from the keys it holds of a cell stopped
    half-way (keys_so_far); save(cells) after each scored cell and each forward pass."""
    cells, progress = [], Progress(f'{run.name} {label}', len(cfg['lengths']) * len(cfg['depths']), 'cells')
    for m in cfg['lengths']:
        L = ex_len(m, run.L_tr)
        with run.model.attention(**kw(run.L_tr, m)):
            for depth in cfg['depths']:
                done = (prev.take((run.name, label, m, depth)) or (None, {}))[1]
                if done.get('accuracy') is not None:
                    print(f"{run.name:>18} {label:>16} {m:g}x, depth {depth:g}: taken from {prev.path}")
                    cells.append(done)
                    progress.done()
                    continue
                made = [passkey_prompt(cfg['style'], L, depth, k, encode, bos) for k in keys]
                seen = max(L, len(made[0][0]) + len(made[0][1]) - 1)  # a row is labelled by what the model saw
                if depth == cfg['depths'][0] and seen > L:
                    print(f"note: the {cfg['style']!r} prompt and key take {seen} tokens without fillers, more than "
                          f"{m:g} x L_tr = {L}: its rows say L_ex={seen}")
                cell = dict(mult=m, L_ex=seen, depth=depth)
                before = done.get('keys_so_far', [])
                res = scored_in_passes(run.model, made, cfg['batch_tokens'], before,
                                       lambda so_far: save(cells + [dict(cell, accuracy=None, keys_so_far=so_far)]))
                cells.append(dict(cell, accuracy=np.mean([x['exact'] for x in res]),
                                  mean_logprob=np.mean([x['logprob'] for x in res]),
                                  digit_acc=float(np.mean([x['digit_acc'] for x in res])),
                                  mean_rank=float(np.mean([x['rank'] for x in res])), prompt_tokens=len(made[0][0]),
                                  **(dict(keys_scored_before=len(before)) if before else {})))
                save(cells)
                progress.done()
        row = cells[-len(cfg['depths']):]
        print(f"{run.name:>18} {label:>16} L_ex={row[0]['L_ex']}: accuracy by depth "
              f"{' '.join(format(c['accuracy'], '.2f') for c in row)}, "
              f"mean log-prob of the key tokens {np.mean([c['mean_logprob'] for c in row]):.3f}", flush=True)
    return cells


def previous_cells(path, style, keys, bos=None):
    """--reuse -> its cells (lexgpt/resume.py), each row a (run row, cell) pair named by cell_key, from a previous JSON
    of the same style, keys and BOS (a file made before settings.bos put none first)."""
    def problem(data):
        if data.get('style') != style or data.get('keys') != keys:
            return (f"was made with style={data.get('style')!r} and keys {data.get('keys')}, this run has "
                    f"style={style!r} and keys {keys} (they follow n, digits and seed)")
        return ''
    prev = Previous(path, key=lambda pair: cell_key(*pair), check=problem,
                    rows=lambda data: [(r, c) for r in data['results'] for c in r['cells']])
    prev.check_settings(dict(bos=bos), dict(bos=None))
    return prev


def cell_key(row, cell):
    return row['ckpt'], row['variant'], cell['mult'], cell['depth']


def payload(cfg, keys, results, bos=None):
    return dict(style=cfg['style'], keys=keys, depths=cfg['depths'], lengths=cfg['lengths'], settings=dict(bos=bos),
                results=results)


def grids(cells, lengths, depths):
    """-> (accuracy, mean log-prob), each a (length, depth) array."""
    shape = (len(lengths), len(depths))
    pick = lambda key: np.array([[c[key] for c in cells if c['mult'] == m] for m in lengths]).reshape(shape)
    return pick('accuracy'), pick('mean_logprob')


def report(cfg, out, keys, n_panels, vocab_size, bos=None):
    """The markdown tables and the heat maps (accuracy and log-prob by length and depth) of every measured panel."""
    lengths, depths = cfg['lengths'], cfg['depths']
    fig, axes = plt().subplots(2, n_panels, figsize=(3.4 * n_panels + 1.5, 5.6), squeeze=False, layout='constrained')
    ims, md = [None, None], ''
    lp_range = (-math.log(vocab_size), 0.0)  # colour scale: a uniform guess .. certainty
    for col, o in enumerate(out):
        acc, lp = grids(o['cells'], lengths, depths)
        seen = {c['mult']: c['L_ex'] for c in o['cells']}
        md += (f"### {o['ckpt']} [{o['variant']}]: exact-match accuracy (greedy) / mean log-prob per key token\n\n"
               + md_table(['L_ex / L_tr'] + [f'depth {d:g}' for d in depths],
                          [[f'{m:g}' + (f' (L_ex={seen[m]})' if seen[m] > round(m * o['L_tr']) else '')]
                           + [f'{acc[i, j]:.2f} / {lp[i, j]:.2f}' for j in range(len(depths))]
                           for i, m in enumerate(lengths)]) + '\n')
        for row, (vals, lim, what) in enumerate([(acc, (0, 1), 'accuracy'), (lp, lp_range, 'log-prob')]):
            ax = axes[row, col]
            ims[row] = ax.imshow(vals, cmap='viridis', aspect='auto', vmin=lim[0], vmax=lim[1])
            for i in range(vals.shape[0]):
                for j in range(vals.shape[1]):
                    ax.text(j, i, f'{vals[i, j]:.2f}', ha='center', va='center', fontsize=6, color='w')
            ax.set_xticks(range(len(depths)), [f'{d:g}' for d in depths], fontsize=7)
            ax.set_yticks(range(len(lengths)), [f'{m:g}x' for m in lengths], fontsize=7)
            ax.set_title(f"{o['ckpt']} [{o['variant']}]: {what}", fontsize=7)
            ax.set_xlabel('needle depth' if row else '', fontsize=8)
            ax.set_ylabel('L_ex / L_tr' if col == 0 else '', fontsize=8)
    for ax in axes.flat:
        if not ax.has_data():  # a skipped variant
            ax.axis('off')
    for row, what in enumerate(['exact match', 'mean log-prob per key token']):
        if ims[row] is not None:
            fig.colorbar(ims[row], ax=axes[row].tolist(), shrink=0.8, label=what)
    md = f"Passkey retrieval, style {cfg['style']!r}, {cfg['n']} random {cfg['digits']}-digit keys per cell.\n\n" + md
    print('\n' + md)
    write_outputs(cfg['out_dir'], cfg['name'], payload(cfg, keys, out, bos), md, fig)


def main(cfg):
    """Accuracy and log-prob per (length, depth) for every checkpoint and attention variant; returns their rows."""
    if cfg['style'] not in PASSKEY_STYLES:
        raise ConfigError(f"style={cfg['style']!r}; allowed: {', '.join(PASSKEY_STYLES)}")
    if not cfg['depths'] or any(not 0 <= d <= 1 for d in cfg['depths']):
        raise ConfigError(f"depths={cfg['depths']}: expected numbers in [0, 1]")
    if not cfg['lengths'] or min(cfg['lengths']) <= 0:
        raise ConfigError(f"lengths={cfg['lengths']}: expected positive multiples of L_tr")
    if min(cfg['n'], cfg['digits'], cfg['batch_tokens']) < 1:
        raise ConfigError(f"n={cfg['n']}, digits={cfg['digits']} and batch_tokens={cfg['batch_tokens']} must be "
                          f"positive")
    check_settings(cfg)
    if cfg['threads'] > 0:
        torch.set_num_threads(cfg['threads'])
    specs = variants(cfg)
    label, extend = extension(cfg)
    runs = load_runs(cfg['ckpt'], label=label,
                     regular_impl=cfg['regular_impl'], device=cfg['device'], dtype=cfg['dtype'], **extend)
    tok = get_tokenizer((load_meta(cfg['data_dir']) if cfg['data_dir'] else runs[0].meta).get('tokenizer', 'bytes'))
    small = [r.name for r in runs if r.model.config.vocab_size < tok.vocab_size]
    if small:
        raise ConfigError(f"{', '.join(small)}: a vocabulary smaller than the {tok.name} tokenizer's {tok.vocab_size}")
    rng = np.random.default_rng(cfg['seed'])
    keys = [''.join(rng.choice(list('0123456789'), cfg['digits'])) for _ in range(cfg['n'])]
    bos = runs_bos(runs, cfg['bos'])
    prev, out = previous_cells(cfg['reuse'], cfg['style'], keys, bos), []
    for r in runs:
        for label, kw in specs:
            head = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, variant=label)
            # the JSON after every cell, marked partial (as extrapolate.py's) until the report replaces it
            save = lambda cells: write_outputs(cfg['out_dir'], cfg['name'], dict(
                payload(cfg, keys, cells_so_far(out + [dict(head, cells=cells)], prev), bos), partial=True))
            try:
                with Meter() as meter:
                    cells = measure(cfg, r, label, kw, keys, tok.encode, prev, save, bos)
            except ValueError as e:  # learned positions past block_size; an option a RegularGPT impl refuses
                if isinstance(e, ConfigError):  # a bad setting of the command line, not this run's limit
                    raise
                print(f"{r.name:>18} {label:>16}: skipped ({e})")
                continue
            out.append(dict(head, cells=cells, **kept_record(prev, head, cells, meter.record())))
    report(cfg, out, keys, len(runs) * len(specs), tok.vocab_size, bos)
    return out


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
