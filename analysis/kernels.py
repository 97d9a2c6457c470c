"""
The distance kernels of relative positional encodings (thesis ch. 3): each head's bias b(d) - b(0) (and weight, for
the multiplicative kernels) against the distance d, and the effective length of each bias kernel (thesis 3.7.5),
counted over kernels as in Fig. 3.6.

  python -m analysis.kernels --ckpt=out/tiny-alibi,out/tiny-kerple_log,out/tiny-t5
  python -m analysis.kernels --ckpt=out/regular --length=4      # RegularGPT: its bias at every depth of a 4 L_tr input

Layers whose tables are identical (KERPLE-family kernels shared across layers, T5's table, ALiBi and Sandwich without
parameters) are shown and counted once, as 'all layers': a shared H-head kernel gives H effective lengths, while a
kernel_per_layer=True model gives one per layer and head. An encoding that masks keys (RegularGPT, eq. 6.1) is shown
per depth, at the distances that depth can see. Writes <out_dir>/<name>.json, .md, .png and
<name>_effective_length.png.
"""
import numpy as np
import torch

from lexgpt.config import ConfigError, run
from lexgpt.evaluation import check_settings, ex_len
from lexgpt.loading import ckpt_kind, load_runs, PRETRAINED
from lexgpt.outputs import md_table, plt, write_outputs
from lexgpt.progress import check_memory

DEFAULTS = dict(
    ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')
    length=16.0,                # distances 0 .. length x L_tr - 1 are tabulated (RegularGPT: the depths of that input)
    out_dir='out/kernels',
    name='kernels',             # output file stem
)
BIAS_THRESHOLD = -2.0  # thesis 3.7.5: a bias of -2 scales a softmax weight by e^-2 ~ 0.14


def kernel_tables(model, max_distance):
    """{layer: (bias [H, n] or None, weight [H, n] or None)} at distances 0..max_distance for every attention layer
    that runs on an input of max_distance + 1 tokens (RegularGPT: one per depth)."""
    d = torch.arange(max_distance + 1, dtype=torch.float32)
    with torch.no_grad():
        return {layer: tuple(None if t is None else t.double().numpy()
                             for t in (model.pe.bias(layer, d), model.pe.weight(layer, d)))
                for layer in range(model.n_layers(max_distance + 1))}


def distinct_tables(tabs):
    """[(layers, bias, weight)]: the layers with identical tables merged, in order of first appearance."""
    same = lambda x, y: x is y or (x is not None and y is not None and np.array_equal(x, y))
    out = []
    for layer, (b, w) in tabs.items():
        match = next((t for t in out if same(t[1], b) and same(t[2], w)), None)
        if match:
            match[0].append(layer)
        else:
            out.append(([layer], b, w))
    return out


def effective_lengths(bias):
    """Thesis 3.7.5: the first distance at which a head's bias, relative to distance 0, drops below -2 (inf if it
    never does within the table). Relative to d = 0 because softmax ignores a per-row constant; for the KERPLE kernels
    b(0) = 0 anyway, and for non-monotonic biases (T5) this is the first crossing."""
    below = bias - bias[:, :1] < BIAS_THRESHOLD
    return np.where(below.any(1), below.argmax(1), np.inf)


def head_counts(effs, distances):
    """Count{kernel : eff <= d} for each d (thesis Fig. 3.6)."""
    return np.searchsorted(np.sort(np.asarray(effs, dtype=float)), distances, side='right')


def label(layers, n, masked):
    what = 'depth' if masked else 'layer'
    if len(layers) == n > 1:
        return f'all {what}s'
    return f"{what}{'s' if len(layers) > 1 else ''} {','.join(map(str, layers))}"


