"""Every number the README's findings and the results pages' prose quote is the number its JSON holds, written with
the rounding the page uses (#71: an audit of 1,340 quoted numbers found 6 wrong).

tests/prose_numbers.py lists the quotes: (page, the quoted text with a format field for each number, the JSON the
numbers come from, one Python expression per field). Each expression is evaluated with `d` bound to that JSON and the
helpers of NAMES below (a row, a group's mean, a paired t-test over seeds, another JSON); the text, formatted with the
values, has to be in the page, whitespace aside (a quote may wrap across lines). The generated tables (each script's
.md, thesis/README.md, mutation/README.md) are written from their JSONs and are not listed. Every number in the
README's findings has to be covered by a quote, or be one of the few that name no measurement (FINDINGS_FREE).
"""
import functools
import json
import math
import os
import re
import statistics
import string

import pytest

from lexgpt.outputs import fmt_ppl
from tests.prose_numbers import FINDINGS_FREE, HELPERS, QUOTES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = dict(enumerate(['none', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten']))
FIELD = r'([-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?|\S+?)'  # a quoted number where the page has one, else a word
NUMBER = re.compile(r'(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?')


@functools.lru_cache(maxsize=None)
def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def page_text(path, root=ROOT):
    with open(os.path.join(root, path), encoding='utf-8') as f:
        return f.read()


def flat(text):
    return re.sub(r'\s+', ' ', text)


class Formatter(string.Formatter):
    """str.format, plus `ppl` (lexgpt.outputs.fmt_ppl: the tables' four significant digits), `pct` (a ratio as a
    percentage change without its sign, one decimal: 1.0274 -> 2.7; pct2: two) and `word` (a count spelled out)."""

    def format_field(self, value, spec):
        if spec == 'ppl':
            return fmt_ppl(value)
        if spec == 'word':
            return WORDS[value]
        if spec.startswith('pct'):
            digits = int(spec[3:] or 1)
            return format(abs(value - 1) * 100, f'.{digits}f')
        return format(value, spec)


FORMAT = Formatter()


def matching(rows, what, **match):
    """The one row of rows whose keys hold the given values (floats compared as floats; a variant also matches a
    longer one that starts with it: variant='LM-Inf' is 'LM-Inf(n_start=10)')."""
    def fits(row):
        for k, v in match.items():
            got = row.get(k)
            if k == 'variant' and isinstance(v, str) and isinstance(got, str):
                if not got.startswith(v):
                    return False
            elif isinstance(v, (int, float)) and isinstance(got, (int, float)):
                if not math.isclose(got, v):
                    return False
            elif got != v:
                return False
        return True
    found = [r for r in rows if isinstance(r, dict) and fits(r)]
    exact = [r for r in found if all(r.get(k) == v for k, v in match.items())]
    if len(found) != 1 and len(exact) == 1:
        return exact[0]
    assert len(found) == 1, f"{len(found)} {what} match {match}"
    return found[0]


def namespace(d):
    """The names an expression sees: d (its JSON) and helpers that read it."""
    def row(**match):
        return matching(d['results'], 'rows', **match)

    def grp(**match):
        return matching(d['groups'], 'groups', **match)

    def ppl(name, mult, variant='vanilla'):
        """A run's perplexity (results row by ckpt), else a seed group's mean."""
        if any(r.get('ckpt') == name for r in d['results']):
            return row(ckpt=name, mult=mult, variant=variant)['ppl']
        return grp(group=name, mult=mult, variant=variant)['ppl_mean']

    def sd(name, mult, variant='vanilla'):
        return grp(group=name, mult=mult, variant=variant)['ppl_std']

    def cell(name, mult, variant='vanilla'):
        """A group's cell as extrapolate.py writes it: mean ± sample std (n=seeds), or one run's ppl (bits)."""
        g = grp(group=name, mult=mult, variant=variant)
        if g['single']:
            return f"{fmt_ppl(g['ppl_mean'])} ({g['bits_mean']:.3f})"
        return f"{fmt_ppl(g['ppl_mean'])} ± {fmt_ppl(g['ppl_std'], g['ppl_mean'])} (n={g['n']})"

    def paired_p(a, b):
        """The two-sided paired t-test of two {seed: value} maps over their common seeds (analysis/thesis.py's)."""
        from scipy import stats
        seeds = sorted(set(a) & set(b))
        return float(stats.ttest_rel([a[s] for s in seeds], [b[s] for s in seeds]).pvalue)

    return dict(d=d, J=load, row=row, grp=grp, ppl=ppl, sd=sd, cell=cell, paired_p=paired_p, matching=matching,
                math=math, statistics=statistics, fmt_ppl=fmt_ppl,
                **{name: functools.partial(f, d) for name, f in HELPERS.items()})


def rendered(quote):
    """(the quote's text with its values, the values) for one QUOTES entry."""
    page, text, path, exprs = quote
    env = namespace(load(path))
    values = [eval(e, env) for e in exprs]  # our own table's expressions
    return FORMAT.format(text, *values), values


def fields(text):
    """The format specs of a quote's fields."""
    return [':' + spec if spec else '' for _, f, spec, _ in FORMAT.parse(text) if f is not None]


def what_the_page_says(text, page):
    """The page's words in place of the quote's numbers, where its literal parts are (None if they are not)."""
    pattern = ''.join(re.escape(flat(lit)).replace(r'\ ', r'\s+') + (FIELD if f is not None else '')
                      for lit, f, _, _ in FORMAT.parse(text))
    m = re.search(pattern, page)
    return list(m.groups()) if m else None


def problems(quotes, read=page_text):
    """-> one line per quote whose rendered text is not in its page."""
    bad, pages = [], {}
    for quote in quotes:
        page = quote[0]
        if page not in pages:
            pages[page] = flat(read(page))
        try:
            text, values = rendered(quote)
        except Exception as e:  # a missing JSON, field or row names itself
            bad.append(f"{page}: {quote[1]!r}: {type(e).__name__}: {e}")
            continue
        if flat(text) not in pages[page]:
            said, wanted = what_the_page_says(quote[1], pages[page]), [FORMAT.format(f'{{{f}}}', v) for f, v in
                                                                       zip(fields(quote[1]), values)]
            if said is None:
                bad.append(f"{page}: {flat(text)!r} is not in the page")
            else:
                bad.append(f"{page}: {quote[1][:70]!r}...: the page says " + ', '.join(
                    f"{a} where {quote[2]} gives {b}" for a, b in zip(said, wanted) if a != b))
    return bad


def test_quotes_are_well_formed():
    """Each quote names a page and a JSON that exist and has one expression per number."""
    for page, text, path, exprs in QUOTES:
        assert os.path.isfile(os.path.join(ROOT, page)), page
        assert os.path.isfile(os.path.join(ROOT, path)), path
        assert len(fields(text)) == len(exprs) >= 1, (page, text, exprs)
        assert all(f == '' for _, f, _, _ in FORMAT.parse(text) if f is not None), f"positional fields only: {text}"


def test_every_quoted_number_is_its_json_s():
    bad = problems(QUOTES)
    assert not bad, f"{len(bad)} of {len(QUOTES)} quotes:\n" + '\n'.join(bad)


def test_a_planted_wrong_digit_is_found():
    """One digit of a quoted number changed in the page (in memory) makes its quote fail, and only that one."""
    quote = next(q for q in QUOTES if q[0] == 'README.md')
    text = flat(rendered(quote)[0])
    page = flat(page_text('README.md'))
    number = NUMBER.search(text)
    digit = page.index(text) + number.start() + next(i for i, c in enumerate(number.group(0)) if c.isdigit())
    planted = page[:digit] + str((int(page[digit]) + 1) % 10) + page[digit + 1:]
    assert problems([quote], read=lambda p: page) == []
    bad = problems([quote], read=lambda p: planted)
    assert len(bad) == 1 and 'the page says' in bad[0], bad


def findings():
    """The README's 'What we found' section, to the next heading."""
    readme = page_text('README.md')
    section = readme[readme.index('## What we found'):]
    return section[:section.find('\n#', 3)] if '\n#' in section[3:] else section


def uncovered(section, quote_texts, free):
    """The numbers in section that no quote's rendered text (found in the section) spans and no FINDINGS_FREE
    phrase holds."""
    section = flat(section)
    spans = []
    for t in list(quote_texts) + list(free):
        start = section.find(flat(t))
        while start >= 0:
            spans.append((start, start + len(flat(t))))
            start = section.find(flat(t), start + 1)
    return [f"{m.group(0)} in '...{section[max(0, m.start() - 40):m.end() + 10]}...'" for m in NUMBER.finditer(section)
            if not any(a <= m.start() and m.end() <= b for a, b in spans)]


def test_every_number_in_the_readme_findings_is_quoted():
    texts = [rendered(q)[0] for q in QUOTES if q[0] == 'README.md']
    missing = uncovered(findings(), texts, FINDINGS_FREE)
    assert not missing, f"numbers in the README's findings that tests/prose_numbers.py does not quote: {missing}"


def test_an_unquoted_number_is_found():
    missing = uncovered('## What we found\nRoPE 2.5 at 4x, ALiBi 3.1', ['RoPE 2.5'], ['at 4x'])
    assert len(missing) == 1 and missing[0].startswith('3.1 in'), missing


@pytest.mark.parametrize('spec, value, out', [('ppl', 834.61, '834.6'), ('ppl', 13957.4, '1.396e+04'),
                                              ('ppl', 2.9, '2.900'), ('pct', 1.02741, '2.7'), ('pct', 0.95, '5.0'),
                                              ('pct2', 1.0129, '1.29'), ('.3g', 1.2654e-05, '1.27e-05')])
def test_formats(spec, value, out):
    assert FORMAT.format('{:' + spec + '}', value) == out
