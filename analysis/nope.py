"""
Where NoPE's positions come from (thesis ch. 2): a causal Transformer without positional encoding still knows where
each token is, because a causal average over m tokens shrinks with m. Two checks on the random model of thesis 2.3:
the variance of layer 0's attention output against Lemma 2.3 (d^2 sigma^4 / m), and a probe that reads each token's
absolute position from the hidden states at every depth (thesis 2.2, Fig. 2.2).

  # the thesis' d = 768, H = 12, L = 512 and a 1000-step probe
  python -m analysis.nope
  python -m analysis.nope --sigmas=0.02 --probe_steps=300        # quicker

Writes <out_dir>/<name>.json, .md and .png.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from lexgpt.config import ConfigError, run
from lexgpt.outputs import md_table, plt, write_outputs
from lexgpt.progress import Meter, Progress
from model import GPT, GPTConfig

DEFAULTS = dict(
    sigmas=[0.2, 0.02, 0.002],  # weight scales of the variance check (Lemma 2.3 needs d^2 sigma^4 / H << 1)
    d=768,                      # variance check: model width
    heads=12,                   # variance check: attention heads
    L=512,                      # variance check: sequence length
    samples=32,                 # variance check: sequences
    probe_d=64,                 # probe: model width
    probe_heads=4,              # probe: attention heads
    probe_L=64,                 # probe: sequence length (positions to classify)
    probe_sigma=0.02,           # probe: scale of the weights and of the input vectors
    probe_layers=4,             # probe: depth of the frozen model (a probe reads each depth, 0 = the inputs)
    probe_steps=1000,           # probe: Adam steps
    probe_train=512,            # probe: sequences in the training pool
    probe_batch=2048,           # probe: token positions a step (thesis 2.8.1: 32 sequences of probe_L = 64)
    probe_lr=1e-3,              # probe: Adam's learning rate (thesis 2.8.1)
    seed=1337,
    threads=0,                  # torch CPU threads (0: torch's default)
    out_dir='out/nope',
    name='nope',                # output file stem
)


def random_nope(d, H, L, sigma, n_layer=1, seed=0):
    """The random model of thesis 2.3: pe='none', no biases, every weight matrix i.i.d. N(0, sigma^2) (W_o too: no
    GPT-2 depth scaling), LayerNorm with gamma = 1, beta = 0; inputs are fed through a hook on wte (run_on_vectors)."""
    torch.manual_seed(seed)
    config = GPTConfig(vocab_size=2, block_size=L, n_layer=n_layer, n_head=H, n_embd=d, pe='none', bias=False)
    model = GPT(config).eval()
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.Linear):
                mod.weight.normal_(0.0, sigma)
    return model


def run_on_vectors(model, x, watch=()):
    """Run the model on the vectors x [B, T, d] in place of token embeddings (no embedding lookup, thesis 2.2), with
    the forward hooks `watch` = [(module, hook)] attached meanwhile."""
    hooks = [model.transformer.wte.register_forward_hook(lambda mod, inp, out: x)]
    hooks += [module.register_forward_hook(hook) for module, hook in watch]
    try:
        model(torch.zeros(x.shape[:2], dtype=torch.long))
    finally:
        for h in hooks:
            h.remove()


@torch.no_grad()
def nope_variance(d=768, H=12, L=512, sigma=0.02, n_samples=100, seed=0):
    """Per-position variance of the layer-0 attention output o_m (after W_o) over samples and dimensions, against
    Lemma 2.3: Var = d^2 sigma^4 / m for 1-indexed position m. The lemma only needs LayerNorm(x_m) ~ N(0, I)
    (thesis 2.3.1), which holds for i.i.d. inputs of any scale; we feed unit-variance inputs because with
    x ~ N(0, sigma^2) and sigma^2 below LayerNorm's eps (1e-5, e.g. sigma = 0.002) the eps would shrink them."""
    model = random_nope(d, H, L, sigma, 1, seed)
    x = torch.randn(n_samples, L, d, generator=torch.Generator().manual_seed(seed + 1))
    return layer0_variance(model, x), d ** 2 * sigma ** 4 / np.arange(1, L + 1)  # thesis Lemma 2.3


