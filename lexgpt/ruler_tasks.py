"""
RULER's synthetic tasks (Hsieh et al. 2024, "RULER: What's the Real Context Size of Your Long-Context Language
Models?", Table 2; its repository's scripts/synthetic.yaml and scripts/data/synthetic/), written anew: needle in a
haystack (single 1-3, multi-key 1-3, multi-value, multi-query), variable tracking (1 chain, 4 hops), common- and
frequent-words extraction. Each sample is fitted to a target length in the model's own tokens, the generated answer
included; its templates, answer prefixes, token budgets and metrics are RULER's. Also RULER's jsonl both ways, the
model's chat template, and the 95% intervals of a cell. No torch here: analysis/ruler.py runs the models.

Where we differ from RULER, and why:
- QA (qa_1, qa_2) is not generated: it needs SQuAD and HotpotQA downloads. A RULER jsonl of it is still scored.
- The essay haystack (Paul Graham's essays, a download) is the prose of the Python reference manual that the
  standard library ships (pydoc_data/topics.py, a file of the pycode corpus), split into sentences by a regex (RULER:
  nltk's punkt, another download).
- Each sample draws from its own seed (seed, task, index), so its keys, values and depths are the same at every
  length and for every model and method (paired samples); the haystack is the largest that fits, per sample (RULER
  searches once per task, then shrinks a sample by `incremental` units until it fits).
- Variable tracking's in-context example is drawn per sample (RULER draws one and renames its variables per sample).
- Common words past the 8,166 distinct words of wonderwords' lists: RULER then draws from its english_words.json; we
  stop with an error.
"""
import functools
import json
import math
import os
import random
import re
import string
import uuid

import numpy as np

from lexgpt.config import ConfigError

# scripts/synthetic.yaml: task -> (kind, arguments)
NIAH = dict(type_haystack='essay', type_needle_k='words', type_needle_v='numbers', num_needle_k=1, num_needle_v=1,
            num_needle_q=1)
TASKS = {
    'niah_single_1': ('niah', dict(NIAH, type_haystack='noise')),
    'niah_single_2': ('niah', NIAH),
    'niah_single_3': ('niah', dict(NIAH, type_needle_v='uuids')),
    'niah_multikey_1': ('niah', dict(NIAH, num_needle_k=4)),
    'niah_multikey_2': ('niah', dict(NIAH, type_haystack='needle')),
    'niah_multikey_3': ('niah', dict(NIAH, type_haystack='needle', type_needle_k='uuids', type_needle_v='uuids')),
    'niah_multivalue': ('niah', dict(NIAH, num_needle_v=4)),
    'niah_multiquery': ('niah', dict(NIAH, num_needle_q=4)),
    'vt': ('variable_tracking', dict(num_chains=1, num_hops=4)),
    'cwe': ('common_words_extraction', dict(freq_cw=30, freq_ucw=3, num_cw=10)),
    'fwe': ('freq_words_extraction', dict(alpha=2.0)),
}
DATA_ONLY = {'qa_1': 'qa', 'qa_2': 'qa'}  # scored from a RULER jsonl (--data), never generated here
GROUPS = {'NIAH': [t for t in TASKS if t.startswith('niah')], 'VT': ['vt'], 'aggregation': ['cwe', 'fwe']}

# scripts/data/synthetic/constants.py (templates, answer prefixes, tokens to generate) and
# scripts/eval/synthetic/constants.py (metrics)
KINDS = {
    'niah': dict(tokens_to_generate=128, metric='all', template=(
        "Some special magic {type_needle_v} are hidden within the following text. Make sure to memorize it. I will "
        "quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are all the special magic {type_needle_v} "
        "for {query} mentioned in the provided text?"),
        answer_prefix=" The special magic {type_needle_v} for {query} mentioned in the provided text are"),
    'variable_tracking': dict(tokens_to_generate=30, metric='all', template=(
        "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n{context}\n"
        "Question: Find all variables that are assigned the value {query} in the text above."),
        answer_prefix=(" Answer: According to the chain(s) of variable assignment in the text above, {num_v} "
                       "variables are assigned the value {query}, they are: ")),
    'common_words_extraction': dict(tokens_to_generate=120, metric='all', template=(
        "Below is a numbered list of words. In these words, some appear more often than others. Memorize the ones "
        "that appear most often.\n{context}\nQuestion: What are the 10 most common words in the above list?"),
        answer_prefix=" Answer: The top 10 words that appear most often in the list are:"),
    'freq_words_extraction': dict(tokens_to_generate=50, metric='all', template=(
        "Read the following coded text and track the frequency of each coded word. Find the three most frequently "
        "appeared coded words. {context}\nQuestion: Do not provide any explanation. Please ignore the dots '....'. "
        "What are the three most frequently appeared words in the above coded text?"),
        answer_prefix=" Answer: According to the coded text above, the three most frequently appeared words are:"),
    'qa': dict(tokens_to_generate=32, metric='part'),
}
NOISE = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
NEEDLE = "One of the special magic {type_needle_v} for {key} is: {value}."
DEPTHS = [int(d) for d in np.round(np.linspace(0, 100, num=40, endpoint=True))]  # essay needle depths, percent
VT_ICL_TOKENS = 500  # variable tracking's in-context example is fitted to this many tokens (RULER's main())


