"""
The recall page (#72, part 3): the repeated-span probe's JSONs (analysis/recall.py) beside each model's perplexity
against length (extrapolate.py's JSONs) and its empirical receptive field (analysis/receptive_field.py's), one row per
model and attention variant, and the thesis' chapter 4 claim put to the test: do the encodings with a short receptive
field extrapolate in perplexity without recall beyond L_tr, and does any do both?

  python -m analysis.recall_page --inputs=results/recall/tiny_*.json --erf=results/erf/erf.json \
      --ppl=results/ppl/ppl_last_token.json --out_dir=out/recall --name=recall

--inputs, --erf and --ppl take files or globs, expanded here (tools/results.py runs a step without a shell, so the
glob stays literal in the command the JSON records); a path that is not there, or a glob that matches nothing, is a
one-line error. What an input lacks (an encoding not probed yet, no ERF row for a checkpoint) is an empty cell.

Seeds (runs <group>-s<seed> of one probe JSON) are averaged span by span: a cell's b_i is the mean over seeds of span
i's loss(control) - loss(repeat) (every seed sees the same spans and fillers), then the probe's own test over the n
spans (analysis.recall.summary: a t-interval, and the one-sided t-test against the JSON's min_benefit). It asks
whether these models recall, the seeds held fixed; each seed's own horizon is shown beside it where they differ. The
last table asks whether another seed would, the seed as the unit (over_seeds: the same test over each seed's mean). A
seed enters a (kind, L_ex) row only if it holds every d of it (a seed still being scored waits). Perplexity and ERF
are matched by run name (ckpt and variant) and training iteration to the same checkpoints and averaged over the
seeds found; a ratio is each seed's ppl(ppl_at L_tr) / ppl(L_tr), averaged. Writes <out_dir>/<name>.json, .md and
.png.
"""
import collections
import math
import os
import shlex

import numpy as np

from analysis.recall import summary
from analysis.recall_report import row_verdict
from lexgpt.config import ConfigError, run
from lexgpt.loading import read_checkpoint, SEED
from lexgpt.outputs import expand, lookup, matching, md_table, plt, protocol_notes, rows_of, write_outputs

DEFAULTS = dict(
    inputs=[],                  # analysis.recall JSONs or globs ('results/recall/tiny_*.json')
    erf=[],                     # analysis.receptive_field JSONs (the same checkpoints' ERF; [] : none)
    ppl=[],                     # extrapolate.py JSONs (perplexity against length; the first file holding a row wins)
    ppl_at=16.0,                # the ratio ppl(ppl_at L_tr) / ppl(L_tr): 16 for the tiny models, 2 for pretrained
    out_dir='out/recall',
    name='recall',              # output file stem
)

# "Extrapolates in perplexity": ppl(ppl_at L_tr) at most 10% above ppl(L_tr). On the tiny models' last-token table
# (results/ppl/ppl_last_token.md) the flat curves end at 0.96-1.04 at 16x (Press et al. 2022, "Train Short, Test
# Long" (ALiBi); Chi et al. 2022, "KERPLE"; Chi et al. 2023, "Dissecting Transformer Length Extrapolation via the Lens
# of Receptive Field Analysis" (Sandwich)), the first rising ones (T5's buckets, CoPE) at 1.23-1.30: 1.1 lies between.
PPL_FLAT = 1.1


def chapter4(ratio, horizon, L_tr):
    """The verdict of one row: (extrapolates in perplexity, recalls beyond L_tr, in words); None where unknown.
    Recall beyond L_tr: the probe's horizon (the largest d whose benefit is significantly above the floor) lies past
    L_tr. Chi 2024 (thesis ch. 4) says ALiBi and Sandwich extrapolate because their receptive field is short: then
    'flat, no recall past L_tr'."""
    flat = None if ratio is None else bool(ratio <= PPL_FLAT)
    recalls = None if horizon is None else bool(horizon > L_tr)
    if flat is None or recalls is None:
        return flat, recalls, ''
    return flat, recalls, {(True, True): 'both', (True, False): 'flat, no recall past L_tr',
                           (False, True): 'recall past L_tr, ppl rises', (False, False): 'neither'}[flat, recalls]


