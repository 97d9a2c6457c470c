"""
The thesis' tables next to ours, each under the thesis' own protocol (#39): 3.3 (non-overlapping), 4.3 (last token),
4.5 (windowed), 3.4 (speed), 6.1 (regular languages), 6.3/6.4. Reads the JSONs `bash results.sh thesis` writes to
results/thesis/eval/, the runs' logs and results/regular/table.json; writes README.md, regular.md (chapter 6),
thesis.json (every cell's seeds, mean, spread, p-value, mark; the verdicts) and thesis.png into --out_dir.

Significance as in the thesis' Tables 3.3 and 4.3: a paired two-sided t-test (scipy.stats.ttest_rel) at alpha = 0.05
of every encoding against the chapter's method (KERPLE-log in 3.3, Sandwich in 4.3), pairing seeds at each length:
seed s of the method against seed s of the other (seeds only one has are left out; no test below 2 pairs; below 3
in the mid-scale rows, configs/lease_mid.py's 25M-parameter runs from results/gpu/lease/mid_<protocol>.json, #60). A
dagger marks an encoding the method beats significantly, a star one that beats it. The thesis' numbers, copied from
the thesis with the table, page and rows they stand in, are in lexgpt/thesis_tables.py.
"""
import glob
import math
import os

import numpy as np
from matplotlib.ticker import NullLocator
from scipy import stats

from lexgpt.config import ConfigError, run
from lexgpt.loading import SEED
from lexgpt.outputs import fmt_ppl, md_table, plt, read_json, write_outputs
from lexgpt.thesis_tables import G33, G43, G63, INTRO, LONG, NAMES, T33, T34, T43, T45, T61, T64, W45, cite, said

DEFAULTS = dict(
    eval_dir='results/thesis/eval',   # extrapolate.py's JSONs <protocol>_<encoding or long>.json (results.sh thesis)
    lm_dir='out/lm',                  # the sweep's runs <pe>-s<seed>: their log.json gives Table 3.4's s/step
    iters=3200,                       # training iterations of a finished run (rows at others are left out)
    long_iters=12800,                 # ... of the longer-training runs (configs/sweep_lm_long.py; files *_long.json)
    regular='results/regular/table.json',      # Table 6.1 as regular_lang.py --mode=table wrote it
    mid_dir='results/gpu/lease',      # the mid-scale tables mid_nonoverlap.json, mid_last_token.json (results.sh lease)
    mid_iters=1000,                   # ... and their runs' iterations (configs/lease_mid.py)
    alpha=0.05,                       # significance level of the paired t-tests (the thesis': 0.05)
    out_dir='out/thesis',
)
DAGGER, STAR = '\u2020', '*'
MULTS = [1.0, 2.0, 4.0, 8.0, 16.0]  # L_ex / L_tr; the thesis' 512 ... 8192 at its L_tr = 512
PROTOCOLS = ('nonoverlap', 'last_token', 'windowed')  # the eval JSONs' name prefixes (results.sh thesis)
MID_PAIRS = 3  # the mid-scale rows' least seed pairs for a test (#60: a GPU lease adds a seed at a time)

# ------------------------------------------------------------------ reading: rows -> {seed: ppl} per cell

def seed_of(name):
    m = SEED.fullmatch(name)
    if not m:
        raise ConfigError(f"run name {name!r} has no -s<seed> suffix; thesis.py pairs runs by seed")
    return int(m.group(2))


def read_evals(cfg):
    """-> ({(protocol, variant, training, group): {mult: {seed: ppl}}}, {protocol: L_tr, n_tokens, n_drawn}, notes).
    training: 'base', 'long' for files *_long.json, 'mid' for the mid-scale tables (their facts under mid_<protocol>).
    Rows of a run at other than its full iterations (a checkpoint scored mid-training and kept by --reuse) are left
    out, with a note."""
    if not os.path.isdir(cfg['eval_dir']):
        raise ConfigError(f"eval_dir={cfg['eval_dir']!r} does not exist: run `bash results.sh thesis` first")
    cells, info, notes = {}, {}, []
    for path in sorted(glob.glob(os.path.join(cfg['eval_dir'], '*.json'))):
        protocol = next((p for p in PROTOCOLS if os.path.basename(path).startswith(p + '_')), None)
        if protocol is None:
            raise ConfigError(f"eval_dir: {path} is not named <protocol>_<encoding>.json, protocol one of {PROTOCOLS}")
        training = 'long' if path.endswith('_long.json') else 'base'
        want = cfg['long_iters'] if training == 'long' else cfg['iters']
        add_rows(path, (protocol, training), want, cells, info.setdefault(protocol, {}), notes)
    for protocol in ('nonoverlap', 'last_token'):
        path = os.path.join(cfg['mid_dir'], f'mid_{protocol}.json')
        if os.path.isfile(path):
            add_rows(path, (protocol, 'mid'), cfg['mid_iters'], cells, info.setdefault(f'mid_{protocol}', {}), notes)
    return cells, info, notes