def kind_of(task):
    if task not in TASKS and task not in DATA_ONLY:
        raise ConfigError(f"task {task!r}; allowed: {', '.join(TASKS)} (and, from --data only, {', '.join(DATA_ONLY)})")
    return TASKS[task][0] if task in TASKS else DATA_ONLY[task]


def tokens_to_generate(task):
    return KINDS[kind_of(task)]['tokens_to_generate']


# ------------------------------------------------------------------ word sources

@functools.lru_cache(maxsize=None)
def wonder_words(name):
    """One of wonderwords' lists (nounlist.txt, adjectivelist.txt, verblist.txt), sorted and without repeats."""
    from wonderwords import random_word
    return sorted(set(random_word._get_words_from_text_file(name)))


@functools.lru_cache(maxsize=None)
def cwe_words():
    return sorted(set(wonder_words('nounlist.txt') + wonder_words('adjectivelist.txt')
                      + wonder_words('verblist.txt')))


@functools.lru_cache(maxsize=None)
def essay_words():
    """The reference manual's prose, whitespace collapsed and split into words, as RULER splits the essays."""
    from pydoc_data import topics
    return re.sub(r'\s+', ' ', '\n'.join(topics.topics[k] for k in sorted(topics.topics))).strip().split(' ')


def split_sentences(text):
    """Sentences: a break after ., ! or ? followed by white space (our stand-in for nltk's sent_tokenize)."""
    return [s for s in re.split(r'(?<=[.!?])\s+', text.strip()) if s]


def draw(kind, rng):
    """A needle key or value as RULER's niah.py draws it. A word is an adjective-noun pair: RULER picks one of every
    pair, which is picking each half alike."""
    if kind == 'numbers':
        return str(rng.randint(10 ** 6, 10 ** 7 - 1))
    if kind == 'words':
        return f"{rng.choice(wonder_words('adjectivelist.txt'))}-{rng.choice(wonder_words('nounlist.txt'))}"
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def seeded(seed, task, index):
    """-> rand(purpose): a Random for one purpose of one sample, the same whatever else is drawn or how long."""
    return lambda what: random.Random(f'{seed}/{task}/{index}/{what}')


# ------------------------------------------------------------------ the tasks: (text, answer prefix, outputs, others)
# for a haystack of n units (noise lines, essay words, listed words, coded words)

def among_lines(units, needles, rng):
    """Needles put among lines at distinct random places (niah.py, variable_tracking.py): -> (lines, depth of each
    needle in order of appearance: the haystack lines before it / all of them)."""
    at = sorted(rng.sample(range(len(units)), len(needles)))
    lines = list(units)
    for i, (place, needle) in enumerate(zip(at, needles)):
        lines.insert(place + i, needle)  # the earlier needles sit before it
    return lines, [place / len(units) for place in at]


def in_essay(n, needles, depths):
    """Needles between the sentences of the first n essay words (repeated as needed), after int(S * depth / 100) of
    its S sentences each: -> (context, the depths as fractions, in order of appearance)."""
    words = essay_words()
    sents = split_sentences(' '.join((words * math.ceil(n / len(words)))[:n]))
    at = sorted(int(len(sents) * d / 100) for d in depths)
    parts, last = [], 0
    for place, needle in zip(at, needles):
        parts += [' '.join(sents[last:place]), needle]
        last = place
    return ' '.join(parts + [' '.join(sents[last:])]), [d / 100 for d in sorted(depths)]


