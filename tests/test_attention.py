"""Every fast attention path equals the reference (reference.attention_reference), for every encoding, with windows,
LM-Infinite's Λ mask and distance ceiling, a temperature, and with gradients: in models whose attention moves the
logits, and route by route on unit-scale q, k, v; the tiles of routes.py and both branches of sdpa_lse against a
direct computation; on a CUDA GPU, training through FlexAttention and bf16 autocast."""
import pytest
import torch

from lexgpt import routes
import helpers
from model import KVCache, POSITIONAL_ENCODINGS

ALL = [p for p in POSITIONAL_ENCODINGS if p != 'regular']


tiny = helpers.sharp


def logits(model, idx, **opts):
    with model.attention(**opts):
        return model(idx, targets=idx)[0]


SETUPS = [dict(), dict(attn_temperature=0.7), dict(key_window=9), dict(key_window=9, n_starting=3),
          dict(key_window=16, n_starting=2, ceiling=16)]  # the last one is LM-Infinite at L_tr = 16


@pytest.mark.parametrize('pe', ALL)
@pytest.mark.parametrize('setup', range(len(SETUPS)))
def test_fast_inference_equals_reference(pe, setup):
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 70))
    idx[:, ::7] = 1  # BiPE separators
    with torch.no_grad():
        ref = logits(model, idx, route='reference', **SETUPS[setup])
        fast = logits(model, idx, tile=16, **SETUPS[setup])  # 5 tiles of 16 on each side
    assert torch.allclose(fast, ref, atol=1e-4), (fast - ref).abs().max()


@pytest.mark.parametrize('pe', ALL)
def test_attention_moves_the_logits_well_above_the_tolerance(pe):
    """Uniform attention (temperature -> infinity) must change the logits by 100x the tolerance of the model-level
    comparisons, or an error in attention could hide below it."""
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 70))
    idx[:, ::7] = 1
    with torch.no_grad():
        diff = logits(model, idx, route='reference') - logits(model, idx, route='reference', attn_temperature=1e9)
    assert diff.abs().max() > 100 * 1e-4, diff.abs().max()


@pytest.mark.parametrize('pe', ALL)
def test_windowed_model_fast_equals_reference(pe):
    model = tiny(pe, window=11)
    idx = torch.randint(3, 64, (1, 60))
    with torch.no_grad():
        assert torch.allclose(logits(model, idx, tile=16), logits(model, idx, route='reference'), atol=1e-4)


@pytest.mark.parametrize('pe', ALL)
def test_fast_training_gradients_equal_reference(pe):
    """With gradients (training) the fast path takes other routes; the loss and every gradient must agree."""
    idx = torch.randint(3, 64, (2, 40))
    idx[:, ::5] = 2
    grads = []
    for impl in ('reference', 'auto'):
        model = tiny(pe).train()
        with model.attention(route=impl):
            loss = model(idx, targets=idx)[1]
        loss.backward()
        grads.append((loss.detach(), {n: p.grad for n, p in model.named_parameters() if p.grad is not None}))
    (l1, g1), (l2, g2) = grads
    assert torch.allclose(l1, l2, atol=1e-5) and g1.keys() == g2.keys()
    for n in g1:
        assert torch.allclose(g1[n], g2[n], atol=1e-5, rtol=1e-4), n


def direct(q, k, v, scale, bias, weight, pot, window):
    T = q.size(2)
    d = (torch.arange(T)[:, None] - torch.arange(T)[None]).float()
    dist = torch.arange(T).float()
    att = q @ k.transpose(-2, -1)
    if weight is not None:
        att = att * weight(dist)[:, d.clamp(min=0).long()]
    att = att * scale
    if bias is not None:
        att = att + bias(dist)[:, d.clamp(min=0).long()]
    if pot is not None:
        att = att + pot[..., None, :] - pot[..., :, None]
    ok = (d >= 0) & ((d < window) if window else True)
    att = att.masked_fill(~ok, float('-inf'))
    return att.softmax(-1) @ v, att.logsumexp(-1)