def add_rows(path, kind, want, cells, facts, notes):
    """One extrapolate.py JSON into cells (kind: protocol, training) and the protocol's facts."""
    data = read_json(path, 'eval_dir')
    for s in data.get('setup', {}).values():  # what the protocol scored: the same for every run of one L_tr
        facts.update({k: s[k] for k in ('n_tokens', 'n_drawn', 'docs_used', 'docs_long_enough') if k in s})
    for r in [r for r in data.get('results', []) if r.get('ppl') is not None]:  # None: refused (learned PE)
        if r.get('iters', want) != want:
            notes.append(f"{path}: {r['ckpt']} at {r['mult']:g}x is from iteration {r['iters']}, not {want}")
            continue
        facts['L_tr'] = r['L_tr']
        key = (kind[0], r['variant'], kind[1], r['group'])
        cells.setdefault(key, {}).setdefault(float(r['mult']), {})[seed_of(r['ckpt'])] = float(r['ppl'])


# ------------------------------------------------------------------ statistics

def paired(method, other, alpha, min_pairs=2):
    """Thesis Tables 3.3/4.3: paired two-sided t-test of the chapter's method against another encoding at one
    length, seed s against seed s. -> n_pairs, p (None below min_pairs or when every difference is 0) and the mark:
    DAGGER where the method is significantly better (lower perplexity), STAR where it is significantly worse."""
    seeds = sorted(set(method) & set(other))
    out = dict(n_pairs=len(seeds), p=None, mark='')
    if len(seeds) < min_pairs:
        return out
    a, b = [method[s] for s in seeds], [other[s] for s in seeds]
    p = float(stats.ttest_rel(a, b).pvalue)
    if math.isfinite(p):
        out['p'] = p
        if p < alpha:
            out['mark'] = DAGGER if np.mean(b) > np.mean(a) else STAR
    return out


def table_cells(cells, key_of, groups, method, alpha, min_pairs=2):
    """{group: {mult: mean, sample std, n, seeds, {seed: ppl}, the test against the method (None: none)}}."""
    out = {}
    for g in groups:
        for m, by_seed in sorted(cells.get(key_of(g), {}).items()):
            v = np.array(list(by_seed.values()), dtype=float)
            out.setdefault(g, {})[m] = cell = dict(mean=float(v.mean()), std=float(v.std(ddof=1)) if len(v) > 1
                                                   else 0.0, n=len(v), seeds=sorted(by_seed), ppl=by_seed)
            if method and g != method:
                cell.update(paired(cells.get(key_of(method), {}).get(m, {}), by_seed, alpha, min_pairs))
    return out


# ------------------------------------------------------------------ verdicts

def verdict(ok, t, alpha):
    """A directional claim: ok = our means point the claim's way; t = the paired test behind it (None: no data)."""
    if t is None:
        return 'no data yet'
    word = 'holds' if ok else 'does not hold'
    if t['p'] is None:
        why = 'every seed pair equal' if t['n_pairs'] > 1 else f"{t['n_pairs']} seed pair(s)"
        return f"{word} in the means; untested ({why})"
    return f"{word} ({'significant' if t['p'] < alpha else 'not significant'}, p = {t['p']:.3g})"


def trend(col, m, alpha, base=1.0):
    """One encoding at m L_tr against itself at base L_tr, paired by seed -> (text, test, mean at base, mean at m)."""
    if m is None or base not in col or m not in col:
        return 'no data', None, None, None
    t = paired(col[base]['ppl'], col[m]['ppl'], alpha)
    a, b = col[base]['mean'], col[m]['mean']
    n, span = min(col[base]['n'], col[m]['n']), f'at {m:g}x' if base == 1.0 else f'from {base:g}x to {m:g}x'
    return f"{fmt_ppl(a)} → {fmt_ppl(b)} {span} ({100 * (b / a - 1):+.1f}%, {n} seed(s))", t, a, b


