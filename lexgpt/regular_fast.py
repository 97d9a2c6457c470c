"""
RegularGPT's fast forwards (model.RegularGPT, config.regular_impl), equal to its plain one (tests/test_regular.py):
  gather - every position, each query scoring only its C keys: O(T * C) per layer
  reduce - final position only: chunk, attend within the chunk, keep each chunk's last token, so the
           length shrinks by C per level and the whole forward is O(T * C * K)
"""
import math

import torch
import torch.nn.functional as F


def sparse_block(gpt, block, x, depth, valid, step, ends=False):
    """`block` at `depth`, query p seeing keys p - i*step, i in [C] (eq. 6.1; step: C^l, or 1 on reduce's shortened
    input); valid[n] is False for left padding; ends: only the chunk ends p = C-1 mod C query (reduce's last layer).
    -> x at the queries. Positions p = m*step + r form `step` groups, in each of which the keys slide over m: a chunk
    of Q queries meets its W keys in one dense [Q x W] product, from which each query's C scores are read."""
    C, K, attn, o = gpt.config.chunk_size, gpt.config.thickness, block.attn, gpt.attn_opts
    (B, N, D), H, ar = x.shape, attn.n_head, lambda *n: torch.arange(*n, device=x.device)
    M = -(-N // step)  # positions per group
    Q, J = min(C, M), -(-M // min(C, M))  # queries per chunk (a group of M <= C is one chunk), chunks per group
    P, Pk = step * J * Q - N, (C - 1 if J > 1 else 0)  # left padding of the input, of each group's keys
    qkv = F.pad(attn.c_attn(block.ln_1(x)).view(B, N, 3, H, D // H), (0, 0, 0, 0, 0, 0, P, 0))
    q, k, v = qkv.view(B, J * Q, step, 3, H, D // H).permute(3, 0, 4, 2, 1, 5)  # [B,H,step,J*Q,hd]: group, index m
    slide = lambda t, d: F.pad(t, (0, 0) * (t.dim() - 1 - d) + (Pk, 0)).unfold(d, Q + Pk, Q)  # [.., J, .., W]
    kw, vw = (slide(t, 3).transpose(-1, -2) for t in (k, v))  # [B,H,step,J,W,hd]
    okw = slide(torch.cat([valid.new_zeros(P), valid]).view(J * Q, step).t().float(), 1) > 0  # [step,J,W]
    a = ar(Q - 1 if ends else 0, Q)  # the chunk's queries
    bi = a[:, None] + Pk - ar(C)     # [Qa, C]: key i of query a sits at bi in W
    inside, bi = bi >= 0, bi.clamp(min=0).expand(B, H, step, J, -1, -1)
    btab = gpt.pe.bias(depth, ar(C).float() * C ** (depth // K))  # eq. 6.1's r_i at distances i C^l
    att = (q.reshape(B, H, step, J, Q, -1)[..., a, :] @ kw.transpose(-1, -2)).gather(-1, bi) / math.sqrt(D // H)
    att = (att + btab[None, :, None, None, None, :]) / o.attn_temperature
    ok = inside & okw[:, :, None].expand(-1, -1, len(a), -1).gather(-1, bi[0, 0])
    ok[..., 0] = True  # a query always sees itself, which keeps left-padded rows finite
    att = att.masked_fill(~ok, float('-inf')).softmax(dim=-1)
    qi = ((ar(J)[:, None] * Q + a).reshape(-1, 1) * step + ar(step)).reshape(-1) - P  # in the order (j, a, r)
    live, qi = qi >= 0, qi[qi >= 0]  # the first P are padding
    if o.hook is not None:  # the C keys of each query: key indices [nq, C]
        o.hook(depth, att.permute(0, 1, 3, 4, 2, 5).reshape(B, H, -1, C)[:, :, live], qi,
               (qi[:, None] - step * ar(C)).clamp(min=0))
    att = F.dropout(att, attn.dropout if gpt.training else 0.0, gpt.training)
    y = att.new_zeros(*att.shape[:-1], Q + Pk).scatter_add(-1, bi, att) @ vw  # back onto the W keys
    x = x[:, qi] + attn.resid_dropout(attn.c_proj(y.permute(0, 3, 4, 2, 1, 5).reshape(B, -1, D)[:, live]))
    return x + block.mlp(block.ln_2(x))


def regular_gather(gpt, x, keep):
    T, C, K = x.size(1), gpt.config.chunk_size, gpt.config.thickness
    valid = torch.ones(T, dtype=torch.bool, device=x.device)
    for depth, block in gpt.layers(T):
        x = sparse_block(gpt, block, x, depth, valid, C ** (depth // K))
        keep(x)
    return x


def regular_reduce(gpt, x, keep):
    T, C, K = x.size(1), gpt.config.chunk_size, gpt.config.thickness
    valid = torch.ones(T, dtype=torch.bool, device=x.device)
    for level in range(gpt.n_layers(T) // K):
        pad = (-x.size(1)) % C  # left padding (thesis 6.2.1, footnote 1) keeps the last token a chunk end
        x = torch.cat([x.new_zeros(x.size(0), pad, x.size(2)), x], dim=1)
        valid = torch.cat([valid.new_zeros(pad), valid])
        for k in range(K):
            # dilation 1 on the shortened input; the last of the K layers queries only the chunk ends, which stay
            x = sparse_block(gpt, gpt.transformer.h[k], x, level * K + k, valid, 1, ends=k == K - 1)
            keep(x)
        valid = valid[C - 1::C]
    return x