@pytest.mark.parametrize('parts', ['', 'b', 'w', 'p', 'bwp', 'bp'])
@pytest.mark.parametrize('window', [0, 1, 23, 40])
@pytest.mark.parametrize('block', [8, 32, 200])
def test_tiles_equal_a_direct_computation(parts, window, block):
    torch.manual_seed(0)
    B, H, T, D = 2, 3, 75, 8
    q, k, v = [torch.randn(B, H, T, D) for _ in range(3)]
    tb, tw = torch.randn(H, T), torch.rand(H, T)
    bias = (lambda d: tb[:, :len(d)]) if 'b' in parts else None
    weight = (lambda d: tw[:, :len(d)]) if 'w' in parts else None
    pot = torch.randn(B, H, T).cumsum(-1) if 'p' in parts else None
    out, lse = routes.tiled_attention(q, k, v, 0.3, bias, weight, pot, window, block, max_tiles=3)
    want, want_lse = direct(q, k, v, 0.3, bias, weight, pot, window)
    assert torch.allclose(out, want, atol=1e-5) and torch.allclose(lse, want_lse, atol=1e-4)


def test_merge_of_two_key_sets_equals_attention_over_both():
    torch.manual_seed(0)
    s, v = torch.randn(2, 5, 9), torch.randn(2, 9, 4)
    s[0, 1, :4] = float('-inf')  # a row that sees nothing in the first set
    parts = [(s[..., sl].softmax(-1).nan_to_num() @ v[:, sl], s[..., sl].logsumexp(-1))
             for sl in (slice(0, 4), slice(4, 9))]
    out, lse = routes.merge_parts(*parts[0], *parts[1])
    assert torch.allclose(out, s.softmax(-1) @ v, atol=1e-6) and torch.allclose(lse, s.logsumexp(-1), atol=1e-6)


def flex_logits(model, idx, compiled=False, **opts):
    """The model's logits with every attention layer through routes.flex_attend, as on a GPU."""
    real = routes.attend

    def through_flex(*args):
        is_cuda = torch.Tensor.is_cuda
        try:  # take the CUDA branch on CPU tensors
            torch.Tensor.is_cuda = property(lambda self: True)
            return real(*args)
        finally:
            torch.Tensor.is_cuda = is_cuda
    routes.attend = through_flex
    real_flex = routes.flex_attend
    routes.flex_attend = lambda *a: real_flex(*a, compiled=compiled)
    try:
        return logits(model, idx, **opts)
    finally:
        routes.attend = real
        routes.flex_attend = real_flex


@pytest.mark.filterwarnings('ignore:flex_attention called without torch.compile')
@pytest.mark.parametrize('pe', [p for p in ALL if p not in ('none', 'learned', 'sinusoidal', 'rope')])
@pytest.mark.parametrize('setup', [0, 1, 3, 4])
def test_flex_score_and_mask_mods_equal_reference(pe, setup, monkeypatch):
    """The GPU path's score_mod and mask_mod, run by eager FlexAttention on CPU; every layer must have taken it."""
    why = no_flex_path(pe, SETUPS[setup])
    if why:
        pytest.skip(why)
    model = tiny(pe, n_embd=64)  # head dimension 16: the least a GPU's FlexAttention takes (routes.choose)
    idx = torch.randint(3, 64, (2, 48))
    idx[:, ::7] = 1
    made, real_mods = [], routes.flex_mods
    monkeypatch.setattr(routes, 'flex_mods', lambda *a: made.append(1) or real_mods(*a))
    with torch.no_grad():
        ref = logits(model, idx, route='reference', **SETUPS[setup])
        got = flex_logits(model, idx, **SETUPS[setup])
    assert len(made) == model.config.n_layer
    assert torch.allclose(got, ref, atol=1e-4), (got - ref).abs().max()


def no_flex_path(pe, opts):
    """Why routes.choose never sends a call with these options to flex on a GPU, or ''."""
    if pe in ('cope', 'fire'):
        return f"pe={pe!r} has no flex path: its logits depend on the content (CoPE) or the query position (FIRE)"
    if pe in ('none', 'learned', 'sinusoidal', 'rope', 'xpos', 'bipe_rope') and not opts.get('key_window'):
        return 'no bias and no window: the fused causal route comes before flex'
    if pe in ('rope', 'xpos', 'bipe_rope') and opts.get('ceiling'):
        return 'a rotary encoding under a distance ceiling needs the scores themselves (explicit route)'
    return ''


