"""
extrapolate.py's --reuse (lexgpt/resume.py): a table grows and a stopped run goes on. Rows are taken where their
settings and training iteration match, a run stopped in a cell keeps its inputs, progress is said as it goes, and
the runs whose folders are gone keep their rows. CPU, seconds.
"""
import json
import os
import re
import shutil
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from lexgpt import evaluation, progress, resume
import extrapolate as ex
from lexgpt.config import ConfigError
from helpers import make_split, save_ckpt, save_split, stop_at_call, tiny


def cfg(**kw):
    return dict(ex.DEFAULTS, **kw)


def test_ppl_reuse_takes_matching_rows_and_refuses_other_settings(tmp_path):
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('alibi'), 'a')
    b = save_ckpt(tmp_path, tiny('t5'), 'b')
    base = cfg(data_dir=data, lengths=[1, 2], n=4, out_dir=str(tmp_path / 'r'))
    first = ex.main(dict(base, ckpt=[a], name='one'))['results']
    both = ex.main(dict(base, ckpt=[a, b], reuse=str(tmp_path / 'r' / 'one.json'), name='two'))['results']
    assert [r.get('reused_from') is not None for r in both] == [True, True, False, False]
    assert [r['loss'] for r in both[:2]] == [r['loss'] for r in first]
    with pytest.raises(ConfigError, match='was made with settings'):
        ex.main(dict(base, n=5, ckpt=[a], reuse=str(tmp_path / 'r' / 'one.json')))
    # the same run name trained further: its rows are scored again
    ckpt = torch.load(os.path.join(a, 'ckpt.pt'), weights_only=True)
    torch.save(dict(ckpt, iter_num=400), os.path.join(a, 'ckpt.pt'))
    again = ex.main(dict(base, ckpt=[a], reuse=str(tmp_path / 'r' / 'one.json'), name='three'))['results']
    assert [r.get('reused_from') for r in again] == [None, None] and [r['iters'] for r in again] == [400, 400]


def test_a_long_evaluation_says_how_far_it_is_and_keeps_its_rows_as_it_goes(tmp_path, monkeypatch, capsys):
    """#59: progress on stderr (a line per batch once progress.PROGRESS_SECONDS is 0: items done of all, a rate, the
    time left), and the JSON rewritten after each row: a run stopped at its third length keeps the two before, which a
    rerun with --reuse of that file takes as they are, ending where an unbroken run ends."""
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('alibi'), 'a')
    base = cfg(ckpt=[a], data_dir=data, lengths=[1, 2, 4], n=6, batch_tokens=64, out_dir=str(tmp_path / 'r'))
    monkeypatch.setattr(progress, 'PROGRESS_SECONDS', 0.0)
    whole = ex.main(dict(base, name='whole'))['results']
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith('  a vanilla L_ex=')]
    # 6 segments, 64 // L per batch: at 16 tokens 4 + 2, at 32 2 + 2 + 2, at 64 one at a time; the last one unsaid
    said = [line.split(':')[1].split(',')[0] for line in lines]
    assert said == [' 4/6 segments', ' 2/6 segments', ' 4/6 segments'] + [f' {k}/6 segments' for k in range(1, 6)]
    assert all(re.search(r'segments, [\d,.]+/s, about [\d,]+ s left$', line) for line in lines), lines
    real = ex.last_token_losses
    stops_at_the_third, calls = stop_at_call(3, real)
    monkeypatch.setattr(ex, 'last_token_losses', stops_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        ex.main(dict(base, name='cut'))
    kept = json.loads((tmp_path / 'r' / 'cut.json').read_text())
    assert kept['partial'] and [r['mult'] for r in kept['results']] == [1, 2]
    with pytest.raises(ConfigError, match='is a run.s partial JSON; finish it first'):
        ex.main(cfg(mode='merge', inputs=[str(tmp_path / 'r' / 'cut.json')], out_dir=str(tmp_path / 'm')))
    monkeypatch.setattr(ex, 'last_token_losses', real)
    again = ex.main(dict(base, name='cut', reuse=str(tmp_path / 'r' / 'cut.json')))['results']
    assert [r.get('reused_from') is not None for r in again] == [True, True, False]
    assert [r['loss'] for r in again] == [r['loss'] for r in whole]
    assert 'partial' not in json.loads((tmp_path / 'r' / 'cut.json').read_text())
    # a resumed run stopped again keeps the rows of its reuse file that it had not reached: b's 4x here
    b = save_ckpt(tmp_path, tiny('t5'), 'b')
    ex.main(dict(base, ckpt=[a, b], lengths=[4], name='two'))
    calls.clear()
    monkeypatch.setattr(ex, 'last_token_losses', stops_at_the_third)  # a at 1x, 2x scored, then b at 1x
    with pytest.raises(KeyboardInterrupt):
        ex.main(dict(base, ckpt=[a, b], name='two', reuse=str(tmp_path / 'r' / 'two.json')))
    kept = json.loads((tmp_path / 'r' / 'two.json').read_text())['results']
    assert sorted((r['ckpt'], r['mult']) for r in kept) == [('a', 1), ('a', 2), ('a', 4), ('b', 4)]


def test_a_cell_stopped_half_way_keeps_its_inputs_and_goes_on_from_them(tmp_path, monkeypatch, capsys):
    """A pretrained model's cell takes hours (4 inputs at 128k tokens): the last-token protocol writes the losses of
    the inputs it has scored into the partial JSON, and --reuse of that file scores only the others, to the same
    loss as a run never stopped; its progress lines count on from the inputs scored before (4 of 5, not 1 of 5)."""
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('rope'), 'a')
    base = cfg(ckpt=[a], data_dir=data, lengths=[4], n=5, last_k=3, batch_tokens=64, out_dir=str(tmp_path / 'r'))
    whole = ex.main(dict(base, name='whole'))['results'][0]
    monkeypatch.setattr(ex, 'CELL_SAVE_SECONDS', 0.0)
    stops_at_the_fourth, forwards = stop_at_call(4, evaluation.slices)  # L = 64 = batch_tokens: an input a forward
    monkeypatch.setattr(evaluation, 'slices', stops_at_the_fourth)
    with pytest.raises(KeyboardInterrupt):
        ex.main(dict(base, name='cut'))
    cut = json.loads((tmp_path / 'r' / 'cut.json').read_text())
    row = cut['results'][0]
    assert cut['partial'] and row['loss'] is None and len(row['losses_so_far']) == 3 * 3
    forwards.clear()
    monkeypatch.setattr(progress, 'PROGRESS_SECONDS', 0.0)  # a line per forward but the last (test above)
    capsys.readouterr()
    again = ex.main(dict(base, name='cut', reuse=str(tmp_path / 'r' / 'cut.json')))['results'][0]
    assert len(forwards) == 2 and again['inputs_scored_before'] == 3  # inputs 4 and 5 only
    said = [line.split(',')[0] for line in capsys.readouterr().err.splitlines() if line.startswith('  a vanilla')]
    assert said == ['  a vanilla L_ex=64: 4/5 segments']
    assert again['loss'] == whole['loss'] and again['n_scored'] == whole['n_scored'] == 15
    assert 'losses_so_far' not in again


