"""
Dispersed attention and the softmax temperature that undoes it (thesis ch. 5): the mean maximum probability P_max
and entropy H of attention rows at L_tr and at each L_ex (Table 5.1), the temperature that aligns them (Algorithm 1,
a grid search over 1.0..0.5), the closed forms of Propositions 5.1/5.2 and the length rule log_{L_ex} L_tr.

  python -m analysis.temperature --ckpt=out/tiny-t5 --lengths=2,4,8,16
  python -m analysis.temperature --ckpt=out/tiny-alibi --rows=last     # only the last row of every segment

Thesis 5.4 averages over an encoder's rows, each of which sees all L keys. A causal row m sees m + 1 keys, so at
L_ex the share of short, peaked rows changes and the statistics would drift even for a model that does not change;
by default (rows='full') only rows that see at least L_tr keys are averaged, at L_tr and at L_ex alike. The result
feeds extrapolate.py --attn_temperature=2:0.95,4:0.9. Writes <out_dir>/<name>.json, .md and .png.
"""
import math
import time

import numpy as np
import torch

from lexgpt import reference
from lexgpt.config import ConfigError, run
from lexgpt.corpus import check_n, draw_ends, load_split, slices
from lexgpt.device import EVAL_DEVICE
from lexgpt.evaluation import BOS_DEFAULTS, check_settings, ex_len, runs_bos
from lexgpt.loading import data_of, load_runs
from lexgpt.outputs import md_table, plt, write_outputs
from lexgpt.progress import Meter, Progress

DEFAULTS = dict(
    ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')
    lengths=[2.0, 4.0, 8.0, 16.0],  # L_ex, multiples of L_tr
    n=4,                        # segments per L_ex (each gives L_ex - L_tr + 1 rows with rows='full')
    n_tr=256,                   # segments at L_tr, the reference (each gives one row, its last, with rows='full')
    rows='full',                # rows averaged: full (those that see >= L_tr keys) | last (one per segment) | all
    split='test',               # train | val | test
    data_dir='',                # default: data/<the first checkpoint's dataset>
    batch_tokens=8192,          # tokens per forward pass
    regular_impl='gather',      # RegularGPT: gather (fast, C keys per query) or plain (dense)
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    out_dir='out/attention',
    name='attention',           # output file stem
    **BOS_DEFAULTS,
    **EVAL_DEVICE,
)
ROWS = ('full', 'last', 'all')
TAU_GRID = [round(1.0 - 0.05 * i, 2) for i in range(11)]  # thesis Algorithm 1: 1.0, 0.95, ..., 0.5


def first_row(rows, L, L_tr):
    """The first attention row averaged at length L; causal row m sees m + 1 keys."""
    return {'full': L_tr - 1, 'last': L - 1, 'all': 0}[rows]


class AttnStats:
    """An attention hook: per layer, the summed max-probability and entropy of the attention rows from `first`
    on, and their count. Each call sees one query block [B, H, tq, tk] (RegularGPT's sparse paths: tk = its C keys),
    so nothing of size T x T is kept. Sized by the layers that run, model.n_layers(T)."""

    def __init__(self, n_layer, first=0):
        self.pmax, self.ent, self.rows, self.first = np.zeros(n_layer), np.zeros(n_layer), np.zeros(n_layer), first

    def __call__(self, layer, probs, qi, ki):
        probs = probs[:, :, qi >= self.first].double()
        self.pmax[layer] += probs.amax(-1).sum().item()
        self.ent[layer] += torch.special.entr(probs).sum().item()  # entr(0) = 0: masked keys add nothing
        self.rows[layer] += probs[..., 0].numel()

    def means(self):
        rows, total = np.maximum(self.rows, 1), max(self.rows.sum(), 1)
        # Algorithm 1 averages over every logit vector (thesis 5.4: N = R x H x L); each layer has as many rows
        return (dict(pmax=self.pmax / rows, entropy=self.ent / rows),
                dict(pmax=self.pmax.sum() / total, entropy=self.ent.sum() / total))


