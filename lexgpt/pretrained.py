"""
Pretrained checkpoints for our GPT (model.GPT.from_pretrained): a Hugging Face folder (config.json + safetensors,
sharded or not), a llama.cpp .gguf file (or an alias of one: aliases.py), or a hub name when online. load() returns
plain data, GPTConfig keyword arguments and a state dict in model.py's names, so this module needs neither model.py
nor transformers.

Each family is one entry of FAMILIES (model_type -> what differs from nanoGPT's GPT-2, its config reader and its
tensor converter): Llama 1-3 and SmolLM, Mistral, Qwen2/2.5, Gemma (folders) and Gemma 3, GPT-NeoX/Pythia, GPT-2.
Adding a family: one entry `model_type -> Family(display name, config.json -> GPTConfig arguments, tensor converter,
the otherwise refused config keys it reads)`, with a converter beside from_llama only for new tensor names or layouts,
and its case in CASES of tests/test_pretrained.py (a tiny random model against transformers' logits). Everything else
is refused in one line that names the feature. tokenizer() gives the checkpoint's own tokenizer
(tokenizer.json, or the GGUF's vocabulary: gguf_reader.py) through the `tokenizers` library.
"""
import json
import os
import re
from collections import namedtuple

import torch

from lexgpt import rope_scaling
from lexgpt.aliases import locate
from lexgpt.config import ConfigError
from lexgpt.gguf_reader import gguf_tokenizer, read_gguf, refuse as refuse_in_one_line

# model types people try that we refuse, with the reason
REFUSED_TYPES = {'gemma2': 'logit soft-capping',
                 'qwen3': 'QK-norm', 'mixtral': 'mixture of experts',
                 'qwen2_moe': 'mixture of experts', 'phi3': 'longrope scaling', 'smollm3': 'layers without RoPE'}
# config keys of features our GPT lacks, refused when set
REFUSED_KEYS = {'attn_logit_softcapping': 'attention logit soft-capping',
                'final_logit_softcapping': 'logit soft-capping',
                'query_pre_attn_scalar': 'an attention scale other than 1/sqrt(head_dim)', 'use_qk_norm': 'QK-norm',
                'qk_layernorm': 'QK-norm', 'num_experts': 'mixture of experts',
                'num_local_experts': 'mixture of experts',
                'n_routed_experts': 'mixture of experts', 'no_rope_layers': 'layers without RoPE',
                'attention_multiplier': 'an attention scale other than 1/sqrt(head_dim)',
                'scale_attn_by_inverse_layer_idx': 'an attention scale other than 1/sqrt(head_dim)',
                'add_cross_attention': 'cross-attention'}
# rope_scaling / rope_parameters type -> GPTConfig.rope_scaling
ROPE_TYPES = {'linear': 'pi', 'dynamic': 'dynamic', 'yarn': 'yarn', 'llama3': 'llama3'}
ACTIVATIONS = {'gelu': 'gelu', 'gelu_new': 'gelu_tanh', 'gelu_pytorch_tanh': 'gelu_tanh'}
# non-persistent buffers that older checkpoints saved: causal masks and RoPE frequencies
BUFFERS = re.compile(r'(.*\.)?(attn\.bias|attn\.masked_bias|attention\.bias|attention\.masked_bias'
                     r'|rotary_emb\.inv_freq)')
HUB_FILES = ['*.json', 'model*.safetensors']  # config, index and tokenizer files; not consolidated.* duplicates


def short_name(path):
    """'smollm2', 'models/Llama-3.2-1B' or 'x/y.gguf' -> 'smollm2', 'Llama-3.2-1B', 'y': run names and data folders."""
    return os.path.splitext(os.path.basename(os.path.normpath(str(path))))[0]


def refuse(what, allowed=None):
    refuse_in_one_line(what, allowed or 'supported: ' + ', '.join(f.name for f in FAMILIES.values()))