# ---------------------------------------------------------------- reading

def group_of(ckpt):
    m = SEED.fullmatch(ckpt.split('+')[0])
    return (m.group(1) if m else ckpt.split('+')[0]) + ckpt[len(ckpt.split('+')[0]):]


def probe_entries(files):
    """[(group, variant, iters) entry]: its seed runs, L_tr, floor, file, kinds; rows a second file repeats (same
    ckpt, variant and iters) are left out with a note."""
    entries, seen, notes = {}, {}, []
    for path, data in files:
        rows = rows_of(path, data, 'inputs', ('ckpt', 'variant', 'L_tr', 'cells'))
        settings = data.get('settings') or {}
        for r in rows:
            k = (r['ckpt'], r['variant'], r.get('iters'))
            if seen.setdefault(k, path) != path:
                notes.append(f"{path}: {r['ckpt']} [{r['variant']}] left out, {seen[k]} has it")
                continue
            key = (r.get('group') or group_of(r['ckpt']), r['variant'], r.get('iters'))
            e = entries.setdefault(key, dict(group=key[0], variant=key[1], iters=key[2], L_tr=r['L_tr'], file=path,
                                             floor=settings.get('min_benefit', 0.0), command=data.get('command', ''),
                                             kinds=settings.get('kinds') or ['text', 'random'], runs=[]))
            if e['file'] != path:
                notes.append(f"{path}: {r['ckpt']} [{r['variant']}] left out, its group is in {e['file']}")
                continue
            e['runs'].append(r)
    return list(entries.values()), notes


# ---------------------------------------------------------------- recall: seeds averaged span by span

def seed_mean_row(runs, kind, mult, floor):
    """(cells of one (kind, L_ex) row averaged over the seeds holding every d of it, those seeds' runs)."""
    done = [{c['d']: c for c in o['cells'] if c['kind'] == kind and c['mult'] == mult
             and c.get('benefit') is not None} for o in runs]
    full = max((set(x) for x in done), key=len, default=set())
    use = [(o, x) for o, x in zip(runs, done) if full and set(x) >= full]
    cells = []
    for d in sorted(full):
        got = [x[d] for _, x in use]
        rep, ctl = (np.mean([c[f] for c in got], 0) for f in ('repeat_loss', 'control_loss'))
        s = summary(np.stack([rep, ctl], 1).tolist(), floor)
        cells.append(dict(kind=kind, mult=mult, L_ex=got[0]['L_ex'], d=d, seeds=len(got),
                          **{f: s[f] for f in ('benefit', 'sd', 'ci95', 'p', 'significant', 'n')}))
    return cells, [o for o, _ in use]


def recall_cells(e):
    """{(kind, mult): the row's verdict: horizon, share beyond L_tr, n, seeds, each seed's horizon, the test at the
    largest d > L_tr (far), the seed-mean cells}."""
    out = {}
    mults = sorted({c['mult'] for o in e['runs'] for c in o['cells']})
    for kind in e['kinds']:
        for mult in mults:
            cells, used = seed_mean_row(e['runs'], kind, mult, e['floor'])
            if not cells:
                continue
            v = row_verdict(cells, e['L_tr'])
            own = [row_verdict([c for c in o['cells'] if c['kind'] == kind and c['mult'] == mult], e['L_tr'])
                   for o in used]
            far = [c for c in cells if c['d'] > e['L_tr']]
            out[kind, mult] = dict(horizon=v['horizon'], share=v['share_beyond_L_tr'], n=cells[0]['n'],
                                   seeds=len(used), runs=[o['ckpt'] for o in used],
                                   seed_horizons=[x['horizon'] for x in own], far=far[-1] if far else None,
                                   at_horizon=next((c for c in cells if c['d'] == v['horizon']), None), cells=cells,
                                   over_seeds=over_seeds(used, cells, e['floor'], e['L_tr']))
    return out