def test_compiled_flex_forward_on_cpu_equals_reference():
    """The same mods compiled (Inductor's CPU FlexAttention forward), block mask included: KERPLE bias + weight with
    the Λ mask over three 128-token blocks, the last one partial. One length only: a second one makes torch 2.13's
    CPU kernel recompile for dynamic shapes, and that C++ fails to build (fastattn takes flex on GPUs only)."""
    model = tiny('kerple_biaswht', n_layer=1, n_embd=64)
    idx = torch.randint(3, 64, (1, 300))
    with torch.no_grad():
        ref = logits(model, idx, route='reference', key_window=20, n_starting=2)
        got = flex_logits(model, idx, compiled=True, key_window=20, n_starting=2)
    assert torch.allclose(got, ref, atol=1e-4), (got - ref).abs().max()


# The route each encoding takes, by hand from the rules in routes.choose, for: inference over
# 0..T-1, training, a window, the Λ mask, LM-Infinite (Λ mask + ceiling), an analysis hook, one decoding step with a
# KV cache. BiPE's segment positions are not Toeplitz, so BiPE-ALiBi's table cannot be tiled under a ceiling.
ROUTE_TABLE = {
    'none':              'causal causal tiled tiled tiled explicit blocks',
    'learned':           'causal causal tiled tiled tiled explicit blocks',
    'sinusoidal':        'causal causal tiled tiled tiled explicit blocks',
    'rope':              'causal causal tiled tiled tiled explicit blocks',
    'xpos':              'causal causal tiled tiled tiled explicit blocks',
    'bipe_rope':         'causal causal tiled tiled tiled explicit blocks',
    't5':                'tiled dense tiled tiled tiled explicit blocks',
    'alibi':             'tiled folded tiled tiled tiled explicit blocks',
    'bipe_alibi':        'tiled folded tiled tiled blocks explicit blocks',
    'kerple_power':      'tiled dense tiled tiled tiled explicit blocks',
    'kerple_log':        'tiled dense tiled tiled tiled explicit blocks',
    'kerple_3log':       'tiled dense tiled tiled tiled explicit blocks',
    'kerple_biaswht':    'tiled explicit tiled tiled tiled explicit explicit',
    'gauss_bias2':       'tiled dense tiled tiled tiled explicit blocks',
    'gauss_bias3':       'tiled dense tiled tiled tiled explicit blocks',
    'gauss_wht1':        'tiled explicit tiled tiled tiled explicit explicit',
    'gauss_wht2':        'tiled explicit tiled tiled tiled explicit explicit',
    'sandwich':          'tiled dense tiled tiled tiled explicit blocks',
    'sandwich_smoothed': 'tiled dense tiled tiled tiled explicit blocks',
    'fire':              'blocks blocks blocks blocks blocks explicit blocks',
    'fox':               'tiled folded tiled tiled tiled explicit blocks',
    'cope':              'explicit explicit explicit explicit explicit explicit explicit',
}
ROUTE_SETUPS = ['inference', 'training', 'window', 'lambda', 'lm_infinite', 'hook', 'decode']


def test_route_table_covers_the_registry():
    missing, stale = set(ALL) - set(ROUTE_TABLE), set(ROUTE_TABLE) - set(ALL)
    assert not missing, f"no ROUTE_TABLE row for {sorted(missing)}; test_each_encoding_takes_its_route prints it"
    assert not stale, f"ROUTE_TABLE rows for encodings no longer in the registry: {sorted(stale)}"


@pytest.mark.parametrize('pe', ALL)
def test_each_encoding_takes_its_route(pe):
    model = tiny(pe)
    idx = torch.randint(3, 64, (2, 40))
    idx[:, ::7] = 1
    opts = dict(window=dict(key_window=9), lambda_=dict(key_window=9, n_starting=3), lm_infinite=SETUPS[4],
                hook=dict(hook=lambda *a: None))
    got = []
    for setup in ROUTE_SETUPS:
        with routes.recording() as taken:
            if setup == 'training':
                model.train()(idx, targets=idx)[1].backward()
                model.eval()
            elif setup == 'decode':
                with torch.no_grad():
                    cache = KVCache()
                    model(idx[:, :30], cache=cache)
                    taken.clear()
                    model(idx[:, 30:31], cache=cache)
            else:
                with torch.no_grad(), model.attention(**opts.get(setup, opts.get(setup + '_', {}))):
                    model(idx)
        assert len(set(taken)) == 1 and len(taken) == model.config.n_layer, (setup, taken)
        got.append(taken[0])
    # a new encoding has no row yet: say what it took and the line (aligned as the table is) that its author adds
    # once those routes are the ones fastattn's rules give it, instead of a bare KeyError
    assert pe in ROUTE_TABLE, (f"pe={pe!r} has no row in ROUTE_TABLE; it took {dict(zip(ROUTE_SETUPS, got))}. "
                               f"If fastattn's rules give it those routes, add to ROUTE_TABLE:\n"
                               f"    {repr(pe) + ':':<20} {' '.join(got)!r},")
    assert ' '.join(got) == ROUTE_TABLE[pe], f"pe={pe!r} took {dict(zip(ROUTE_SETUPS, got))}"