def load(path, fields=None, **overrides):
    """(GPTConfig kwargs, state dict in model.py's names, info) for a folder, .gguf file or hub name. fields: the
    GPTConfig field names; an argument this model.py lacks is refused in one line. overrides replace arguments."""
    file = locate(path)
    if file.endswith('.gguf'):
        hf, tensors = read_gguf(file)
    else:
        folder = resolve(file)
        hf, tensors = json.load(open(os.path.join(folder, 'config.json'))), None
    args, info = config_args(hf)
    # bos: what the model's own tokenizer puts before a text, so that every input the evaluations build starts so
    info['bos'] = hf['tokenizer_bos'] if file.endswith('.gguf') else folder_bos(folder)
    args = rope_scaling.over_checkpoint(args, overrides)
    if fields is not None:  # refused before the weights are read
        if set(overrides) - set(fields):
            raise ConfigError(f"unknown GPTConfig field(s) {sorted(set(overrides) - set(fields))} in the overrides")
        if set(args) - set(fields):
            raise ConfigError(f"rope_scaling={args.get('rope_scaling')!r} needs GPTConfig field(s) "
                              f"{sorted(set(args) - set(fields))} that this model.py lacks")
    tensors = tensors if tensors is not None else read_safetensors(folder)
    state = FAMILIES[info['family']].convert(tensors, args)
    left = [k for k in tensors if not BUFFERS.fullmatch(k)]
    if left:
        refuse(f"{len(left)} tensor(s) our GPT has no place for ({', '.join(left[:3])})")
    return args, state, {**info, 'source': str(path)}


def resolve(path):
    """A local folder as it is; otherwise a hub name, downloaded (config, safetensors and tokenizer files only)."""
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, 'config.json')):
            raise ConfigError(f"{path} has no config.json: pass a Hugging Face model folder or a .gguf file")
        return path
    if os.path.exists(path) or not re.fullmatch(r'[\w.-]+(/[\w.-]+)?', str(path)):
        raise ConfigError(f"{path!r} is neither a model folder (config.json + *.safetensors), a .gguf file "
                          f"nor a hub name")
    try:
        from huggingface_hub import snapshot_download
        return snapshot_download(str(path), allow_patterns=HUB_FILES)
    except Exception as e:
        raise ConfigError(f"{path!r} is no file or folder here and cannot download {path!r} from the Hugging Face hub "
                          f"({type(e).__name__}); offline, pass a local folder (config.json + *.safetensors), a .gguf "
                          f"file or a train.py checkpoint") from None


def read_safetensors(folder):
    from safetensors.torch import load_file
    index = os.path.join(folder, 'model.safetensors.index.json')
    if os.path.exists(index):
        files = sorted(set(json.load(open(index))['weight_map'].values()))
    elif os.path.exists(os.path.join(folder, 'model.safetensors')):
        files = ['model.safetensors']
    else:
        raise ConfigError(f"{folder} has no model.safetensors nor model.safetensors.index.json (pytorch_model.bin "
                          f"is not read: save the model with safetensors)")
    tensors = {}
    for f in files:
        tensors.update(load_file(os.path.join(folder, f)))
    return tensors


# --------------------------------------------------------------------------------------------
# config.json -> GPTConfig arguments
# --------------------------------------------------------------------------------------------

def config_args(hf):
    """GPTConfig kwargs and info (family, training length L_tr, bos/eos ids) for a config.json dict; of a
    vision-language model's (Gemma 3's model_type gemma3), its text part, text_config."""
    if isinstance(hf.get('text_config'), dict):
        hf = {**{k: v for k, v in hf.items() if k != 'text_config'}, **hf['text_config']}
    family = hf.get('model_type')
    if family not in FAMILIES:
        refuse(f"model_type={family!r}" + (f" ({REFUSED_TYPES[family]})" if family in REFUSED_TYPES else ''))
    for key, feature in REFUSED_KEYS.items():
        if hf.get(key) and key not in FAMILIES[family].reads:
            refuse(f"{feature} ({key}={hf[key]!r})")
    args = FAMILIES[family].args(hf)
    rope = hf.get('rope_parameters') or hf.get('rope_scaling') or {}
    L_tr = hf.get('original_max_position_embeddings') or rope.get('original_max_position_embeddings') or \
        hf.get('max_position_embeddings') or hf.get('n_positions')
    args['block_size'] = int(L_tr)
    info = dict(family=family, L_tr=int(L_tr), bos_id=hf.get('bos_token_id'), eos_id=hf.get('eos_token_id'))
    return args, info