def niah(a, n, rand, target, encode):
    rng, tv = rand('needles'), a['type_needle_v']
    k, nv, nq = max(a['num_needle_k'], a['num_needle_q']), a['num_needle_v'], a['num_needle_q']
    keys = [draw(a['type_needle_k'], rng) for _ in range(k)]
    values = [[draw(tv, rng) for _ in range(nv)] for _ in keys]
    needles = [NEEDLE.format(type_needle_v=tv, key=key, value=v) for key, vs in zip(keys, values) for v in vs]
    rng.shuffle(needles)
    asked, depths = rng.sample(range(k), nq), rng.sample(DEPTHS, len(needles))
    if a['type_haystack'] == 'essay':
        context, depths = in_essay(n, needles, depths)
    else:
        hay = rand('haystack')  # distractors: a stream whose first n are the same for every n
        units = [NOISE] * n if a['type_haystack'] == 'noise' else [NEEDLE.format(
            type_needle_v=tv, key=draw(a['type_needle_k'], hay), value=draw(tv, hay)) for _ in range(n)]
        lines, depths = among_lines(units, needles, rand(f'places{n}'))
        context = '\n'.join(lines)
    queries = [keys[i] for i in asked]
    query = ', '.join(queries[:-1]) + ', and ' + queries[-1] if len(queries) > 1 else queries[0]
    template, prefix = KINDS['niah']['template'], KINDS['niah']['answer_prefix']
    if nq * nv == 1:  # one answer: the template in the singular, as niah.py words it
        for old, new in (('Some', 'A'), ('are all', 'is'), ('are', 'is'), ('answers', 'answer')):
            template, prefix = template.replace(old, new), prefix.replace(old, new)
        tv = tv[:-1]
    return (template.format(type_needle_v=tv, context=context, query=query),
            prefix.format(type_needle_v=tv, query=query), [v for i in asked for v in values[i]],
            dict(needles=needles, depths=depths))


def chain(rng, hops, letters):
    """One chain of variable_tracking.py: hops + 1 distinct names of `letters` capitals, the first set to a 5-digit
    value, each next one to the one before. -> (names, value, its lines)."""
    names, value = [], str(rng.randint(10000, 99998))
    while len(names) < hops + 1:  # distinct names, as RULER redraws repeats
        name = ''.join(rng.choices(string.ascii_uppercase, k=letters))
        names += [name] if name not in names else []
    return names, value, [f"VAR {names[0]} = {value}"] + [f"VAR {names[j + 1]} = VAR {names[j]} " for j in range(hops)]


def vt_text(value, chain_lines, n, rng, hops):
    """variable_tracking.py's text of one chain among n noise lines: -> (text, answer prefix, depths)."""
    lines, depths = among_lines([NOISE] * n, chain_lines, rng)
    spec, context = KINDS['variable_tracking'], '\n'.join(lines).replace('. \n', '.\n')
    return (spec['template'].format(context=context, query=value),
            spec['answer_prefix'].format(num_v=hops + 1, query=value), depths)


def vt(a, n, rand, target, encode):
    hops = a['num_hops']
    # the in-context example: 3-letter names, fitted alone to VT_ICL_TOKENS tokens, then its answer
    icl_names, icl_value, icl_lines = chain(rand('icl'), hops, 3)

    def icl(m):
        text, prefix, _ = vt_text(icl_value, icl_lines, m, rand(f'icl-places{m}'), hops)
        return text + prefix + ' ' + ' '.join(icl_names) + '\n'
    m = largest_fitting(lambda m: len(encode(icl(m))) <= VT_ICL_TOKENS, 5) or 5
    names, value, lines = chain(rand('chain'), hops, 5)
    text, prefix, depths = vt_text(value, lines, n, rand(f'places{n}'), hops)
    return icl(m) + '\n' + text, prefix, names, dict(needles=lines, depths=depths)


def numbered(words):
    return ' '.join(f"{i + 1}. {w}" for i, w in enumerate(words))


def word_list(pick, order, num_words, common_repeats, uncommon_repeats, num_cw):
    """common_words_extraction.py's list: num_words distinct words, the first num_cw repeated common_repeats times,
    the others uncommon_repeats times, shuffled and numbered. -> (context, the common words)."""
    words = cwe_words()
    if num_words > len(words):
        raise ConfigError(f"cwe needs {num_words} distinct words, more than wonderwords' {len(words)} (RULER then "
                          f"draws from its english_words.json, which we do not ship): use a shorter length")
    chosen = pick.sample(words, len(words))[:num_words]  # a permutation's head: the same words for every n
    listed = chosen[:num_cw] * common_repeats + chosen[num_cw:] * uncommon_repeats
    order.shuffle(listed)
    return numbered(listed), chosen[:num_cw]


