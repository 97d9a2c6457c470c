"""
Regular languages and length generalization with RegularGPT (thesis ch. 6: section 6.4, Tables 6.1, 6.2,
Figures 6.3, 6.4a), against a causal Transformer and an LSTM. The tasks (and their length ranges and seeded test
sets) live in regular_tasks.py; this script holds the models, training, evaluation, the analyses and the tables.

  python regular_lang.py --task=parity_check --model=regulargpt --chunk_size=2 --seed=0 --max_steps=1500
  python regular_lang.py --mode=table --tasks=parity_check,cycle_navigation --seeds=0,1,2

Training: a uniform curriculum over the training lengths, one length per batch. Score: final-answer accuracy
averaged over the test lengths (Deletang tasks: trained on 1..40, tested on 41..500; Bhattamishra tasks: 1..50,
51..100, lengths with a single class skipped).

Models read the answer at the last position. GPT models get the classes as extra vocabulary entries and
read their logits there (the input never contains them); RegularGPT's input is left-padded with a pad symbol
to a power of C (see GPTClassifier for why masking alone cannot work). Outputs go to out_dir: one JSON per run
(per-length accuracies, score, settings), plots as PNG next to JSON, and for --mode=table the Table 6.1/6.2 layouts.
"""
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from lexgpt import config
from lexgpt.config import ConfigError
from lexgpt.evaluation import cumulative_from_end, embedding_grad_norms, erf_tokens
from lexgpt.loading import save_checkpoint
from lexgpt.outputs import command_line, environment, md_table, plt
from lexgpt.progress import Progress, PROGRESS_SECONDS
from model import GPT, GPTConfig, RegularGPT, n_levels
from lexgpt.regular_tasks import TASKS, get_task

DEFAULTS = dict(
    mode='train',               # train (one task, model, seed) | table (Tables 6.1/6.2 over tasks x models x seeds)
    task='parity_check',        # one of regular_tasks.TASKS
    model='regulargpt',         # regulargpt (chunk_size C), regulargpt_c2, ..., transformer, transformer_randL, lstm
    chunk_size=2,               # C of model='regulargpt'
    seed=0,                     # model initialisation and training strings (the test strings do not depend on it)
    out_dir='out/regular',      # run JSONs, plots, table.md / table.json
    # model size: Table 6.5 uses hidden 256 and 8 heads; the CPU default is smaller (see results/README.md)
    n_embd=64,                  # hidden size of RegularGPT and the Transformer
    n_head=4,                   # attention heads of RegularGPT and the Transformer
    n_layer=5,                  # depth of the Transformer baseline (RegularGPT's depth is K * ceil(log_C T))
    transformer_pe='rope',      # any pe of model.py except 'regular' (the thesis baseline uses Transformer-XL's)
    lstm_hidden=256,            # one LSTM layer of 256 (Table 6.1's RNN)
    dropout=0.0,                # RegularGPT and Transformer: embedding, attention and residual dropout
    # optimisation (Table 6.5: Adam with lr in {1e-4, 3e-4, 5e-4}, batch 128, 100k steps; clip 1.0)
    learning_rate=5e-4,         # Adam, constant
    batch_size=128,             # strings per step, all of one length
    max_steps=1500,             # training steps
    grad_clip=1.0,              # gradient norm clip (0: none)
    # lengths: 0 means the task family's default (Deletang 40 / 41..500, Bhattamishra 50 / 51..100)
    train_max_len=0,            # train on the usable lengths 1..train_max_len
    test_min_len=0,             # test from this length
    test_max_len=0,             # test up to this length
    test_stride=0,              # test every test_stride-th length (plus the last);
                                # 0: 10 for Deletang (460 lengths), else 1
    test_samples=32,            # strings per test length (the test set is seeded, and the same for every model)
    eval_batch=64,              # strings per forward pass at test time
    p_one=0.5,                  # parity_check: P(sigma_i = 1) during training
    p_sweep=[0.1, 0.3, 0.5, 0.7, 0.9],  # parity_check: test probabilities of Table 6.2 ([] to skip)
    sweep_stride=5,             # the sweep tests every sweep_stride-th of the test lengths (CPU)
    save_model=False,           # True: also write out_dir/<run>.pt (the trained weights, for later analysis)
    analyze=True,               # regulargpt on parity_check / cycle_navigation: PCA (Fig. 6.3) and ERF (Fig. 6.4a)
    analyze_len=500,            # input length of those analyses (the thesis uses 500)
    # --mode=table: runs every missing (task, model, seed), then writes the tables; existing run JSONs are reused
    train_missing=True,         # False: only tabulate the run JSONs already in out_dir ('-' for missing ones)
    tasks=list(TASKS),          # --mode=table: the rows, e.g. --tasks=parity_check,D_2
    models=['regulargpt_c2', 'transformer', 'lstm'],  # --mode=table: the columns
    seeds=[0],                  # --mode=table: seeds per (task, model), e.g. --seeds=0,1,2
    threads=1,                  # torch threads per process (CPU is shared)
)