def draw(ax, wax, d, b, w, masked, title, L_tr):
    """One table's panels: the bias per head (a masked kernel at its finite distances, any other as b(d) - b(0) with
    the -2 threshold) on ax, the weight per head on wax."""
    if b is not None and masked:
        seen = np.isfinite(b[0])  # eq. 6.1: the distances i * C^l of this depth; the mask is the same for every head
        for h in range(b.shape[0]):
            ax.plot(d[seen], b[h, seen], 'o-', ms=3, lw=1, label=f'head {h}')
    elif b is not None:
        rel = b - b[:, :1]
        for h in range(b.shape[0]):
            ax.plot(d, rel[h], lw=1, label=f'head {h}')
        ax.axhline(BIAS_THRESHOLD, color='k', lw=0.6, ls='--')
        ax.set_ylim(max(rel.min(), -20) - 0.5, max(rel.max(), 0) + 0.5)  # steep heads would hide the rest
    ax.set_title(f"{title}: {'bias' if b is not None else 'no bias'}", fontsize=8)
    ax.axvline(L_tr, color='gray', lw=0.8, ls=':')
    if w is not None:
        for h in range(w.shape[0]):
            wax.plot(d, w[h], lw=1)
        wax.axvline(L_tr, color='gray', lw=0.8, ls=':')
        wax.set_title(f'{title}: weight', fontsize=8)


def measure(r, length):
    """One checkpoint's kernels at distances 0 .. length x L_tr - 1 -> (its JSON entry, what report() draws), or None
    when it has no bias or weight kernel."""
    kinds = r.model.pe.kinds
    if 'bias' not in kinds and 'weight' not in kinds:
        via = ('rotations of q and k' if 'rotary' in kinds else 'the embeddings' if 'absolute' in kinds
               else 'nothing but the causal mask')
        print(f"{r.name}: pe={r.pe!r} has no distance bias or weight kernel (its positions enter through {via}); "
              f"nothing to plot")
        return None
    D = ex_len(length, r.L_tr) - 1
    # ~100 bytes per (layer, head, distance), measured (tables, float64 copies, JSON lists, plot); 128 to be safe
    check_memory(128 * r.model.n_layers(D + 1) * r.model.config.n_head * (D + 1),
                 f"length={length:g} ({D + 1:,} distances of {r.name})")
    tables = distinct_tables(kernel_tables(r.model, D))
    d, masked = np.arange(D + 1), 'mask' in kinds
    n_layers = sum(len(layers) for layers, _, _ in tables)
    effs, entries = [], []
    for layers, b, w in tables:
        entry = dict(layers=layers, label=label(layers, n_layers, masked))
        if b is not None and masked:
            seen = np.isfinite(b[0])
            entry.update(distances=d[seen].tolist(), bias=b[:, seen].round(4).tolist(), reach=int(d[seen].max()))
        elif b is not None:
            e = effective_lengths(b)
            effs += e.tolist()
            entry.update(bias_at={k: b[:, min(x, D)].round(4).tolist() for k, x in
                                  [('d=1', 1), ('L_tr', r.L_tr), ('4L_tr', 4 * r.L_tr), ('16L_tr', 16 * r.L_tr)]},
                         effective_length=[None if np.isinf(v) else int(v) for v in e])
        if w is not None:
            entry.update(weight_at={k: w[:, min(x, D)].round(4).tolist() for k, x in
                                    [('d=1', 1), ('L_tr', r.L_tr), ('4L_tr', 4 * r.L_tr)]})
        entries.append(entry)
    res = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, max_distance=D, tables=entries)
    if effs:
        res.update(kernels=len(effs), within_L_tr=int((np.array(effs) <= r.L_tr).sum()),
                   never_below=int(np.isinf(effs).sum()))
    elif not masked:
        print(f"{r.name}: pe={r.pe!r} has only a weight kernel; the effective length (a bias threshold) is undefined")
    return res, dict(d=d, masked=masked, tables=tables, n_layers=n_layers, effs=np.array(effs))