def versus(table, method, g, mults):
    """The method against g at each length -> (text, verdict on 'the method is better at every length')."""
    col, own = table.get(g, {}), table.get(method, {})
    ms = [m for m in mults if m in col and m in own]
    lower = [m for m in ms if own[m]['mean'] < col[m]['mean']]
    better, worse = ([m for m in ms if col[m].get('mark') == k] for k in (DAGGER, STAR))
    untested = [m for m in ms if col[m].get('p') is None]
    at = lambda xs: ', '.join(f'{m:g}x' for m in xs) or 'none'
    text = (f"{NAMES[method]} lower at {len(lower)} of {len(ms)} lengths; significantly better at {at(better)}, "
            f"worse at {at(worse)}" + (f"; untested at {at(untested)} (under 2 seed pairs)" if untested else ''))
    if not ms:
        return text, 'no data yet'
    if worse:
        return text, f"does not hold (significantly worse at {at(worse)})"
    if len(better) == len(ms):
        return text, 'holds (significant at every length)'
    if len(lower) == len(ms):
        return text, 'holds in the means' + (', untested' if len(untested) == len(ms) else
                                             f', significant at {len(better)} of {len(ms)} lengths')
    return text, f"does not hold in the means (lower at {len(lower)} of {len(ms)})"


def claims_33(table, alpha):
    out = []
    for g in ('kerple_log', 'kerple_power', 'alibi', 't5'):
        th = T33['cols'][g]
        text, t, a, b = trend(table.get(g, {}), 16.0, alpha)
        out.append(dict(claim=f"{NAMES[g]}: lower perplexity at 16x than at 1x", ours=text, verdict=verdict(
            t is not None and b < a, t, alpha), thesis=f"{th[0].split()[0]} → {th[4].split()[0]} ({cite(T33, 0, 4)})"))
    for g, key in (('kerple_power', 'log_power'), ('alibi', 'log_prior'), ('rope', 'log_prior'),
                   ('sinusoidal', 'log_prior')):
        text, word = versus(table, 'kerple_log', g, MULTS)
        out.append(dict(claim=f"KERPLE-log beats {NAMES[g]} at every length", thesis=said(key), ours=text,
                        verdict=word))
    text, _ = versus(table, 'kerple_log', 't5', MULTS)
    col, own = table.get('t5', {}), table.get('kerple_log', {})
    mark = {m: c.get('mark', '') for m, c in col.items()}
    ok = not mark.get(1.0) and not mark.get(2.0) and mark.get(8.0) == mark.get(16.0) == DAGGER
    if 'untested' in text:  # no test: the means at 8x and 16x
        ok = all(m in col and m in own and own[m]['mean'] < col[m]['mean'] for m in (8.0, 16.0))
    word = ('holds' if ok else 'does not hold') + (' in the means at 8x, 16x; untested' if 'untested' in text else '')
    return out + [dict(claim="KERPLE-log is on a par with T5 below 4x and significantly better at 8x and 16x",
                       thesis=said('log_t5'), ours=text, verdict=word if mark and own else 'no data yet')]


def claims_43(table, alpha):
    col, out = table.get('sandwich', {}), []
    for g, m in (('sandwich', 4.0), ('sandwich_smoothed', 2.0), ('kerple_log', 4.0), ('t5', 2.0)):
        text, t, a, b = trend(table.get(g, {}), m, alpha)  # at the thesis' lowest (sec. 4.6.2), chosen before ours
        th, i = T43['cols'][g], MULTS.index(m)
        out.append(dict(claim=f"{NAMES[g]}: lower perplexity at {m:g}x (the thesis' lowest) than at 1x", ours=text,
                        thesis=f"{th[0].split()[0]} → {th[i].split()[0]} ({cite(T43, 0, i)})",
                        verdict=verdict(t is not None and b < a, t, alpha)))
    for g in ('alibi', 'sinusoidal', 'rope'):
        text, word = versus(table, 'sandwich', g, MULTS[1:])
        out.append(dict(claim=f"Sandwich beats {NAMES[g]} at every L_ex > L_tr", thesis=said('sandwich_left'),
                        ours=text, verdict=word))
    text, t, a, b = trend(table.get('alibi', {}), 16.0, alpha)
    out.append(dict(claim="ALiBi: perplexity rises from L_tr to 16 L_tr", ours=text, verdict=verdict(
        t is not None and b > a, t, alpha), thesis="GitHub 2.83 → 3.01, ArXiv 5.25 → 5.58 (+6%; Table 4.3, p. 60, "
                                                   "L_ex 512-8192)"))
    for g, m, mark in (('kerple_log', 1.0, STAR), ('t5', 1.0, STAR), ('t5', 16.0, DAGGER)):
        c, s, i = table.get(g, {}).get(m), col.get(m), MULTS.index(m)
        ok = bool(c and s and (c['mean'] < s['mean']) == (mark == STAR))
        out.append(dict(claim=f"{NAMES[g]} {'beats' if mark == STAR else 'loses to'} Sandwich at {m:g}x",
                        thesis=f"{T43['cols'][g][i]} ({cite(T43, i)})",
                        verdict=verdict(ok, c if s else None, alpha),
                        ours=f"{fmt_ppl(c['mean'])} vs Sandwich {fmt_ppl(s['mean'])}" if c and s else 'no data'))
    return out