def over_seeds(runs, cells, floor, L_tr):
    """The row tested with the seed as the unit (None under two seeds): at each d, each seed's benefit (its mean over
    the spans) and the probe's one-sided t-test over the seeds; the horizon that gives and its test at the largest
    d > L_tr. The span-level test holds the trained weights fixed; this one asks whether another seed would recall."""
    if len(runs) < 2:
        return None
    where = lambda c: (c['kind'], c['mult'], c['d'])
    by_run = [{where(x): x for x in o['cells']} for o in runs]
    tested = []
    for c in cells:
        s = summary([[x[where(c)]['loss_repeat'], x[where(c)]['loss_control']] for x in by_run], floor)
        tested.append(dict(d=c['d'], **{f: s[f] for f in ('benefit', 'ci95', 'p', 'significant', 'n')}))
    far = [c for c in tested if c['d'] > L_tr]
    return dict(horizon=max([c['d'] for c in tested if c['significant']], default=0), far=far[-1] if far else None,
                cells=tested)


# ---------------------------------------------------------------- perplexity, ERF, reach

# A row without its training iteration comes from a JSON older than that field, when every tiny run of the tables
# had trained for the sweeps' 3,200 iterations (configs/sweep_lm_tiny.py); so a run trained longer (the longer-training
# rows, configs/sweep_lm_long.py) takes only perplexity and ERF rows that record its own iteration.
UNRECORDED_ITERS = 3200


def same_iters(a, b):
    norm = lambda i: UNRECORDED_ITERS if i is None else i
    return norm(a) == norm(b)


def ppl_curve(ckpts, variant, ppl, at, iters=None):
    """Mean perplexity per L_ex / L_tr over the seeds found at this training iteration, the ratio at `at` (mean of
    each seed's), its n, and the files it came from."""
    mine = {k[:3]: r for k, r in ppl.items() if k[0] in ckpts and k[1] == variant and same_iters(k[3], iters)}
    mults = sorted({k[2] for k in mine})
    curve = {m: float(np.mean([r['ppl'] for k, r in mine.items() if k[2] == m])) for m in mults}
    ratios = {c: mine[c, variant, at]['ppl'] / mine[c, variant, 1.0]['ppl'] for c in ckpts
              if (c, variant, at) in mine and (c, variant, 1.0) in mine}
    scored = [mine[c, variant, at].get('n_scored') for c in ckpts if (c, variant, at) in mine]
    return dict(curve=curve, ratio=float(np.mean(list(ratios.values()))) if ratios else None, seeds=len(ratios),
                seed_ratios=ratios,
                n=scored[0] if scored else None, sources=sorted({r['source'] for r in mine.values()}))


def erf_of(ckpts, variant, erf, iters=None):
    """The ERF rows of these runs at this training iteration: ERF / L_tr and the gradient's share on the last L_tr,
    means over the seeds."""
    rows = [r for k, r in erf.items() if k[0] in ckpts and k[1] == variant and same_iters(k[2], iters)]
    if not rows:
        return None
    mean = lambda f: float(np.mean([r[f] for r in rows]))
    return dict(erf_over_L_tr=mean('erf_over_L_tr'), share_last_L_tr=mean('share_last_L_tr'), seeds=len(rows),
                mult=rows[0]['L_ex'] / rows[0]['L_tr'], n=(rows[0].get('segments') or {}).get('n_drawn'))


def variant_window(variant, L_tr):
    """The keys per layer a variant leaves a query (windowed@W, LM-Infinite's L_tr beside its sinks, a stream of W):
    None where it leaves every key."""
    if variant.startswith('windowed@'):
        w = variant.split('@', 1)[1]
        return L_tr if w == 'L_tr' else int(w)
    if variant.startswith('LM-Inf'):
        return L_tr
    if variant.startswith('stream('):
        return int(variant.split('W=')[1].rstrip(')'))
    return None