def test_reuse_keeps_runs_whose_folders_are_gone_and_adds_new_seeds(tmp_path):
    """A table grows by the seeds trained on this machine: runs the patterns name but whose folders are gone keep
    their rows (and so their place in the seed mean); a seed trained here is scored; a gap the file cannot fill is an
    error."""
    data = save_split(tmp_path, make_split())
    for s in (0, 1):
        save_ckpt(tmp_path, tiny('alibi', seed=s), f'alibi-s{s}')
    t5 = save_ckpt(tmp_path, tiny('t5'), 't5-s0')
    pats = [str(tmp_path / 't5-s0'), str(tmp_path / 'alibi-s*')]  # t5 first: the table follows ckpt's order
    base = cfg(data_dir=data, lengths=[1, 2], n=4, out_dir=str(tmp_path / 'r'))
    first = ex.main(dict(base, ckpt=pats, name='one'))
    json1 = str(tmp_path / 'r' / 'one.json')
    for folder in ('alibi-s0', 't5-s0'):
        shutil.rmtree(tmp_path / folder)
    save_ckpt(tmp_path, tiny('alibi', seed=2), 'alibi-s2')
    grown = ex.main(dict(base, ckpt=pats, reuse=json1, name='two'))
    by = lambda res: {(r['ckpt'], r['variant'], r['mult']): r for r in res['results']}
    old, new = by(first), by(grown)
    assert set(new) == set(old) | {('alibi-s2', 'vanilla', m) for m in (1, 2)}
    assert all(new[k]['loss'] == old[k]['loss'] and new[k]['reused_from'] == json1 for k in old)
    assert new[('alibi-s2', 'vanilla', 2)].get('reused_from') is None  # scored here
    want = np.mean([new[(f'alibi-s{s}', 'vanilla', 2)]['ppl'] for s in range(3)])
    g = next(g for g in grown['groups'] if g['group'] == 'alibi' and g['mult'] == 2)
    assert g['runs'] == ['alibi-s0', 'alibi-s1', 'alibi-s2'] and g['n'] == 3 and g['ppl_mean'] == pytest.approx(want)
    assert [g['group'] for g in grown['groups']][::2] == ['t5', 'alibi']
    md = (tmp_path / 'r' / 'two.md').read_text()
    assert md.index('| t5-s0 |') < md.index('| alibi |')
    # no checkpoint left at all: the same table from the file alone
    for s in (1, 2):
        shutil.rmtree(tmp_path / f'alibi-s{s}')
    again = ex.main(dict(base, ckpt=pats, reuse=str(tmp_path / 'r' / 'two.json'), name='three'))
    assert again['groups'] == grown['groups']
    with pytest.raises(ConfigError, match='has no windowed@L_tr row at 1x for t5-s0'):
        ex.main(dict(base, windowed=True, ckpt=pats, reuse=json1))
    # a folder neither here nor in the file is still an error, and a path that exists is loaded, not kept
    with pytest.raises(FileNotFoundError, match='no checkpoint'):
        ex.main(dict(base, ckpt=[str(tmp_path / 'rope-s0')], reuse=json1))
    save_ckpt(tmp_path, tiny('t5', seed=5), 't5-s0')
    redo = ex.main(dict(base, ckpt=[t5], reuse=json1, name='four'))['results']
    assert [r.get('reused_from') for r in redo] == [json1, json1]  # same name and iteration: reused from the file