def claims_45(windowed, vanilla, alpha):
    """Table 4.5: windowed inference against the same models without the window, same tokens, paired by seed."""
    out = []
    for g, claim, thesis in (('alibi', "ALiBi: the window leaves its perplexity as it is (within 1%)",
                              "3.01 with and without, at 8x (Tables 4.3 and 4.5, GitHub, L_ex 4096)"),
                             ('sandwich', "Sandwich: a bit worse with the window (it uses tokens beyond it)",
                              "2.79 with, 2.73 without, at 8x (Tables 4.3 and 4.5, GitHub, L_ex 4096)")):
        parts, tests = [], []
        for m in (8.0, 16.0):
            w, v = windowed.get(g, {}).get(m), vanilla.get(g, {}).get(m)
            if w and v:
                t = paired(v['ppl'], w['ppl'], alpha)
                tests.append((w['mean'] / v['mean'] - 1, t))
                p = f" (p = {t['p']:.3g})" if t['p'] is not None else ''
                parts.append(f"{m:g}x: {fmt_ppl(w['mean'])} windowed, {fmt_ppl(v['mean'])} full{p}")
        ok = all(abs(d) < 0.01 for d, _ in tests) if g == 'alibi' else all(d > 0 for d, _ in tests)
        untested = ' (untested: under 2 seed pairs)' if any(t['p'] is None for _, t in tests) else ''
        out.append(dict(claim=claim, thesis=thesis, ours='; '.join(parts) or 'no data',
                        verdict=('holds' if ok else 'does not hold') + untested if tests else 'no data yet'))
    return out


def claims_63(table, alpha):
    """Tables 6.3/6.4 (6.5): RegularGPT keeps its perplexity while its levels are those of L_tr, loses it where a
    level is added, and trails the relative encodings at L_tr."""
    text, t, a, b = trend(table.get('regular64', {}), 16.0, alpha)
    out = [dict(claim="RegularGPT C = 64 (2 levels from 1x to 16x): at 16x at most 5% above 1x", ours=text,
                thesis=f"128/6 3.63 → 3.50, 128/12 3.22 → 3.25 ({cite(T64, 0, 4)})",
                verdict=verdict(t is not None and b <= 1.05 * a, t, alpha))]
    text, t, a, b = trend(table.get('regular32', {}), 8.0, alpha, base=4.0)
    out.append(dict(claim="RegularGPT C = 32: perplexity rises from 4x to 8x, where a third level comes in", ours=text,
                    thesis="64/6 3.79 → 4.14 where its third level comes in (16x), 32/6 3.87 → 4.37 (4x; "
                           f"{cite(T64)})", verdict=verdict(t is not None and b > a, t, alpha)))
    reg = table.get('regular64', {}).get(1.0)
    for g in ('kerple_log', 't5', 'alibi'):
        c = table.get(g, {}).get(1.0)
        t = paired(c['ppl'], reg['ppl'], alpha) if c and reg else None
        out.append(dict(claim=f"RegularGPT C = 64 trails {NAMES[g]} at L_tr", ours=f"{fmt_ppl(reg['mean'])} against "
                        f"{fmt_ppl(c['mean'])}" if t else 'no data', thesis=f"128/6 3.63 against {T64['cols'][g][0]} "
                        f"({cite(T64, 0)})", verdict=verdict(t is not None and reg['mean'] > c['mean'], t, alpha)))
    return out


