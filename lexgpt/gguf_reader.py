"""
llama.cpp's .gguf files for pretrained.py: the metadata as a config.json dict, the tensors dequantised (the `gguf`
package) and renamed to transformers' names, and the vocabulary as a `tokenizers` tokenizer. Two architectures:
'llama' (Llama, Mistral, SmolLM files) and 'gemma3' (Gemma 3's text model). What a file holds that we cannot express
is refused in one line before anything is dequantised.
"""
import os
import re

import torch

from lexgpt.config import ConfigError

# GGUF architecture -> config.json's model_type
ARCHITECTURES = {'llama': 'llama', 'gemma3': 'gemma3_text'}
GGUF_NAMES = {'token_embd': 'model.embed_tokens', 'output_norm': 'model.norm', 'output': 'lm_head'}
GGUF_LAYER = {'attn_norm': 'input_layernorm', 'ffn_norm': 'post_attention_layernorm', 'attn_q': 'self_attn.q_proj',
              'attn_k': 'self_attn.k_proj', 'attn_v': 'self_attn.v_proj', 'attn_output': 'self_attn.o_proj',
              'ffn_gate': 'mlp.gate_proj', 'ffn_up': 'mlp.up_proj', 'ffn_down': 'mlp.down_proj'}
# Gemma 3 (llama.cpp's tensor names for LLM_ARCH_GEMMA3): a norm after each branch too, and QK-norm
GEMMA3_LAYER = dict(GGUF_LAYER, ffn_norm='pre_feedforward_layernorm', post_attention_norm='post_attention_layernorm',
                    post_ffw_norm='post_feedforward_layernorm', attn_q_norm='self_attn.q_norm',
                    attn_k_norm='self_attn.k_norm')


def refuse(what, allowed):
    raise ConfigError(f"{what} is not supported ({allowed})")


def open_gguf(path):
    if not os.path.isfile(path):
        raise ConfigError(f"no GGUF file {path}")
    return parse_gguf(path)


def parse_gguf(path):
    """gguf's GGUFReader over the file, its byte views plain arrays. It cuts the file into about 3 million small views
    for Gemma 3's 262,144-token vocabulary, and numpy's memmap subclass makes each view a Python call, most of the
    parse's time. The plain array is a view of the same mapping, so the parse and the bytes are the library's."""
    import numpy as np
    from gguf.gguf_reader import GGUFReader  # the class: tests/conftest.py wraps the package's name for transformers

    class PlainViews(GGUFReader):
        def _get(self, *args, **kwargs):
            if isinstance(self.data, np.memmap):
                self.data = self.data.view(np.ndarray)
            return super()._get(*args, **kwargs)
    return PlainViews(path)


def gguf_meta(reader):
    """The scalar metadata of a GGUF file (the tokenizer's long arrays are read where needed)."""
    return {k: f.contents() for k, f in reader.fields.items() if not k.startswith('tokenizer.ggml.')
            or k in ('tokenizer.ggml.model', 'tokenizer.ggml.pre', 'tokenizer.ggml.bos_token_id',
                     'tokenizer.ggml.eos_token_id', 'tokenizer.ggml.unknown_token_id', 'tokenizer.ggml.add_bos_token')}


def read_gguf(path):
    """(config.json-like dict, tensors in transformers' names) of a GGUF file."""
    from gguf.quants import dequantize
    reader = open_gguf(path)
    hf = gguf_config(gguf_meta(reader), {x.name: [int(n) for n in reversed(x.shape)] for x in reader.tensors})
    gemma = hf['model_type'] == 'gemma3_text'
    tensors = {}
    for x in reader.tensors:
        shape = [int(n) for n in reversed(x.shape)]
        w = torch.from_numpy(dequantize(x.data, x.tensor_type).reshape(shape).copy()).float()
        # llama.cpp's converter writes Gemma's norm weights as 1 + w (convert_hf_to_gguf.py, Gemma3Model): undone, as
        # transformers' GGUF loader does, so that the one Gemma 3 converter reads both
        name = gguf_name(x.name, GEMMA3_LAYER if gemma else GGUF_LAYER)
        tensors[name] = w - 1 if gemma and x.name.endswith('norm.weight') else w
    for i in range(hf['num_hidden_layers'] if not gemma else 0):  # Gemma rotates halves (llama.cpp's NEOX rope) already
        for x, heads in (('q', hf['num_attention_heads']), ('k', hf['num_key_value_heads'])):
            for kind in ('weight', 'bias'):  # llama.cpp's Llama converter interleaves the rotary pairs: undo it
                name = f'model.layers.{i}.self_attn.{x}_proj.{kind}'
                if name in tensors:
                    tensors[name] = unpermute(tensors[name], heads)
    return hf, tensors


