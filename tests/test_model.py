import math

import pytest
import torch

import helpers
from model import GPT, GPTConfig, KVCache, POSITIONAL_ENCODINGS

torch.manual_seed(0)
ALL = list(POSITIONAL_ENCODINGS)
ABSOLUTE = {'learned', 'sinusoidal'}          # positions enter only through the embeddings
RELATIVE = [p for p in ALL if p not in ABSOLUTE]
# the encodings with parameters of their own: read from the modules, so a new learnable encoding is tested too
LEARNABLE = [p for p in ALL if any(True for _ in helpers.tiny(p, build=GPT).pe.parameters())]
REQUIRED = ['none', 'learned', 'sinusoidal', 'rope', 't5', 'alibi', 'kerple_power', 'kerple_log',
            'kerple_3log', 'kerple_biaswht', 'sandwich', 'sandwich_smoothed', 'bipe_rope', 'bipe_alibi']


def tiny(pe, **kw):
    return helpers.tiny(pe, build=GPT, **kw)


def all_logits(model, idx):
    return model(idx, targets=idx)[0]


def test_registry_has_every_required_name_and_rejects_unknown():
    assert set(REQUIRED) <= set(POSITIONAL_ENCODINGS)
    with pytest.raises(ValueError, match="unknown pe='bogus'.*alibi.*kerple_log"):
        GPT(GPTConfig(pe='bogus'))


@pytest.mark.parametrize('kw, message', [
    (dict(block_size=0), 'block_size=0 must be a positive integer'),
    (dict(n_head=0), 'n_head=0 must be a positive integer'),
    (dict(n_embd=30, n_head=4), 'n_embd=30 must be divisible by n_head=4'),
    (dict(dropout=1.0), r'dropout=1.0 must lie in \[0, 1\)'),
    (dict(window=-1), 'window=-1 must be >= 0'),
    (dict(regular_impl='fast'), "unknown regular_impl='fast'; choose one of: plain, gather, reduce"),
    (dict(pe='regular', chunk_size=1), 'chunk_size >= 2'),
    (dict(pe='rope', n_embd=12, n_head=4), 'head size n_embd/n_head=3 must be even'),
])
def test_config_mistakes_are_one_line_errors_naming_the_value(kw, message):
    with pytest.raises(ValueError, match=message) as e:
        GPT(GPTConfig(**kw))
    assert '\n' not in str(e.value)


def test_the_mlp_is_4_n_embd_wide_unless_mlp_hidden_says_otherwise():
    """GPT-2's MLP (Radford et al. 2019): n_embd -> 4 n_embd -> n_embd; mlp_hidden=H makes it H wide, and a gated MLP's
    c_fc holds gate and up, 2H. Parameters of a 2-layer, n_embd = 32 model by hand: 2 x (32 x 128 + 128 x 32)."""
    widths = lambda m: {(b.mlp.c_fc.out_features, b.mlp.c_proj.in_features) for b in m.transformer.h}
    assert widths(tiny('none')) == {(128, 128)}
    assert widths(tiny('none', mlp_hidden=48)) == {(48, 48)}
    assert widths(tiny('none', mlp_hidden=48, mlp='swiglu')) == {(96, 48)}
    mlp = sum(p.numel() for b in tiny('none', bias=False).transformer.h for p in b.mlp.parameters())
    assert mlp == 2 * (32 * 128 + 128 * 32)


def test_lists_derived_from_the_registry_are_not_empty():
    assert {'t5', 'kerple_log', 'gauss_wht1', 'regular', 'fire', 'fox', 'cope'} <= set(LEARNABLE)
    assert not {'none', 'alibi', 'rope', 'sinusoidal', 'sandwich'} & set(LEARNABLE)