def rotary_args(hf):
    """What every RoPE family's config.json gives alike: sizes, an untied head unless said, RoPE (rope_args)."""
    head_dim = hf.get('head_dim') or hf['hidden_size'] // hf['num_attention_heads']
    return dict(vocab_size=hf['vocab_size'], n_layer=hf['num_hidden_layers'], n_head=hf['num_attention_heads'],
                n_embd=hf['hidden_size'], mlp_hidden=hf['intermediate_size'], pe='rope', head_dim=head_dim,
                tie_head=bool(hf.get('tie_word_embeddings', False)), **rope_args(hf, head_dim))


def llama_args(hf):
    """Llama (and Mistral, Qwen2 on top): RMSNorm, SwiGLU, grouped-query attention, no sliding window."""
    if hf.get('hidden_act', 'silu') != 'silu':
        refuse(f"hidden_act={hf['hidden_act']!r}", "supported for this family: 'silu' (SwiGLU)")
    attn_bias, mlp_bias = bool(hf.get('attention_bias')), bool(hf.get('mlp_bias'))
    if attn_bias != mlp_bias:
        refuse(f"attention_bias={attn_bias} with mlp_bias={mlp_bias}", 'supported: both or neither')
    return dict(rotary_args(hf), n_kv_head=hf.get('num_key_value_heads') or hf['num_attention_heads'], norm='rmsnorm',
                norm_eps=hf.get('rms_norm_eps', 1e-6), mlp='swiglu', bias=attn_bias, qkv_bias=False, window=0)


def mistral_args(hf):
    """Llama with a sliding window, on every layer unless layer_types says otherwise."""
    kind = 'sliding_attention' if hf.get('sliding_window') is not None else 'full_attention'
    return dict(llama_args(hf), window=one_window(hf, [kind] * hf['num_hidden_layers']))


def qwen2_args(hf):
    """Llama with biases on q, k and v; a sliding window only if use_sliding_window, from layer max_window_layers on."""
    on, first = hf.get('sliding_window') is not None and hf.get('use_sliding_window'), hf.get('max_window_layers', 0)
    kinds = ['sliding_attention' if on and i >= first else 'full_attention' for i in range(hf['num_hidden_layers'])]
    return dict(llama_args(hf), qkv_bias=True, window=one_window(hf, kinds))


def one_window(hf, derived):
    """GPTConfig.window for a config whose layers all slide (its sliding_window) or none do (0); layer_types, where
    given, says which layers slide, else `derived` as transformers derives them from older keys."""
    kinds = set(hf.get('layer_types') or derived)
    if kinds == {'full_attention'}:
        return 0
    if kinds == {'sliding_attention'}:
        return int(hf['sliding_window'])
    refuse(f"per-layer attention windows (layer_types {sorted(kinds)})", 'supported: one window for all layers')


def gemma_args(hf):
    """Gemma (Gemma Team 2024, sec. 2): Llama's layout with GeGLU (tanh; transformers reads a config's legacy 'gelu'
    so), RMSNorm gains 1 + w, embeddings times sqrt(width), a head dimension apart from width / heads, a tied head."""
    act = hf.get('hidden_act') or 'gelu_pytorch_tanh'
    if act not in ('gelu', 'gelu_pytorch_tanh'):
        refuse(f"hidden_act={act!r}", "supported for Gemma: 'gelu_pytorch_tanh' (GeGLU)")
    if hf.get('attention_bias'):
        refuse('Gemma with attention biases', 'supported: none')
    return dict(rotary_args({'tie_word_embeddings': True, **hf}), n_kv_head=hf.get('num_key_value_heads') or
                hf['num_attention_heads'], norm='rmsnorm', norm_eps=hf.get('rms_norm_eps', 1e-6), mlp='geglu',
                bias=False, qkv_bias=False, embd_mult=hf['hidden_size'] ** 0.5, window=0)


