"""The beginning-of-text token (issue 58) against transformers, the reference: which tokenizers put a BOS before a text
(each family's folder, Gemma 3's and SmolLM2's GGUFs), Gemma 3 270M's perplexity through our protocol and its greedy
continuation with that BOS, and Gemma's byte fallback for characters outside its vocabulary. A model whose tokenizer
puts none (our own checkpoints, SmolLM2) is scored bit for bit as before. Every script's inputs:
test_pretrained_scripts.py::test_every_path_puts_the_bos_first."""
import inspect
import json
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import extrapolate
import sample
from lexgpt import pretrained
from lexgpt.config import ConfigError
from lexgpt.corpus import slices, with_bos
from lexgpt.evaluation import bos_id, nonoverlap_losses
from lexgpt.loading import get_tokenizer
from helpers import make_split, save_ckpt, save_split, tiny

transformers = pytest.importorskip('transformers')


def test_with_bos_replaces_the_first_token_and_keeps_the_targets():
    tokens = np.arange(10, 40, dtype=np.uint16)
    (x, y), (x0, y0) = slices(tokens, [0, 7], 5, bos=3), slices(tokens, [0, 7], 5)
    assert x[:, 0].tolist() == [3, 3] and torch.equal(x[:, 1:], x0[:, 1:]) and torch.equal(y, y0)
    assert x0[:, 0].tolist() == [10, 17] and with_bos(x0, None) is x0  # none: the very tensor, untouched


VOCAB = ['<unk>', '<s>', '</s>', 'a', 'b', '\u2581', '<|endoftext|>', '<bos>', '<eos>', '<|begin_of_text|>', '.', 'Ċ',
         '\n', '<0x0A>']