@pytest.mark.parametrize('pe', ALL)
def test_every_encoding_declares_exactly_the_kinds_it_implements(pe):
    """Both ways: a declared kind is implemented, and an implemented part is declared (the attention routes read
    only the declarations)."""
    enc = tiny(pe, n_layer=8).pe  # 8 layers: RegularGPT's dilation reaches its masked distances below 20
    assert set(enc.kinds) <= {'absolute', 'rotary', 'bias', 'weight', 'linear', 'mask', 'query', 'potential', 'content'}
    d = torch.arange(20).float()
    pos = enc.positions(torch.tensor([[5, 1, 5, 2, 5]]), 0, None)[0]  # 1, 2: BiPE separators
    x = torch.randn(1, 4, 5, 8)
    bias = enc.bias(3, d)
    implemented = {
        'absolute': enc.embed(pos) is not None,
        'rotary': not torch.equal(enc.rotate(x, pos.rel), x),
        'bias': bias is not None,
        'weight': enc.weight(0, d) is not None,
        'linear': enc.slope(0) is not None,
        'mask': bias is not None and bool(torch.isinf(bias).any()),
        # a query-dependent bias differs between two queries at the same distances
        'query': bias is not None and not torch.equal(enc.bias(0, d, torch.tensor(10.0)),
                                                      enc.bias(0, d, torch.tensor(1000.0))),
        'potential': enc.potential(0, torch.randn(1, 5, 32)) is not None,
        'content': enc.content(0, x, torch.randn(1, 4, 5, 5)) is not None,
    }
    assert {k for k, v in implemented.items() if v} == set(enc.kinds)
    if 'linear' in enc.kinds:  # the slope is the bias: -slope * d
        assert torch.allclose(enc.bias(0, d), -enc.slope(0)[:, None] * d)
    if 'potential' in enc.kinds:
        assert enc.potential(0, torch.randn(1, 5, 32)).shape == (1, 4, 5)


@pytest.mark.parametrize('pe', ALL)
def test_reads_distance_is_what_a_distance_ceiling_changes(pe):
    """PositionalEncoding.reads_distance, the one rule of what 'relative' means for LM-Infinite's ceiling
    (extrapolate.py's note), against what a ceiling of 3 does to the logits; and reads_position, the rule streaming
    refuses by, by hand."""
    model = tiny(pe, n_layer=8)
    idx = torch.randint(3, 64, (1, 16))  # block_size: learned's positions end there
    idx[:, ::3] = 1  # BiPE separators: its distances count segments
    with torch.no_grad():
        plain = all_logits(model, idx)
        with model.attention(ceiling=3):
            capped = all_logits(model, idx)
    assert model.pe.reads_distance() == (not torch.allclose(plain, capped, atol=1e-6))
    assert model.pe.reads_position() == (pe in {'learned', 'sinusoidal', 'bipe_rope', 'bipe_alibi', 'fire'})


@pytest.mark.parametrize('pe', ALL)
def test_causality(pe):
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 16))
    t = 9
    changed = idx.clone()
    changed[:, t] = 1  # a BiPE separator as well, so segment positions after t change too
    with torch.no_grad():
        a, b = all_logits(model, idx), all_logits(model, changed)
    assert torch.allclose(a[:, :t], b[:, :t], atol=1e-6)
    assert not torch.allclose(a[:, t:], b[:, t:], atol=1e-4)


@pytest.mark.parametrize('pe', RELATIVE + ['sinusoidal'])
def test_longer_than_training_length(pe):
    model = tiny(pe)
    with torch.no_grad():
        logits = all_logits(model, torch.randint(0, 64, (1, 64)))
    assert logits.shape == (1, 64, 64) and torch.isfinite(logits).all()


def test_learned_refuses_positions_past_block_size():
    model = tiny('learned')
    all_logits(model, torch.randint(0, 64, (1, 16)))
    with pytest.raises(ValueError, match='positions 0..15 only, got position 16'):
        all_logits(model, torch.randint(0, 64, (1, 17)))