# --------------------------------------------------------------------------------------------
# Models: x [B, L] -> class logits [B, n_classes]
# --------------------------------------------------------------------------------------------

class GPTClassifier(nn.Module):
    """A GPT whose vocabulary is the task's symbols, then its classes, then a pad symbol; the answer is read at
    the last position. pad_base = C (RegularGPT): the input is left-padded with the pad symbol to length
    C^ceil(log_C T), so every chunk at every level is full (thesis 6.2.1, footnote 1). The pad is attended like
    any symbol and can learn to be the identity transition. Masking missing keys instead (what RegularGPT does
    for language modelling) cannot solve PARITY: a query that sees one 'b' alone and one that sees the pair 'bb'
    get the same attention output, so 'bbb' and 'bbbb' would get the same answer."""

    def __init__(self, net, n_symbols, n_classes, pad_base=0):
        super().__init__()
        self.net, self.offset, self.n_classes, self.pad_base = net, n_symbols, n_classes, pad_base

    def prepare(self, x):
        if not self.pad_base:
            return x
        T = x.size(1)
        pad = self.pad_base ** n_levels(T, self.pad_base) - T
        return torch.cat([x.new_full((x.size(0), pad), self.offset + self.n_classes), x], dim=1)

    def forward(self, x):
        return self.net(self.prepare(x))[0][:, -1, self.offset:self.offset + self.n_classes]


class LSTMClassifier(nn.Module):
    def __init__(self, n_symbols, n_classes, hidden):
        super().__init__()
        self.emb = nn.Embedding(n_symbols, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.lstm(self.emb(x))[0][:, -1])


MODELS = ('regulargpt', 'regulargpt_cN', 'transformer', 'transformer_randL', 'lstm')


def build(task, cfg):
    name, S = cfg['model'], len(task.symbols)
    V = S + task.n_classes + 1  # symbols, classes, pad
    if name == 'regulargpt' or name.startswith('regulargpt_c'):
        C = chunk_of(name, cfg['chunk_size'])
        if not C or C < 2:
            raise ValueError(f"unknown model {name!r}: regulargpt_cN needs a chunk size N >= 2, e.g. regulargpt_c3")
        # K = 1 for regular languages (thesis 6.2.2: thickening only for natural language); 'reduce' is O(T)
        gc = GPTConfig(vocab_size=V, n_embd=cfg['n_embd'], n_head=cfg['n_head'], pe='regular', chunk_size=C,
                       dropout=cfg['dropout'], thickness=1, regular_impl='reduce', block_size=task.train_max)
        return GPTClassifier(RegularGPT(gc), S, task.n_classes, pad_base=C)
    if name == 'transformer' or name.startswith('transformer_rand'):
        if cfg['transformer_pe'] == 'regular':
            raise ValueError("transformer_pe='regular' is RegularGPT's; use --model=regulargpt")
        # transformer_randL: positions a sorted random subset of [0, L) (Ruoss et al. 2023), L above every test length
        rand = name[len('transformer_rand'):] if name != 'transformer' else '0'
        if not rand.isdigit() or (name != 'transformer' and int(rand) < task.test_range[1]):
            raise ValueError(f"unknown model {name!r}: transformer_randL needs L >= the longest test length "
                             f"{task.test_range[1]}, e.g. transformer_rand1024")
        gc = GPTConfig(vocab_size=V, n_embd=cfg['n_embd'], n_head=cfg['n_head'], n_layer=cfg['n_layer'],
                       dropout=cfg['dropout'], pe=cfg['transformer_pe'], block_size=task.train_max,
                       randomized_positions=int(rand))
        return GPTClassifier(GPT(gc), S, task.n_classes)
    if name == 'lstm':
        return LSTMClassifier(S, task.n_classes, cfg['lstm_hidden'])
    raise ValueError(f"unknown model {name!r}; choose one of: {', '.join(MODELS)} (N = chunk size, L = L_max)")