def model_args(command, ckpt):
    """The checkpoint's model settings, found through the probe command's --ckpt; None where it is not here (a
    pretrained name, a run on another machine)."""
    words = [w for w in shlex.split(command) if w.startswith('--ckpt=')]
    name = ckpt.split('+')[0]
    for pattern in (words[-1][len('--ckpt='):].split(',') if words else []):
        for path in matching(pattern)[0]:
            folder = os.path.dirname(path) if path.endswith('.pt') else path
            if os.path.basename(os.path.normpath(folder)) == name:
                try:
                    return read_checkpoint(path, mmap=True)['model_args']
                except (FileNotFoundError, ConfigError):
                    return None
    return None


def reach(e):
    """How far back information can move: the sum over layers of each layer's window, its own or the variant's (the
    smaller), math.inf where a layer has neither; None where neither the probe's rows (`windows`: each layer's own,
    0 for none) nor the checkpoint here say. Past reach + s the benefit is exactly 0 (tests/test_recall.py)."""
    windows = next((o['windows'] for o in e['runs'] if 'windows' in o), None)
    if windows is None:
        args = model_args(e['command'], e['runs'][0]['ckpt']) if e['runs'] else None
        if args is None:
            return None
        windows = [args.get('window') or 0] * args['n_layer']
    cut = variant_window(e['variant'], e['L_tr'])
    return sum(min(w for w in (own, cut) if w) if own or cut else math.inf for own in windows)


# ---------------------------------------------------------------- the page

def page_rows(entries, ppl, erf, at):
    """One row per probed (group, variant, iters), then one per (group, variant) the ppl files hold that no probe
    JSON does yet (its recall cells empty)."""
    out = []
    for e in entries:
        ckpts = [o['ckpt'] for o in e['runs']]
        rec = recall_cells(e)
        p = ppl_curve(ckpts, e['variant'], ppl, at, e['iters'])
        longest = {kind: max((m for (k, m), v in rec.items() if k == kind and v['far']), default=None)
                   for kind in e['kinds']}
        verdicts = {}
        for kind, m in longest.items():
            v = rec.get((kind, m))
            flat, recalls, words = chapter4(p['ratio'], v['horizon'] if v else None, e['L_tr'])
            seeds = v['over_seeds'] if v else None
            verdicts[kind] = dict(mult=m, flat=flat, recalls=recalls, verdict=words, over_seeds=seeds and dict(
                zip(('flat', 'recalls', 'verdict'), chapter4(p['ratio'], seeds['horizon'], e['L_tr']))))
        out.append(dict(group=e['group'], variant=e['variant'], iters=e['iters'], L_tr=e['L_tr'], runs=ckpts,
                        file=e['file'], kinds=e['kinds'], recall=rec, ppl=p,
                        erf=erf_of(ckpts, e['variant'], erf, e['iters']),
                        reach=reach(e), verdicts=verdicts))
    probed = {(r['group'], r['variant']) for r in out}
    for (group, variant), ckpts in unprobed(ppl, probed).items():
        L_tr = next(r['L_tr'] for k, r in ppl.items() if k[0] == ckpts[0])
        out.append(dict(group=group, variant=variant, iters=None, L_tr=L_tr, runs=ckpts, file=None, kinds=[],
                        recall={}, ppl=ppl_curve(ckpts, variant, ppl, at), erf=erf_of(ckpts, variant, erf),
                        reach=None, verdicts={}))
    return out


def unprobed(ppl, probed):
    out = {}
    for ckpt, variant, _, iters in ppl:
        if (group_of(ckpt), variant) not in probed and same_iters(iters, None):
            out.setdefault((group_of(ckpt), variant), [])
            if ckpt not in out[group_of(ckpt), variant]:
                out[group_of(ckpt), variant].append(ckpt)
    return out


def n_of(n, seeds):
    return f' ({n}×{seeds})' if n is not None else ''


def recall_text(v):
    if v is None:
        return ''
    hs = sorted(set(v['seed_horizons']))
    spread = f' [{hs[0]}–{hs[-1]}]' if len(hs) > 1 else ''
    share = '—' if v['share'] is None else f"{v['share']:.2f}"
    return f"{v['horizon']}{spread} / {share}{n_of(v['n'], v['seeds'])}"