@pytest.mark.parametrize('pe', ALL)
def test_kv_cache_decoding_equals_full_forward(pe):
    model = tiny(pe)
    T = 16 if pe == 'learned' else 40
    idx = torch.randint(0, 64, (2, T))
    idx[:, 5] = 1
    idx[:, 13] = 2
    with torch.no_grad():
        full = all_logits(model, idx)
        cache = KVCache()
        steps = [model(idx[:, :7], cache=cache)[0]]  # a prompt, then one token at a time, then a chunk
        steps += [model(idx[:, t:t + 1], cache=cache)[0] for t in range(7, 12)]
        chunk = model(idx[:, 12:], targets=idx[:, 12:], cache=cache)[0]
    assert torch.allclose(steps[0][:, -1], full[:, 6], atol=1e-5)
    for j, t in enumerate(range(7, 12)):
        assert torch.allclose(steps[j + 1][:, -1], full[:, t], atol=1e-5)
    assert torch.allclose(chunk, full[:, 12:], atol=1e-5)


LAST_CASES = [({}, {}), ({}, dict(key_window=8, n_starting=2, ceiling=8)), (dict(ssmax=True), {}),
              (dict(layer_attn=((6, 10000.0), (0, 10000.0))),
               dict(key_window=8, n_starting=2, topk=2, topk_from_layer=0))]


@pytest.mark.parametrize('pe', ALL)
@pytest.mark.parametrize('case', range(len(LAST_CASES)))
def test_last_runs_the_last_block_for_the_last_queries_only_and_changes_no_logit(pe, case):
    """GPT.forward(last_k=k): the last block's attention and MLP and the head run at the last k positions only (a hook
    counts the queries each layer scores), and their logits equal the full forward's there, with a model whose
    attention moves the logits (helpers.sharp), two rows (BiPE's segments differ by row), past L_tr, under every
    evaluation-time option, SSMax and a windowed first layer."""
    config, opts = LAST_CASES[case]
    model, T, k = helpers.sharp(pe, **config), 40, 5
    idx = torch.randint(3, 64, (2, T))
    idx[0, 9], idx[1, 21] = 1, 2
    with torch.no_grad(), model.attention(**opts):
        full = model(idx, targets=idx)[0][:, -k:]
        queries = {}
        with model.attention(hook=lambda layer, p, qi, ki: queries.setdefault(layer, []).extend(qi.tolist())):
            logits, loss = model(idx, targets=idx[:, -k:], reduction='none', last_k=k)
            assert sorted(queries) == [0, 1] and len(queries[0]) == T and queries[1] == list(range(T - k, T))
        fast = model(idx, targets=idx[:, -k:], last_k=k)[0]  # without the hook: the fast routes, not the explicit one
    assert logits.shape == fast.shape == full.shape == (2, k, 64) and loss.shape == (2, k)
    assert torch.allclose(logits, full, atol=1e-4) and torch.allclose(fast, full, atol=1e-4)
    assert (full[:, 1:] - full[:, :-1]).abs().max() > 1e-2  # the positions' logits differ: a shifted cut would show


@pytest.mark.parametrize('pe', ['alibi', 'rope', 'kerple_log', 'bipe_rope'])
def test_bounded_cache_equals_lambda_masked_forward(pe):
    model = tiny(pe)
    idx = torch.randint(0, 64, (1, 48))
    with torch.no_grad():
        with model.attention(key_window=8, n_starting=3):
            full = all_logits(model, idx)
        cache = KVCache(cache_window=8, n_starting=3)
        model(idx[:, :10], cache=cache)
        for t in range(10, 48):
            out = model(idx[:, t:t + 1], cache=cache)[0]
            assert torch.allclose(out[:, -1], full[:, t], atol=1e-5)
            assert cache.k[0].size(2) <= 3 + 8
    assert cache.idx.tolist() == [0, 1, 2] + list(range(40, 48))


