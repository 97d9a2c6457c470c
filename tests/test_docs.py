"""The README and the results pages (#57): the README is a tour of at most 15,000 bytes whose sections come in a fixed
order, every results page is at most 20,000 bytes, every relative link points at a file (and heading) that exists,
and no command the README shows writes into results/ or names a script or module that does not exist."""
import ast
import glob
import os
import re
import shlex

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, 'README.md')
INDEX = os.path.join(ROOT, 'results', 'README.md')
README_MAX, PAGE_MAX = 15_000, 20_000
# the issue's order: what it is -> reading order -> file map -> encodings (and adding one, and a model family) ->
# glossary -> where outputs go -> findings; the short pretrained and protocol sections sit before the glossary
SECTIONS = ['Reading order', 'Files', 'Positional encodings', 'Pretrained models', 'Measuring extrapolation',
            'Glossary', 'Where outputs go', 'What we found']
# the reading order's stops: an encoding -> the reference scores -> GPT.forward -> train.py -> the protocols
STOPS = ['KerpleLog', 'lexgpt/reference.py', 'GPT.forward', 'train.py', 'lexgpt/evaluation.py']
# a name in backticks, `scores`, `GPT.forward`, `bias(layer, d)` or `model.make_model`
CODE_NAME = re.compile(r'`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?:\([^`]*\))?`')
LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)\)')
OUTPUT_KEYS = ('--out_dir', '--json', '--name')


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def slug(heading):
    """A heading's anchor as GitHub makes it: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def anchors(text):
    return {slug(h) for h in re.findall(r'^#+ (.+)$', text, flags=re.M)}


def links(text):
    """The relative link targets of a markdown text (web addresses left out)."""
    return [t for t in LINK.findall(text) if not re.match(r'[a-z]+:', t)]


def pages():
    """Every results page: each results/**/README.md and every markdown file the index links to."""
    found = set(glob.glob(os.path.join(ROOT, 'results', '**', 'README.md'), recursive=True))
    for target in links(read(INDEX)):
        path = os.path.normpath(os.path.join(os.path.dirname(INDEX), target.split('#')[0]))
        if path.endswith('.md'):
            found.add(path)
    return sorted(found)


def broken_links(path):
    """The links of the page at `path` whose file, folder or heading is missing."""
    text, out = read(path), []
    for target in links(text):
        file, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            out.append(target)
        elif anchor and dest.endswith('.md') and anchor not in anchors(read(dest)):
            out.append(target)
    return out


def code_lines(text):
    """The commands of a markdown text's code blocks (fenced, or indented by four spaces), continuations joined."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith('```'):
            fenced = not fenced
            continue
        if fenced or line.startswith('    '):
            if out and out[-1].endswith('\\'):
                out[-1] = out[-1][:-1] + ' ' + line.strip()
            else:
                out.append(line.strip())
    return [c for c in out if c]


def inline_commands(text):
    """Commands quoted inline, `python ...` (a quote may run over a line break)."""
    return [c.replace('\n', ' ') for c in re.findall(r'`(python [^`]+)`', text)]


def command_problems(command, outputs=True):
    """What is wrong with one command line: a script, config or module that does not exist, or (outputs=True) an
    output path under results/."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # an unbalanced quote: a command no shell would run
        return [f'cannot parse {command!r}']
    out = []
    for i, word in enumerate(words):
        key, _, value = word.partition('=')
        if outputs and key in OUTPUT_KEYS and os.path.normpath(value).split(os.sep)[0] == 'results':
            out.append(f'{command!r} writes under results/ ({word})')
        if word.endswith(('.py', '.sh')) and not word.startswith('-') and not os.path.exists(os.path.join(ROOT, word)):
            out.append(f'{command!r} names {word}, which does not exist')
        if i > 0 and words[i - 1] == '-m' and words[0] == 'python':
            base = os.path.join(ROOT, *word.split('.'))
            if not (os.path.exists(base + '.py') or os.path.exists(os.path.join(base, '__init__.py'))):
                out.append(f'{command!r} runs module {word}, which does not exist here')
    return out


def defined(path):
    """{scope: names} of a Python file: scope '' holds its functions, classes and module-level names, scope C the
    methods and class-level names (dataclass fields) of class C."""
    tree, out = ast.parse(read(path)), {'': set()}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = set()
            for item in node.body:
                out[node.name].update(assigned(item))
        out[''].update(assigned(node))
    return out


def assigned(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return {t.id for t in targets if isinstance(t, ast.Name)}


def module_file(name):
    """The file of a module named as in code (model, routes, reference, evaluation, ...), or None."""
    for path in (f'{name}.py', os.path.join('lexgpt', f'{name}.py')):
        if os.path.exists(os.path.join(ROOT, path)):
            return os.path.join(ROOT, path)
    return None


def unknown_names(section):
    """The names in backticks that a reading order's steps use but no file defines. `module.name` is looked up in
    that module's file; `Class.name` and a bare name in the Python files that the step or an earlier one links."""
    files, out = [], []
    for step in re.split(r'\n(?=\d+\. )', section):
        files += [os.path.join(ROOT, t) for t in links(step) if t.endswith('.py')]
        names = [defined(f) for f in files if os.path.exists(f)]
        for name in CODE_NAME.findall(step):
            scope, _, last = name.rpartition('.')
            if scope and module_file(scope):
                found = last in defined(module_file(scope))['']
            elif scope:
                found = any(last in n.get(scope, ()) for n in names)
            else:  # a function, class or module-level name, or a method or field of any class
                found = any(last in scoped for n in names for scoped in n.values())
            if not found:
                out.append(name)
    return out


def test_every_name_in_the_reading_order_is_defined_where_it_says():
    tour = read(README).split('## Reading order', 1)[1].split('\n## ', 1)[0]
    assert unknown_names(tour) == []


def test_a_planted_unknown_name_in_the_reading_order_is_named():
    """A function that model.py lacks, a method that GPT lacks, a name of a module that does not define it, and a
    name a later step defines: each is reported; the names that exist are not."""
    steps = ('1. **An encoding**: `KerpleLog`, `no_such_fn` and `GPT.no_method` in [model.py](model.py).\n'
             '2. `model.attend`, `routes.attend`, `GPT.forward`, `kinds`, `bias(layer, d)`; `scores` before its file.\n'
             '3. [lexgpt/reference.py](lexgpt/reference.py): `scores`, `AttnCall.mask_rules`.\n')
    assert unknown_names(steps) == ['no_such_fn', 'GPT.no_method', 'model.attend', 'scores']


def test_readme_is_a_tour_of_at_most_15000_bytes():
    assert os.path.getsize(README) <= README_MAX, os.path.getsize(README)


def test_readme_sections_come_in_the_issues_order():
    text = read(README)
    assert text.startswith('# lexgpt\n')
    assert re.findall(r'^## (.+)$', text, flags=re.M) == SECTIONS
    tour = text.split('## Reading order', 1)[1].split('\n## ', 1)[0]
    at = [tour.find(stop) for stop in STOPS]
    assert -1 not in at and at == sorted(at), dict(zip(STOPS, at))


def test_readme_findings_are_at_most_eight_each_linking_to_its_results_page():
    section = read(README).split('## What we found', 1)[1]
    rows = [r for r in section.splitlines() if r.startswith('| ') and not r.startswith('| finding')]
    assert 1 <= len(rows) <= 8, len(rows)
    for row in rows:
        assert any(t.startswith('results/') for t in links(row)), row


@pytest.mark.parametrize('page', pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_results_page_is_at_most_20000_bytes(page):
    assert os.path.getsize(page) <= PAGE_MAX, os.path.getsize(page)


@pytest.mark.parametrize('page', [README] + pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_every_relative_link_points_at_something_that_exists(page):
    assert broken_links(page) == []


def test_the_index_links_every_results_page():
    linked = {os.path.normpath(os.path.join(ROOT, 'results', t.split('#')[0])) for t in links(read(INDEX))}
    assert [p for p in pages() if p != INDEX and p not in linked] == []


def test_readme_commands_exist_and_write_nothing_into_results():
    text = read(README)
    commands = code_lines(text) + inline_commands(text)
    assert len(commands) >= 8, commands
    assert [p for c in commands for p in command_problems(c)] == []


@pytest.mark.parametrize('page', pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_results_pages_quote_scripts_and_modules_that_exist(page):
    """The pages keep the lab record, commands into results/ included, but every script and module they name must
    be one that runs now (`python -m analysis.kernels`, not the old `python kernels.py`)."""
    text = read(page)
    problems = [p for c in code_lines(text) + inline_commands(text) for p in command_problems(c, outputs=False)]
    assert problems == []


def test_the_checks_catch_what_they_guard_against(tmp_path):
    """Each check on a planted defect: a missing file, a missing heading, an output under results/, a script and a
    module that do not exist."""
    page = tmp_path / 'page.md'
    (tmp_path / 'there.md').write_text('# A heading: with `code`\n')
    page.write_text('[ok](there.md#a-heading-with-code) [gone](missing.md) [bad anchor](there.md#nowhere) '
                    '[web](https://example.org/x)\n')
    assert broken_links(str(page)) == ['missing.md', 'there.md#nowhere']
    assert command_problems('python extrapolate.py --ckpt=out/x --out_dir=results/ppl')
    assert command_problems("python -m analysis.kernels --json='results/bench/x.json'  # a comment")
    assert command_problems('python kernels.py --ckpt=out/x')
    assert command_problems('python -m analysis.no_such_analysis')
    assert command_problems('python extrapolate.py --ckpt=out/x --out_dir=out/results') == []
    assert code_lines('    python a.py \\\n        --b=1\n```bash\nbash demo.sh\n```\n') == ['python a.py  --b=1',
                                                                                      'bash demo.sh']