def gemma3_args(hf):
    """Gemma 3's text model (Gemma Team 2025, Gemma 3 technical report, sec. 2; transformers' Gemma3TextConfig):
    grouped-query attention with QK-norm, norms before and after each branch, GeGLU (tanh), embeddings times
    sqrt(width), q.k times query_pre_attn_scalar^-0.5, and local layers (layer_types' sliding_attention; else all but
    every sliding_window_pattern-th) with their own window and RoPE base (rope_local_base_freq) between global ones
    (rope_theta), to which its RoPE scaling, if any, applies."""
    act = hf.get('hidden_activation') or hf.get('hidden_act') or 'gelu_pytorch_tanh'
    if ACTIVATIONS.get(act) != 'gelu_tanh':
        refuse(f"hidden_activation={act!r}", "supported for Gemma 3: 'gelu_pytorch_tanh' (GeGLU)")
    if hf.get('use_bidirectional_attention') or hf.get('attention_bias'):
        refuse('Gemma 3 with bidirectional attention or attention biases', 'supported: causal, no biases')
    p = hf.get('rope_parameters') or {}
    full = p.get('full_attention') or {**(hf.get('rope_scaling') or {}), 'rope_theta': hf.get('rope_theta', 1e6)}
    local = p.get('sliding_attention') or {'rope_theta': hf.get('rope_local_base_freq', 1e4)}
    if (local.get('rope_type') or local.get('type') or 'default') != 'default':
        refuse(f"RoPE scaling on Gemma 3's local layers ({local.get('rope_type') or local.get('type')})",
               'supported: on its global layers')
    n, every = hf['num_hidden_layers'], hf.get('sliding_window_pattern', 6)
    kinds = hf.get('layer_types') or ['sliding_attention' if (i + 1) % every else 'full_attention' for i in range(n)]
    if set(kinds) - {'sliding_attention', 'full_attention'}:
        refuse(f"layer_types {sorted(set(kinds))}", "supported: 'sliding_attention', 'full_attention'")
    H, own = hf['num_attention_heads'], (int(hf.get('sliding_window') or 0), float(local['rope_theta']))
    scaling, layers = rope_scaling_args(full, hf), tuple(own if k == 'sliding_attention' else (0, 0.0) for k in kinds)
    extend = {'extend_layers': 'global'} if scaling else {}  # the checkpoint's own RoPE scaling: global layers alone
    return dict(vocab_size=hf['vocab_size'], n_layer=n, n_head=H, n_kv_head=hf.get('num_key_value_heads') or H,
                n_embd=hf['hidden_size'], head_dim=hf.get('head_dim') or 256, mlp_hidden=hf['intermediate_size'],
                pe='rope', norm='rmsnorm', norm_eps=hf.get('rms_norm_eps', 1e-6), mlp='geglu', bias=False,
                qkv_bias=False, tie_head=bool(hf.get('tie_word_embeddings', True)), qk_norm=True, post_norm=True,
                embd_mult=hf['hidden_size'] ** 0.5, attn_scale=hf.get('query_pre_attn_scalar', 256) ** -0.5, window=0,
                rope_base=float(full['rope_theta']), layer_attn=layers, **scaling, **extend)


def neox_args(hf):
    """GPT-NeoX / Pythia: LayerNorm, GELU, biases everywhere, parallel residual."""
    if hf.get('hidden_act', 'gelu') not in ACTIVATIONS:
        refuse(f"hidden_act={hf['hidden_act']!r}", f"supported: {', '.join(ACTIVATIONS)}")
    if not hf.get('attention_bias', True):
        refuse('GPT-NeoX without attention biases', 'supported: attention_bias=True')
    return dict(rotary_args(hf), norm_eps=hf.get('layer_norm_eps', 1e-5), mlp=ACTIVATIONS[hf.get('hidden_act', 'gelu')],
                bias=True, parallel_residual=bool(hf.get('use_parallel_residual', True)))


def gpt2_args(hf):
    """GPT-2: learned positions, LayerNorm, GELU, biases everywhere, a tied head."""
    if not hf.get('scale_attn_weights', True):
        refuse('GPT-2 without attention scaling (scale_attn_weights=False)', 'supported: 1/sqrt(head_dim)')
    act = hf.get('activation_function', 'gelu_new')
    if act not in ACTIVATIONS:
        refuse(f"activation_function={act!r}", f"supported: {', '.join(ACTIVATIONS)}")
    return dict(vocab_size=hf['vocab_size'], n_layer=hf['n_layer'], n_head=hf['n_head'], n_embd=hf['n_embd'],
                mlp_hidden=hf.get('n_inner') or 0, pe='learned', bias=True, mlp=ACTIVATIONS[act],
                norm_eps=hf.get('layer_norm_epsilon', 1e-5), tie_head=bool(hf.get('tie_word_embeddings', True)))