def model_with_offset_logits(model, idx, start):
    cache = KVCache()
    cache.next = start
    with torch.no_grad():
        return model(idx, cache=cache)[0]


@pytest.mark.parametrize('pe', ALL)
def test_shift_invariance_of_relative_encodings(pe):
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 12))
    idx[:, 4] = 2
    a, b = model_with_offset_logits(model, idx, 0), model_with_offset_logits(model, idx, 4)
    if pe in ABSOLUTE:  # absolute encodings see the shift; relative ones must not
        assert not torch.allclose(a, b, atol=1e-4)
    else:
        assert torch.allclose(a, b, atol=1e-4)


@pytest.mark.parametrize('pe', LEARNABLE)
def test_gradient_reaches_kernel_parameters(pe):
    model = tiny(pe)
    model.train()
    idx = torch.randint(0, 64, (2, 16))
    model(idx, targets=idx)[1].backward()
    grads = [p.grad for p in model.pe.parameters()]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)


@pytest.mark.parametrize('pe', ALL)
@pytest.mark.parametrize('window', [0, 5])
def test_fast_attention_equals_plain_reference(pe, window):
    model = tiny(pe, window=window)
    T = 16 if pe == 'learned' else 50
    idx = torch.randint(0, 64, (2, T))
    with torch.no_grad():
        with model.attention(route='reference'):
            ref = all_logits(model, idx)
        with model.attention(block_elems=2 * 4 * 50 * 7):  # forces query blocks of 16 rows
            fast = all_logits(model, idx)
    assert torch.allclose(fast, ref, atol=1e-5)


def test_windowed_attention_bounds_the_receptive_field():
    # one layer with window w: the output at t depends on tokens t-w+1..t only (thesis 4.3.3)
    model = tiny('none', n_layer=1, window=4)
    idx = torch.randint(0, 64, (1, 20))
    changed = idx.clone()
    changed[0, 10] = (idx[0, 10] + 1) % 64
    with torch.no_grad():
        a, b = all_logits(model, idx), all_logits(model, changed)
    moved = (a - b).abs().amax(-1)[0] > 1e-6
    assert moved.nonzero().flatten().tolist() == [10, 11, 12, 13]


def test_attention_hook_temperature_and_lambda_mask():
    model = tiny('alibi')
    idx = torch.randint(0, 64, (1, 30))
    seen = {}

    def hook(layer, probs, qi, ki):
        seen[layer] = (probs.clone(), qi.clone(), ki.clone())

    with torch.no_grad():
        with model.attention(hook=hook, key_window=6, n_starting=2):
            all_logits(model, idx)
        p, qi, ki = seen[1]
        assert torch.allclose(p.sum(-1), torch.ones_like(p.sum(-1)))
        allowed = (qi[:, None] >= ki[None]) & ((qi[:, None] - ki[None] < 6) | (ki[None] < 2))
        assert (p[..., ~allowed] == 0).all() and (p[..., allowed] > 0).all()
        # a lower temperature sharpens attention: larger maximum probability on average
        with model.attention(hook=hook):
            all_logits(model, idx)
        base = seen[1][0].amax(-1).mean()
        with model.attention(hook=hook, attn_temperature=0.5):
            all_logits(model, idx)
        assert seen[1][0].amax(-1).mean() > base
    with pytest.raises(ValueError, match="unknown attention option"):
        with model.attention(temprature=0.5):
            pass


