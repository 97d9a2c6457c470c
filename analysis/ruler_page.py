"""
The RULER page (#73, part 4): the grid's analysis.ruler JSONs set side by side, a table per model of RULER's average
at each method and length, each method against the plain model on the same samples, and the model's perplexity there.

  python -m analysis.ruler_page --inputs=results/ruler/smollm2_plain.json,results/ruler/smollm2_yarn2.json \
      --ppl=results/pretrained/smollm2_ppl_all.json --out_dir=out/ruler --name=ruler

--inputs are the grid's JSONs; a file not there yet is a method not begun, and the page lists it. A cell (task,
length) enters once its run is done with it (a cell still running is left out), the first file holding it wins.
RULER's average is over the tasks a method has finished at that length (their number beside it).

Against the plain model (the same model's vanilla rows): each sample is seeded by its task and index, so sample i is
the same haystack, needle and depth under every method (lexgpt/ruler_tasks.py), and the comparison is paired. Per
sample, the method's score minus the plain model's, over the tasks both have finished at that length; the mean
difference x 100, and an exact two-sided sign test on the non-zero differences (for exact-match scores that is
McNemar's exact test; scipy.stats.binomtest). Perplexity: extrapolate.py's JSONs, matched by run name (ckpt, variant)
and length; the first file holding a row wins, and the page names a later file whose settings differ.
Last, what the grid has cost so far, per model and length (every sample run, cells still running too): the samples'
own CPU seconds, summed and averaged, from which the rest of the grid can be sized.
Writes <out_dir>/<name>.json, .md and .png.
"""
import os
import re

import numpy as np
from scipy import stats

from lexgpt.config import ConfigError, run
from lexgpt.outputs import (expand, fmt_ppl, length_axis, lookup, md_table, plt, protocol_notes, protocol_words,
                            read_json, rows_of, write_outputs)

DEFAULTS = dict(
    inputs=[],                  # analysis.ruler JSONs, the grid's (a file not there yet: a method not begun)
    ppl=[],                     # extrapolate.py JSONs of the same models (perplexity at the same lengths)
    out_dir='out/ruler',
    name='ruler',               # output file stem
)
NEED = ('ckpt', 'variant', 'task', 'mult', 'L_ex', 'score', 'samples')


def read_files(paths):
    """({file: its JSON} of the files there, the files not there yet)."""
    there = {p: read_json(p, 'inputs') for p in paths if os.path.exists(p)}
    return there, [p for p in paths if p not in there]


def model_of(ckpt):
    """The model a run is of: smollm2+yarn2 is SmolLM2 under YaRN, gemma3@global Gemma 3 changed on its global
    layers."""
    return re.split('[+@]', ckpt)[0]


def read_cells(files):
    """({(ckpt, variant, task, mult): row} of the finished cells, {file: the BOS id its prompts began with (its
    settings.bos; None: none)})."""
    cells, bos = {}, {}
    for path, data in files.items():
        for r in rows_of(path, data, 'inputs', NEED):
            if not r.get('partial') and r['score'] is not None:
                cells.setdefault((r['ckpt'], r['variant'], r['task'], r['mult']), dict(r, source=path))
        bos[path] = (data.get('settings') or {}).get('bos')
    return cells, bos


def costs(files):
    """What the grid has cost so far, per model and length, cells still running included: the samples, their CPU-hours
    and mean CPU-seconds (each sample's own cpu_seconds, as analysis.ruler measured it), every method together."""
    spent = {}
    for path, data in files.items():
        for r in rows_of(path, data, 'inputs', NEED):
            x = spent.setdefault((model_of(r['ckpt']), r['mult']), dict(L_ex=r['L_ex'], cpu=[]))
            x['cpu'] += [s['cpu_seconds'] for s in r['samples'] if s.get('cpu_seconds') is not None]
    return [dict(model=m, mult=mult, L_ex=x['L_ex'], samples=len(x['cpu']), cpu_hours=sum(x['cpu']) / 3600,
                 cpu_seconds_per_sample=float(np.mean(x['cpu'])))
            for (m, mult), x in sorted(spent.items()) if x['cpu']]