def cwe(a, n, rand, target, encode):
    spec, cw = KINDS['common_words_extraction'], a['num_cw']
    # RULER: below 4096 tokens a smaller example and fewer repeats
    shot_args, repeats = ((20, 3, 1), (6, 1)) if target < 4096 else ((40, 10, 3), (a['freq_cw'], a['freq_ucw']))
    shot, shot_answer = word_list(rand('shot'), rand('shot-order'), *shot_args, cw)
    context, answer = word_list(rand('words'), rand(f'order{n}'), n, *repeats, cw)
    shot = spec['template'].format(context=shot) + spec['answer_prefix'] + ' ' + numbered(shot_answer)
    return shot + '\n' + spec['template'].format(context=context), spec['answer_prefix'], answer, {}


def fwe(a, n, rand, target, encode, coded_len=6):
    from scipy.special import zeta
    spec, rng = KINDS['freq_words_extraction'], rand('vocab')
    size = (target - spec['tokens_to_generate']) // 50  # RULER's vocabulary size for a length
    if size < 4:
        raise ConfigError(f"fwe at {target} tokens has a vocabulary of {size} coded words; it needs >= 4")
    vocab = set()
    while len(vocab) < size:
        vocab.add(''.join(rng.choices(string.ascii_lowercase, k=coded_len)))
    vocab = sorted(vocab)
    rng.shuffle(vocab)
    vocab[0] = '...'  # the most frequent word is noise
    # word k of the vocabulary n k^-alpha / zeta(alpha) times: Zipf's law (freq_words_extraction.py)
    counts = (n * np.arange(1, size + 1, dtype=float) ** -a['alpha'] / zeta(a['alpha'])).astype(int)
    words = [w for w, c in zip(vocab, counts) for _ in range(c)]
    rand(f'order{n}').shuffle(words)
    return spec['template'].format(context=' '.join(words)), spec['answer_prefix'], vocab[1:4], {}


BUILDERS = {'niah': niah, 'variable_tracking': vt, 'common_words_extraction': cwe, 'freq_words_extraction': fwe}
SMALLEST = {'niah': 4, 'variable_tracking': 5, 'common_words_extraction': 11, 'freq_words_extraction': 10}


def largest_fitting(fits, lo, guess=None):
    """The largest n >= lo with fits(n), for a fits that holds up to some n and not past it, or None where fits(lo)
    is false: a gallop up from the guess (or lo), then bisection. A good guess costs about three calls."""
    if not fits(lo):
        return None
    g = max(guess or lo, lo)
    if g > lo and not fits(g):
        hi = g
    else:
        lo, step = g, 1
        while fits(lo + step):
            lo, step = lo + step, step * 2
        hi = lo + step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def make_sample(task, index, target, encode, wrap=None, extra=0, seed=42, guess=None):
    """Sample `index` of `task` in RULER's jsonl fields, its haystack the largest whose prompt (wrap(text) + answer
    prefix, `extra` tokens more: a BOS) and answer budget fit in `target` tokens of `encode`. -> (sample, haystack
    size: the next sample's guess). others holds the needles and their depths, in order of appearance."""
    if kind_of(task) and task not in TASKS:
        raise ConfigError(f"task {task!r} is read from a RULER jsonl (--data), not generated: {DATA_ONLY[task]} "
                          f"needs a download")
    (kind, args), wrap, rand = TASKS[task], wrap or (lambda text: text), seeded(seed, task, index)
    build = functools.lru_cache(maxsize=None)(lambda n: BUILDERS[kind](args, n, rand, target, encode))
    budget = KINDS[kind]['tokens_to_generate']
    total = functools.lru_cache(maxsize=None)(lambda n: extra + len(encode(wrap(build(n)[0]) + build(n)[1])) + budget)
    n = largest_fitting(lambda n: total(n) <= target, SMALLEST[kind], guess)
    if n is None:
        raise ConfigError(f"{task} takes {total(SMALLEST[kind])} tokens with its smallest haystack, more than the "
                          f"target {target}: use a longer length")
    text, prefix, outputs, others = build(n)
    return dict(index=index, input=wrap(text), outputs=list(outputs), length=total(n), answer_prefix=prefix,
                others=dict(others, haystack=n)), n