def rope_args(hf, head_dim):
    """rope_base, rotary_dim and the scaling fields, from rope_parameters (transformers 5) or the older rope_theta,
    rope_scaling, rotary_pct and rotary_emb_base keys."""
    p = dict(hf.get('rope_parameters') or hf.get('rope_scaling') or {})
    if p and all(isinstance(v, dict) for v in p.values()):
        refuse(f"per-layer RoPE settings ({', '.join(p)})", 'supported: one RoPE for all layers')
    base = p.get('rope_theta') or hf.get('rope_theta') or hf.get('rotary_emb_base') or 10000.0
    frac = p.get('partial_rotary_factor') or hf.get('partial_rotary_factor') or hf.get('rotary_pct') or 1.0
    args = dict(rope_base=float(base))
    if frac < 1:
        args['rotary_dim'] = int(head_dim * frac)
    return {**args, **rope_scaling_args(p, hf)}


def rope_scaling_args(p, hf):
    """GPTConfig's RoPE-extension fields (issue #27's names) for a rope_scaling / rope_parameters dict."""
    kind = p.get('rope_type') or p.get('type') or 'default'
    if kind == 'default':
        return {}
    if kind not in ROPE_TYPES:
        refuse(f"rope scaling {kind!r}", f"supported: {', '.join(ROPE_TYPES)}")
    L = hf.get('max_position_embeddings')
    L0 = int(hf.get('original_max_position_embeddings') or p.get('original_max_position_embeddings') or L)
    factor = p.get('factor') or L / L0  # yarn without a factor: the ratio of the two lengths, as transformers
    args = dict(rope_scaling=ROPE_TYPES[kind], rope_scale=float(factor))
    if kind == 'dynamic':  # transformers grows the base past max_position_embeddings
        args['rope_original_len'] = int(L)
    elif kind == 'yarn':
        if p.get('mscale') or p.get('mscale_all_dim'):
            refuse("YaRN's mscale / mscale_all_dim (DeepSeek)", 'supported: factor, beta_fast, beta_slow, '
                   'attention_factor, truncate, original_max_position_embeddings')
        args.update(rope_original_len=L0, rope_beta_fast=float(p.get('beta_fast') or 32.0),
                    rope_beta_slow=float(p.get('beta_slow') or 1.0), rope_truncate=bool(p.get('truncate', True)))
        if p.get('attention_factor') is not None:
            args['rope_attn_factor'] = float(p['attention_factor'])
    elif kind == 'llama3':
        args.update(rope_original_len=L0, rope_beta_slow=float(p['low_freq_factor']),
                    rope_beta_fast=float(p['high_freq_factor']))
    return args


# --------------------------------------------------------------------------------------------
# Tensors -> model.py's names. Each converter pops what it uses, so load() can refuse what is left.
# --------------------------------------------------------------------------------------------

def take(t, name):
    if name not in t:
        raise ConfigError(f"the checkpoint has no tensor {name!r}")
    return t.pop(name)


def head(sd, t, args, name):
    """lm_head: the token embedding when tied (a saved copy is dropped), else its own tensor."""
    if args['tie_head']:
        t.pop(name, None)
        sd['lm_head.weight'] = sd['transformer.wte.weight']
    else:
        sd['lm_head.weight'] = take(t, name)
    return sd


def from_llama(t, args):
    """Llama, Mistral, Qwen2 (and GGUF files, named so by read_gguf): c_attn = [q; k; v] in transformers' row order
    (rotate-half pairs, KV heads in order), c_fc = [gate; up]."""
    sd = {'transformer.wte.weight': take(t, 'model.embed_tokens.weight'),
          'transformer.ln_f.weight': take(t, 'model.norm.weight')}
    for i in range(args['n_layer']):
        p, o = f'model.layers.{i}.', f'transformer.h.{i}.'
        sd[o + 'ln_1.weight'] = take(t, p + 'input_layernorm.weight')
        sd[o + 'ln_2.weight'] = take(t, p + 'post_attention_layernorm.weight')
        for kind in ('weight', 'bias') if args['bias'] or args['qkv_bias'] else ('weight',):
            sd[o + 'attn.c_attn.' + kind] = torch.cat([take(t, f'{p}self_attn.{x}_proj.{kind}') for x in 'qkv'])
        for kind in ('weight', 'bias') if args['bias'] else ('weight',):
            sd[o + 'attn.c_proj.' + kind] = take(t, f'{p}self_attn.o_proj.{kind}')
            sd[o + 'mlp.c_fc.' + kind] = torch.cat([take(t, f'{p}mlp.{x}_proj.{kind}') for x in ('gate', 'up')])
            sd[o + 'mlp.c_proj.' + kind] = take(t, f'{p}mlp.down_proj.{kind}')
    return head(sd, t, args, 'lm_head.weight')