def row_names(rows):
    """Each row's model: its group, and its iterations where the group was probed at several training lengths."""
    count = collections.Counter((r['group'], r['variant']) for r in rows)
    return [r['group'] + (f" ({r['iters']} it)" if count[r['group'], r['variant']] > 1 else '') for r in rows]


def summary_table(rows, at):
    """The table: per row, each (kind, L_ex)'s horizon / share beyond L_tr, the ERF, the reach, the ppl ratio."""
    cols = sorted({key for r in rows for key in r['recall']}, key=lambda k: (k[0] != 'text', k[0], k[1]))
    lines = []
    for r, name in zip(rows, row_names(rows)):
        e, p = r['erf'], r['ppl']
        erf = (f"{e['erf_over_L_tr']:.2f} @{e['mult']:g}x{n_of(e['n'], e['seeds'])}", f"{e['share_last_L_tr']:.3f}"
               ) if e else ('', '')
        reach = '' if r['reach'] is None else 'inf' if r['reach'] == math.inf else r['reach']
        ratio = '' if p['ratio'] is None else f"{p['ratio']:.3f}{n_of(p['n'], p['seeds'])}"
        lines.append([name, r['variant']]
                     + [recall_text(r['recall'].get(c)) for c in cols] + [*erf, reach, ratio])
    head = ['model', 'variant'] + [f'{k} {m:g}x' for k, m in cols] + [
        'ERF / L_tr (segments×seeds)', 'grad. on last L_tr', 'reach (tokens)', f'ppl {at:g}x / 1x (tokens×seeds)']
    return md_table(head, lines)


def verdict_table(rows, at):
    """Chapter 4's question, a line per row and kind: the ratio, the test at the largest d > L_tr, the verdict."""
    lines = []
    for r, name in zip(rows, row_names(rows)):
        for kind, v in r['verdicts'].items():
            rec = r['recall'].get((kind, v['mult']))
            far = rec['far'] if rec else None
            hc = rec['at_horizon'] if rec else None
            test = ([f"{v['mult']:g}x", rec['horizon'], f"{hc['p']:.2g}" if hc else '', far['d'],
                     f"{far['benefit']:.4f}", f"{far['p']:.2g}", f"{far['n']}×{far['seeds']}"] if far else [''] * 7)
            yes = lambda b: '' if b is None else 'yes' if b else 'no'
            ratio = '' if r['ppl']['ratio'] is None else f"{r['ppl']['ratio']:.3f}"
            lines.append([name, r['variant'], kind, ratio, yes(v['flat'])] + test
                         + [yes(v['recalls']), v['verdict']])
    return md_table(['model', 'variant', 'kind', f'ppl {at:g}x / 1x', f'flat (<= {PPL_FLAT:g})', 'L_ex', 'horizon',
                     'p there', 'largest d > L_tr', 'benefit there', 'p', 'n (spans×seeds)', 'recall past L_tr',
                     'verdict'],
                    lines)


def seeds_table(rows, at):
    """Chapter 4's question again with the seed as the unit, a line per row and kind holding two seeds or more: each
    seed's ratio (seed 0 first), the horizon and the test at the largest d > L_tr over the seeds, the verdict and
    whether it is the spans' one."""
    lines = []
    for r, name in zip(rows, row_names(rows)):
        for kind, v in r['verdicts'].items():
            rec = r['recall'].get((kind, v['mult']))
            over = rec and rec['over_seeds']
            if not over:
                continue
            ratios = [r['ppl']['seed_ratios'][c] for c in sorted(rec['runs']) if c in r['ppl']['seed_ratios']]
            far = over['far']
            test = [far['d'], f"{far['benefit']:.4f}", f"{far['p']:.2g}"] if far else [''] * 3
            lines.append([name, r['variant'], kind, rec['seeds'], ', '.join(f'{x:.3f}' for x in ratios),
                          f"{sum(x <= PPL_FLAT for x in ratios)} of {len(ratios)}", f"{v['mult']:g}x",
                          over['horizon'], *test, v['over_seeds']['verdict'],
                          'yes' if v['over_seeds']['verdict'] == v['verdict'] else 'no'])
    return md_table(['model', 'variant', 'kind', 'seeds', f'each seed\'s ppl {at:g}x / 1x', 'flat seeds', 'L_ex',
                     'horizon (seeds)', 'largest d > L_tr', 'benefit there (seed mean)', 'p (over seeds)',
                     'verdict (seeds)', "same as the spans'"], lines)