def claims_long(base, long, iters):
    """The longer-training check (not in the thesis): does seed 0's 1x -> 16x direction move with 4x the iterations?"""
    out = []
    for g in LONG:
        v = dict(claim=f"{NAMES[g]}: 1x → 16x of seed 0 after 4x the training", thesis='not in the thesis',
                 ours='no data', verdict='no data yet')
        if all(0 in c.get(g, {}).get(m, {}).get('ppl', {}) for c in (base, long) for m in (1.0, 16.0)):
            r = [c[g][16.0]['ppl'][0] / c[g][1.0]['ppl'][0] for c in (base, long)]
            v.update(ours=f"16x / 1x = {r[0]:.3f} at {iters[0]} iterations, {r[1]:.3f} at {iters[1]}",
                     verdict='direction changes' if (r[0] > 1) != (r[1] > 1) else 'same direction')
        out.append(v)
    return out


# ------------------------------------------------------------------ Table 3.4, Table 6.1

def step_seconds(log_path):
    """Median seconds per training step of one run, from train.py's log.json: the time between consecutive
    log_interval rows, over the intervals that hold no evaluation (those also hold the eval and the checkpoint)."""
    rows = read_json(log_path, 'lm_dir')
    evals = [r['iter'] for r in rows if r.get('val_loss') is not None]
    train = [r for r in rows if r.get('val_loss') is None]
    d = [(b['time'] - a['time']) / (b['iter'] - a['iter']) for a, b in zip(train, train[1:])
         if b['iter'] > a['iter'] and not any(a['iter'] < e <= b['iter'] for e in evals)]
    return float(np.median(d)) if d else None


def speeds(cfg):
    """Table 3.4 from the finished runs of lm_dir (train.py writes loss.png last) -> {pe: {seed: s/step}}; runs
    whose folders are gone keep the value the previous thesis.json holds."""
    out, old = {}, os.path.join(cfg['out_dir'], 'thesis.json')
    if os.path.isfile(old):
        for pe, by_seed in read_json(old, 'out_dir').get('sections', {}).get('speed', {}).get('runs', {}).items():
            out[pe] = {int(s): v for s, v in by_seed.items()}
    for path in sorted(glob.glob(os.path.join(cfg['lm_dir'], '*-s[0-9]*', 'log.json'))):
        run_dir, name = os.path.dirname(path), os.path.basename(os.path.dirname(path))
        sec = step_seconds(path) if os.path.isfile(os.path.join(run_dir, 'loss.png')) else None
        if sec:
            out.setdefault(name.rsplit('-s', 1)[0], {})[seed_of(name)] = sec
    return out


def claims_34(runs, alpha):
    """The thesis' speed sentences: KERPLE-log x% faster than another (1 - its s/step over the other's)."""
    out, log = [], runs.get('kerple_log', {})
    for g, (th, key) in T34['said'].items():
        other = runs.get(g, {})
        v = dict(claim=f"KERPLE-log is {abs(th)}% {'faster' if th > 0 else 'slower'} than {NAMES[g]}",
                 thesis=f"{said(key)}; Table 3.4 (p. 29)", ours='no data', verdict='no data yet')
        if log and other:
            ours = 1 - np.mean(list(log.values())) / np.mean(list(other.values()))
            v.update(ours=f"{100 * abs(ours):.1f}% {'faster' if ours > 0 else 'slower'} ({len(log)}, {len(other)} "
                          f"runs)",
                     verdict=verdict((ours > 0) == (th > 0), paired(log, other, alpha), alpha))
            if (ours > 0) == (th > 0) and 100 * abs(ours) > 3 * abs(th):  # a sign alone hides a 30x gap
                v['verdict'] += f"; in direction only: the gap is {100 * abs(ours) / abs(th):.0f}x the thesis'"
        out.append(v)
    return out