@torch.no_grad()
def layer0_variance(model, x):
    """Per-position variance of the layer-0 attention output of the model run on the vectors x [B, T, d]."""
    got = {}
    run_on_vectors(model, x, [(model.transformer.h[0].attn, lambda m, i, o: got.update(o=o))])
    return got['o'].double().var(dim=(0, 2), unbiased=False).numpy()  # mean 0 by symmetry; pooled over samples, dims


def nope_probe(d=64, H=4, L=64, sigma=0.02, n_layer=4, steps=1000, n_train=512, batch_tokens=2048, lr=1e-3, seed=0,
               n_test=128):
    """Thesis 2.2 / 2.8.1: a frozen random NoPE model fed random vectors x ~ N(0, sigma^2); a two-layer ReLU probe per
    depth (0 = the inputs themselves) classifies the absolute position of every token from LayerNorm(hidden state).
    The model is frozen, so its features are computed once for a pool of n_train sequences (the thesis draws fresh
    inputs for 5000 x 32 sequences, too slow here); the MAE [n_layer+1, L] is measured on n_test fresh sequences."""
    model = random_nope(d, H, L, sigma, n_layer, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    torch.manual_seed(seed + 2)

    @torch.no_grad()
    def features(n):
        x = torch.randn(n, L, d, generator=gen) * sigma
        hs = [x]
        run_on_vectors(model, x, [(b, lambda mod, inp, out: hs.append(out)) for b in model.transformer.h])
        # the final LayerNorm of thesis Fig. 2.1 (gamma 1, beta 0): the probe cannot just read the overall scale
        return torch.stack([F.layer_norm(h, (d,)).reshape(n * L, d) for h in hs])   # [depths, n*L, d]

    train = features(n_train)
    target = torch.arange(L).repeat(n_train)
    probes = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, L)) for _ in range(n_layer + 1)])
    opt = torch.optim.Adam(probes.parameters(), lr=lr)
    progress = Progress('probe', steps, 'steps')
    for step in range(steps):
        ix = torch.randint(len(target), (batch_tokens,), generator=gen)
        loss = sum(F.cross_entropy(p(f[ix]), target[ix]) for p, f in zip(probes, train))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        progress.done()
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            print(f"probe step {step}: loss summed over depths {loss.item():.3f}", flush=True)
    with torch.no_grad():
        test = features(n_test)
        pos = torch.arange(L).repeat(n_test)
        # point prediction = the median of the probe's distribution, the best guess under absolute error: a probe
        # that learned nothing predicts the middle, MAE L/4, the baseline of thesis Fig. 2.2 (argmax would give ~L/3)
        median = lambda logits: (logits.softmax(-1).cumsum(-1) < 0.5).sum(-1)
        return np.stack([(median(p(f)) - pos).abs().double().view(n_test, L).mean(0).numpy()
                         for p, f in zip(probes, test)])


def check(cfg):
    for key in ('d', 'heads', 'L', 'samples', 'probe_d', 'probe_heads', 'probe_L', 'probe_layers', 'probe_steps',
                'probe_train', 'probe_batch'):
        if cfg[key] < 1:
            raise ConfigError(f"{key}={cfg[key]} must be a positive integer")
    for d, h in (('d', 'heads'), ('probe_d', 'probe_heads')):
        if cfg[d] % cfg[h]:
            raise ConfigError(f"{d}={cfg[d]} is not divisible by {h}={cfg[h]}")
    if not cfg['sigmas'] or min(cfg['sigmas']) <= 0 or cfg['probe_sigma'] <= 0:
        raise ConfigError(f"sigmas={cfg['sigmas']} and probe_sigma={cfg['probe_sigma']} must be positive")
    if cfg['probe_lr'] <= 0:
        raise ConfigError(f"probe_lr={cfg['probe_lr']} must be positive")