def figure(rows):
    """Per probed row: benefit against d (a colour per L_ex, text solid, random dashed; band: the 95% CI of the
    seed-mean), L_tr dotted, the reach dashed; beside it, its perplexity against L_ex / L_tr (ppl_panel)."""
    rows = [r for r in rows if r['recall']]
    per = max(1, min(3, len(rows)))
    n_rows = max(1, math.ceil(len(rows) / per))
    fig, axes = plt().subplots(n_rows, 2 * per, figsize=(4.6 * per, 2.6 * n_rows), squeeze=False,
                               gridspec_kw=dict(width_ratios=[3, 1.2] * per), layout='constrained')
    for ax in axes.flat:
        ax.axis('off')
    for i, r in enumerate(rows):
        ax, side = axes[i // per, 2 * (i % per)], axes[i // per, 2 * (i % per) + 1]
        ax.axis('on')
        mults = sorted({m for _, m in r['recall']})
        for (kind, m), v in r['recall'].items():
            ds = [c['d'] for c in v['cells']]
            color, style = f'C{mults.index(m) % 10}', '-' if kind == 'text' else '--'
            ax.plot(ds, [c['benefit'] for c in v['cells']], style, marker='o', ms=2.5, color=color,
                    label=f'{kind} {m:g}x')
            ax.fill_between(ds, *np.array([c['ci95'] for c in v['cells']]).T, color=color, alpha=0.15)
        ax.axvline(r['L_tr'], color='k', ls=':', lw=1)
        if r['reach'] not in (None, math.inf):
            ax.axvline(r['reach'], color='gray', ls='--', lw=1)
        ax.axhline(0, color='gray', lw=0.5)
        ax.set_xscale('log', base=2)
        seeds = max(v['seeds'] for v in r['recall'].values())
        ax.set_title(f"{r['group']} [{r['variant']}], {seeds} seed(s)", fontsize=7)
        ax.set_xlabel('d (tokens; dotted: L_tr)', fontsize=6)
        ax.set_ylabel('benefit (nats/token)', fontsize=6)
        ax.tick_params(labelsize=5)
        ax.legend(fontsize=5)
        ppl_panel(side, r['ppl'])
    return fig


def ppl_panel(ax, p):
    """The perplexity against L_ex / L_tr as a ratio to its 1x, on a log axis spanning at least 0.9 to the flat rule's
    line: a flat curve then looks flat rather than a zoom into its fourth digit."""
    ax.axis('on')
    base = p['curve'].get(1.0)
    if base:
        ratios = [v / base for v in p['curve'].values()]
        ax.plot(list(p['curve']), ratios, 'k.-', ms=3)
        ax.axhline(PPL_FLAT, color='gray', ls='--', lw=0.8)
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        low, high = min(0.9, min(ratios) / 1.05), max(PPL_FLAT * 1.1, max(ratios) * 1.05)
        ax.set_ylim(low, high)
        ax.yaxis.set_major_formatter(lambda y, _: f'{y:g}')
        if high / low < 10:  # within a decade the minor ticks carry the labels
            ax.yaxis.set_minor_formatter(lambda y, _: f'{y:g}')
        ax.axvline(1, color='k', ls=':', lw=1)
    else:
        ax.text(0.5, 0.5, 'no ppl row at 1x', ha='center', va='center', fontsize=6, transform=ax.transAxes)
    ax.set_xlabel('L_ex / L_tr', fontsize=6)
    ax.set_title(f'ppl / ppl(1x) (dashed: {PPL_FLAT:g})', fontsize=7)
    ax.tick_params(labelsize=5, which='both')


def markdown(cfg, rows, notes, partial):
    return (f"Recall at distance (analysis/recall.py) beside perplexity and the receptive field, "
            f"`python -m analysis.recall_page` (its docstring: seeds averaged span by span, then the probe's own "
            f"test).\n\nA recall cell: the horizon (the largest d whose seed-mean benefit is significantly above the "
            f"floor; [the seeds' own, where they differ]) / the share of the benefit beyond L_tr (mean over d > L_tr "
            f"over the benefit at the smallest d) (spans×seeds). ERF: thesis 4.5.1, at the L_ex it was measured. "
            f"Reach: n_layer × the window (the model's or the variant's); inf: none. Empty: not measured yet.\n\n"
            + summary_table(rows, cfg['ppl_at'])
            + f"\n### Chapter 4: extrapolation in perplexity without recall?\n\nFlat: ppl({cfg['ppl_at']:g} L_tr) / "
            f"ppl(L_tr) <= {PPL_FLAT:g}. Recall past L_tr: the horizon at the longest L_ex lies beyond L_tr; p: the "
            f"one-sided t-test of benefit > min_benefit over the n spans (seed-mean), at the horizon (the d that "
            f"decides) and at the largest d > L_tr.\n\n"
            + verdict_table(rows, cfg['ppl_at'])
            + "\n### The same question with the seed as the unit\n\nWhere two seeds or more were probed: at each d, "
            "each seed's benefit (its mean over the spans), then the same one-sided t-test over the seeds (n = "
            "seeds). The spans' test holds the trained weights fixed; this one asks whether another training seed "
            "would recall too, so with few seeds it decides little: its 'no recall' means not shown at this n.\n\n"
            + seeds_table(rows, cfg['ppl_at'])
            + ''.join(f'\n- {x}' for x in (partial + notes)) + '\n')


def jsonable(rows):
    """The rows with the (kind, mult) keys as 'kind@mult' strings."""
    return [dict(r, recall={f'{k}@{m:g}': v for (k, m), v in r['recall'].items()},
                 reach='inf' if r['reach'] == math.inf else r['reach']) for r in rows]


def main(cfg):
    """The table, the chapter 4 verdicts and the figure; returns the page's rows."""
    if not cfg['inputs']:
        raise ConfigError("inputs is empty; give analysis.recall JSONs, e.g. --inputs=results/recall/tiny_*.json")
    if cfg['ppl_at'] <= 1:
        raise ConfigError(f"ppl_at={cfg['ppl_at']:g}: the ratio's length must be above 1 (L_tr)")
    files = expand(cfg['inputs'], 'inputs')
    entries, notes = probe_entries(files)
    ppl_files = expand(cfg['ppl'], 'ppl')
    ppl = lookup(ppl_files, 'ppl', ('ckpt', 'variant', 'mult', 'L_tr'), 'ppl',
                 lambda r: (r['ckpt'], r['variant'], r['mult'], r.get('iters')))
    erf_files = expand(cfg['erf'], 'erf')
    erf = lookup(erf_files, 'erf', ('ckpt', 'variant', 'L_tr', 'L_ex'), 'erf_over_L_tr',
                 lambda r: (r['ckpt'], r['variant'], r.get('iters')))
    rows = page_rows(entries, ppl, erf, cfg['ppl_at'])
    partial = [f'{p}: partial (a run under way; its finished cells are shown)' for p, d in files if d.get('partial')]
    notes = notes + protocol_notes([(f"{r['group']} ({r['variant']})", r['ppl']['sources']) for r in rows], ppl_files)
    md = markdown(cfg, rows, notes, partial)
    print(md)
    write_outputs(cfg['out_dir'], cfg['name'], dict(
        sources=dict(inputs=[p for p, _ in files], erf=[p for p, _ in erf_files],
                     ppl=[p for p, _ in ppl_files]),
        rule=dict(flat=f'ppl({cfg["ppl_at"]:g} L_tr) / ppl(L_tr) <= {PPL_FLAT:g}', recall='horizon > L_tr at the '
                  'longest L_ex'), notes=notes, results=jsonable(rows), **(dict(partial=True) if partial else {})),
        md, figure(rows))
    return rows


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