@torch.inference_mode()
def attention_stats(model, tokens, ends, L, temperature=1.0, first=0, batch_tokens=8192, bos=None):
    """(per-layer, all-layer) mean P_max and entropy of the rows from `first` on, at length L and this temperature;
    bos: each input's first token (corpus.with_bos)."""
    stats = AttnStats(model.n_layers(L), first)
    ends, B = np.asarray(ends), max(1, batch_tokens // L)
    with model.attention(hook=stats, attn_temperature=temperature):
        for i in range(0, len(ends), B):
            model(slices(tokens, ends[i:i + B] - L, L, bos)[0])
    return stats.means()


def search_temperature(stat_tr, stat_ex_by_tau):
    """Thesis Algorithm 1: the tau of the grid whose statistic at L_ex is closest to the one at L_tr with tau = 1
    (ties go to the first, i.e. the largest tau)."""
    taus = list(stat_ex_by_tau)
    return taus[int(np.argmin([abs(stat_ex_by_tau[t] - stat_tr) for t in taus]))]


def length_rule(L_ex, L_tr):
    """tau = log_{L_ex} L_tr (Yao et al. 2021; Su 2021), the length-only baseline of thesis 5.5."""
    return math.log(L_tr) / math.log(L_ex)


def prop51_coefficients(L_tr, L_ex, pmax_tr, sigma_tr, sigma_ex):
    """A, B, C of Proposition 5.1's quadratic A tau^2 - B tau + C = 0."""
    return (math.log(L_ex) + math.log(pmax_tr), math.log(L_tr) + math.log(pmax_tr) + sigma_tr ** 2 / 2,
            sigma_ex ** 2 / 2)


def prop51_tau(L_tr, L_ex, pmax_tr, sigma_tr, sigma_ex):
    """Thesis Proposition 5.1 (max-probability alignment): A tau^2 - B tau + C = 0 with A = log L_ex + log P_tr,
    B = log L_tr + log P_tr + sigma_tr^2 / 2, C = sigma_ex^2 / 2; the larger root, as the thesis says (nan if none
    is real). At L_ex = L_tr the roots are 1 and C/A: with widely spread logits (C > A) the larger one is not the
    root that starts from tau = 1, a sign that Assumption 5.1 (Gaussian logits) does not hold."""
    A, B, C = prop51_coefficients(L_tr, L_ex, pmax_tr, sigma_tr, sigma_ex)
    disc = B * B - 4 * A * C
    if A <= 0 or disc < 0:
        return float('nan')
    return (B + math.sqrt(disc)) / (2 * A)


def prop51_text(tau, L_tr, L_ex, pmax_tr, sigma_tr, sigma_ex):
    """Proposition 5.1's temperature as the printout and the table show it: the number, or in words why there is
    none (the JSON keeps NaN)."""
    if not math.isnan(tau):
        return f'{tau:.3f}'
    if math.isnan(sigma_tr) or math.isnan(sigma_ex):
        return 'n/a: layer 0 masks keys'
    A, B, C = prop51_coefficients(L_tr, L_ex, pmax_tr, sigma_tr, sigma_ex)
    if A <= 0:  # P_max at L_tr no higher than uniform over L_ex keys: the parabola opens downward, no root is taken
        return f'none: A = log(L_ex P_max) = {A:.2f} <= 0'
    return f'no root: B^2 - 4AC = {B * B - 4 * A * C:.2f} < 0, no real tau aligns P_max'


def prop52_tau(L_tr, L_ex, sigma_tr, sigma_ex):
    """Thesis Proposition 5.2 (entropy alignment): tau = sigma_ex / sqrt(sigma_tr^2 + 2 log(L_ex / L_tr))."""
    return sigma_ex / math.sqrt(sigma_tr ** 2 + 2 * math.log(L_ex / L_tr))


@torch.inference_mode()
def layer0_last_row_logits(model, idx):
    """Pre-softmax logits [B, H, T] of layer 0's last query at temperature 1, rebuilt from the model's parts with the
    formula of model.logits (q.k * weight(d) / sqrt(hd) + bias(d)): the hook sees only probabilities, which underflow
    to exactly 0 far away under steep biases, so the logits cannot be recovered from them."""
    cfg, pe = model.config, model.pe
    pos, _ = pe.positions(idx, 0, None)
    block, hd = model.transformer.h[0], cfg.head_size
    # QK-norm, scale, rotation as the model's
    q, k, _ = block.attn.project(block.ln_1(model.embed(idx, pos)), pe, 0, pos)
    k, = reference.repeat_kv(q, k)
    att = (q[:, :, -1:] @ k.transpose(-2, -1))[:, :, 0].float()     # [B, H, T]
    d = (pos.rel[:, -1:] - pos.rel).long()                          # [B, T] distance from the last query
    dist = torch.arange(int(d.max()) + 1, dtype=torch.float32)
    w, b = pe.weight(0, dist), pe.bias(0, dist)
    if w is not None:
        att = att * w[:, d].permute(1, 0, 2)
    att = att / math.sqrt(hd)
    if b is not None:
        att = att + b[:, d].permute(1, 0, 2)
    if block.attn.window > 0:  # layer 0's own window (GPTConfig.layer_attn)
        att = att.masked_fill((d >= block.attn.window)[:, None], float('-inf'))
    return att


def layer0_closed_form_inputs(model, tokens, ends, L, bos=None):
    """Thesis 5.6.1: sort each logit vector, average over vectors and heads, centre -> (sigma, P_max of its softmax);
    nan where layer 0 masks keys, which the Gaussian-logit assumption (5.1) cannot describe."""
    idx = slices(tokens, np.asarray(ends) - L, L, bos)[0].to(model.transformer.wte.weight.device)
    logits = layer0_last_row_logits(model, idx).cpu()
    v = logits.sort(dim=-1, descending=True).values.reshape(-1, logits.size(-1)).double().mean(0)
    if not torch.isfinite(v).all():
        return float('nan'), float('nan')
    v = v - v.mean()
    return float(v.std(unbiased=False)), float(v.softmax(-1).max())


def analyse(r, cfg, split, bos=None):
    """One checkpoint: the statistics at L_tr and at each L_ex over the temperature grid, and the temperatures; bos:
    each input's first token."""
    L_tr, model = r.L_tr, r.model
    Ls = [ex_len(m, L_tr) for m in cfg['lengths']]
    ends, info = draw_ends(split, max(Ls + [L_tr]), cfg['n'], cfg['seed'])
    ends_tr, _ = draw_ends(split, max(Ls + [L_tr]), cfg['n_tr'], cfg['seed'] + 1)
    with Meter() as meter:
        tr_layers, tr_all = attention_stats(model, split.tokens, ends_tr, L_tr, 1.0, first_row(cfg['rows'], L_tr, L_tr),
                                            cfg['batch_tokens'], bos)
    print(f"{r.name}: L_tr={L_tr}: P_max {tr_all['pmax']:.4f}, entropy {tr_all['entropy']:.4f} ({meter.seconds:.1f} s)")
    sig_tr, pmax_tr0 = layer0_closed_form_inputs(model, split.tokens, ends, L_tr, bos)
    if math.isnan(sig_tr):
        print(f"note: {r.name}'s layer 0 masks keys, so Propositions 5.1/5.2 (Gaussian logits over every key) are n/a")
    per_len = []
    for m, L in zip(cfg['lengths'], Ls):
        with Meter() as meter:
            grid, progress = {}, Progress(f'{r.name} L_ex={L}', len(TAU_GRID), 'temperatures')
            for tau in TAU_GRID:  # a pretrained model at 16k on a CPU: minutes per temperature, so say where it is
                grid[tau] = attention_stats(model, split.tokens, ends, L, tau, first_row(cfg['rows'], L, L_tr),
                                            cfg['batch_tokens'], bos)
                print(f"  {r.name}: L_ex={L}, tau={tau}: P_max {grid[tau][1]['pmax']:.4f} "
                      f"({time.perf_counter() - meter.t0:.0f} s)", flush=True)
                progress.done()
        sig_ex, _ = layer0_closed_form_inputs(model, split.tokens, ends, L, bos)
        p = dict(mult=m, L_ex=L, depth=model.n_layers(L), sigma_ex_layer0=sig_ex,
                 tau_pmax=search_temperature(tr_all['pmax'], {t: g[1]['pmax'] for t, g in grid.items()}),
                 tau_entropy=search_temperature(tr_all['entropy'], {t: g[1]['entropy'] for t, g in grid.items()}),
                 tau_length_rule=length_rule(L, L_tr),
                 tau_prop51=prop51_tau(L_tr, L, pmax_tr0, sig_tr, sig_ex) if L > L_tr else 1.0,
                 tau_prop52=prop52_tau(L_tr, L, sig_tr, sig_ex) if L >= L_tr else float('nan'),
                 per_layer_tau1={k: v.round(5).tolist() for k, v in grid[1.0][0].items()}, all_tau1=grid[1.0][1],
                 grid={str(t): g[1] for t, g in grid.items()}, **meter.record())
        per_len.append(p)
        print(f"{r.name}: L_ex={L} ({m:g}x): P_max {p['all_tau1']['pmax']:.4f} entropy {p['all_tau1']['entropy']:.4f} "
              f"-> Alg.1 tau(P_max)={p['tau_pmax']} tau(H)={p['tau_entropy']}; "
              f"Prop 5.1 {prop51_text(p['tau_prop51'], L_tr, L, pmax_tr0, sig_tr, sig_ex)}, "
              f"Prop 5.2 {p['tau_prop52']:.3f}, log rule {p['tau_length_rule']:.3f} ({meter.seconds:.1f} s)",
              flush=True)
    # dense closed-form curves: only layer 0's last row is needed, which is cheap
    curves = []
    for k in range(int(4 * math.log2(max(Ls) / L_tr)) + 1):
        L = int(round(L_tr * 2 ** (k / 4)))
        s_ex, _ = layer0_closed_form_inputs(model, split.tokens, ends, L, bos)
        curves.append(dict(L_ex=L, prop51=prop51_tau(L_tr, L, pmax_tr0, sig_tr, s_ex),
                           prop52=prop52_tau(L_tr, L, sig_tr, s_ex), length_rule=length_rule(L, L_tr)))
    return dict(ckpt=r.name, pe=r.pe, L_tr=L_tr, rows=cfg['rows'], segments=info, segments_at_L_tr=cfg['n_tr'],
                at_L_tr=dict(per_layer={k: v.round(5).tolist() for k, v in tr_layers.items()}, all=tr_all,
                             depth=model.n_layers(L_tr)),
                layer0_sigma_tr=sig_tr, layer0_pmax_tr=pmax_tr0, lengths=per_len, closed_form_curves=curves)


def markdown(res):
    """Table 5.1 per layer (RegularGPT runs more layers at longer inputs: '-' where a layer does not run), then the
    temperatures."""
    cols = [(f"{res['L_tr']} (L_tr)", res['at_L_tr']['per_layer'], res['at_L_tr']['all'])] + \
           [(str(p['L_ex']), p['per_layer_tau1'], p['all_tau1']) for p in res['lengths']]
    fmt = dict(pmax='{:.4f}', entropy='{:.3f}')
    rows = [[layer] + [fmt[k].format(per[k][layer]) if layer < len(per[k]) else '-' for k in fmt for _, per, _ in cols]
            for layer in range(max(len(per['pmax']) for _, per, _ in cols))]
    rows.append(['all'] + [fmt[k].format(pooled[k]) for k in fmt for _, _, pooled in cols])
    which = dict(full='rows that see at least L_tr keys', last='the last row of each segment', all='every row')
    tau_arg = ','.join(f"{p['mult']:g}:{p['tau_pmax']}" for p in res['lengths'])
    return (f"### {res['ckpt']} (pe={res['pe']}, L_tr={res['L_tr']}, {res['segments_at_L_tr']} segments at L_tr, "
            f"{res['segments']['n_drawn']} per L_ex)\n\nAttention at temperature 1 (thesis Table 5.1), "
            f"{which[res['rows']]}: mean max-probability and entropy (nats).\n\n"
            + md_table(['layer'] + [f'P_max @{L}' for L, _, _ in cols] + [f'H @{L}' for L, _, _ in cols], rows)
            + "\nTemperatures: Algorithm 1 grid search (1.0..0.5), Propositions 5.1/5.2 (layer 0, last query row), "
              "length rule log_{L_ex} L_tr.\n\n"
            + md_table(['L_ex', 'Alg.1 P_max', 'Alg.1 entropy', 'Prop 5.1', 'Prop 5.2', 'log rule'],
                       [[p['L_ex'], p['tau_pmax'], p['tau_entropy'],
                         prop51_text(p['tau_prop51'], res['L_tr'], p['L_ex'], res['layer0_pmax_tr'],
                                     res['layer0_sigma_tr'], p['sigma_ex_layer0']),
                         f"{p['tau_prop52']:.3f}", f"{p['tau_length_rule']:.3f}"] for p in res['lengths']])
            + f"\nFor extrapolate.py: `--attn_temperature={tau_arg}` (P_max alignment)\n\n")


def figure(out):
    """One panel per checkpoint: the temperatures of Propositions 5.1/5.2 and the length rule against L_ex (lines), and
    Algorithm 1's (marks)."""
    fig, axes = plt().subplots(1, len(out), figsize=(5.5 * len(out), 4.2), squeeze=False)
    for ax, res in zip(axes[0], out):
        curves, per_len = res['closed_form_curves'], res['lengths']
        xs = [c['L_ex'] for c in curves]
        ax.plot(xs, [c['prop51'] for c in curves], '-', color='C0', label='Prop. 5.1 (P_max)')
        ax.plot(xs, [c['prop52'] for c in curves], '-', color='C1', label='Prop. 5.2 (entropy)')
        ax.plot(xs, [c['length_rule'] for c in curves], '--', color='gray', label=r'$\log_{L_{ex}} L_{tr}$')
        ax.plot([p['L_ex'] for p in per_len], [p['tau_pmax'] for p in per_len], 'o', color='C0', label='Alg. 1 P_max')
        ax.plot([p['L_ex'] for p in per_len], [p['tau_entropy'] for p in per_len], 'x', color='C1', ms=8,
                label='Alg. 1 entropy')
        ax.set_xscale('log', base=2)
        ax.set(xlabel='L_ex', ylabel='temperature tau', ylim=(0.4, 1.6))  # closed forms outside: assumptions fail
        ax.set_title(f"{res['ckpt']} (L_tr={res['L_tr']}; y clipped to 0.4..1.6)", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main(cfg):
    """Per checkpoint: statistics at L_tr and each L_ex, and the temperatures; returns one dict per checkpoint."""
    if cfg['rows'] not in ROWS:
        raise ConfigError(f"rows={cfg['rows']!r}; allowed: {', '.join(ROWS)}")
    if not cfg['lengths'] or (cfg['rows'] == 'full' and min(cfg['lengths']) < 1):
        raise ConfigError(f"lengths={cfg['lengths']}: give multiples of L_tr, each >= 1 with rows='full' (it averages "
                          f"the rows that see L_tr keys)")
    for key in ('n', 'n_tr', 'batch_tokens'):
        if cfg[key] < 1:
            raise ConfigError(f"{key}={cfg[key]} must be a positive integer")
    check_settings(cfg)
    if cfg['threads'] > 0:
        torch.set_num_threads(cfg['threads'])
    runs = load_runs(cfg['ckpt'], regular_impl=cfg['regular_impl'], device=cfg['device'], dtype=cfg['dtype'])
    split = load_split(data_of(runs, cfg['data_dir']), cfg['split'])
    for r in runs:  # every run's n before the first is measured: both draws hold the longest length
        longest = max([ex_len(m, r.L_tr) for m in cfg['lengths']] + [r.L_tr])
        for key in ('n', 'n_tr'):
            check_n(split, longest, cfg[key], f"{key}: the longest L_ex of {r.name}")
    bos = runs_bos(runs, cfg['bos'])
    out = [analyse(r, cfg, split, bos) for r in runs]
    md, fig = ''.join(markdown(res) for res in out), figure(out)
    print('\n' + md)
    write_outputs(cfg['out_dir'], cfg['name'], dict(split=split.name, tau_grid=TAU_GRID, rows=cfg['rows'],
                                                    settings=dict(bos=bos), results=out), md, fig)
    return out


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