def markdown(measured):
    """The effective-length table and, for masked encodings, the distances each depth sees."""
    eff_rows, mask_rows = [], []
    for res, m in measured:
        effs = m['effs']
        if len(effs):
            fin = effs[np.isfinite(effs)]
            n, tabs = m['n_layers'], m['tables']
            shared = f'one, shared by all {n} layers' if len(tabs) == 1 < n else f'{len(tabs)} distinct of {n} layers'
            eff_rows.append([res['ckpt'], res['pe'], shared, len(effs), res['within_L_tr'], res['never_below'],
                             f'{np.median(fin):.0f}' if len(fin) else 'n/a'])
            print(f"{res['ckpt']}: effective lengths (bias < {BIAS_THRESHOLD} relative to d=0), {shared}: "
                  f"{[None if np.isinf(v) else int(v) for v in effs]}")
        for entry in res['tables']:
            if 'distances' in entry:
                mask_rows.append([res['ckpt'], entry['label'], ', '.join(map(str, entry['distances'])),
                                  '; '.join(' '.join(f'{v:.2f}' for v in row) for row in entry['bias'])])
    md = ''
    if eff_rows:
        md += (f"Effective length per kernel (thesis 3.7.5): the first distance where the bias falls {-BIAS_THRESHOLD} "
               f"below its value at distance 0. Layers with identical tables count once.\n\n"
               + md_table(['checkpoint', 'pe', 'layer tables', 'kernels', 'eff <= L_tr', 'never below -2',
                           'median eff'], eff_rows))
    if mask_rows:
        md += ("\nMasked kernels (RegularGPT, eq. 6.1): at each depth a token sees only the distances listed, with "
               "one learned bias per distance and head (heads separated by ';').\n\n"
               + md_table(['checkpoint', 'depth', 'distances seen', 'bias per head'], mask_rows))
    return md


def figures(measured):
    """The kernels of every checkpoint (one row of panels each, a second for weights) and Fig. 3.6's head counts."""
    n_rows = [1 + any(w is not None for _, _, w in m['tables']) for _, m in measured]
    n_cols = max(len(m['tables']) for _, m in measured)
    fig, axes = plt().subplots(sum(n_rows), n_cols, figsize=(2.8 * n_cols, 2.3 * sum(n_rows)), squeeze=False)
    fig2, ax2 = plt().subplots(figsize=(7, 4.5))
    r0 = 0
    for (res, m), nr in zip(measured, n_rows):
        for j, ((layers, b, w), entry) in enumerate(zip(m['tables'], res['tables'])):
            draw(axes[r0, j], axes[r0 + 1, j] if w is not None else None, m['d'], b, w, m['masked'],
                 f"{res['ckpt']} {entry['label']}", res['L_tr'])
        axes[r0, 0].legend(fontsize=6)
        r0 += nr
        if len(m['effs']):
            ax2.step(m['d'], head_counts(m['effs'], m['d']), where='post', label=res['ckpt'])
    for ax in axes.flat:
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if not ax.has_data():  # runs with fewer distinct tables than the widest one
            ax.axis('off')
    fig.suptitle('bias b(d) - b(0) per head vs distance d (dashed: -2; dotted: L_tr; y clipped at -20); '
                 'masked encodings: b(d) where finite', fontsize=9)
    fig.tight_layout()
    ax2.set_xscale('symlog', linthresh=1)
    ax2.set_xlabel('distance |m - n|')
    ax2.set_ylabel('kernels with effective length <= |m - n|')
    ax2.set_title(f'effective length (thesis Fig. 3.6): first d with b(d) - b(0) < {BIAS_THRESHOLD}; '
                  f'a kernel shared by all layers counts once', fontsize=8)
    ax2.grid(alpha=0.3)
    if any(len(m['effs']) for _, m in measured):
        ax2.legend(fontsize=7)
    fig2.tight_layout()
    return fig, fig2


def main(cfg):
    """Tabulate and plot every checkpoint's kernels; returns one dict per checkpoint that has any."""
    check_settings(cfg)
    named = [p for p in cfg['ckpt'] if ckpt_kind(p) in PRETRAINED]
    if named:  # refused before minutes of converting: RoPE and learned positions have no distance kernel to tabulate
        raise ConfigError(f"{', '.join(named)}: pretrained models (RoPE or learned positions) have no bias or weight "
                          f"kernel; kernels.py needs an encoding with one (alibi, kerple_*, t5, sandwich, fire)")
    runs = load_runs(cfg['ckpt'])
    measured = [m for m in (measure(r, cfg['length']) for r in runs) if m is not None]
    if not measured:
        raise ConfigError(f"none of the checkpoints has a bias or weight kernel (got pe="
                          f"{', '.join(sorted({r.pe for r in runs}))}); kernels.py needs an encoding with one")
    md = markdown(measured)
    print('\n' + md)
    fig, fig2 = figures(measured)
    base = write_outputs(cfg['out_dir'], cfg['name'], dict(results=[res for res, _ in measured]), md, fig)
    fig2.savefig(base + '_effective_length.png', dpi=100)
    plt().close(fig2)
    print(f'wrote {base}_effective_length.png')
    return [res for res, _ in measured]


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