def measure(cfg):
    """Both checks -> ({variance: one row per sigma, probe: the MAE per depth and position}, the MAE unrounded)."""
    # every setting that shapes the numbers, so the JSON alone says how it was made
    res = dict(settings={k: v for k, v in cfg.items() if k not in ('threads', 'out_dir', 'name')}, variance=[],
               probe=None)
    for sigma in cfg['sigmas']:
        with Meter() as meter:
            var, lemma = nope_variance(cfg['d'], cfg['heads'], cfg['L'], sigma, cfg['samples'], cfg['seed'])
        ratio = var / lemma
        print(f"sigma={sigma}: simulated / Lemma 2.3 variance: median {np.median(ratio):.3f}, range "
              f"{ratio.min():.3f}..{ratio.max():.3f} ({meter.seconds:.1f} s)", flush=True)
        res['variance'].append(dict(sigma=sigma, var=var.tolist(), lemma=lemma.tolist(), **meter.record()))
    with Meter() as meter:
        mae = nope_probe(cfg['probe_d'], cfg['probe_heads'], cfg['probe_L'], cfg['probe_sigma'], cfg['probe_layers'],
                         cfg['probe_steps'], cfg['probe_train'], cfg['probe_batch'], cfg['probe_lr'], seed=cfg['seed'])
    res['probe'] = dict(d=cfg['probe_d'], heads=cfg['probe_heads'], L=cfg['probe_L'], sigma=cfg['probe_sigma'],
                        steps=cfg['probe_steps'], mae=mae.round(3).tolist(), mae_mean=mae.mean(1).tolist(),
                        **meter.record())
    return res, mae


def report(cfg, res, mae):
    """-> (markdown, figure) of measure()'s results: the variance against the lemma, the probe's error by position."""
    d, L, PL = cfg['d'], cfg['L'], cfg['probe_L']
    fig, (ax1, ax2) = plt().subplots(1, 2, figsize=(11, 4.2))
    md_rows, m = [], np.arange(1, L + 1)
    for row in res['variance']:
        sigma, var, lemma = row['sigma'], np.array(row['var']), np.array(row['lemma'])
        ratio = var / lemma
        md_rows.append([sigma, f"{d ** 2 * sigma ** 4 / cfg['heads']:.2e}", f'{np.median(ratio):.3f}',
                        f'{ratio.min():.3f}..{ratio.max():.3f}'])
        line, = ax1.plot(np.log(m), np.log(var), lw=1.2, label=f'simulation sigma={sigma}')
        ax1.plot(np.log(m), np.log(lemma), '--', color=line.get_color(), lw=1, label=f'Lemma 2.3 sigma={sigma}')
    ax1.set_xlabel('log position m')
    ax1.set_ylabel('log variance of layer-0 attention output')
    ax1.set_title(f"random NoPE layer 0 (d={d}, H={cfg['heads']}, {cfg['samples']} samples)", fontsize=9)
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    k = max(1, PL // 32)  # moving average over k positions, for readable curves
    for depth in range(len(mae)):
        ax2.plot(np.arange(k - 1, PL), np.convolve(mae[depth], np.ones(k) / k, mode='valid'), lw=1.2,
                 label=f'{depth} layers' if depth else 'inputs (0 layers)')
    ax2.axhline(PL / 4, color='gray', ls=':', lw=0.8)
    ax2.set_xlabel('position')
    ax2.set_ylabel('probe MAE (positions)')
    ax2.set_title(f'position probe on a frozen random NoPE model (L={PL}; dotted: predict the middle)', fontsize=8)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    md = ("Layer-0 attention-output variance of a random NoPE model vs Lemma 2.3 (d^2 sigma^4 / m); the lemma assumes "
          "near-uniform attention, i.e. logit variance d^2 sigma^4 / H << 1 (Lemma 2.2, Property 2.1).\n\n"
          + md_table(['sigma', 'logit variance (Lemma 2.2)', 'median sim/lemma', 'range sim/lemma'], md_rows)
          + f"\nPosition probe (thesis Fig. 2.2 set-up, d={cfg['probe_d']}, L={PL}, {cfg['probe_steps']} steps): "
            f"mean absolute error in positions (predicting the middle gives {PL / 4:g}).\n\n"
          + md_table(['layers'] + list(range(len(mae))), [['MAE'] + [f'{v:.1f}' for v in mae.mean(1)]]))
    return md, fig


def main(cfg):
    """Both checks; returns {variance: one row per sigma, probe: the MAE per depth and position}."""
    check(cfg)
    if cfg['threads'] > 0:
        torch.set_num_threads(cfg['threads'])
    res, mae = measure(cfg)
    md, fig = report(cfg, res, mae)
    print('\n' + md)
    write_outputs(cfg['out_dir'], cfg['name'], res, md, fig)
    return res


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