def chunk_of(model, chunk_size):
    """The chunk size C of a RegularGPT model name (chunk_size for plain 'regulargpt'), None for the baselines."""
    if model == 'regulargpt':
        return chunk_size
    suffix = model[len('regulargpt_c'):] if model.startswith('regulargpt_c') else ''
    return int(suffix) if suffix.isdigit() else None


def run_name(cfg):
    m = cfg['model']
    if m == 'regulargpt':
        m = f"regulargpt_c{cfg['chunk_size']}"
    return f"{cfg['task']}__{m}__s{cfg['seed']}"


@torch.no_grad()
def accuracy(model, task, L, n, batch, p_one=0.5):
    x, y = task.test_set(L, n, p_one)
    correct = 0
    for s in range(0, n, batch):
        pred = model(torch.from_numpy(x[s:s + batch])).argmax(-1)
        correct += (pred == torch.from_numpy(y[s:s + batch])).sum().item()
    return correct / n


def evaluate(model, task, lengths, cfg, p_one=0.5):
    model.eval()
    acc, progress = {}, Progress(f"{task.name}: accuracy", len(lengths), 'lengths')
    for L in lengths:
        acc[L] = accuracy(model, task, L, cfg['test_samples'], cfg['eval_batch'], p_one)
        progress.done()
    model.train()
    return acc


