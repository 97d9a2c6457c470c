"""RegularGPT (thesis ch. 6): eq. 6.1 bias, the three implementations, adaptive depth, weight sharing."""
import pytest
import torch

from model import GPT, GPTConfig, RegularGPT, make_model, n_levels



def regular(C=2, K=1, impl='gather', **kw):
    torch.manual_seed(0)
    cfg = GPTConfig(pe='regular', vocab_size=13, n_embd=32, n_head=4, chunk_size=C, thickness=K,
                    regular_impl=impl, **kw)
    model = RegularGPT(cfg).eval()
    with torch.no_grad():  # random r_i instead of the zero init, so the biases actually act
        model.pe.r.normal_(0, 1)
    return model


def test_bias_is_eq_6_1():
    model = regular(C=3, K=2)
    d = torch.arange(30, dtype=torch.float32)
    for depth in range(5):
        level, k = depth // 2, depth % 2  # layer l*K + k uses shared parameters k at dilation C^l
        b = model.pe.bias(depth, d)
        for n in range(30):
            i, rem = divmod(n, 3 ** level)
            if rem == 0 and i < 3:
                assert torch.equal(b[:, n], model.pe.r[k, :, i])
            else:
                assert torch.isinf(b[:, n]).all() and (b[:, n] < 0).all()


def test_n_levels_is_ceil_log():
    assert [n_levels(T, 2) for T in (1, 2, 3, 4, 5, 40, 64, 65, 500)] == [1, 1, 2, 2, 3, 6, 6, 7, 9]
    assert [n_levels(T, 3) for T in (3, 9, 10, 243, 244)] == [1, 2, 3, 5, 6]


@pytest.mark.parametrize('C,K', [(2, 1), (3, 1), (2, 2), (4, 3)])
@pytest.mark.parametrize('T', [1, 2, 5, 16, 27, 41])
def test_three_implementations_agree(C, K, T):
    model = regular(C, K)
    idx = torch.randint(0, 13, (2, T))
    with torch.no_grad():
        plain = model(idx, targets=idx, regular_impl='plain')[0]
        gather = model(idx, targets=idx, regular_impl='gather')[0]
        reduce = model(idx, regular_impl='reduce')[0]
        last = model(idx, regular_impl='plain')[0]
    assert torch.allclose(plain, gather, atol=1e-5)        # every position
    assert torch.allclose(plain[:, -1:], reduce, atol=1e-5)  # the final answer
    assert torch.allclose(last, reduce, atol=1e-5)


def grads(model, idx, targets, impl):
    model.zero_grad()
    loss = model(idx, targets=targets, regular_impl=impl)[1]
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize('C,K,T', [(2, 1, 16), (3, 2, 20)])
def test_gather_and_reduce_gradients_equal_plain(C, K, T):
    """Training through the fast forwards: the loss and every parameter's gradient (the shared blocks' and the r_i)
    equal the plain implementation's; reduce's loss is the final position's, so plain scores only that one."""
    model = regular(C, K).train()
    idx = torch.randint(0, 13, (2, T))
    last = torch.full_like(idx, -1)
    last[:, -1] = idx[:, 0]
    for impl, targets, plain_targets in (('gather', idx, idx), ('reduce', idx[:, :1], last)):
        loss, got = grads(model, idx, targets, impl)
        want_loss, want = grads(model, idx, plain_targets, 'plain')
        assert loss == pytest.approx(want_loss, abs=1e-5) and got.keys() == want.keys() and 'pe.r' in got
        for n in got:
            assert torch.allclose(got[n], want[n], atol=1e-5, rtol=1e-4), (impl, n, (got[n] - want[n]).abs().max())


