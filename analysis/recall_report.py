"""
The recall probe's verdicts and report (analysis/recall.py): a row's recall horizon and share beyond L_tr, the
markdown tables, and the figure of benefit against distance.
"""
import math

import numpy as np

from lexgpt.outputs import md_table, plt


def row_verdict(cells, L_tr):
    """A row's (one kind, one L_ex) recall horizon (largest significant d, 0 where none) and share beyond L_tr."""
    cells = sorted(cells, key=lambda c: c['d'])
    if not cells:
        return None
    sig = [c['d'] for c in cells if c['significant']]
    far = [c['benefit'] for c in cells if c['d'] > L_tr]
    share = float(np.mean(far) / cells[0]['benefit']) if far and cells[0]['significant'] else None
    return dict(kind=cells[0]['kind'], mult=cells[0]['mult'], L_ex=cells[0]['L_ex'], horizon=max(sig, default=0),
                share_beyond_L_tr=share)


def fmt(c):
    return f"{c['benefit']:.3f} ± {(c['ci95'][1] - c['ci95'][0]) / 2:.3f}" + ('' if c['significant'] else ' ·')


def tables(cfg, rows):
    """Per kind: rows (model [variant], L_ex / L_tr), a column per d (benefit ± CI half-width; · not significant),
    the recall horizon and the share beyond L_tr."""
    md = ''
    for kind in cfg['kinds']:
        ds = sorted({c['d'] for o in rows for c in o['cells'] if c['kind'] == kind})
        lines = []
        for o in rows:
            for mult in dict.fromkeys(c['mult'] for c in o['cells']):
                row = {c['d']: c for c in o['cells'] if c['kind'] == kind and c['mult'] == mult}
                if not row or any(c.get('benefit') is None for c in row.values()):
                    continue
                v = row_verdict(list(row.values()), o['L_tr'])
                share = '—' if v['share_beyond_L_tr'] is None else f"{v['share_beyond_L_tr']:.2f}"
                lines.append([f"{o['ckpt']} [{o['variant']}]", f'{mult:g}'] + [fmt(row[d]) if d in row else ''
                                                                               for d in ds] + [v['horizon'], share])
        md += (f"### {kind}: recall benefit (nats/token, 95% CI) by d\n\n"
               + md_table(['model', 'L_ex / L_tr'] + [f'd={d}' for d in ds] + ['horizon', 'share > L_tr'], lines)
               + '\n')
    return md


def figure(cfg, rows):
    """Benefit against d, a panel per (kind, run group, variant), a line per length (mean over the group's seeds;
    the band: the 95% CI of a single run, ± s.d. over seeds of several), L_tr marked."""
    groups = list(dict.fromkeys((o.get('group', o['ckpt']), o['variant']) for o in rows))
    cols = min(len(groups), 4)
    n_rows = len(cfg['kinds']) * math.ceil(len(groups) / cols)
    fig, axes = plt().subplots(n_rows, cols, figsize=(3.6 * cols, 2.8 * n_rows), squeeze=False, layout='constrained')
    for ax in axes.flat:
        ax.axis('off')
    for k, kind in enumerate(cfg['kinds']):
        for g, (group, variant) in enumerate(groups):
            ax = axes[k * math.ceil(len(groups) / cols) + g // cols, g % cols]
            ax.axis('on')
            mine = [o for o in rows if o.get('group', o['ckpt']) == group and o['variant'] == variant]
            mults = list(dict.fromkeys(c['mult'] for o in mine for c in o['cells']))
            for i, mult in enumerate(mults):
                curve(ax, mine, kind, mult, f'C{i % 10}')
            ax.axvline(mine[0]['L_tr'], color='k', ls=':', lw=1, label='L_tr')
            ax.axhline(0, color='gray', lw=0.5)
            ax.set_xscale('log', base=2)
            ax.set_title(f"{group} [{variant}]: {kind}", fontsize=7)
            ax.set_xlabel('d (tokens)', fontsize=7)
            ax.set_ylabel('benefit (nats/token)', fontsize=7)
            ax.tick_params(labelsize=6)
            ax.legend(fontsize=6)
    return fig


def curve(ax, runs, kind, mult, color):
    by_run = [{c['d']: c for c in o['cells'] if c['kind'] == kind and c['mult'] == mult
               and c.get('benefit') is not None} for o in runs]
    ds = sorted(set.intersection(*(set(b) for b in by_run)))
    if not ds:
        return
    mean = np.array([np.mean([b[d]['benefit'] for b in by_run]) for d in ds])
    if len(by_run) == 1:
        lo, hi = np.array([by_run[0][d]['ci95'] for d in ds]).T
    else:
        sd = np.array([np.std([b[d]['benefit'] for b in by_run], ddof=1) for d in ds])
        lo, hi = mean - sd, mean + sd
    ax.plot(ds, mean, 'o-', ms=3, color=color, label=f'{mult:g}x L_tr' + (f' ({len(by_run)} seeds)'
                                                                          if len(by_run) > 1 else ''))
    ax.fill_between(ds, lo, hi, color=color, alpha=0.2)