def regular_section(cfg):
    """Table 6.1 on our runs (results/regular/table.json) beside the thesis' -> (markdown rows, verdicts)."""
    if not os.path.isfile(cfg['regular']):
        return [], [dict(claim='Table 6.1', ours=f"no {cfg['regular']} (bash results.sh regular)", verdict='no data')]
    ours, models = read_json(cfg['regular'], 'regular'), ('lstm', 'transformer', 'regulargpt_c2')
    cell = lambda c: f"{c['max']:.1f} / {c['avg']:.1f} ({c['seeds']})" if c else '-'
    rows = [[t, cell(ours.get(f'{t}/regulargpt_c2')), th[3], cell(ours.get(f'{t}/transformer')), th[2],
             cell(ours.get(f'{t}/lstm')), th[1]] for t, th in T61['rows'].items()]
    # Avg per task and model (the thesis' RNN for our LSTM); one rule for both sides
    th_avg = {t: dict(zip(models, (float(x.split('/')[1]) for x in th[1:]))) for t, th in T61['rows'].items()}
    us_avg = {t: {m: ours[f'{t}/{m}']['avg'] for m in models if f'{t}/{m}' in ours} for t in T61['rows']}
    verdicts = []
    for claim, other, rule in (("RegularGPT C=2 is far above the Transformer (Avg 10 points or more)", 'transformer',
                                lambda d: d >= 10),
                               ("RegularGPT C=2 is on a par with the RNN (Avg within 5 points; ours: an LSTM)", 'lstm',
                                lambda d: abs(d) <= 5)):
        both = lambda avg: [t for t, a in avg.items() if {'regulargpt_c2', other} <= set(a)]
        hold = lambda avg: [t for t in both(avg) if rule(avg[t]['regulargpt_c2'] - avg[t][other])]
        th, us, n = hold(th_avg), hold(us_avg), len(both(us_avg))
        word = 'holds as often' if n and len(us) / n >= len(th) / 12 else 'holds less often'
        verdicts.append(dict(claim=f"{claim} ({said('regular')})",
                             thesis=f"on {len(th)} of 12 tasks (Table 6.1, p. 97)",
                             ours=f"on {len(us)} of {n} tasks; not on "
                                  f"{', '.join(t for t in both(us_avg) if t not in us) or 'none'}",
                             verdict=f"{word} ({100 * len(us) / n:.0f}% of tasks, thesis {100 * len(th) / 12:.0f}%)"
                             if n else 'no data'))
    return rows, verdicts


# ------------------------------------------------------------------ the page

def cell_text(c, marks=True):
    if not c:
        return '-'
    spread = f" ± {fmt_ppl(c['std'])}" if c['n'] > 1 else ''
    return f"{fmt_ppl(c['mean'])}{spread}{c.get('mark', '') if marks else ''} ({c['n']})"


def ppl_table(table, long, groups, thesis, long_label, mid=None):
    rows = []
    for g in groups:
        rows.append([NAMES[g], 'ours'] + [cell_text(table.get(g, {}).get(m)) for m in MULTS])
        if g in (mid or {}):
            rows.append(['', 'ours, 25M'] + [cell_text(mid[g].get(m)) for m in MULTS])
        if g in thesis['cols']:
            rows.append(['', f"thesis, Table {thesis['table']}, p. {thesis['page']}"] +
                        [c if isinstance(c, str) else f'{c:.2f}' for c in thesis['cols'][g]])
    if long:
        rows.append([f'*longer training: {long_label}*', ''] + [''] * len(MULTS))
        rows += [[NAMES[g], 'ours'] + [cell_text(long[g].get(m)) for m in MULTS] for g in LONG if g in long]
    return md_table(['encoding', ''] + [f'{m:g} L_tr' for m in MULTS], rows)