# ------------------------------------------------------------------------------------------------------------------
# The non-CPU paths: sdpa_lse's explicit branch runs here too; FlexAttention's backward and bf16 need a GPU.
# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('explicit', [False, True])
@pytest.mark.parametrize('masked', [False, True])
def test_sdpa_lse_equals_a_direct_softmax(explicit, masked):
    """Both branches of routes.sdpa_lse (the CPU flash kernel; the explicit one other devices take), causal or with
    a mask holding -inf (one row sees no key: lse -inf, output 0 in the explicit branch)."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 9, 8) for _ in range(3))
    mask = torch.randn(9, 9).masked_fill(torch.rand(9, 9) < 0.3, float('-inf')) if masked else None
    out, lse = routes.sdpa_lse(q, k, v, mask, 0.4, causal=not masked, explicit=explicit)
    att = (q @ k.transpose(-2, -1)) * 0.4
    att = att + mask if masked else att.masked_fill(torch.ones(9, 9, dtype=torch.bool).triu(1), float('-inf'))
    seen = torch.isfinite(att).any(-1)
    want = att.softmax(-1).nan_to_num() @ v
    assert torch.allclose(out[seen], want[seen], atol=1e-5)
    assert torch.allclose(lse[seen], att.logsumexp(-1)[seen], atol=1e-5)
    if explicit and masked:
        mask[4] = float('-inf')
        out, lse = routes.sdpa_lse(q, k, v, mask, 0.4, causal=False, explicit=True)
        assert (lse[..., 4] == float('-inf')).all() and (out[..., 4, :] == 0).all()


@pytest.mark.parametrize('parts', ['', 'b', 'p'])
def test_tiles_through_the_explicit_kernel_equal_a_direct_computation(parts, monkeypatch):
    """tiled_attention as a GPU runs it: every SDPA tile through sdpa_lse's explicit branch."""
    real = routes.sdpa_lse
    monkeypatch.setattr(routes, 'sdpa_lse', lambda *a, **kw: real(*a, **kw, explicit=True))
    torch.manual_seed(0)
    B, H, T, D = 2, 3, 75, 8
    q, k, v = [torch.randn(B, H, T, D) for _ in range(3)]
    tb = torch.randn(H, T)
    bias = (lambda d: tb[:, :len(d)]) if 'b' in parts else None
    pot = torch.randn(B, H, T).cumsum(-1) if 'p' in parts else None
    for window in (0, 23):
        out, lse = routes.tiled_attention(q, k, v, 0.3, bias, None, pot, window, 16)
        want, want_lse = direct(q, k, v, 0.3, bias, None, pot, window)
        assert torch.allclose(out, want, atol=1e-5) and torch.allclose(lse, want_lse, atol=1e-4)


@pytest.mark.parametrize('pe', ['rope', 'alibi'])
def test_lm_infinite_under_bf16_autocast_takes_tiled_near_the_float32_reference(pe):
    """The tiled route merges the Λ mask's starting tokens into the band's float32 sum; under autocast that part's
    matmul comes back in bfloat16 (an H200 run of bench.py's eval mode raised in torch.lerp there)."""
    model = tiny(pe, n_embd=64)
    idx = torch.randint(3, 64, (2, 80))
    opts = dict(key_window=16, n_starting=2, ceiling=16)
    with torch.no_grad():
        want = logits(model, idx, route='reference', **opts)
        with torch.autocast('cpu', dtype=torch.bfloat16), routes.recording() as taken:
            got = logits(model, idx, **opts)
    assert 'tiled' in taken, taken
    assert torch.isfinite(got).all() and (got.float() - want).abs().max() < 0.05 * want.abs().max()


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')


def loss_and_grads(model, idx, **opts):
    model.zero_grad()
    with model.attention(**opts):
        loss = model(idx, targets=idx)[1]
    loss.backward()
    return loss.detach().float(), {n: p.grad.float().clone() for n, p in model.named_parameters() if p.grad is not None}