def gguf_config(meta, shapes):
    """config.json's keys from a GGUF's metadata and tensor shapes."""
    arch = meta.get('general.architecture')
    if arch not in ARCHITECTURES:
        refuse(f"GGUF architecture {arch!r}", "supported GGUF architectures: 'llama' (Llama, Mistral, SmolLM) and "
               "'gemma3'; other families from their Hugging Face folder")
    g = lambda key, default=None: meta.get(f'{arch}.{key}', default)
    if g('rope.scaling.type', 'none') != 'none' or 'rope_freqs.weight' in shapes:
        refuse(f"GGUF rope scaling ({g('rope.scaling.type', 'rope_freqs')})", "supported in GGUF: none; pass the "
               "model's Hugging Face folder")
    H = g('attention.head_count')
    hf = dict(model_type=ARCHITECTURES[arch], vocab_size=shapes['token_embd.weight'][0],
              hidden_size=g('embedding_length'), num_hidden_layers=g('block_count'), num_attention_heads=H,
              num_key_value_heads=g('attention.head_count_kv') or H, intermediate_size=g('feed_forward_length'),
              rms_norm_eps=g('attention.layer_norm_rms_epsilon'), max_position_embeddings=g('context_length'),
              rope_theta=g('rope.freq_base', 10000.0), head_dim=g('attention.key_length') or g('embedding_length') // H,
              tie_word_embeddings='output.weight' not in shapes, bos_token_id=meta.get('tokenizer.ggml.bos_token_id'),
              eos_token_id=meta.get('tokenizer.ggml.eos_token_id'), tokenizer_bos=gguf_bos(meta))
    if g('rope.dimension_count', hf['head_dim']) != hf['head_dim']:
        refuse(f"a GGUF rotating {g('rope.dimension_count')} of {hf['head_dim']} head dims", 'supported: all')
    if arch == 'gemma3':
        # what llama.cpp's gemma3 loader fixes rather than reads (llama-model.cpp): every 6th layer global, the local
        # layers' RoPE base 10,000, and q.k scaled by 1/sqrt(key_length) (the 27B model's 1/sqrt(width/heads) aside)
        if (hf['num_hidden_layers'], hf['hidden_size']) == (62, 5376):
            refuse('the GGUF of Gemma 3 27B (its attention scale)', 'pass its Hugging Face folder')
        hf.update(sliding_window=g('attention.sliding_window'), sliding_window_pattern=6, rope_local_base_freq=10000.0,
                  query_pre_attn_scalar=hf['head_dim'], hidden_activation='gelu_pytorch_tanh')
    return hf


def gguf_name(name, layer_names=GGUF_LAYER):
    m = re.fullmatch(r'blk\.(\d+)\.(\w+)\.(weight|bias)', name)
    if m and m.group(2) in layer_names:
        return f'model.layers.{m.group(1)}.{layer_names[m.group(2)]}.{m.group(3)}'
    stem, _, kind = name.rpartition('.')
    return f'{GGUF_NAMES[stem]}.{kind}' if stem in GGUF_NAMES else name