def llama3_style(folder):
    """Llama 3's layout: a tokenizer.json whose template puts <|begin_of_text|> first, PreTrainedTokenizerFast's."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(VOCAB)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.post_processor = processors.TemplateProcessing(single='<|begin_of_text|> $A',
                                                       special_tokens=[('<|begin_of_text|>', 9)])
    tok.save(os.path.join(folder, 'tokenizer.json'))
    with open(os.path.join(folder, 'tokenizer_config.json'), 'w') as f:
        json.dump(dict(tokenizer_class='PreTrainedTokenizerFast', bos_token='<|begin_of_text|>'), f)


# (the family's model_type, transformers' tokenizer class or None for llama3_style, what it is built with)
FAMILIES = {
    'llama-1-2-mistral': ('llama', 'LlamaTokenizer', dict(add_bos_token=True)),  # their hub files' template: <s>
    'llama-3': ('llama', None, {}),
    'gemma': ('gemma', 'GemmaTokenizer', dict(add_bos_token=True)),
    'no-template': ('mistral', 'LlamaTokenizer', {}),
    'qwen2': ('qwen2', 'Qwen2Tokenizer', {}),
    'gpt2': ('gpt2', 'GPT2Tokenizer', {}),
    'gpt2-asked': ('gpt2', 'GPT2Tokenizer', dict(add_bos_token=True)),
    'gpt-neox': ('gpt_neox', 'GPTNeoXTokenizer', {}),
    # a template that puts <|endoftext|> first, which transformers' GPT-NeoX tokenizer rebuilds without it
    'gpt-neox-template': ('gpt_neox', 'GPTNeoXTokenizer', dict(add_bos_token=True)),
    # the same folder without tokenizer_class in tokenizer_config.json: transformers takes the class from config.json
    'gpt-neox-class-from-config': ('gpt_neox', 'GPTNeoXTokenizer', dict(add_bos_token=True)),
}


@pytest.mark.parametrize('case', FAMILIES)
def test_each_family_takes_its_tokenizers_own_default(tmp_path, case):
    """The BOS (or none) that transformers' AutoTokenizer of the folder puts before a text is the one our loader finds,
    for the model (pretrained.folder_bos, what the evaluations use) and its tokenizer alike."""
    model_type, cls, kw = FAMILIES[case]
    if cls is None:
        llama3_style(tmp_path)
    else:
        getattr(transformers, cls)(vocab={t: i for i, t in enumerate(VOCAB)}, merges=[], **kw).save_pretrained(tmp_path)
    (tmp_path / 'config.json').write_text(json.dumps(dict(model_type=model_type, eos_token_id=2)))
    if case == 'gpt-neox-class-from-config':
        settings = tmp_path / 'tokenizer_config.json'
        kept = {k: v for k, v in json.loads(settings.read_text()).items() if k != 'tokenizer_class'}
        settings.write_text(json.dumps(kept))
        from tokenizers import Tokenizer  # its tokenizer.json's template still puts <|endoftext|> (6) first
        assert Tokenizer.from_file(str(tmp_path / 'tokenizer.json')).encode('a').ids == [6, 3]
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    plain, full = theirs('a', add_special_tokens=False).input_ids, theirs('a').input_ids
    want = full[0] if len(full) > len(plain) else None
    assert full[len(full) - len(plain):] == plain and (want is not None) == (case in ('llama-1-2-mistral', 'llama-3',
                                                                                         'gemma', 'gpt2-asked'))
    assert pretrained.folder_bos(str(tmp_path)) == want == get_tokenizer(str(tmp_path)).bos


def test_a_tokenizer_without_bos_leaves_the_scores_bit_for_bit(tmp_path):
    """Our own checkpoints: --bos=True (the default) and --bos=False give the same bits; the JSON says bos null."""
    data, ckpt = save_split(tmp_path, make_split()), save_ckpt(tmp_path, tiny('rope'), 'tiny-rope')
    base = dict(extrapolate.DEFAULTS, ckpt=[ckpt], data_dir=data, lengths=[1.0, 2.0], n=6, last_k=4, lm_infinite=True,
                out_dir=str(tmp_path))
    on, off = extrapolate.main(base), extrapolate.main(dict(base, bos=False, name='off'))
    assert [r['loss'] for r in on['results']] == [r['loss'] for r in off['results']]
    assert json.load(open(tmp_path / 'ppl_last_token.json'))['settings']['bos'] is None
    # a reuse file made before settings.bos (none put first) is taken as such, and one made with another BOS refused
    old = json.load(open(tmp_path / 'off.json'))
    del old['settings']['bos']
    json.dump(old, open(tmp_path / 'old.json', 'w'))
    again = extrapolate.main(dict(base, reuse=str(tmp_path / 'old.json'), name='again'))
    assert all('reused_from' in r for r in again['results'])
    old['settings']['bos'] = 2
    json.dump(old, open(tmp_path / 'other.json', 'w'))
    with pytest.raises(ConfigError, match="'bos': 2"):
        extrapolate.main(dict(base, reuse=str(tmp_path / 'other.json'), name='other'))


# --------------------------------------------------------------------------------------------
# The GGUFs: Gemma 3 270M (the session's gemma3 fixture, conftest.py) and SmolLM2
# --------------------------------------------------------------------------------------------

def test_gemma3s_gguf_says_its_tokenizer_puts_a_bos(gemma3):
    """Gemma 3's file: tokenizer.ggml.add_bos_token = true (<bos>, 2); SmolLM2's says false (test_pretrained.py's
    test_smollm2_through_the_loader_gets_no_bos_and_scores_as_transformers, beside the SmolLM2 file's other tests)."""
    assert gemma3[1].pretrained_info['bos'] == gemma3[3].bos == 2


def source(n_chars):
    return ''.join(inspect.getsource(m) for m in (json.decoder, json.encoder))[:n_chars]


def test_gemma3_perplexity_through_our_protocol_equals_transformers(gemma3, gemma3_their_tokenizer):
    """A window of 128 tokens cut from a corpus whose document starts after an eot: our non-overlapping protocol puts
    <bos> in the eot's place, which is the input transformers' tokenizer makes of the text with its default special
    tokens; the same perplexity to 1e-3 relative. Without <bos> it is far from it."""
    _, ours, theirs, tok = gemma3
    L, text = 128, source(2000)
    tokens = np.array([tok.eot] + tok.encode(text)[:L], dtype=np.uint32)  # data.prepare's layout: eot, then the text
    got = np.exp(nonoverlap_losses(ours, tokens, 0, L, L, bos=bos_id(ours)).mean())
    ids = gemma3_their_tokenizer(text, return_tensors='pt').input_ids[:, :L + 1]
    assert ids[0, 0].item() == 2 and ids[0, 1:].tolist() == tokens[1:].tolist()
    with torch.no_grad():
        want = F.cross_entropy(theirs(ids[:, :-1]).logits[0], ids[0, 1:]).exp().item()
    assert got == pytest.approx(want, rel=1e-3)
    without = np.exp(nonoverlap_losses(ours, tokens, 0, L, L, bos=bos_id(ours, on=False)).mean())
    assert abs(without / want - 1) > 0.02


def test_gemma3_greedy_continuation_equals_transformers_generate(gemma3, gemma3_their_tokenizer):
    """sample.py's prompt (with <bos>) and temperature 0 continue 'def fibonacci(n):' as transformers' greedy generate
    does, token for token, for 20 tokens: with code."""
    _, ours, theirs, tok = gemma3
    prompt = sample.prompt_ids(tok, 'def fibonacci(n):', bos_id(ours))
    enc = gemma3_their_tokenizer('def fibonacci(n):', return_tensors='pt')
    assert prompt == enc.input_ids[0].tolist()
    with torch.no_grad():
        got = ours.generate(torch.tensor([prompt]), 20, temperature=0)
        want = theirs.generate(**enc, max_new_tokens=20, do_sample=False)
    assert got.tolist() == want.tolist()
    assert tok.decode(got[0, len(prompt):].tolist()).startswith('\n    if n')


def test_gemma3_byte_fallback_for_characters_outside_the_vocabulary(gemma3, gemma3_their_tokenizer):
    """'𠀀' and 'ꙮ' are no tokens of Gemma's vocabulary: both tokenizers spell them in <0xNN> byte tokens (never <unk>,
    id 3), with the same ids, and the decode gives the text back."""
    tok = gemma3[3]
    for text in ('𠀀', 'ꙮ', 'x = "𠀀ꙮ" + y\n'):
        ids = tok.encode(text)
        assert ids == gemma3_their_tokenizer(text, add_special_tokens=False).input_ids and 3 not in ids
        assert tok.decode(ids) == text
    assert len(tok.encode('𠀀')) == len('𠀀'.encode('utf-8')) == 4  # one token per UTF-8 byte


def test_temperature_zero_is_the_argmax_without_a_random_draw():
    """sample.py --temperature=0: the first most likely token on a tie, as transformers' greedy search, and the random
    generator left as it was (a draw from logits / 1e-8 would pick either tied token)."""
    from model import GPT
    logits = torch.tensor([[1.0, 3.0, 3.0, -2.0]] * 64)
    state = torch.get_rng_state()
    assert GPT.sample_next(logits.clone(), 0.0, None)[:, 0].tolist() == [1] * 64
    assert torch.equal(state, torch.get_rng_state())