def one_plus_w(sd):
    """Gemma's RMSNorm multiplies by 1 + w (transformers' GemmaRMSNorm): store that gain in the 1-D norm weights."""
    return {k: w.float() + 1 if w.dim() == 1 else w for k, w in sd.items()}


def from_gemma(t, args):
    """Gemma: Llama's tensor names, its norm gains 1 + w."""
    return one_plus_w(from_llama(t, args))


def from_gemma3(t, args):
    """Gemma 3: Llama's tensors (the norm before the MLP is pre_feedforward_layernorm), a norm after each branch and
    q_norm, k_norm; each norm weight w stored as the gain 1 + w that Gemma's RMSNorm applies (transformers'
    Gemma3RMSNorm). A vision-language checkpoint's text part is read under its language model's prefix, its vision
    tower and projector left out."""
    for k in list(t):  # transformers 5 saves model.language_model.*, 4.x language_model.model.* and its lm_head
        name = re.sub(r'^(model\.language_model|language_model\.model)\.', 'model.', k).replace('language_model.', '')
        if re.match(r'(model\.)?(vision_tower|multi_modal_projector)\.', k):
            del t[k]
        elif name != k:
            t[name] = t.pop(k)
    sd = {}
    for i in range(args['n_layer']):
        p, o = f'model.layers.{i}.', f'transformer.h.{i}.'
        for ours, theirs in (('post_attn', 'post_attention_layernorm'), ('post_mlp', 'post_feedforward_layernorm'),
                             ('attn.q_norm', 'self_attn.q_norm'), ('attn.k_norm', 'self_attn.k_norm')):
            sd[f'{o}{ours}.weight'] = take(t, f'{p}{theirs}.weight')
        t[p + 'post_attention_layernorm.weight'] = take(t, p + 'pre_feedforward_layernorm.weight')  # Llama's name
    sd.update(from_llama(t, args))
    return one_plus_w(sd)


def from_neox(t, args):
    """GPT-NeoX: the fused query_key_value holds [q_h; k_h; v_h] for each head h in turn; ours is [q; k; v]."""
    H, D = args['n_head'], args['head_dim']
    sd = {'transformer.wte.weight': take(t, 'gpt_neox.embed_in.weight')}
    pairs = [('transformer.ln_f.', 'gpt_neox.final_layer_norm.')]
    for i in range(args['n_layer']):
        p, o = f'gpt_neox.layers.{i}.', f'transformer.h.{i}.'
        pairs += [(o + 'ln_1.', p + 'input_layernorm.'), (o + 'ln_2.', p + 'post_attention_layernorm.'),
                  (o + 'attn.c_proj.', p + 'attention.dense.'), (o + 'mlp.c_fc.', p + 'mlp.dense_h_to_4h.'),
                  (o + 'mlp.c_proj.', p + 'mlp.dense_4h_to_h.')]
        for kind in ('weight', 'bias'):
            w = take(t, p + 'attention.query_key_value.' + kind)
            sd[o + 'attn.c_attn.' + kind] = w.reshape(H, 3, D, -1).transpose(0, 1).reshape(w.shape)
    for ours, theirs in pairs:
        for kind in ('weight', 'bias'):
            sd[ours + kind] = take(t, theirs + kind)
    return head(sd, t, args, 'embed_out.weight')


def from_gpt2(t, args):
    """GPT-2: names as nanoGPT's, but Conv1D keeps its weights as [in, out]: transposed here."""
    pre = 'transformer.' if 'transformer.wte.weight' in t else ''
    sd = {'transformer.wte.weight': take(t, pre + 'wte.weight'), 'pe.wpe.weight': take(t, pre + 'wpe.weight')}
    names = ['ln_f.'] + [f'h.{i}.{m}.' for i in range(args['n_layer'])
                         for m in ('ln_1', 'ln_2', 'attn.c_attn', 'attn.c_proj', 'mlp.c_fc', 'mlp.c_proj')]
    for name in names:
        for kind in ('weight', 'bias'):
            w = take(t, pre + name + kind)
            sd['transformer.' + name + kind] = w.t() if kind == 'weight' and w.dim() == 2 else w
    return head(sd, t, args, 'lm_head.weight')


