"""
RoPE's context-extension methods, GPTConfig.rope_scaling with factor s = rope_scale: each changes the inverse
frequencies of the rotation (and YaRN the size of q and k). The frequencies are computed as transformers'
ROPE_INIT_FUNCTIONS compute them, bit for bit (tests/test_rope_scaling.py), so that a converted pretrained model
rotates exactly as it was trained, and the same recipes apply to our own models.
"""
import math

import torch

SCALINGS = ('', 'pi', 'ntk', 'dynamic', 'yarn', 'llama3')
# the GPTConfig fields of one extension: they come and go together
FIELDS = ('rope_scaling', 'rope_scale', 'rope_original_len', 'rope_beta_fast', 'rope_beta_slow', 'rope_attn_factor',
          'rope_truncate')


def over_checkpoint(model_args, asked):
    """The one rule for settings laid over a checkpoint's model settings (an evaluation's overrides, a fine-tune's
    command line): a setting asked for replaces the checkpoint's, every other one keeps it. An extension asked for
    replaces the checkpoint's whole (its other fields go back to GPTConfig's defaults unless asked too), and an
    extension counts from the length the checkpoint was trained on, not from a new block_size."""
    out = dict(model_args)
    if 'rope_scaling' in asked:
        out = {k: v for k, v in out.items() if k not in FIELDS}
    out.update(asked)
    if out.get('rope_scaling') and not out.get('rope_original_len'):
        out['rope_original_len'] = model_args.get('rope_original_len') or model_args['block_size']
    return out


def check(config):
    """Refuse rope settings that cannot build a model, in one line naming the values and what is allowed."""
    if config.rope_scaling not in SCALINGS or config.rope_scale < 1.0:
        raise ValueError(f"rope_scaling={config.rope_scaling!r}, rope_scale={config.rope_scale}: allowed "
                         f"{', '.join(map(repr, SCALINGS))} with rope_scale >= 1")
    fast, slow = band(config)
    if (min(config.rope_beta_fast, config.rope_beta_slow, config.rope_attn_factor, config.rope_original_len) < 0
            or (fast <= slow and config.rope_scaling in ('yarn', 'llama3'))):
        raise ValueError(f"rope_beta_fast={config.rope_beta_fast}, rope_beta_slow={config.rope_beta_slow}, "
                         f"rope_attn_factor={config.rope_attn_factor}, rope_original_len={config.rope_original_len}: "
                         f"each must be >= 0 (0: the default) "
                         f"and the band's ends in turns must satisfy beta_fast > beta_slow")
    if config.rope_scaling == 'dynamic' and config.pe.startswith('bipe'):
        raise ValueError(f"rope_scaling='dynamic' follows the input's length in tokens; "
                         f"pe={config.pe!r} rotates by segment")


def band(config):
    """(beta_fast, beta_slow): the turns over the original length above which a pair keeps its frequency and below
    which it is interpolated, for yarn (Peng et al.: 32, 1) and llama3 (its high/low_freq_factor: 4, 1)."""
    fast, slow = {'yarn': (32.0, 1.0), 'llama3': (4.0, 1.0)}.get(config.rope_scaling, (0.0, 0.0))
    return config.rope_beta_fast or fast, config.rope_beta_slow or slow


def layer_frequencies(config, dim, length=0):
    """(inverse frequencies, factor on q and k) of every layer, each at its own base (GPTConfig.layer_attn) and
    extended where config.layer(layer) says: [dim/2] and a float when the layers rotate alike, else [n_layer, dim/2]
    and a list."""
    kinds = [config.layer(i)[1:] for i in range(config.n_layer)]  # (base, extended) of each layer
    made = {k: frequencies(config, dim, length, *k) for k in set(kinds)}  # each kind of layer once
    if len(made) == 1:
        return made[kinds[0]]
    return torch.stack([made[k][0] for k in kinds]), [made[k][1] for k in kinds]


def frequencies(config, dim, length=0, base=0.0, extend=True):
    """RoPE's inverse frequencies [dim/2] and the factor on q and k under config.rope_scaling (none if not extend), at
    `base` (0: config.rope_base), computed as transformers' ROPE_INIT_FUNCTIONS compute them, so that a converted model
    rotates as it was trained. L: the original length; length: the input's length (its last position + 1), which only
    'dynamic' uses."""
    s, base, L = config.rope_scale, base or config.rope_base, config.rope_original_len or config.block_size
    kind = config.rope_scaling if extend else ''
    if kind == 'ntk':  # NTK-aware (bloc97): the slowest pair turns s times slower, the fastest as before
        base = base * s ** (dim / (dim - 2))
    elif kind == 'dynamic':  # dynamic NTK (emozilla): NTK-aware whose s grows with the length past L
        base = base * (s * max(length, L) / L - (s - 1)) ** (dim / (dim - 2))
    pos_freq = base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)  # base^(2i/D) (Su et al. sec. 3.2)
    inv, (fast, slow) = 1.0 / pos_freq, band(config)
    if kind == 'pi':  # position interpolation (Chen et al. 2023): every pair turns s times slower
        return inv / s, 1.0
    if kind == 'yarn':
        # YaRN as its authors' code has it (Peng et al. 2023, eq. 17-20 with a ramp linear in the pair index between
        # the pairs that turn beta_fast and beta_slow times over L); q and k each times 0.1 ln s + 1
        at = lambda turns: dim * math.log(L / (turns * 2 * math.pi)) / (2 * math.log(base))
        lo, hi = (math.floor(at(fast)), math.ceil(at(slow))) if config.rope_truncate else (at(fast), at(slow))
        lo, hi = max(lo, 0), min(hi, dim - 1)
        ramp = ((torch.arange(dim // 2, dtype=torch.float32) - lo) / (hi - lo if hi != lo else 1e-3)).clamp(0, 1)
        keep = 1 - ramp
        factor = config.rope_attn_factor or (0.1 * math.log(s) + 1.0 if s > 1 else 1.0)
        return 1.0 / (s * pos_freq) * (1 - keep) + inv * keep, factor
    if kind == 'llama3':  # Llama 3.1's apply_scaling: the same band, linear in the turns r = L / wavelength
        wavelen = 2 * math.pi / inv
        r = (L / wavelen - slow) / (fast - slow)
        inv = torch.where(wavelen > L / slow, inv / s, inv)
        mid = (wavelen >= L / fast) & (wavelen <= L / slow)
        return torch.where(mid, (1 - r) * inv / s + r * inv, inv), 1.0
    return inv, 1.0
