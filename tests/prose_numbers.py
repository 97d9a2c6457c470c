"""The numbers the README's findings and the results pages' prose quote, and where each comes from (#71), for
tests/test_prose_numbers.py.

QUOTES: (page, quoted text, JSON, expressions). The text is the page's own words with a str.format field per number,
its spec the rounding the page writes it in (`ppl`: the tables' four significant digits, lexgpt.common.fmt_ppl;
`pct`: a ratio as a percentage change, one decimal; else Python's). Each expression is evaluated with `d` bound to the
JSON and with the helpers of test_prose_numbers.namespace (row, grp, ppl, sd, cell, paired_p, J: another JSON) and
of HELPERS below, whose first argument is that JSON. Grouped by page, then by JSON: `at(page, json)` returns a
function that adds the quotes of one pair.
"""
QUOTES = []


def at(page, path):
    def quote(text, *exprs):
        QUOTES.append((page, text, path, list(exprs)))
    return quote


# helpers over one JSON kind each; the JSON is their first argument

def thesis_cell(d, section, encoding, mult, part='cells'):
    """analysis/thesis.py's cell of one encoding at one length: mean, std, n, {seed: ppl}."""
    return d['sections'][section][part][encoding][f'{float(mult)}']


def thesis_p(d, section, encoding, mult_a, mult_b):
    """The paired t-test (over seeds) of one encoding's perplexity at two lengths, as thesis.py's verdicts run it."""
    from scipy import stats
    a, b = (thesis_cell(d, section, encoding, m)['ppl'] for m in (mult_a, mult_b))
    seeds = sorted(set(a) & set(b))
    return float(stats.ttest_rel([a[s] for s in seeds], [b[s] for s in seeds]).pvalue)


def stream_row(d, ckpt, row):
    """A stream JSON's row (row: sinks, no_sinks, windows)."""
    return next(o for o in d['results'] if o['ckpt'] == ckpt and o['row'] == row)


def bucket(d, ckpt, row, end, key='ppl_by_bucket'):
    """A stream row's value in the bucket of positions ending at `end`."""
    return stream_row(d, ckpt, row)[key][d['bucket_edges'].index(end) - 1]


def buckets(d, ckpt, row, after=0, upto=None, key='ppl_by_bucket'):
    """A stream row's values in the buckets that start at `after` or later and end at `upto` or before."""
    edges = d['bucket_edges']
    return [v for lo, hi, v in zip(edges, edges[1:], stream_row(d, ckpt, row)[key])
            if lo >= after and (upto is None or hi <= upto)]


def passkey_cells(d, mult=None, depth=None, variant='vanilla', ckpt=None):
    """analysis.passkey's cells of one variant (and run), at one length and/or depth."""
    result = next(r for r in d['results'] if r['variant'] == variant and (ckpt is None or r['ckpt'] == ckpt))
    return [c for c in result['cells']
            if (mult is None or c['mult'] == mult) and (depth is None or c['depth'] == depth)]


def passkey_asked(d, mult=None, depth=None, variant='vanilla', ckpt=None):
    """How many prompts those cells hold (keys per cell x cells)."""
    return len(d['keys']) * len(passkey_cells(d, mult, depth, variant, ckpt))


def passkey_found(d, mult=None, depth=None, variant='vanilla', ckpt=None):
    """How many prompts found their key exactly (accuracy x keys per cell, summed over the cells)."""
    return round(sum(c['accuracy'] * len(d['keys']) for c in passkey_cells(d, mult, depth, variant, ckpt)))


def regular(d, task, model):
    """results/regular/table.json's row of one task and model: max, avg over seeds (%), seeds, scores."""
    return d[f'{task}/{model}']


def bench(d, name, T):
    """tools.bench --mode=pretrained's timing of one side at one length."""
    return next(r for r in d['results'] if r['name'] == name and r['T'] == T)


HELPERS = dict(thesis_cell=thesis_cell, thesis_p=thesis_p, stream_row=stream_row, bucket=bucket, buckets=buckets,
               passkey_cells=passkey_cells, passkey_found=passkey_found, passkey_asked=passkey_asked, regular=regular,
               bench=bench)

# ---------------------------------------------------------------------------------------------------------------------
# README.md, What we found: every number (test_every_number_in_the_readme_findings_is_quoted)

# the numbers there that name no measurement: the thesis' tables and chapters, model names
# and the lengths a finding's claim names (its numbers column quotes them)
FINDINGS_FREE = ['Table 4.3', 'Tables 3.3, 4.3', 'Table 6.1', 'ch. 5', 'Algorithm 1', 'SmolLM2-135M', 'Gemma 3',
                 'improve past 1x', 'YaRN holds 4x']

q = at('README.md', 'results/bench/train.json')  # configs/tiny.py's model, as tools.bench builds it
q('Tiny models ({:.1f}M parameters', "d['results']['none']['params'] / 1e6")

q = at('README.md', 'results/ppl/ppl_last_token.json')
q('L_tr = {:d}), perplexity per byte from {:g}x to {:g}x L_tr', "d['L_tr'][0]", "d['lengths'][0]", "d['lengths'][-1]")
q('"Last {} of {}": the last-token protocol scoring the last {} tokens of {} segments', "d['settings']['last_k']",
  "d['settings']['n']", "d['settings']['last_k']", "d['settings']['n']")
