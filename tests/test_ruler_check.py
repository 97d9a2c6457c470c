"""tools/ruler_check.py: our RULER cells rescored by a RULER checkout's own functions (a small stand-in checkout here:
the tests download nothing), equal where the predictions earn the JSON's score, reported where they do not."""
import json
import os
import shutil
import subprocess
import textwrap

import pytest

from analysis.ruler import jsonl_path
from lexgpt.config import ConfigError
from lexgpt.ruler_tasks import write_jsonl
from tools import ruler_check

# RULER's layout and its two functions as its repository defines them; evaluate.py's top imports a package that is
# not installed, so the check must take postprocess_pred alone
CONSTANTS = '''
def string_match_part(preds, refs):
    return round(sum(max(1.0 if r.lower() in p.lower() else 0.0 for r in ref) for p, ref in zip(preds, refs))
                 / len(preds) * 100, 2)

def string_match_all(preds, refs):
    return round(sum(sum(1.0 if r.lower() in p.lower() else 0.0 for r in ref) / len(ref) for p, ref in zip(preds, refs))
                 / len(preds) * 100, 2)

TASKS = {'niah': {'metric_fn': string_match_all}, 'qa': {'metric_fn': string_match_part}}
'''
EVALUATE = '''
import nemo_is_not_installed

def postprocess_pred(predict_str, task_config):
    predict_str = predict_str.strip()
    return re.sub(r'[\\x00-\\x1f]', '\\n', predict_str).strip()
'''


def fake_ruler(root):
    os.makedirs(os.path.join(root, 'scripts/eval/synthetic'))
    files = {'synthetic.yaml': 'niah_multivalue:\n  task: niah\nqa_1:\n  task: qa\n',
             'eval/synthetic/constants.py': CONSTANTS, 'eval/evaluate.py': EVALUATE}
    for name, text in files.items():
        with open(os.path.join(root, 'scripts', name), 'w') as f:
            f.write(textwrap.dedent(text))
    return root


def cell(task, score, preds, outputs):
    return dict(ckpt='tiny', variant='vanilla', task=task, mult=0.5, n=len(preds), score=score,
                samples=[dict(index=i, pred=p, outputs=o) for i, (p, o) in enumerate(zip(preds, outputs))])


def results_json(tmp_path, cells):
    path = str(tmp_path / 'ruler_run.json')
    with open(path, 'w') as f:
        json.dump(dict(command='python -m analysis.ruler ...', results=cells), f)
    cfg = dict(out_dir=str(tmp_path), name='ruler_run')
    for c in cells:
        write_jsonl(jsonl_path(cfg, c), [dict(index=s['index'], input='...', outputs=s['outputs'], pred=s['pred'])
                                         for s in c['samples']])
    return path


# multi-value: 2 of 4 values, then 4 of 4 (the newline inside a value's neighbourhood is postprocess_pred's); qa: one
# of two answers is a whole hit under string_match_part. By hand: all = (0.5 + 1) / 2 = 75.0, part = 100.0
MULTIVALUE = cell('niah_multivalue', 75.0, [' 11 and 22.', '\n44 33\x0b22 11 '],
                  [['11', '22', '33', '44'], ['11', '22', '33', '44']])
QA = cell('qa_1', 100.0, ['Paris'], [['paris', 'Lyon']])


def test_cells_scored_as_the_json_says_are_equal(tmp_path):
    path = results_json(tmp_path, [MULTIVALUE, QA])
    rows = ruler_check.main(dict(ruler=fake_ruler(str(tmp_path / 'RULER')), inputs=[path],
                                 out_dir=str(tmp_path / 'out'), name='check'))
    assert [(r['task'], r['rulers'], r['metric'], r['equal']) for r in rows] == \
        [('niah_multivalue', 75.0, 'niah', True), ('qa_1', 100.0, 'qa', True)]
    written = json.load(open(tmp_path / 'out' / 'check.json'))
    assert (written['equal'], written['cells']) == (2, 2)


def test_a_score_the_predictions_do_not_earn_is_reported(tmp_path):
    wrong = dict(MULTIVALUE, score=100.0)  # what a metric counting any value found would claim
    path = results_json(tmp_path, [wrong, QA])
    with pytest.raises(SystemExit, match='1 of 2 cells differ'):
        ruler_check.main(dict(ruler=fake_ruler(str(tmp_path / 'RULER')), inputs=[path],
                              out_dir=str(tmp_path / 'out'), name='check'))
    table = open(tmp_path / 'out' / 'check.md').read()
    assert '| ruler_run.json | vanilla | niah_multivalue | 0.5 | 2 | 100.00 | 75.00 | **no** |' in table


def test_a_folder_that_is_not_a_ruler_checkout_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"ruler='.*nowhere' is not a RULER checkout: .*synthetic.yaml is missing"):
        ruler_check.main(dict(ruler=str(tmp_path / 'nowhere'), inputs=['x.json'], out_dir=str(tmp_path), name='c'))


def test_the_commit_is_the_checkouts_own(tmp_path):
    """A copy of RULER without .git inside another repository (here: this one's tests folder) has no commit of its
    own, not that repository's HEAD; a clone gives its HEAD."""
    inside = fake_ruler(os.path.join(os.path.dirname(os.path.abspath(__file__)), f'_ruler_copy_{os.getpid()}'))
    try:
        assert ruler_check.rulers_code(inside)[2] is None
    finally:
        shutil.rmtree(inside)
    clone = fake_ruler(str(tmp_path / 'RULER'))
    git = lambda *a: subprocess.run(['git', '-C', clone, *a], capture_output=True, text=True, check=True).stdout
    git('init', '-q')
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x')
    assert ruler_check.rulers_code(clone)[2] == git('rev-parse', 'HEAD').strip()