def cost_table(spent):
    """The costs above as a markdown table, and their sum."""
    lines = [[c['model'], f"{c['mult']:g} ({c['L_ex']:,})", c['samples'], f"{c['cpu_hours']:.1f}",
              f"{c['cpu_seconds_per_sample']:.1f}"] for c in spent]
    heads = ['model', 'L_ex / L_tr (tokens)', 'samples', 'CPU-hours', 'CPU-s a sample']
    return (f"### What it has cost so far\n\n{md_table(heads, lines)}\nIn all {sum(c['samples'] for c in spent):,} "
            f"samples, {sum(c['cpu_hours'] for c in spent):.1f} CPU-hours.\n\n")


def paired(mine, plain):
    """The method's cells against the plain model's at one length, sample by sample over the tasks both hold: the
    mean difference x 100, wins, losses, pairs and the sign test's two-sided p (None without a pair)."""
    diffs = []
    for task, row in mine.items():
        if task in plain:
            theirs = {s['index']: s['score'] for s in plain[task]['samples']}
            diffs += [s['score'] - theirs[s['index']] for s in row['samples'] if s['index'] in theirs]
    if not diffs:
        return None
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    p = stats.binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    return dict(diff=100 * float(np.mean(diffs)), wins=wins, losses=losses, pairs=len(diffs), p=float(p))


def page_rows(cells, ppl):
    """A row per (model, method, length) with a finished cell: its tasks' scores, RULER's average, the paired
    comparison with the plain model (None for the plain model itself) and the perplexity there."""
    out = []
    for ckpt, variant, mult in dict.fromkeys((k[0], k[1], k[3]) for k in cells):
        mine = {k[2]: r for k, r in cells.items() if (k[0], k[1], k[3]) == (ckpt, variant, mult)}
        first, model = next(iter(mine.values())), model_of(ckpt)
        plain = {k[2]: r for k, r in cells.items() if (k[0], k[1], k[3]) == (model, 'vanilla', mult)}
        is_plain = (ckpt, variant) == (model, 'vanilla')
        p, scores = ppl.get((ckpt, variant, mult)), {t: r['score'] for t, r in mine.items()}
        row = dict(model=model, ckpt=ckpt, variant=variant, mult=mult, L_ex=first['L_ex'], L_tr=first.get('L_tr'))
        row.update(scores=scores, n={t: r['n'] for t, r in mine.items()}, average=float(np.mean(list(scores.values()))))
        row.update(vs_plain=None if is_plain else paired(mine, plain), ppl=p['ppl'] if p else None,
                   ppl_source=p['source'] if p else None)
        out.append(row)
    for r in out:  # an average is comparable across methods once it holds every task the model is run on
        r['complete'] = set(r['scores']) == {t for x in out if x['model'] == r['model'] for t in x['scores']}
    return out


def method_name(r):
    return r['ckpt'] + ('' if r['variant'] == 'vanilla' else f" [{r['variant']}]")


def tables(rows):
    """A table per model: a line per method and length, the tasks' scores, the average, against plain, perplexity."""
    md = ''
    for model in dict.fromkeys(r['model'] for r in rows):
        mine = [r for r in rows if r['model'] == model]
        tasks = list(dict.fromkeys(t for r in mine for t in r['scores']))
        lines = []
        for r in sorted(mine, key=lambda r: (method_name(r) != model, method_name(r), r['mult'])):
            v = r['vs_plain']
            vs = '' if v is None else f"{v['diff']:+.1f} (+{v['wins']}/-{v['losses']} of {v['pairs']}, p {v['p']:.2g})"
            lines.append([method_name(r), f"{r['mult']:g} ({r['L_ex']:,})"]
                         + [f"{r['scores'][t]:.1f} ({r['n'][t]})" if t in r['scores'] else '' for t in tasks]
                         + [f"{r['average']:.1f} ({len(r['scores'])})", vs, fmt_ppl(r['ppl'])])
        md += (f"### {model}\n\n" + md_table(['method', 'L_ex / L_tr (tokens)'] + tasks + [
            'average (tasks)', 'against plain: x 100 (samples better/worse of pairs, sign test p)', 'perplexity'],
            lines) + '\n')
    return md