@cuda
@pytest.mark.parametrize('pe', ['alibi', 't5', 'kerple_biaswht', 'gauss_wht1', 'fox', 'bipe_alibi', 'rope'])
@pytest.mark.parametrize('opts', [dict(), dict(key_window=9, n_starting=2)])
@pytest.mark.parametrize('prefer', ['flex', 'dense'])
def test_cuda_training_through_flex_or_dense_equals_reference(pe, opts, prefer):
    """CUDA training takes the compiled FlexAttention route, or the dense one (SDPA with the [H, T, T] bias as a mask
    whose gradient it returns) where it applies and is preferred (forward and backward): the loss and every gradient,
    the positional parameters' included, equal the reference's."""
    model = tiny(pe, n_embd=64).cuda().train()  # head dimension 16, the least FlexAttention compiles for
    idx = torch.randint(3, 64, (2, 80), device='cuda')
    idx[:, ::7] = 1
    with routes.recording() as taken:
        l1, g1 = loss_and_grads(model, idx, route=prefer, **opts)
    dense = prefer == 'dense' and pe in ('t5', 'rope')  # no weight, no potential: the dense route applies
    assert set(taken) == {'causal' if not opts and pe == 'rope' else 'dense' if dense else 'flex'}, taken
    l2, g2 = loss_and_grads(model, idx, route='reference', **opts)
    assert torch.allclose(l1, l2, atol=1e-4) and g1.keys() == g2.keys()
    assert {n for n, _ in model.named_parameters() if n.startswith('pe.')} <= g1.keys()  # positional ones too
    for n in g1:
        assert torch.allclose(g1[n], g2[n], atol=1e-4, rtol=1e-3), (n, (g1[n] - g2[n]).abs().max())


@cuda
@pytest.mark.parametrize('pe', ['alibi', 'kerple_log', 'fox', 'rope', 'fire'])
def test_cuda_bf16_autocast_stays_near_the_float32_reference(pe):
    """bf16 autocast, as train.py runs on a GPU: every route's logits within bf16's precision of the float32
    reference, in inference and with gradients."""
    model = tiny(pe, n_embd=64).cuda()
    idx = torch.randint(3, 64, (2, 80), device='cuda')
    idx[:, ::7] = 1
    with torch.no_grad():
        ref = logits(model, idx, route='reference')
        with torch.autocast('cuda', dtype=torch.bfloat16):
            fast = logits(model, idx, key_window=16, n_starting=2), logits(model, idx)
        ref_lambda = logits(model, idx, route='reference', key_window=16, n_starting=2)
    for got, want in zip(fast, (ref_lambda, ref)):
        assert torch.isfinite(got).all() and (got.float() - want).abs().max() < 0.05 * want.abs().max()
    model.train()
    with torch.autocast('cuda', dtype=torch.bfloat16):
        loss = model(idx, targets=idx)[1]
    loss.backward()
    with torch.no_grad():
        want = logits(model.eval(), idx, route='reference')
    assert abs(loss.item() - torch.nn.functional.cross_entropy(want.flatten(0, 1), idx.flatten()).item()) < 0.05
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@cuda
@pytest.mark.parametrize('pe', ['alibi', 'fox'])
def test_cuda_head_dimension_8_leaves_flex_and_equals_reference(pe):
    """FlexAttention refuses head dimensions under 16 when it compiles (an H100 with torch 2.11 raised 'NYI' for
    the 8 of the tiny test models): such a model takes another route, with the reference's logits."""
    model = tiny(pe).cuda()
    idx = torch.randint(3, 64, (2, 80), device='cuda')
    with torch.no_grad(), routes.recording() as taken:
        got = logits(model, idx, key_window=16, n_starting=2)
    assert 'flex' not in taken, taken
    with torch.no_grad():
        want = logits(model, idx, route='reference', key_window=16, n_starting=2)
    assert torch.allclose(got, want, atol=1e-4)


@cuda
def test_cuda_sdpa_lse_equals_the_cpu_kernel():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 33, 8) for _ in range(3))
    want = routes.sdpa_lse(q, k, v, None, 0.4, causal=True)
    got = routes.sdpa_lse(q.cuda(), k.cuda(), v.cuda(), None, 0.4, causal=True)
    assert all(torch.allclose(a.cpu(), b, atol=1e-5) for a, b in zip(got, want))