# --------------------------------------------------------------------------------------------
# The families: model_type -> its name, how its config.json becomes GPTConfig arguments (window and RoPE rules
# included), and how its tensors become model.py's. Adding a family is one entry here and, where its tensors are
# named or laid out in a new way, one converter above.
# --------------------------------------------------------------------------------------------

Family = namedtuple('Family', 'name args convert reads', defaults=((),))  # reads: REFUSED_KEYS its args handle
FAMILIES = {
    'llama': Family('Llama 1-3, SmolLM/SmolLM2', llama_args, from_llama),
    'mistral': Family('Mistral', mistral_args, from_llama),
    'qwen2': Family('Qwen2/2.5', qwen2_args, from_llama),
    'gemma': Family('Gemma', gemma_args, from_gemma),
    'gemma3_text': Family('Gemma 3', gemma3_args, from_gemma3, reads=('query_pre_attn_scalar',)),
    'gpt_neox': Family('GPT-NeoX/Pythia', neox_args, from_neox),
    'gpt2': Family('GPT-2', gpt2_args, from_gpt2),
}


# --------------------------------------------------------------------------------------------
# Tokenizers (a GGUF's: gguf_reader.py)
# --------------------------------------------------------------------------------------------

def folder_tokenizer(path):
    """(tokenizers.Tokenizer, bos to prepend or None, eos) from a folder's tokenizer.json."""
    from tokenizers import Tokenizer
    folder = resolve(path)
    file = os.path.join(folder, 'tokenizer.json')
    if not os.path.exists(file):
        raise ConfigError(f"{folder} has no tokenizer.json (the `tokenizers` library's file) for its tokenizer")
    tok = Tokenizer.from_file(file)
    eos = json.load(open(os.path.join(folder, 'config.json'))).get('eos_token_id')
    return tok, folder_bos(folder, tok), eos[0] if isinstance(eos, list) else eos


def folder_bos(folder, tok=None):
    """The id a folder's tokenizer puts before a text, or None, as transformers 5 decides: tokenizer.json's
    post-processor template (transformers then drops tokenizer_config.json's add_bos_token), except that its GPT-NeoX
    tokenizer rebuilds the template with add_bos_token=False. A folder without tokenizer.json (whose text cannot be
    tokenized here either): None."""
    from tokenizers import Tokenizer
    file, settings = os.path.join(folder, 'tokenizer.json'), os.path.join(folder, 'tokenizer_config.json')
    if tok is None and not os.path.exists(file):
        return None
    kind = (json.load(open(settings)) if os.path.exists(settings) else {}).get('tokenizer_class') or \
        json.load(open(os.path.join(folder, 'config.json'))).get('model_type')
    if str(kind).startswith(('GPTNeoXTokenizer', 'gpt_neox')):
        return None
    tok = tok or Tokenizer.from_file(file)
    plain, full = tok.encode('a', add_special_tokens=False).ids, tok.encode('a').ids
    return full[0] if len(full) > len(plain) and full[1:len(plain) + 1] == plain else None  # the template adds one


def tokenizer(path):
    """The checkpoint's tokenizer as the fields of loading.Tokenizer: encode (str -> ids, no special tokens added;
    special tokens written in the text stay whole), decode, vocab_size, eot (its eos), sep_ids ('.' and newline, for
    BiPE) and bos (the id to put before each input, or None)."""
    file = locate(path)
    tok, bos, eos = gguf_tokenizer(file) if file.endswith('.gguf') else folder_tokenizer(file)
    encode = lambda s: tok.encode(s, add_special_tokens=False).ids
    return dict(name=str(path), vocab_size=tok.get_vocab_size(), eot=eos, sep_ids=[encode('.')[0], encode('\n')[0]],
                encode=encode, decode=lambda ids: tok.decode(list(ids), skip_special_tokens=False), bos=bos)