def figure(rows):
    """Per model: RULER's average over all its tasks against length, a line per method; perplexity beside it."""
    models = list(dict.fromkeys(r['model'] for r in rows))
    fig, axes = plt().subplots(len(models), 2, figsize=(9, 3.4 * len(models)), squeeze=False, layout='constrained')
    for (score_ax, ppl_ax), model in zip(axes, models):
        mine = [r for r in rows if r['model'] == model]
        for i, name in enumerate(dict.fromkeys(method_name(r) for r in mine)):
            line = sorted((r for r in mine if method_name(r) == name), key=lambda r: r['mult'])
            score_ax.plot([r['mult'] for r in line if r['complete']], [r['average'] for r in line if r['complete']],
                          marker='o', ms=3, color=f'C{i % 10}', label=name)
            ppl_ax.plot([r['mult'] for r in line if r['ppl']], [r['ppl'] for r in line if r['ppl']], marker='o',
                        ms=3, color=f'C{i % 10}')
        tasks = len({t for r in mine for t in r['scores']})
        score_ax.set(ylim=(-3, 103), ylabel=f'RULER average ({tasks} tasks)', title=model)
        measured = [r['ppl'] for r in mine if r['ppl']]
        ppl_ax.set(ylabel='perplexity', title=f'{model}: perplexity',
                   yscale='log' if measured and max(measured) > 10 * min(measured) else 'linear')
        mults = sorted({r['mult'] for r in mine})
        for ax in (score_ax, ppl_ax):
            length_axis(ax, mults)
            ax.axvline(1.0, color='0.5', ls=':', lw=0.8)
        score_ax.legend(fontsize=6)
    return fig


def main(cfg):
    if not cfg['inputs']:
        raise ConfigError('inputs is empty; give analysis.ruler JSONs, e.g. --inputs=results/ruler/smollm2_plain.json')
    files, missing = read_files(cfg['inputs'])
    cells, bos = read_cells(files)
    if not cells:
        raise ConfigError(f"inputs: no finished cell in {', '.join(cfg['inputs'])}")
    ppl_files = expand(cfg['ppl'], 'ppl')
    ppl = lookup(ppl_files, 'ppl', ('ckpt', 'variant', 'mult'), 'ppl', lambda r: (r['ckpt'], r['variant'], r['mult']))
    rows, spent = page_rows(cells, ppl), costs(files)
    used = {method_name(r): [] for r in rows}
    for r in rows:
        if r['ppl_source'] and r['ppl_source'] not in used[method_name(r)]:
            used[method_name(r)].append(r['ppl_source'])
    notes = ([f"not begun: {', '.join(missing)}"] if missing else []) + protocol_notes(list(used.items()), ppl_files)
    scored = f"; perplexity: {ppl_files[0][0]} ({protocol_words(ppl_files[0][1])})" if ppl_files else ''
    md = ("RULER's synthetic tasks (Hsieh et al. 2024) per model, method and length, `python -m analysis.ruler_page` "
          "(its docstring: cells finished so far, the paired test). A task's cell: RULER's metric x 100 (n); "
          f"against plain: the mean per-sample difference from the plain model on the same samples{scored}.\n\n"
          + tables(rows) + ''.join(f'- {x}\n' for x in notes) + '\n' + (cost_table(spent) if spent else ''))
    print(md)
    sources = dict(inputs=cfg['inputs'], missing=missing, ppl=[p for p, _ in ppl_files])
    write_outputs(cfg['out_dir'], cfg['name'], dict(sources=sources, settings=dict(bos=bos), notes=notes,
                                                    results=rows, costs=spent), md, figure(rows))
    return rows


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