@pytest.mark.parametrize('C,K,T', [(2, 1, 13), (3, 2, 20), (4, 3, 41)])
def test_gather_hook_sees_the_plain_attention(C, K, T):
    """The gather route hands the hook each query's C keys (column i: key p - i C^l, clamped at 0); where that key
    exists its probability is the dense plain route's, and where it does not the probability is 0."""
    model, idx, dense = regular(C, K), torch.randint(0, 13, (2, T)), {}
    def plain(d, att, qi, ki):
        dense.setdefault(d, torch.zeros(2, 4, T, T))[:, :, qi[:, None], ki[None, :]] = att
    with torch.no_grad(), model.attention(hook=plain):
        model(idx, regular_impl='plain')
    calls = []
    with torch.no_grad(), model.attention(hook=lambda d, att, qi, ki: calls.append((d, att, qi, ki))):
        model(idx, regular_impl='gather')
    assert sorted({c[0] for c in calls}) == sorted(dense) == list(range(model.n_layers(T)))
    for d, att, qi, ki in calls:
        keys = qi[:, None] - C ** (d // K) * torch.arange(C)  # eq. 6.1: p - i C^l, negative where no key exists
        real = keys >= 0
        assert torch.equal(ki, keys.clamp(min=0))
        want = dense[d][:, :, qi[:, None], ki]  # [B, H, nq, C]
        assert torch.allclose(att[..., real], want[..., real], atol=1e-6) and (att[..., ~real] == 0).all()
    assert sorted(torch.cat([c[2] for c in calls if c[0] == 0]).tolist()) == list(range(T))


@pytest.mark.parametrize('C,T', [(2, 13), (3, 20)])
def test_receptive_field_reaches_token_0_after_ceil_log_layers(C, T):
    """Perturbing token p changes the last position's output after level l iff T-1-p < C^(l+1)."""
    model = regular(C)
    idx = torch.randint(1, 13, (1, T))
    with torch.no_grad():
        base = []
        model(idx, targets=idx, collect=base)
        L = n_levels(T, C)
        assert len(base) == L
        for p in range(T):
            changed = idx.clone()
            changed[0, p] = 0
            out = []
            model(changed, targets=changed, collect=out)
            for level in range(L):
                moved = not torch.allclose(out[level][0, -1], base[level][0, -1], atol=1e-6)
                assert moved == (T - 1 - p < C ** (level + 1)), (p, level)
    # so token 0 is reached at the last level and not before
    assert C ** (L - 1) < T <= C ** L


def test_gradient_covers_every_input_exactly_at_full_depth():
    model = regular(C=2)
    idx = torch.randint(0, 13, (1, 37))
    emb = {}
    h = model.transformer.wte.register_forward_hook(lambda m, i, o: emb.setdefault('e', o.retain_grad() or o))
    outs = []
    model(idx, targets=idx, collect=outs)
    h.remove()
    outs[-1][0, -1].sum().backward(retain_graph=True)
    assert (emb['e'].grad[0].abs().sum(-1) > 0).all()  # all 37 tokens after ceil(log2 37) = 6 layers
    emb['e'].grad = None
    outs[-2][0, -1].sum().backward()
    assert (emb['e'].grad[0, :37 - 32].abs().sum(-1) == 0).all()  # 5 layers see the last 32 only


def test_depth_adapts_with_length_and_weights_are_shared():
    model = regular(C=2, K=3)
    assert [model.n_layers(T) for T in (1, 40, 500)] == [3, 18, 27]
    blocks = [b for _, b in model.layers(500)]
    assert len(blocks) == 27 and len({id(b) for b in blocks}) == 3
    assert all(blocks[d] is model.transformer.h[d % 3] for d in range(27))
    n = model.get_num_params()
    assert n == sum(p.numel() for p in regular(C=2, K=3).parameters())
    with torch.no_grad():  # trained at 40, runs unchanged at 500, with no new parameters
        for T in (40, 500):
            out = []
            logits = model(torch.randint(0, 13, (1, T)), regular_impl='reduce', collect=out)[0]
            assert torch.isfinite(logits).all() and len(out) == model.n_layers(T)
    assert model.get_num_params() == n
    # the count is that of a K-layer GPT: n_layer is ignored
    gpt_config = GPTConfig(pe='regular', vocab_size=13, n_embd=32, n_head=4, thickness=3, n_layer=3)
    assert n == GPT(gpt_config).get_num_params()
    assert regular(C=2, K=3, n_layer=12).get_num_params() == n


def test_training_step_reaches_shared_parameters_and_r():
    model = regular(C=2, impl='reduce').train()
    idx = torch.randint(0, 13, (4, 9))
    _, loss = model(idx, targets=idx[:, -1:])
    loss.backward()
    assert model.pe.r.grad.abs().sum() > 0 and model.transformer.h[0].attn.c_attn.weight.grad.abs().sum() > 0


def test_construction_and_errors():
    assert type(make_model(GPTConfig(pe='regular'))) is RegularGPT
    assert type(make_model(GPTConfig(pe='alibi'))) is GPT
    assert type(GPT(GPTConfig(pe='regular'))) is GPT  # fixed depth with dilated masks still works
    with pytest.raises(ValueError, match="unknown regular_impl='fast'.*plain, gather, reduce"):
        RegularGPT(GPTConfig(pe='regular', regular_impl='fast'))
    with pytest.raises(ValueError, match="needs pe='regular', got pe='alibi'"):
        RegularGPT(GPTConfig(pe='alibi'))
    with pytest.raises(ValueError, match="chunk_size >= 2"):
        RegularGPT(GPTConfig(pe='regular', chunk_size=1))
    model = regular()
    idx = torch.randint(0, 13, (2, 8))
    with pytest.raises(ValueError, match=r"targets must be \[B, 1\]"):
        model(idx, targets=idx, regular_impl='reduce')
    with pytest.raises(ValueError, match="unknown regular_impl='x'"):
        model(idx, regular_impl='x')
    out = model.generate(idx, 3)  # no KV cache: every step recomputes the prefix
    assert out.shape == (2, 11) and torch.equal(out[:, :8], idx)