def train_run(cfg, plot=True):
    """Train one (task, model, seed), evaluate at every test length, write out_dir/<run>.json (and plots)."""
    task = get_task(cfg['task'])
    train_lengths, test_lengths = task.length_ranges(cfg['train_max_len'], cfg['test_min_len'], cfg['test_max_len'],
                                                     cfg['test_stride'])
    torch.manual_seed(cfg['seed'])
    rng = np.random.default_rng(cfg['seed'])
    model = build(task, cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg['learning_rate'])
    t0, losses = time.time(), []
    shown = t0  # a line every 250 steps, and at least every PROGRESS_SECONDS when steps are slow (long inputs)
    for step in range(cfg['max_steps']):
        L = int(rng.choice(train_lengths))  # uniform curriculum: one length per batch
        x, y = task.sample(rng, L, cfg['batch_size'], cfg['p_one'])
        loss = F.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg['grad_clip'] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg['grad_clip'])
        opt.step()
        losses.append(loss.item())
        if step % 250 == 0 or step == cfg['max_steps'] - 1 or time.time() - shown >= PROGRESS_SECONDS:
            shown = time.time()
            print(f"{run_name(cfg)} step {step} L={L} loss {np.mean(losses[-50:]):.4f} {time.time() - t0:.0f}s",
                  flush=True)
    train_time = time.time() - t0
    t0 = time.time()
    acc = evaluate(model, task, test_lengths, cfg)
    same = evaluate(model, task, train_lengths[-1:], cfg)[train_lengths[-1]]
    res = dict(command=command_line(), environment=environment(), run=run_name(cfg), task=task.name,
               model=cfg['model'], seed=cfg['seed'],
               score=float(np.mean(list(acc.values()))), same_length_acc=same,
               per_length={str(k): v for k, v in acc.items()},
               train_lengths=[train_lengths[0], train_lengths[-1]], test_lengths=[test_lengths[0], test_lengths[-1]],
               n_test_lengths=len(test_lengths), train_time_s=round(train_time, 1),
               n_params=sum(p.numel() for p in model.parameters()),
               loss_curve=[float(np.mean(losses[i:i + 50])) for i in range(0, len(losses), 50)],
               config={k: v for k, v in cfg.items() if k not in ('tasks', 'models', 'seeds')})
    if task.name == 'parity_check' and cfg['p_sweep']:  # Table 6.2: same length (train max) and extrapolation
        res['p_sweep'] = {}
        for p in cfg['p_sweep']:
            same_p = evaluate(model, task, train_lengths[-1:], cfg, p)[train_lengths[-1]]
            longer = evaluate(model, task, test_lengths[::cfg['sweep_stride']], cfg, p)
            res['p_sweep'][str(p)] = dict(same=same_p, extrapolation=float(np.mean(list(longer.values()))))
    res['eval_time_s'] = round(time.time() - t0, 1)
    os.makedirs(cfg['out_dir'], exist_ok=True)
    path = os.path.join(cfg['out_dir'], run_name(cfg))
    if isinstance(getattr(model, 'net', None), RegularGPT) and cfg['analyze'] and task.has_window_state:
        res['pca'] = pca_plot(model, task, path + '_pca.png', L=cfg['analyze_len'])
        res['erf'] = erf_plot(model, task, path + '_erf.png',
                              sorted({train_lengths[-1], cfg['analyze_len'] // 2, cfg['analyze_len']}))
    with open(path + '.json', 'w') as f:
        json.dump(res, f, indent=1)
    if cfg['save_model']:
        save_checkpoint(model.state_dict(), path + '.pt')  # atomic: an interrupted save leaves the previous file whole
    if plot:
        plot_lengths({cfg['model']: [res]}, task.name, path + '.png', cfg['chunk_size'])
    print(f"{run_name(cfg)}: extrapolation accuracy {100 * res['score']:.1f}% over {len(test_lengths)} lengths "
          f"{test_lengths[0]}..{test_lengths[-1]}, same length {100 * same:.1f}%, train {train_time:.0f}s", flush=True)
    return res


# --------------------------------------------------------------------------------------------
# Analysis: PCA of layer outputs (Figure 6.3), receptive field by input gradients (Figure 6.4a)
# --------------------------------------------------------------------------------------------

@torch.no_grad()
def pca_plot(model, task, png, L=500, n=4):
    """Every layer's output at every position of n length-L strings, projected on the top two principal
    components (numpy SVD). With C = 2, layer l at position i should encode the transition of the last
    2^(l+1) tokens (thesis 6.6.2-6.6.3), so points are coloured by that transition; returns how much of the
    2-D variance the transition explains (between-class / total)."""
    pyplot = plt()
    net, C = model.net, model.net.config.chunk_size
    x, _ = task.sample(np.random.default_rng(7), L, n)
    xp = model.prepare(torch.from_numpy(x))
    outs = []
    net.eval()
    net(xp, targets=xp, regular_impl='gather', collect=outs)
    H = torch.stack(outs, 1)[:, :, -L:].numpy()           # [n, layers, L, D], pad positions dropped
    lab = np.array([[[task.window_state(x[b], i, C ** (l + 1)) for i in range(L)] for l in range(H.shape[1])]
                    for b in range(n)])
    Z = H.reshape(-1, H.shape[-1])
    Z = Z - Z.mean(0)
    _, s, Vt = np.linalg.svd(Z, full_matrices=False)
    P, lab = Z @ Vt[:2].T, lab.reshape(-1)
    between = sum((lab == k).sum() * ((P[lab == k].mean(0)) ** 2).sum() for k in np.unique(lab))
    explained = float(between / (P ** 2).sum())
    fig, ax = pyplot.subplots(figsize=(4.5, 4))
    keep = np.random.default_rng(0).permutation(len(P))[:4000]
    sc = ax.scatter(P[keep, 0], P[keep, 1], c=lab[keep], cmap='tab10', s=4, vmin=0, vmax=9)
    ax.legend(*sc.legend_elements(), title='transition', fontsize=7, loc='best')
    top2 = 100 * (s[:2] ** 2).sum() / (s ** 2).sum()  # % of the variance on PC1 and PC2
    ax.set_title(f'{task.name}: layer outputs, L={L}, all {H.shape[1]} layers\n'
                 f'PC1+2 = {top2:.0f}% var, transition explains {100 * explained:.0f}%',
                 fontsize=8)
    ax.set_xlabel('PC1'), ax.set_ylabel('PC2')
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    pyplot.close(fig)
    model.train()
    return dict(png=os.path.basename(png), pc12_variance=float((s[:2] ** 2).sum() / (s ** 2).sum()),
                transition_explains=explained, n_classes_seen=int(len(np.unique(lab))))


def normalized_gradient(model, x, y):
    """s_m = ||g_m|| / sum_n ||g_n||, g_m = d loss / d e_m for every input embedding e_m (thesis 4.5.1),
    normalised per string and then averaged over the batch; RegularGPT's pad positions are left out."""
    model.eval()
    try:
        g = embedding_grad_norms(model, model.net.transformer.wte, lambda: F.cross_entropy(
            model(torch.from_numpy(x)), torch.from_numpy(y), reduction='sum'))[:, -x.shape[1]:]
    finally:
        model.train()
    return (g / g.sum(-1, keepdim=True)).mean(0).numpy()


def erf_plot(model, task, png, lengths=(40, 200, 500), n=32):
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(4.5, 3.5))
    out = {}
    for L in lengths:
        x, y = task.sample(np.random.default_rng(L), L, n)
        s = normalized_gradient(model, x, y)
        c = cumulative_from_end(s)
        # erf90: the fewest most recent tokens that hold 90% of the gradient mass (the whole string: L)
        out[str(L)] = dict(c_first=float(c[0]), c_half=float(c[L // 2]), erf90=erf_tokens(s, 0.9))
        ax.plot(np.arange(L), c, label=f'L={L}')
    ax.set_xlabel('input position m'), ax.set_ylabel('cumulative normalized gradient $c_m$')
    ax.set_title(f'RegularGPT receptive field, {task.name}', fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    pyplot.close(fig)
    return out


def plot_lengths(results, task, png, chunk_size):
    """results: model -> list of run dicts (seeds); the mean accuracy per test length, one line per model."""
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(5, 3.2))
    for i, (m, runs) in enumerate(results.items()):
        Ls = sorted(int(k) for k in runs[0]['per_length'])
        acc = np.mean([[r['per_length'][str(L)] for L in Ls] for r in runs], 0)
        # wide-to-thin, differently dashed lines, so that models at 100% all stay visible
        ax.plot(Ls, 100 * acc, label=f'{m} ({len(runs)} seed{"s" * (len(runs) > 1)})', lw=2.6 - 0.7 * (i % 3),
                ls=['-', '--', ':'][i % 3])
    tested = [int(k) for r in results.values() for k in r[0]['per_length']]
    lo, hi = min(tested), max(tested)
    # RegularGPT gains a level after each power of C
    for C in sorted({chunk_of(m, chunk_size) for m in results} - {None}):
        for k in range(1, n_levels(hi, C)):
            if lo <= C ** k < hi:
                ax.axvline(C ** k + 0.5, color='0.75', lw=0.8, zorder=0)
    ax.set_ylim(-2, 102), ax.set_xlabel('test length (grey: RegularGPT depth + 1)'), ax.set_ylabel('accuracy (%)')
    ax.set_title(f'{task}: extrapolation', fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    pyplot.close(fig)


# --------------------------------------------------------------------------------------------
# Table mode (Tables 6.1 and 6.2)
# --------------------------------------------------------------------------------------------

# Table 6.1 of the thesis, Max / Avg over 3 seeds (%): RNN, Transformer, RegularGPT C=2, RegularGPT C=3
THESIS_6_1 = {
    'even_pairs': ('100.0 / 100.0', '99.7 / 73.2', '100.0 / 89.3', '100.0 / 96.6'),
    'modular_arithmetic': ('100.0 / 100.0', '21.9 / 20.3', '96.4 / 82.6', '21.2 / 20.5'),
    'parity_check': ('100.0 / 98.9', '52.3 / 50.1', '100.0 / 100.0', '100.0 / 88.7'),
    'cycle_navigation': ('100.0 / 100.0', '21.7 / 20.6', '100.0 / 100.0', '100.0 / 78.6'),
    'D_2': ('100.0 / 100.0', '100.0 / 80.1', '100.0 / 100.0', '99.8 / 96.5'),
    'D_3': ('100.0 / 100.0', '100.0 / 77.8', '100.0 / 99.7', '98.6 / 93.0'),
    'D_4': ('100.0 / 100.0', '100.0 / 82.6', '100.0 / 98.7', '97.7 / 91.6'),
    'D_12': ('100.0 / 100.0', '100.0 / 80.3', '100.0 / 99.8', '94.1 / 90.4'),
    'tomita_3': ('100.0 / 100.0', '100.0 / 94.4', '100.0 / 99.7', '100.0 / 99.9'),
    'tomita_4': ('100.0 / 100.0', '100.0 / 70.0', '100.0 / 99.8', '100.0 / 99.3'),
    'tomita_5': ('100.0 / 100.0', '74.5 / 74.5', '100.0 / 99.8', '98.2 / 84.1'),
    'tomita_6': ('100.0 / 100.0', '50.0 / 50.0', '100.0 / 98.5', '100.0 / 65.7'),
}


def table(cfg):
    for t in cfg['tasks']:
        get_task(t)
    os.makedirs(cfg['out_dir'], exist_ok=True)
    runs = {}
    for t in cfg['tasks']:
        for m in cfg['models']:
            for s in cfg['seeds']:
                c = dict(cfg, task=t, model=m, seed=s)
                path = os.path.join(cfg['out_dir'], run_name(c) + '.json')
                if os.path.exists(path):
                    res = json.load(open(path))
                elif cfg['train_missing']:
                    res = train_run(c, plot=False)
                else:
                    continue
                runs.setdefault(t, {}).setdefault(m, []).append(res)
    thesis = ['thesis RNN', 'thesis Transformer', 'thesis RegularGPT C=2', 'thesis RegularGPT C=3']
    rows, summary = [], {}
    for t in cfg['tasks']:
        cells = []
        for m in cfg['models']:
            if not runs.get(t, {}).get(m):
                cells.append('-')
                continue
            sc = [100 * r['score'] for r in runs[t][m]]
            summary[f'{t}/{m}'] = dict(max=max(sc), avg=float(np.mean(sc)), seeds=len(sc), scores=sc)
            # dropout is tuned per task (results/README.md)
            drop = sorted({r.get('config', {}).get('dropout', 0.0) for r in runs[t][m]})
            note = ', dropout ' + '/'.join(f'{d:g}' for d in drop) if drop != [0.0] else ''
            cells.append(f'{max(sc):.1f} / {np.mean(sc):.1f} ({len(sc)}{note})')
        rows.append([t] + cells + list(THESIS_6_1[t]))
        if runs.get(t):
            plot_lengths(runs[t], t, os.path.join(cfg['out_dir'], f'{t}_lengths.png'), cfg['chunk_size'])
    text = ('Extrapolation accuracy, Max / Avg over seeds (number of seeds), in %: Deletang tasks trained on 1..40 and '
            'tested on 41..500, Bhattamishra tasks trained on 1..50 and tested on 51..100.\n\n' +
            md_table(['Task'] + cfg['models'] + thesis, rows))
    sweep = [(m, r['p_sweep']) for m in cfg['models']
             for r in runs.get('parity_check', {}).get(m, []) if 'p_sweep' in r]
    if sweep:
        ps = list(sweep[0][1])
        text += '\nPARITY with P(sigma_i = 1) changed at test time (Table 6.2), mean over seeds, in %:\n\n'
        rows = [[setting, m] + [f"{100 * np.mean([r[p][setting] for r in rs]):.1f}" for p in ps]
                for setting in ('same', 'extrapolation') for m in cfg['models']
                for rs in [[sw for mm, sw in sweep if mm == m]] if rs]
        text += md_table(['Setting', 'Model'] + ps, rows)
    by_depth = {}  # (task, model) -> {levels: accuracies}; errors that grow with depth beyond training show here
    chunks = {m: chunk_of(m, cfg['chunk_size']) for m in cfg['models']}
    for t in cfg['tasks']:
        for m in [m for m in cfg['models'] if chunks[m]]:
            for r in runs.get(t, {}).get(m, []):
                for L, a in r['per_length'].items():
                    by_depth.setdefault((t, m), {}).setdefault(n_levels(int(L), chunks[m]), []).append(a)
    if by_depth:
        cols = sorted({d for v in by_depth.values() for d in v})
        text += ('\nRegularGPT accuracy by depth (ceil(log_C L) levels; the training lengths reach "train"), '
                 'mean over seeds and lengths, in %:\n\n')
        rows = [[t, m, n_levels(runs[t][m][0]['train_lengths'][1], chunks[m])] +
                [f'{100 * np.mean(v[d]):.1f}' if d in v else '' for d in cols] for (t, m), v in by_depth.items()]
        text += md_table(['Task', 'Model', 'train'] + [f'{d} levels' for d in cols], rows)
    with open(os.path.join(cfg['out_dir'], 'table.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(cfg['out_dir'], 'table.json'), 'w') as f:
        json.dump(dict(command=command_line(), environment=environment(), **summary), f, indent=1)
    print(text)


def main(cfg):
    for key in ('batch_size', 'max_steps', 'test_samples', 'eval_batch', 'sweep_stride', 'threads'):
        if cfg[key] < 1:  # max_steps=0 would write an untrained model's accuracies as a result
            raise ConfigError(f"{key}={cfg[key]} must be >= 1")
    torch.set_num_threads(cfg['threads'])
    if cfg['mode'] == 'train':
        return train_run(cfg)
    if cfg['mode'] == 'table':
        return table(cfg)
    raise ConfigError(f"unknown mode {cfg['mode']!r}; allowed: train, table (the RegularGPT forward-time benchmark "
                      f"is bench.py's --mode=regular)")


if __name__ == '__main__':
    config.run(main, DEFAULTS, __doc__)