q('FoX {:ppl} at every length (ALiBi {:ppl} at {:g}x)', "ppl('fox', 1)", "ppl('alibi', 16)", "d['lengths'][-1]")
q('FIRE {:ppl} → {:ppl}; CoPE {:ppl} → {:ppl}; xPos {:ppl} → {:ppl}', "ppl('fire', 1)", "ppl('fire', 16)",
  "ppl('cope', 1)", "ppl('cope', 16)", "ppl('xpos', 1)", "ppl('xpos', 16)")
q('last {} of {}; {} seeds (FIRE {})', "d['settings']['last_k']", "d['settings']['n']", "grp(group='fox', mult=1)['n']",
  "grp(group='fire', mult=1)['n']")

q = at('README.md', 'results/ppl/lm_infinite.json')
q(', windowed {:ppl} |', "ppl('xpos', 16, 'windowed')")
q('at {:g}x RoPE {:ppl}, with it {:ppl}', "16", "ppl('rope-s0', 16)", "ppl('rope-s0', 16, 'LM-Inf')")
q('| last {} of {}, seed {}; SmolLM2: last {} tokens of {} inputs', "d['settings']['last_k']", "d['settings']['n']",
  "0", "J('results/pretrained/smollm2_4x.json')['settings']['last_k']",
  "J('results/pretrained/smollm2_4x.json')['settings']['n']")

q = at('README.md', 'results/pretrained/smollm2_4x.json')
q('at {:g}x {:ppl}, with it {:ppl} (1x: {:ppl})', "4", "ppl('smollm2', 4)", "ppl('smollm2', 4, 'LM-Inf')",
  "ppl('smollm2', 1)")

q = at('README.md', 'results/thesis/thesis.json')
q('non-overlapping: RoPE {:ppl} → {:ppl}, sinusoidal {:ppl} → {:ppl}, ALiBi {:ppl} → {:ppl} (p = {:.3g})',
  "thesis_cell('t3_3', 'rope', 1)['mean']", "thesis_cell('t3_3', 'rope', 16)['mean']",
  "thesis_cell('t3_3', 'sinusoidal', 1)['mean']", "thesis_cell('t3_3', 'sinusoidal', 16)['mean']",
  "thesis_cell('t3_3', 'alibi', 1)['mean']", "thesis_cell('t3_3', 'alibi', 16)['mean']",
  "thesis_p('t3_3', 'alibi', 1, 16)")
q('Last token, N = {}: ALiBi {:ppl} → {:ppl} (p = {:.3g}) | {} seeds', "d['protocols']['last_token']['n_drawn']",
  "thesis_cell('t4_3', 'alibi', 1)['mean']", "thesis_cell('t4_3', 'alibi', 16)['mean']",
  "thesis_p('t4_3', 'alibi', 1, 16)", "thesis_cell('t4_3', 'alibi', 1)['n']")
q('non-overlapping: KERPLE-log {:ppl} → {:ppl} at {:g}x, {:ppl} at {:g}x (p = {:.3g})',
  "thesis_cell('t3_3', 'kerple_log', 1)['mean']", "thesis_cell('t3_3', 'kerple_log', 4)['mean']", "4",
  "thesis_cell('t3_3', 'kerple_log', 16)['mean']", "16", "thesis_p('t3_3', 'kerple_log', 1, 16)")
q('Last token, N = {}: KERPLE-log {:ppl} → {:ppl} at {:g}x (p = {:.3g}), Sandwich {:ppl} → {:ppl} (p = {:.2g}) | '
  '{} seeds',
  "d['protocols']['last_token']['n_drawn']", "thesis_cell('t4_3', 'kerple_log', 1)['mean']",
  "thesis_cell('t4_3', 'kerple_log', 4)['mean']", "4", "thesis_p('t4_3', 'kerple_log', 1, 4)",
  "thesis_cell('t4_3', 'sandwich', 1)['mean']", "thesis_cell('t4_3', 'sandwich', 4)['mean']",
  "thesis_p('t4_3', 'sandwich', 1, 4)", "thesis_cell('t4_3', 'sandwich', 1)['n']")

q = at('README.md', 'results/ppl/rope_extension.json')
q('; {} fine-tuning steps bring both flat', "row(ckpt='rope-pift-s0', mult=1)['iters']")
q('at {:g}x untuned: PI {:ppl}, YaRN {:ppl}, dynamic NTK {:ppl}, RoPE {:ppl}; fine-tuned: PI {:ppl}, YaRN {:ppl} | '
  'last {} of {}; {} seeds', "4", "ppl('rope+pi4', 4)", "ppl('rope+yarn4', 4)", "ppl('rope+dynamic4', 4)",
  "ppl('rope', 4)", "ppl('rope-pift', 4)", "ppl('rope-yarnft', 4)", "d['settings']['last_k']", "d['settings']['n']",
  "grp(group='rope', mult=4)['n']")