@pytest.mark.parametrize('pe', ['alibi', 'rope'])
def test_distance_ceiling(pe):
    """LM-Infinite: with ceiling c, a key further than c is scored as if it were exactly c away."""
    model = tiny(pe, n_layer=1)
    idx = torch.randint(0, 64, (1, 24))
    seen = {}
    with torch.no_grad():
        with model.attention(hook=lambda l, p, qi, ki: seen.update(p=p), ceiling=5):
            all_logits(model, idx)
        with_ceiling = seen['p']
        with model.attention(hook=lambda l, p, qi, ki: seen.update(p=p)):
            all_logits(model, idx)
        plain = seen['p']
    assert torch.allclose(with_ceiling[..., :6, :], plain[..., :6, :], atol=1e-6)  # nothing is beyond 5 yet
    assert not torch.allclose(with_ceiling, plain, atol=1e-4)
    # reference: recompute the last row's logits by hand with distances clamped at 5
    attn = model.transformer.h[0].attn
    x = model.transformer.ln_1 if False else model.transformer.h[0].ln_1(model.transformer.wte(idx))
    q, k, _ = attn.c_attn(x).view(1, 24, 3, 4, 8).permute(2, 0, 3, 1, 4)
    pos = torch.arange(24)
    with torch.no_grad():
        if pe == 'rope':
            qpos = torch.full((1, 1), 23)
            kpos = torch.clamp(pos, min=23 - 5)[None]  # moving a far key closer is the same as clamping m-n
            logits = (model.pe.rotate(q[:, :, -1:], qpos) @ model.pe.rotate(k, kpos).transpose(-2, -1)) / math.sqrt(8)
        else:
            logits = (q[:, :, -1:] @ k.transpose(-2, -1)) / math.sqrt(8) \
                + model.pe.bias(0, (23 - pos).clamp(max=5).float())[None, :, None, :]
    assert torch.allclose(logits.softmax(-1)[0, :, 0], with_ceiling[0, :, -1], atol=1e-5)


def test_topk_middle_tokens_at_half_the_ceiling_from_a_layer_on():
    """LM-Infinite App. A: in layers >= h only, each head also attends to the k middle tokens (outside the Λ mask)
    of highest logit, scored as if they were L/2 away (ceiling L)."""
    model = tiny('alibi', n_layer=2)
    idx = torch.randint(0, 64, (1, 30))
    seen = {}
    with torch.no_grad():
        with model.attention(hook=lambda l, p, qi, ki: seen.update({l: p}), key_window=4, n_starting=1, ceiling=8,
                             topk=3, topk_from_layer=1):
            all_logits(model, idx)
            # layer 1's input: layer 0's output under the same options
            x = model.transformer.h[0](model.transformer.wte(idx), model.pe, 0, model.pe.positions(idx, 0, None)[0])
        assert (seen[0][0, :, -1] > 0).sum(-1).tolist() == [1 + 4] * 4      # below the threshold: the Λ mask only
        assert (seen[1][0, :, -1] > 0).sum(-1).tolist() == [1 + 4 + 3] * 4
        # layer 1's last row by hand: q.k/sqrt(D) + bias(min(d, 8)) on the Λ keys, bias(4) on the 3 best middle keys
        block = model.transformer.h[1]
        q, k, _ = block.attn.c_attn(block.ln_1(x)).view(1, 30, 3, 4, 8).permute(2, 0, 3, 1, 4)
        qk = (q[0, :, -1:] @ k[0].transpose(-2, -1))[:, 0] / math.sqrt(8)    # [H, 30]
        d = (29 - torch.arange(30)).float()
        lam = (d < 4) | (torch.arange(30) < 1)
        want = torch.full((4, 30), float('-inf'))
        want[:, lam] = (qk + model.pe.bias(1, d.clamp(max=8)))[:, lam]
        mid = qk.masked_fill(lam, float('-inf'))
        top = mid.topk(3, dim=-1).indices
        want.scatter_(1, top, mid.gather(1, top) + model.pe.bias(1, torch.tensor([4.0])))
    assert torch.allclose(seen[1][0, :, -1], want.softmax(-1), atol=1e-5)