def unpermute(w, heads):
    """llama.cpp stores each head's q/k rows as pairs (0, D/2), (1, D/2 + 1), ... side by side for its interleaved
    rotation; transformers and we rotate halves (row i with row i + D/2): put each head's rows back in halves."""
    return w.reshape(heads, -1, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


# --------------------------------------------------------------------------------------------
# Tokenizers: byte-level BPE (tokenizer.ggml.model 'gpt2') and Gemma's SentencePiece vocabulary ('llama' in a gemma3
# file), built as transformers builds them from a GGUF (integrations/gguf/gguf_tokenizer_mapping.py)
# --------------------------------------------------------------------------------------------

# tokenizer.ggml.pre -> the split llama.cpp applies before byte-level BPE (llama-vocab.cpp); the regexes are those of
# the models' tokenizer.json files
GPT2_SPLIT = ('default', 'gpt2', 'gpt-2')
DIGITS_SPLIT = ('smollm', 'starcoder', 'refact', 'codeshell')  # digits one by one, then GPT-2's split
REGEX_SPLIT = {
    'llama-bpe': (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                  r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    'qwen2': (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
              r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
}


def gguf_tokenizer(path):
    """(tokenizers.Tokenizer, bos to prepend or None, eos) from a GGUF's vocabulary."""
    from tokenizers import AddedToken
    reader = open_gguf(path)
    meta, fields = gguf_meta(reader), reader.fields
    kind, pre = meta.get('tokenizer.ggml.model'), meta.get('tokenizer.ggml.pre', 'default')
    tokens = fields['tokenizer.ggml.tokens'].contents() if 'tokenizer.ggml.tokens' in fields else []
    if kind == 'llama' and meta.get('general.architecture') == 'gemma3':
        tok = gemma_tokenizer(tokens, tokens[meta.get('tokenizer.ggml.unknown_token_id', 3)])
    elif kind == 'gpt2':
        split = pre_tokenizer(pre)  # an unknown split is refused first
        if 'tokenizer.ggml.merges' not in fields:
            raise ConfigError(f"{path} has no tokenizer.ggml.merges: its tokenizer cannot be built")
        tok = byte_level_tokenizer(tokens, fields['tokenizer.ggml.merges'].contents(), pre, split)
    else:
        refuse(f"GGUF tokenizer model {kind!r}", "supported: 'gpt2' (byte-level BPE), Gemma 3's 'llama' "
               "(SentencePiece); or the model's Hugging Face folder")
    types = fields['tokenizer.ggml.token_type'].contents() if 'tokenizer.ggml.token_type' in fields else []
    # control (3) tokens such as <|endoftext|> stay whole as special tokens, user-defined (4) ones as added tokens
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, k in zip(tokens, types) if k == 3])
    vocab = tok.get_vocab()  # (a user-defined token respelled away, Gemma's runs of spaces, is not added again)
    user_defined = [t for t, k in zip(tokens, types) if k == 4 and t in vocab]
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in user_defined])
    return tok, gguf_bos(meta), meta.get('tokenizer.ggml.eos_token_id')


def gguf_bos(meta):
    """The id the file's tokenizer puts before a text, or None: its BOS where tokenizer.ggml.add_bos_token says so
    (Gemma 3's file: true; SmolLM2's: false)."""
    return meta.get('tokenizer.ggml.bos_token_id') if meta.get('tokenizer.ggml.add_bos_token', False) else None


def byte_level_tokenizer(tokens, merges, pre, split):
    from tokenizers import Tokenizer, decoders, models
    merges = [tuple(m.split(' ')) for m in merges]
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges, ignore_merges=pre == 'llama-bpe'))
    tok.pre_tokenizer, tok.decoder = split, decoders.ByteLevel()
    return tok


def pre_tokenizer(pre):
    """The byte-level pre-tokenizer that the GGUF's tokenizer.ggml.pre names."""
    from tokenizers import Regex, pre_tokenizers
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=pre in GPT2_SPLIT + DIGITS_SPLIT)
    if pre in DIGITS_SPLIT:
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    if pre in REGEX_SPLIT:
        return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(REGEX_SPLIT[pre]), behavior='isolated'), byte_level])
    if pre in GPT2_SPLIT:
        return byte_level
    refuse(f"GGUF pre-tokenizer {pre!r}", f"supported: {', '.join(GPT2_SPLIT + DIGITS_SPLIT + tuple(REGEX_SPLIT))}")


def gemma_tokenizer(tokens, unk):
    """Gemma's SentencePiece vocabulary as a BPE with byte fallback over text whose spaces are '▁' (transformers'
    GemmaTokenizer). The file has no merges: they are every split of a token into two tokens, ranked by the token's
    place in the file, as transformers' GGUF reader derives them (generate_merges with the scores -index: Gemma's own
    scores do not follow its merge order). A token of spaces only is stored with real spaces and is spelled in '▁'."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    tokens = ['\u2581' * len(t) if ' ' in t and not t.strip() else t for t in tokens]
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = []
    for t, rank in {t: -i for i, t in enumerate(tokens)}.items():
        pairs = [(t[:j], t[j:]) for j in range(1, len(t)) if t[:j] in vocab and t[j:] in vocab]
        merges += [(a, b, rank) for a, b in sorted(pairs, key=lambda p: (vocab[p[0]], vocab[p[1]]))]
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    tok = Tokenizer(models.BPE(vocab, [(a, b) for a, b, _ in merges], fuse_unk=True, unk_token=unk, byte_fallback=True))
    tok.normalizer = normalizers.Replace(' ', '\u2581')
    tok.pre_tokenizer = pre_tokenizers.Split(' ', behavior='merged_with_previous')
    tok.decoder = decoders.Sequence([decoders.Replace('\u2581', ' '), decoders.ByteFallback(), decoders.Fuse()])
    return tok