# ------------------------------------------------------------------ metrics (scripts/eval/)

def postprocess(pred):
    """evaluate.py's postprocess_pred: stripped, control characters turned into newlines."""
    return re.sub(r'[\x00-\x1f]', '\n', pred.strip()).strip()


def match(pred, refs, metric):
    """One sample's score in [0, 1]: the share of references found in the prediction, case aside (string_match_all),
    or whether any is (string_match_part)."""
    hits = [r.lower() in postprocess(pred).lower() for r in refs]
    return sum(hits) / len(hits) if metric == 'all' else float(any(hits))


def string_match_all(preds, refs):
    """RULER's metric over a task: the mean share of references found, x 100, to 2 decimals."""
    return round(100 * sum(match(p, r, 'all') for p, r in zip(preds, refs)) / len(preds), 2)


def string_match_part(preds, refs):
    return round(100 * sum(match(p, r, 'part') for p, r in zip(preds, refs)) / len(preds), 2)


Z95 = 1.959963984540054  # the normal's 97.5% quantile


def wilson(k, n, z=Z95):
    """Wilson's score interval of a rate k / n (Wilson 1927), in [0, 1]."""
    if n == 0:
        return (0.0, 1.0)
    p, d = k / n, 1 + z * z / n
    mid, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, mid - half), min(1.0, mid + half))


def bootstrap(scores, resamples=10000, seed=0):
    """A 95% percentile bootstrap interval of a mean (Efron & Tibshirani 1993, ch. 13)."""
    x = np.asarray(scores, dtype=float)
    means = x[np.random.default_rng(seed).integers(0, len(x), (resamples, len(x)))].mean(1)
    return (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


def cell_score(scores, binary):
    """A cell's per-sample scores in [0, 1] -> (score x 100, its 95% interval x 100, the interval's kind): Wilson for
    an exact-match rate (one reference, or string_match_part), a bootstrap for an average of shares."""
    if not scores:
        return None, None, None
    lo, hi = wilson(sum(scores), len(scores)) if binary else bootstrap(scores)
    return 100 * float(np.mean(scores)), [100 * lo, 100 * hi], 'wilson' if binary else 'bootstrap'


# ------------------------------------------------------------------ RULER's jsonl and the model's prompt format

def write_jsonl(path, rows):
    """One JSON object a line (RULER's manifest files), written whole or not at all."""
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with open(path + '.tmp', 'w', encoding='utf-8') as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + '\n')
    os.replace(path + '.tmp', path)


def read_jsonl(path):
    """A RULER jsonl (prepare.py's data, or call_api.py's predictions): its rows, each with index, input and
    outputs (a list of strings) checked; a bad line is a one-line error naming the file and line."""
    if not os.path.isfile(path):
        raise ConfigError(f"data={path!r} does not exist: give a jsonl written by RULER's prepare.py")
    rows = []
    with open(path, encoding='utf-8') as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise ConfigError(f"{path} line {i} is not JSON ({e})") from None
            bad = [k for k in ('index', 'input', 'outputs') if k not in row]
            if bad or not isinstance(row.get('outputs'), list) or not all(isinstance(o, str) for o in row['outputs']):
                raise ConfigError(f"{path} line {i} lacks {', '.join(bad) or 'outputs as a list of strings'}: "
                                  f"RULER's rows have index, input and outputs")
            rows.append(row)
    return rows


def task_of_path(path):
    """RULER's file names: <task>/validation.jsonl (prepare.py) or <task>.jsonl (predictions)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    task = stem if stem in TASKS or stem in DATA_ONLY else os.path.basename(os.path.dirname(os.path.abspath(path)))
    kind_of(task)  # a one-line error for a name we do not know
    return task


def chat_wrap(template):
    """The model's chat template (a Jinja string, as its GGUF or tokenizer_config.json holds it) -> wrap(text): the
    text as the user's one message, then the assistant's turn opened. The BOS is the tokenizer's business (--bos), so
    the template's own bos_token is empty."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def refuse(message):
        raise ConfigError(f"the chat template refuses the prompt: {message}")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals['raise_exception'] = refuse
    compiled = env.from_string(template)
    return lambda text: compiled.render(messages=[dict(role='user', content=text)], add_generation_prompt=True,
                                        bos_token='', eos_token='')
