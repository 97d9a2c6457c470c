"""The house's size rules (#57), so that a module stays readable in one sitting: model.py at most 1,100 lines, every
other module at most 500, no function over 80 lines (ruff checks the line length). And the top level holds only what a
user runs: the design card's scripts plus at most three more."""
import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = {'model.py', 'train.py', 'sample.py', 'extrapolate.py', 'regular_lang.py'}


def modules(root):
    pattern = [os.path.join(root, '*.py')] + [os.path.join(root, d, '*.py') for d in ('lexgpt', 'analysis', 'tools',
                                                                                      'data', 'configs')]
    return sorted(p for g in pattern for p in glob.glob(g))


def too_long(root):
    """-> one line per module or function over its budget."""
    bad = []
    for path in modules(root):
        with open(path) as f:
            src = f.read()
        name = os.path.relpath(path, root)
        budget = 1100 if name == 'model.py' else 500
        if src.count('\n') > budget:
            bad.append(f"{name}: {src.count(chr(10))} lines (at most {budget})")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 80:
                    bad.append(f"{name}:{node.lineno}: {node.name} is {n} lines (at most 80)")
    return bad


def test_modules_and_functions_within_their_budgets():
    bad = too_long(ROOT)
    assert not bad, '\n'.join(bad)


def test_the_budgets_are_checked(tmp_path):
    """A planted long function and an overlong module are both named."""
    body = '\n'.join(f'    x{i} = {i}' for i in range(85))
    (tmp_path / 'lexgpt').mkdir()
    (tmp_path / 'lexgpt' / 'big.py').write_text(f'def f():\n{body}\n' + 'y = 1\n' * 420)
    bad = too_long(str(tmp_path))
    assert any('big.py:1: f is 86 lines' in b for b in bad) and any('big.py: 506 lines' in b for b in bad), bad


def test_the_top_level_holds_the_scripts_a_user_runs():
    top = {f for f in os.listdir(ROOT) if f.endswith('.py')}
    assert SCRIPTS <= top and len(top - SCRIPTS) <= 3, sorted(top - SCRIPTS)
