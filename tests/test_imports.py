"""Imports run one way (#74). What model.py imports (the reference attention, the routes, RoPE's extensions, the KV
cache, RegularGPT's fast forwards, the checkpoint readers) never imports model.py back, directly or through another
module; lexgpt/__init__.py lists exactly those modules as below model.py. Every import counts, those inside a
function too, and no two modules import each other, through any chain. Above model.py the folders are layers: the rest
of lexgpt, then analysis/ and data/, then the scripts, then tools/; none imports a layer above its own."""
import ast
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = ('train', 'sample', 'extrapolate', 'regular_lang', 'sweep')
# the layers above model.py, lowest first; the layer below it is what model.py imports (below_model)
LAYERS = (('model',), ('lexgpt',), ('analysis', 'data', 'configs'), SCRIPTS, ('tools',))


def sources(root, planted=None):
    """{module name: source} of the project's modules outside tests/, with `planted` {relative path: source} laid
    over them."""
    paths = glob.glob(os.path.join(root, '*.py')) + glob.glob(os.path.join(root, '*', '*.py'))
    out = {}
    for path in paths:
        rel = os.path.relpath(path, root)
        if rel.startswith(('tests' + os.sep, 'out' + os.sep)) or rel.endswith('__init__.py'):
            continue
        with open(path, encoding='utf-8') as f:
            out[rel[:-3].replace(os.sep, '.')] = f.read()
    for rel, text in (planted or {}).items():
        out[rel[:-3].replace('/', '.')] = text
    return out


def imported(name, text, known):
    """The known modules that one module imports, anywhere in it (`from lexgpt import routes` is lexgpt.routes)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                base = '.'.join(name.split('.')[:-node.level] + ([base] if base else []))
            found.add(base)
            found.update(f'{base}.{a.name}' for a in node.names)
    return {m for m in found if m in known and m != name}


def graph(root, planted=None):
    texts = sources(root, planted)
    return {name: imported(name, text, texts) for name, text in texts.items()}


def reach(edges, start):
    """Every module that `start` imports, directly or through others."""
    seen, todo = set(), list(edges[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges[m])
    return seen


def layer(name, below):
    if name in below:
        return 0
    top = name.split('.')[0]
    return next(i + 1 for i, group in enumerate(LAYERS) if top in group)


def problems(edges):
    """One line per circle (a module that reaches itself) and per import of a higher layer."""
    reached = {m: reach(edges, m) for m in edges}
    below = reached['model'] - {'model'}
    out = [f'{m} imports itself back through {sorted(edges[m])}' for m in sorted(edges) if m in reached[m]]
    for m, targets in sorted(edges.items()):
        out += [f'{m} (layer {layer(m, below)}) imports {t} (layer {layer(t, below)}), a layer above it'
                for t in sorted(targets) if layer(t, below) > layer(m, below)]
    return out


def listed_below(root):
    """The modules that lexgpt/__init__.py's docstring lists under 'Below model.py'."""
    with open(os.path.join(root, 'lexgpt', '__init__.py'), encoding='utf-8') as f:
        doc = ast.get_docstring(ast.parse(f.read()))
    section = doc.split('Below model.py', 1)[1].split('\n\n', 1)[0]
    return {'lexgpt.' + m for m in re.findall(r'^  (\w+)\.py ', section, flags=re.M)}


def test_imports_run_one_way():
    assert problems(graph(ROOT)) == []


def test_the_package_docstring_lists_what_model_py_imports():
    edges = graph(ROOT)
    assert listed_below(ROOT) == reach(edges, 'model') - {'model'}


def test_a_planted_import_of_model_below_it_fails():
    """`import model` in the KV cache (which model.py imports) closes a circle; so does a function-level import of
    loading (which imports model) in the routes; a tools/ import in lexgpt is a layer upward."""
    def planted(rel, line):
        with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
            return {rel: line + f.read()}
    found = problems(graph(ROOT, planted('lexgpt/kv_cache.py', 'import model\n')))
    assert any(p.startswith('lexgpt.kv_cache imports itself back') for p in found), found
    assert any(p.startswith('model imports itself back') for p in found), found
    found = problems(graph(ROOT, planted('lexgpt/routes.py', 'def f():\n    from lexgpt import loading\n')))
    assert any(p.startswith('lexgpt.routes imports itself back') for p in found), found
    found = problems(graph(ROOT, planted('lexgpt/corpus.py', 'from tools import cells\n')))
    assert any('lexgpt.corpus (layer 2) imports tools.cells (layer 5)' in p for p in found), found