def n_line(facts):
    """What n is under a protocol: seeds (per cell) x segments."""
    if 'n_tokens' in facts:
        segs = ', '.join(str(facts['n_tokens'] // int(m * facts['L_tr'])) for m in MULTS)
        return f"n = seeds (per cell) x segments: {segs} at 1-16 L_tr, {facts['n_tokens']:,} tokens at every length"
    return 'n: no data' if 'n_drawn' not in facts else (
        f"n = seeds (per cell) x {facts['n_drawn']} segments, one token each, from {facts.get('docs_used')} of the "
        f"{facts.get('docs_long_enough')} test documents long enough for 16 L_tr")


def page(cfg, s, info, notes):
    """-> the text of results/thesis/README.md and of regular.md (chapter 6), from the sections' tables and verdicts."""
    bullet_list = lambda vs: ''.join(f"- {v['claim']}. Thesis: {v.get('thesis', '-')}. Ours: {v['ours']}. "
                                     f"**{v['verdict']}**\n" for v in vs)
    lab = f"seed 0 at {cfg['long_iters']:,} iterations"
    mark = (f"{DAGGER}: the chapter's method significantly better, {STAR}: significantly worse (paired two-sided "
            f"t-test, alpha = {cfg['alpha']}, seed s against seed s at each length; p-values in thesis.json)")
    md = ["# The thesis' tables, measured the thesis' way\n\nTiny models (0.8M parameters, byte-level Python, "
          f"L_tr = 256, {cfg['iters']:,} iterations) against the thesis' 162M-parameter ones (L_tr = 512, 50k steps). "
          "The thesis' numbers are its GitHub columns (code, the nearest of its corpora to ours), copied with their "
          "table and page; its 512 ... 8192 tokens are 1-16 L_tr. Cells: mean ± sample std over the seeds, "
          "their number in brackets. `bash results.sh thesis` makes this page.\n\n"
          "![the tables as curves](thesis.png)\n"]
    for key, groups, thesis in (('t3_3', G33, T33), ('t4_3', G43, T43)):
        proto = s[key]['protocol']
        mid = (f" Rows *ours, 25M*: configs/lease_mid.py (25.3M parameters, L_tr = 512, {cfg['mid_iters']:,} "
               f"iterations) trained and scored on one GPU by `bash results.sh lease` ({cfg['mid_dir']}/mid_{proto}"
               f".json); {n_line(info.get('mid_' + proto, {}))}; tested against the method from {MID_PAIRS} seed "
               f"pairs on.")
        md.append(f"\n## {INTRO[key][0]}\n\n{INTRO[key][1]} {n_line(info.get(proto, {}))}. {mark}.{mid}\n\n"
                  + ppl_table(s[key]['cells'], s[key]['long'], groups, thesis, lab, s[key]['mid']) + '\n'
                  + bullet_list(s[key]['verdicts'] + s[key]['long_verdicts']))
    both = {f'{NAMES[g]} {k}': t.get(g, {}) for g in ('alibi', 'sandwich') for k, t in (
        ('windowed', s['t4_5']['cells']), ('full', s['t4_3']['cells']), (f'windowed, {lab}', s['t4_5']['long']),
        (f'full, {lab}', s['t4_3']['long'])) if g in t}
    sp = [[NAMES[g], f"{np.mean(list(v.values())):.3f} ({len(v)})" if v else '-',
           f"{T34['sec'][g]:.3f}" if g in T34['sec'] else '-'] for g, v in ((g, s['speed']['runs'].get(g)) for g in
                                                                             NAMES)]
    tables = dict(t4_5=md_table(['encoding, attention'] + [f'{m:g} L_tr' for m in (8.0, 16.0)],
                                [[k] + [cell_text(c.get(m), False) for m in (8.0, 16.0)] for k, c in both.items()]),
                  speed=md_table(['encoding', 'ours s/step (runs)', 'thesis s/step'], sp),
                  t6_1=md_table(['task', 'RegularGPT, ours', 'thesis C=2', 'Transformer, ours', 'thesis', 'LSTM, ours',
                                 'thesis RNN'], s['t6_1']['rows']),
                  t6_3=ppl_table(s['t6_3']['cells'], {}, G63, T64, lab))
    # chapter 6 on a page of its own (regular.md), so that each page stays short enough to read in one go
    md.append("\nChapter 6 (Tables 6.1, 6.3/6.4: RegularGPT): [regular.md](regular.md).\n")
    ch6 = ["# The thesis' chapter 6, measured the thesis' way\n\nRegularGPT on regular languages and on natural "
           "language, beside the thesis' numbers; the other tables are in [README.md](README.md).\n"]
    for key, table in tables.items():
        proto = dict(t4_5='windowed', t6_3='last_token').get(key)
        extra = f" {n_line(info.get(proto, {}))}." if proto else ''
        (ch6 if key.startswith('t6') else md).append(
            f"\n## {INTRO[key][0]}\n\n{INTRO[key][1]}{extra}\n\n{table}"
            + ('\n' + bullet_list(s[key]['verdicts']) if 'verdicts' in s.get(key, {}) else ''))
    if notes:
        md.append('\nLeft out (scored before training ended):\n\n' + ''.join(f'- {n}\n' for n in notes))
    return ''.join(md), ''.join(ch6)


def plot(tables):
    """One panel per table; lines that grow past twice their shortest length's perplexity (sinusoidal, RoPE) leave
    the linear scale, which would otherwise hide the few percent that the thesis' claims are about."""
    fig, axes = plt().subplots(1, len(tables), figsize=(5 * len(tables), 4.2), squeeze=False)
    for ax, (title, table) in zip(axes[0], tables.items()):
        shown, off = [], []
        for g, col in table.items():  # one colour per encoding in every panel
            ms = sorted(col)
            y = [col[m]['mean'] for m in ms]
            (off if y[-1] > 2 * y[0] else shown).append((g, y))
            ls = '--' if g.endswith('(long)') else '-.' if g.endswith('(mid)') else ':' if g.endswith(' full') else '-'
            ax.errorbar(ms, y, [col[m]['std'] for m in ms], marker='o', ms=3, capsize=2, label=g, ls=ls,
                        color=f"C{list(NAMES).index(g.split()[0])}")
        if shown and off:
            lo, hi = min(min(y) for _, y in shown), max(max(y) for _, y in shown)
            ax.set_ylim(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo))
            title += f"\noff the scale: {', '.join(g for g, _ in off)}"
        ax.set(xscale='log', xlabel='L_ex / L_tr', ylabel='perplexity (mean over seeds, bar: 1 std)')
        xs = sorted({m for col in table.values() for m in col})
        ax.set_xticks(xs, [f'{m:g}x' for m in xs], minor=False), ax.xaxis.set_minor_locator(NullLocator())
        ax.set_title(title if table else f'{title}: no data yet', fontsize=9), ax.grid(alpha=0.3, which='both')
        ax.legend(fontsize=6) if table else None
    fig.tight_layout()
    return fig


def main(cfg):
    if not 0 < cfg['alpha'] < 1:
        raise ConfigError(f"alpha={cfg['alpha']} is outside the allowed range 0 < alpha < 1")
    if min(cfg['iters'], cfg['long_iters']) < 1:
        raise ConfigError(f"iters={cfg['iters']}, long_iters={cfg['long_iters']}: both must be >= 1")
    cells, info, notes = read_evals(cfg)
    a, s = cfg['alpha'], {}
    at = lambda protocol, training, variant='vanilla': lambda g: (protocol, variant, training, g)
    for key, proto, groups, method, claims in (('t3_3', 'nonoverlap', G33, 'kerple_log', claims_33),
                                               ('t4_3', 'last_token', G43, 'sandwich', claims_43)):
        table, long = (table_cells(cells, at(proto, t), groups, method, a) for t in ('base', 'long'))
        mid = table_cells(cells, at(proto, 'mid'), groups, method, a, MID_PAIRS)
        s[key] = dict(protocol=proto, method=method, cells=table, long=long, mid=mid, verdicts=claims(table, a),
                      long_verdicts=claims_long(table, long, (cfg['iters'], cfg['long_iters'])))
    windowed = table_cells(cells, at('windowed', 'base', f'windowed@{W45}'), ['alibi', 'sandwich'], None, a)
    s['t4_5'] = dict(cells=windowed, verdicts=claims_45(windowed, s['t4_3']['cells'], a),
                     long=table_cells(cells, at('windowed', 'long', f'windowed@{W45}'), LONG, None, a))
    runs = speeds(cfg)
    s['speed'] = dict(runs=runs, verdicts=claims_34(runs, a))
    s['t6_1'] = dict(zip(('rows', 'verdicts'), regular_section(cfg)))
    t63 = table_cells(cells, at('last_token', 'base'), G63, None, a)
    s['t6_3'] = dict(cells=t63, verdicts=claims_63(t63, a))
    md, ch6 = page(cfg, s, info, notes)
    panels = {f"Table {k[1]}.{k[3]} ({s[k]['protocol']}; dashed: 4x training, dash-dot: 25M)":
              {**s[k]['cells'], **{f'{g} (long)': c for g, c in s[k]['long'].items()},
               **{f'{g} (mid)': c for g, c in s[k]['mid'].items()}} for k in ('t3_3', 't4_3')}
    panels[f'Table 4.5 (windowed@{W45}; dotted: full)'] = {
        **{f'{g} windowed': c for g, c in windowed.items()},
        **{f'{g} full': {m: c[m] for m in c if m in windowed[g]}
           for g, c in s['t4_3']['cells'].items() if g in windowed}}
    panels['Tables 6.3/6.4 (last_token)'] = t63
    data = dict(alpha=a, test='scipy.stats.ttest_rel, two-sided, paired by seed at each length, on perplexity',
                iters=cfg['iters'], long_iters=cfg['long_iters'], protocols=info, notes=notes, sections=s,
                thesis=dict(t3_3=T33, t4_3=T43, t4_5=T45, t3_4=T34, t6_1=T61, t6_4=T64))
    write_outputs(cfg['out_dir'], 'thesis', data, None, plot(panels))
    for name, text in (('README.md', md), ('regular.md', ch6)):
        with open(os.path.join(cfg['out_dir'], name), 'w') as f:
            f.write(text)
    print(md + ch6)
    return data


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