def test_progress_of_a_run_resumed_part_way_counts_its_rate_from_this_runs_items(monkeypatch, capsys):
    """Progress(start=40): 40 of 100 inputs were scored by an earlier run. On a fake clock, 10 more in 12 s is a rate
    of 10 / 12 = 0.83 per second (not 50 / 12) and the 50 left take 50 / (10 / 12) = 60 s; 20 more by 24 s: 30 / 24 =
    1.25 per second, 30 left in 24 s. No line before PROGRESS_SECONDS (10 s), none for the last item."""
    now = [0.0]
    monkeypatch.setattr(progress, 'time', SimpleNamespace(perf_counter=lambda: now[0]))
    shown = progress.Progress('rope L_ex=64', 100, 'inputs', start=40)
    for t, k in ((5.0, 5), (12.0, 5), (24.0, 20), (30.0, 30)):
        now[0] = t
        shown.done(k)
    assert capsys.readouterr().err.splitlines() == ['  rope L_ex=64: 50/100 inputs, 0.83/s, about 60 s left',
                                                    '  rope L_ex=64: 70/100 inputs, 1.25/s, about 24 s left']


def test_previous_names_a_missing_file_and_takes_rows_of_the_same_iteration(tmp_path, capsys):
    """resume.Previous on a file written here: a missing file is named in the error; a row is taken where its
    training iteration matches, or where it has none (a file older than the field), and taking it is said; a setting
    the old file lacks is filled from the defaults before the comparison."""
    missing = str(tmp_path / 'gone.json')
    with pytest.raises(ConfigError, match=re.escape(f"reuse={missing!r} does not exist")):
        resume.Previous(missing, key=lambda r: r['ckpt'])
    path = tmp_path / 'old.json'
    path.write_text(json.dumps(dict(settings=dict(split='val'),
                                    results=[dict(ckpt='a', iters=5, loss=1.0), dict(ckpt='b', loss=2.0)])))
    prev = resume.Previous(str(path), key=lambda r: r['ckpt'])
    assert prev.take('a', iters=5, what='row a')['loss'] == 1.0
    assert capsys.readouterr().out == f"row a: taken from {path}\n"
    assert prev.take('a', iters=6) is None and prev.take('c', iters=5) is None
    assert prev.take('b', iters=6)['loss'] == 2.0
    prev.check_settings(dict(split='val', tokens=100), defaults=dict(tokens=100))
    with pytest.raises(ConfigError, match='was made with settings'):
        prev.check_settings(dict(split='val', tokens=200), defaults=dict(tokens=100))


def test_absent_runs_strip_the_extension_label_and_always_load_a_pretrained_model(tmp_path, capsys):
    """A --rope_scaling run's rows are named <run><label> (alibi-s0+yarn4): the folder looked for is the run's own
    (alibi-s0). Gone, its rows are kept and a note names the folder; here, it is loaded. A pretrained name (smollm2)
    is loaded even when the file has its rows."""
    path = tmp_path / 'old.json'
    path.write_text(json.dumps(dict(results=[dict(ckpt='alibi-s0+yarn4'), dict(ckpt='smollm2+yarn4')])))
    prev = resume.Previous(str(path), key=lambda r: r['ckpt'])
    run = str(tmp_path / 'alibi-s0')
    assert prev.absent_runs([run], '+yarn4') == ([], ['alibi-s0+yarn4'])
    assert capsys.readouterr().out == f"note: {run} is not here: its rows are kept from {path}\n"
    os.makedirs(run)
    assert prev.absent_runs([run, 'smollm2'], '+yarn4') == ([run, 'smollm2'], [])


def test_throttled_saves_once_its_seconds_have_passed_since_the_last_save(monkeypatch):
    """On a fake clock, throttled(10, save) made at t = 0: calls at 5 and 15 save nothing, 10 (exactly 10 s on) and
    20 (10 s after the save at 10) save."""
    now, saved = [0.0], []
    monkeypatch.setattr(resume, 'time', SimpleNamespace(perf_counter=lambda: now[0]))
    f = resume.throttled(10, saved.append)
    for t in (5.0, 10.0, 15.0, 20.0):
        now[0] = t
        f(t)
    assert saved == [10.0, 20.0]
