"""
Our RULER scores rescored by RULER's own code (#73): for every cell of analysis.ruler's JSONs, the predictions in the
jsonl beside it are cleaned by RULER's postprocess_pred and scored by the metric that RULER's synthetic.yaml gives the
task (string_match_all or string_match_part of its eval/synthetic/constants.py); the score must equal the JSON's.

  git clone https://github.com/NVIDIA/RULER out/RULER     # any checkout of RULER (not a dependency of the project)
  python -m tools.ruler_check --ruler=out/RULER --inputs=results/ruler/smollm2_*.json   # globs are expanded here

RULER's scripts/eval/evaluate.py cannot be imported without nemo (a speech toolkit) and nltk's downloads, so only
its postprocess_pred is taken, compiled from the file's own source; constants.py is imported as it stands.
Writes <out_dir>/<name>.json and .md: a row per cell with our score, RULER's, n, and whether they are equal.
"""
import ast
import importlib.util
import os
import subprocess

import yaml

from analysis.ruler import jsonl_path
from lexgpt.outputs import matching, md_table, read_json, write_outputs
from lexgpt.config import ConfigError, run
from lexgpt.ruler_tasks import read_jsonl

DEFAULTS = dict(
    ruler='out/RULER',          # a checkout of github.com/NVIDIA/RULER
    inputs=[],                  # JSONs of analysis.ruler (their jsonl folders beside them)
    out_dir='out/ruler_check',
    name='ruler_check',
)


def rulers_code(root):
    """RULER's task table (synthetic.yaml joined with eval/synthetic/constants.py's TASKS, as evaluate.py joins them)
    and its postprocess_pred -> (tasks, postprocess, the checkout's commit or None)."""
    paths = [os.path.join(root, 'scripts', p) for p in ('synthetic.yaml', 'eval/synthetic/constants.py',
                                                         'eval/evaluate.py')]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise ConfigError(f"ruler={root!r} is not a RULER checkout: {missing[0]} is missing "
                          "(git clone https://github.com/NVIDIA/RULER)")
    with open(paths[0]) as f:
        tasks = yaml.safe_load(f)
    spec = importlib.util.spec_from_file_location('ruler_constants', paths[1])
    constants = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(constants)
    for config in tasks.values():
        config.update(constants.TASKS[config['task']])
    with open(paths[2]) as f:
        tree = ast.parse(f.read())
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'postprocess_pred']
    if not found:
        raise ConfigError(f"ruler={root!r}: scripts/eval/evaluate.py has no postprocess_pred")
    space = {}
    code = ast.fix_missing_locations(ast.Module([ast.Import([ast.alias('re')]), found[0]], type_ignores=[]))
    exec(compile(code, paths[2], 'exec'), space)
    return tasks, space['postprocess_pred'], checkout_commit(root)


def checkout_commit(root):
    """The commit of the git checkout at root, or None where root is not the top of one: a copy without .git (git
    archive's) inside another repository would otherwise give that repository's HEAD."""
    git = subprocess.run(['git', '-C', root, 'rev-parse', '--show-toplevel', 'HEAD'], capture_output=True, text=True)
    out = git.stdout.split()
    if git.returncode or len(out) != 2 or os.path.realpath(out[0]) != os.path.realpath(root):
        return None
    return out[1]


def rescore(path, tasks, postprocess):
    """Each cell of one analysis.ruler JSON -> rows: ours, RULER's over the jsonl's predictions, n of each."""
    data, rows = read_json(path, 'inputs'), []
    cfg = dict(out_dir=os.path.dirname(path), name=os.path.splitext(os.path.basename(path))[0])
    for cell in data['results']:
        lines = read_jsonl(jsonl_path(cfg, cell))
        config = tasks[cell['task']]
        preds = [postprocess(line['pred'], config) for line in lines]
        theirs = config['metric_fn'](preds, [line['outputs'] for line in lines]) if lines else None
        rows.append(dict(json=path, ckpt=cell['ckpt'], variant=cell['variant'], task=cell['task'], mult=cell['mult'],
                         ours=cell['score'], n=cell['n'], rulers=theirs, n_jsonl=len(lines), metric=config['task'],
                         equal=theirs is not None and round(cell['score'], 2) == theirs and cell['n'] == len(lines)))
    return rows


def main(cfg):
    if not cfg['inputs']:
        raise ConfigError("inputs= is empty: give analysis.ruler's JSONs, e.g. --inputs=results/ruler/smollm2_*.json")
    tasks, postprocess, commit = rulers_code(cfg['ruler'])
    paths = [p for pattern in cfg['inputs'] for p in matching(pattern)[0]]  # a glob of no file yet: none
    rows = [r for path in paths for r in rescore(path, tasks, postprocess)]
    equal = sum(r['equal'] for r in rows)
    table = [[os.path.basename(r['json']), r['variant'], r['task'], f"{r['mult']:g}", r['n'], f"{r['ours']:.2f}",
              '-' if r['rulers'] is None else f"{r['rulers']:.2f}", 'yes' if r['equal'] else '**no**'] for r in rows]
    md = (f"# Our RULER scores, rescored by RULER's own code\n\nRULER at commit {commit or 'unknown'}: its "
          f"postprocess_pred and the metric its synthetic.yaml names for each task. {equal} of {len(rows)} cells "
          "equal (score to 2 decimals, and n).\n\n"
          + md_table(['JSON', 'variant', 'task', 'L / L_tr', 'n', 'ours', "RULER's", 'equal'], table))
    write_outputs(cfg['out_dir'], cfg['name'], dict(ruler_commit=commit, equal=equal, cells=len(rows), rows=rows),
                  markdown=md)
    if equal != len(rows):
        raise SystemExit(f"ruler_check: {len(rows) - equal} of {len(rows)} cells differ from RULER's scoring")
    return rows


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