q = at('README.md', 'results/stream/stream.json')
q('streams {:.0f}M tokens at flat perplexity', "d['settings']['tokens'] / 1e6")
q('over {:.0f}M tokens: ALiBi {:ppl} (windows from scratch {:ppl}), RoPE {:ppl}, NoPE {:ppl}',
  "d['settings']['tokens'] / 1e6", "stream_row('alibi-s0', 'sinks')['ppl']", "stream_row('alibi-s0', 'windows')['ppl']",
  "stream_row('rope-s0', 'sinks')['ppl']", "stream_row('none-s0', 'sinks')['ppl']")
q('| one stream each, seed {} |', "0")

q = at('README.md', 'results/stream/stream_smollm2.json')
q('SmolLM2 over {:.0f}k: {:ppl} with {} sinks, {:ppl} without', "d['settings']['tokens'] / 1e3",
  "stream_row('smollm2', 'sinks')['ppl']", "stream_row('smollm2', 'sinks')['S']",
  "stream_row('smollm2', 'no_sinks')['ppl']")

q = at('README.md', 'results/stream/stream_gemma3_w512_bos.json')
q('Gemma 3, W = {}: {:ppl} with `<bos>` kept, {:ppl} without', "d['settings']['cache_window']",
  "stream_row('gemma3', 'sinks')['ppl']", "stream_row('gemma3', 'no_sinks')['ppl']")
q = at('README.md', 'results/stream/stream_gemma3_w512_nobos.json')
q('({} text sinks: {:ppl})', "stream_row('gemma3', 'sinks')['S']", "stream_row('gemma3', 'sinks')['ppl']")

q = at('README.md', 'results/ppl/t5_temperature.json')
q('T5 at {:g}x {:ppl} → {:ppl}', "8", "ppl('t5-s0', 8)", "ppl('t5-s0', 8, 'tau(L)')")
q('| last {} of {}, T5 seed {};', "d['settings']['last_k']", "d['settings']['n']", "0")
q = at('README.md', 'results/pretrained/smollm2_temperature_ppl.json')
q('SmolLM2 at {:g}x {:ppl} → {:ppl}', "2", "ppl('smollm2', 2)", "ppl('smollm2', 2, 'tau(L)')")
q('SmolLM2: {:word} input |', "d['settings']['n']")

q = at('README.md', 'results/regular/table.json')
q('Avg {:.1f} and {:.1f} at lengths {}-{}, the Transformer {:.1f} and {:.1f} (chance); modular {:.1f} | {} '
  'seeds, {} lengths',
  "regular('parity_check', 'regulargpt_c2')['avg']", "regular('cycle_navigation', 'regulargpt_c2')['avg']",
  "J('results/regular/parity_check__regulargpt_c2__s0.json')['test_lengths'][0]",
  "J('results/regular/parity_check__regulargpt_c2__s0.json')['test_lengths'][1]",
  "regular('parity_check', 'transformer')['avg']", "regular('cycle_navigation', 'transformer')['avg']",
  "regular('modular_arithmetic', 'regulargpt_c2')['avg']", "regular('parity_check', 'regulargpt_c2')['seeds']",
  "J('results/regular/parity_check__regulargpt_c2__s0.json')['n_test_lengths']")
q = at('README.md', 'results/regular/modular_arithmetic__regulargpt_c2__s0.json')
q('(modular: {}) x {} strings', "d['n_test_lengths']", "d['config']['test_samples']")

q = at('README.md', 'results/pretrained/gemma3_bos_ppl_all.json')
q('Gemma 3 270M with `<bos>` ([its page](results/pretrained/gemma3.md); n = {} a cell): last token {:ppl} at '
  '{:g} L_tr, {:ppl} at {:g}x', "d['settings']['n']", "ppl('gemma3', 1)", "1", "ppl('gemma3', 2)", "2")
q('LM-Infinite on the globals {:ppl},', "ppl('gemma3@global', 2, 'LM-Inf')")
q = at('README.md', 'results/pretrained/gemma3_bos_4x_all.json')
q(', {:ppl} at {:g}x (1x: {:ppl})', "ppl('gemma3@global', 4)", "4", "ppl('gemma3@global', 1)")
q(', {:ppl}; passkeys', "ppl('gemma3@global', 4, 'LM-Inf')")
q = at('README.md', 'results/pretrained/gemma3_bos_passkey.json')
q('passkeys {}/{} at {:.0f}k, {}/{} at {:.0f}k, {}/{} at {:.0f}k', "passkey_found(0.25)", "passkey_asked(0.25)",
  "passkey_cells(0.25)[0]['L_ex'] / 1024", "passkey_found(1)", "passkey_asked(1)",
  "passkey_cells(1)[0]['L_ex'] / 1024", "passkey_found(2)", "passkey_asked(2)",
  "passkey_cells(2)[0]['L_ex'] / 1024")
q = at('README.md', 'results/pretrained/gemma3_bos_erf.json')
q('ERF at {:g} L_tr {:,} tokens', "d['settings']['length']", "d['results'][0]['erf']")
q = at('README.md', 'results/pretrained/gemma3_bos_erf_windowed.json')
q('(every layer local: {:,})', "d['results'][0]['erf']")