def test_bipe_positions_split_at_separators():
    pe = tiny('bipe_alibi').pe
    idx = torch.tensor([[5, 6, 1, 7, 8, 2, 9, 9, 9]])  # 1 and 2 end segments
    pos, state = pe.positions(idx, 0, None)
    assert pos.rel.tolist() == [[0, 0, 0, 1, 1, 1, 2, 2, 2]]
    assert pos.abs.tolist() == [[0, 1, 2, 0, 1, 2, 0, 1, 2]]
    assert pe.bias(0, torch.tensor([0., 2.]))[0].tolist() == [0.0, -0.5]  # ALiBi's, slope 2^-2 for head 0 of 4
    # continuing from a state gives the positions of the whole sequence
    first, st = pe.positions(idx[:, :5], 0, None)
    rest, _ = pe.positions(idx[:, 5:], 5, st)
    assert rest.rel.tolist() == [[1, 2, 2, 2]] and rest.abs.tolist() == [[2, 0, 1, 2]]


def test_generate_far_beyond_block_size_with_bounded_cache():
    model = tiny('alibi')
    out = model.generate(torch.zeros(1, 3, dtype=torch.long), 100, cache_window=16, n_starting=2)
    assert out.shape == (1, 103)
    with pytest.raises(ValueError, match='positions 0..15 only'):
        tiny('learned').generate(torch.zeros(1, 3, dtype=torch.long), 20)


def lambda_logits(model, idx, key_window, n_starting):
    """The last position's logits of a full forward under the Λ mask: what a bounded cache must reproduce."""
    with torch.no_grad(), model.attention(key_window=key_window, n_starting=n_starting, route='reference'):
        return all_logits(model, idx)[:, -1]


def talkative(pe):
    """A tiny GPT whose greedy continuation keeps changing token: an untied head (a tied one repeats the last token)
    and attention 4x its initial size."""
    model = helpers.tiny(pe, strong=True, build=GPT, tie_head=False)
    with torch.no_grad():
        for block in model.transformer.h:
            block.attn.c_attn.weight.mul_(4.0)
            block.attn.c_proj.weight.mul_(4.0)
    torch.manual_seed(0)
    return model


@pytest.mark.parametrize('pe', ['alibi', 'rope', 'fox'])
def test_greedy_generation_equals_argmax_of_lambda_masked_forwards(pe):
    """top_k=1 with a bounded cache (first 2 + last 8 tokens) picks, at every step, the argmax of a full forward of
    the text so far under the Λ mask: the cache holds the right tokens at the right positions, starting tokens too."""
    model = talkative(pe)
    prompt = torch.randint(3, 64, (2, 5))
    out = model.generate(prompt, 30, top_k=1, cache_window=8, n_starting=2)
    assert torch.equal(out[:, :5], prompt)
    assert (out[:, 6:] != out[:, 5:-1]).sum() >= 10  # not one token repeated, which would hide a wrong token fed back
    for t in range(5, 35):
        assert torch.equal(out[:, t], lambda_logits(model, out[:, :t], 8, 2).argmax(-1)), t


def test_sampled_tokens_stay_in_the_top_k():
    model = talkative('alibi')
    out = model.generate(torch.randint(3, 64, (4, 3)), 25, temperature=2.0, top_k=3, cache_window=8, n_starting=2)
    ranks = []
    for t in range(3, 28):
        order = lambda_logits(model, out[:, :t], 8, 2).argsort(-1, descending=True)
        ranks += (order == out[:, t:t + 1]).float().argmax(-1).tolist()
    assert max(ranks) <= 2 and min(ranks) == 0 and len(set(ranks)) == 3  # inside the top 3, and not only the top 1
    logits = torch.tensor([[0.0, 3.0, 1.0, 2.9, -1.0]]).repeat(2000, 1)
    drawn = GPT.sample_next(logits, 1.0, 2).flatten()
    share = (drawn == 1).float().mean()  # tokens 1 and 3 only, in the ratio e^3 : e^2.9
    assert set(drawn.tolist()) == {1, 3} and abs(share - 1 / (1 + math.exp(-0.1))) < 0.04
