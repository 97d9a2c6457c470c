"""Shared by the tests of the analysis scripts: tiny models, a hand-made data split, checkpoints saved as train.py
saves them (so loading.load_model reads them with weights_only=True), and a loss computed straight from logits."""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

from lexgpt.corpus import Split
from model import GPT, GPTConfig, make_model

V = 64  # vocabulary of the random-token split


def tiny(pe='alibi', seed=0, strong=False, build=make_model, **kw):
    """A 2-layer, 4-head GPT (RegularGPT for pe='regular') trained on L_tr = 16 (BiPE separators: tokens 1 and 2).
    T5's table and RegularGPT's r_i are drawn N(0, 1) instead of their small start, so that every encoding acts;
    strong=True draws every positional parameter U(0, 1) (T5's table U(0, 4)) for sharper attention; build=GPT
    keeps pe='regular' in a fixed-depth GPT."""
    args = dict(vocab_size=V, block_size=16, n_layer=2, n_head=4, n_embd=32, pe=pe, bipe_sep_ids=(1, 2))
    args.update(kw)
    torch.manual_seed(seed)
    model = build(GPTConfig(**args)).eval()
    with torch.no_grad():
        for name, p in model.pe.named_parameters():
            if strong:
                p.copy_(torch.rand_like(p) * (4.0 if name == 'table' else 1.0))
            elif name in ('table', 'r'):
                p.normal_(0, 1)
    return model


def sharp(pe, **kw):
    """tiny(strong=True) with block_size 128, so that 'learned' covers the inputs, and q, k and the output projection
    8x their initial size, so that attention moves the logits by far more than the attention tests' tolerances
    (test_attention.py::test_attention_moves_the_logits_well_above_the_tolerance)."""
    model = tiny(pe, strong=True, build=GPT, **dict(dict(block_size=128), **kw))
    with torch.no_grad():
        for block in model.transformer.h:
            block.attn.c_attn.weight.mul_(8.0)
            block.attn.c_proj.weight.mul_(8.0)
    return model


def make_split(doc_lengths=(300, 40, 500, 10, 260), seed=0):
    """Documents of random tokens 1..V-1 joined by eot 0, with their start offsets."""
    rng = np.random.default_rng(seed)
    parts, docs, at = [], [], 0
    for i, n in enumerate(doc_lengths):
        if i:
            parts.append(np.zeros(1, dtype=np.uint16))
            at += 1
        docs.append(at)
        parts.append(rng.integers(1, V, n).astype(np.uint16))
        at += n
    return Split(np.concatenate(parts), np.array(docs), {'tokenizer': 'bytes'}, 'hand')


def save_ckpt(tmp_path, model, name):
    """<tmp_path>/<name>/ckpt.pt as train.py writes it; returns the folder."""
    os.makedirs(tmp_path / name, exist_ok=True)
    args = {k: getattr(model.config, k) for k in GPTConfig.__dataclass_fields__}
    torch.save(dict(model_args=args, model=model.state_dict(), config=dict(dataset='hand'),
                    meta=dict(tokenizer='bytes', vocab_size=model.config.vocab_size)), tmp_path / name / 'ckpt.pt')
    return str(tmp_path / name)


def save_split(tmp_path, split, name='test'):
    """A data folder holding the split as <name>.bin, its document starts and a meta.json."""
    split.tokens.tofile(tmp_path / f'{name}.bin')
    np.save(tmp_path / f'{name}_docs.npy', split.docs)
    (tmp_path / 'meta.json').write_text(json.dumps(dict(tokenizer='bytes', vocab_size=V)))
    return str(tmp_path)


def direct_ce(model, ids, target, **kw):
    """The loss of `target` after the input `ids`, straight from the model's logits."""
    with torch.no_grad():
        logits, _ = model(torch.tensor(np.asarray(ids, dtype=np.int64))[None], **kw)
    return F.cross_entropy(logits[0, -1][None].float(), torch.tensor([int(target)])).item()


def rotary_closed_form(q, k, m, n, theta, gain=None):
    """(R_m q).(R_n k) for pairs (x[i], x[i + D/2]) at frequencies theta[i], by the formula alone:
    sum_i [(q1 k1 + q2 k2) cos((m - n) theta_i) + (q1 k2 - q2 k1) sin((m - n) theta_i)] * gain_i."""
    h = q.numel() // 2
    q1, q2, k1, k2 = q[:h].double(), q[h:].double(), k[:h].double(), k[h:].double()
    a = (m - n) * theta.double()
    terms = (q1 * k1 + q2 * k2) * torch.cos(a) + (q1 * k2 - q2 * k1) * torch.sin(a)
    return float((terms * (1 if gain is None else gain)).sum())


def stop_at_call(k, real):
    """-> (f, calls): f calls real and counts its calls in the list calls; its k-th call raises KeyboardInterrupt
    instead, as a Ctrl-C there would. Clear calls to count again."""
    calls = []

    def f(*args, **kw):
        calls.append(1)
        if len(calls) == k:
            raise KeyboardInterrupt
        return real(*args, **kw)
    return f, calls


def figures_written(monkeypatch, module):
    """-> a list that gets the figure of each of module's write_outputs calls that writes one; the files are
    written as they would be."""
    figures, write = [], module.write_outputs
    monkeypatch.setattr(module, 'write_outputs', lambda *a, **kw: figures.extend(a[4:]) or write(*a, **kw))
    return figures
