"""analysis/ruler_page.py, the RULER page (#73, part 4): hand-made cells in analysis.ruler's JSON shape, a method
against the plain model sample by sample, its sign test worked out here from the binomial distribution by hand, the
perplexity beside each cell; and the committed SmolLM2 JSON read back, its averages equal to those analysis.ruler
wrote."""
import json
import math
import os

import pytest

import helpers
from analysis import ruler_page as rpg
from lexgpt.config import ConfigError
from tools import steps_tasks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PLAIN = {('niah_single_1', 0.5): [1, 1, 0, 0, 1, 0], ('vt', 0.5): [0.2, 0.0, 0.4, 0.0, 1.0, 0.0],
         ('niah_single_1', 1.0): [1, 0, 0, 0, 0, 0], ('vt', 1.0): [0.0] * 6}
YARN = {('niah_single_1', 0.5): [1, 1, 1, 1, 1, 0], ('vt', 0.5): [0.2, 0.6, 0.4, 0.0, 0.8, 0.0],
        ('niah_single_1', 1.0): [1, 1, 1, 1, 0, 1]}  # vt at 1 L_tr: not run yet


def cell(ckpt, task, mult, scores, variant='vanilla', cpu=None, **more):
    samples = [dict(index=i, score=s, pred='x', outputs=['x'], **({} if cpu is None else dict(cpu_seconds=cpu[i])))
               for i, s in enumerate(scores)]
    return dict(ckpt=ckpt, group=ckpt, variant=variant, task=task, mult=mult, L_tr=8192, L_ex=int(8192 * mult),
                n=len(scores), score=100 * sum(scores) / len(scores), ci95=[0.0, 100.0], samples=samples, **more)


def write(path, rows):
    path.write_text(json.dumps(dict(command='python -m analysis.ruler', results=rows)))
    return str(path)


def sign_p(wins, losses):
    """Two-sided exact sign test by hand: twice the smaller tail of Binomial(wins + losses, 1/2), at most 1."""
    n = wins + losses
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2 ** n)


@pytest.fixture
def grid(tmp_path):
    plain = write(tmp_path / 'plain.json', [cell('m', t, x, s) for (t, x), s in PLAIN.items()])
    yarn = write(tmp_path / 'yarn.json', [cell('m+yarn2', t, x, s) for (t, x), s in YARN.items()]
                 + [cell('m+yarn2', 'vt', 1.0, [1.0] * 3, partial=True)])  # a cell still running: left out
    ppl = tmp_path / 'ppl.json'
    measured = [dict(ckpt='m', variant='vanilla', mult=0.5, ppl=3.5), dict(ckpt='m+yarn2', variant='vanilla',
                                                                         mult=1.0, ppl=3.9)]
    ppl.write_text(json.dumps(dict(command='python extrapolate.py', protocol='last_token',
                                   settings=dict(n=4, last_k=128), results=measured)))
    return tmp_path, [plain, yarn, str(tmp_path / 'pi.json')], str(ppl)


def test_each_method_against_plain_by_hand(grid, capsys):
    tmp, inputs, ppl = grid
    rows = rpg.main(dict(rpg.DEFAULTS, inputs=inputs, ppl=[ppl], out_dir=str(tmp / 'out')))
    by = {(r['ckpt'], r['mult']): r for r in rows}
    assert set(by) == {('m', 0.5), ('m', 1.0), ('m+yarn2', 0.5), ('m+yarn2', 1.0)}
    # at 0.5 L_tr: niah diffs 0,0,1,1,0,0 and vt 0,.6,0,0,-.2,0 -> 3 better, 1 worse of 12 pairs
    half = by['m+yarn2', 0.5]['vs_plain']
    assert (half['wins'], half['losses'], half['pairs']) == (3, 1, 12)
    assert half['diff'] == pytest.approx(100 * (2 + 0.6 - 0.2) / 12) and half['p'] == pytest.approx(sign_p(3, 1))
    one = by['m+yarn2', 1.0]  # vt not finished: niah alone, both in the test and in the average
    assert (one['vs_plain']['wins'], one['vs_plain']['losses'], one['vs_plain']['pairs']) == (4, 0, 6)
    assert one['vs_plain']['p'] == pytest.approx(sign_p(4, 0)) == pytest.approx(0.125)
    assert one['scores'] == {'niah_single_1': pytest.approx(500 / 6)} and not one['complete']
    assert by['m', 1.0]['vs_plain'] is None and by['m', 1.0]['complete']
    assert by['m', 0.5]['average'] == pytest.approx((50 + 100 * 1.6 / 6) / 2)
    assert (by['m', 0.5]['ppl'], by['m+yarn2', 1.0]['ppl'], by['m', 1.0]['ppl']) == (3.5, 3.9, None)
    md = (tmp / 'out' / 'ruler.md').read_text()
    niah, vt = 100 * 5 / 6, 100 * 2.0 / 6
    assert f"| m+yarn2 | 0.5 (4,096) | {niah:.1f} (6) | {vt:.1f} (6) | {(niah + vt) / 2:.1f} (2) | " \
           f"+{100 * 2.4 / 12:.1f} (+3/-1 of 12, p {sign_p(3, 1):.2g}) | n/a |" in md
    assert f"- not begun: {tmp / 'pi.json'}\n" in md and md in capsys.readouterr().out
    assert f'perplexity: {ppl} (last_token protocol, the last 128 token(s) of 4 segments)' in md
    saved = json.loads((tmp / 'out' / 'ruler.json').read_text())
    assert saved['sources']['missing'] == [str(tmp / 'pi.json')] and len(saved['results']) == 4
    assert saved['settings']['bos'] == {inputs[0]: None, inputs[1]: None}  # each input's own (none recorded here)


def test_the_figure_draws_only_averages_over_every_task(grid, monkeypatch):
    tmp, inputs, ppl = grid
    figures = helpers.figures_written(monkeypatch, rpg)
    rpg.main(dict(rpg.DEFAULTS, inputs=inputs, ppl=[ppl], out_dir=str(tmp / 'out')))
    score_ax, ppl_ax = figures[0].axes
    lines = {line.get_label(): line for line in score_ax.get_lines() if not line.get_label().startswith('_')}
    assert list(lines['m'].get_xdata()) == [0.5, 1.0] and list(lines['m+yarn2'].get_xdata()) == [0.5]
    assert list(ppl_ax.get_lines()[0].get_ydata()) == [3.5]


def test_the_first_file_wins_and_a_later_ppl_file_is_named(grid):
    tmp, inputs, ppl = grid
    again = write(tmp / 'again.json', [cell('m', 'niah_single_1', 0.5, [0] * 6)])  # the same cell, other scores
    other = tmp / 'one_input.json'
    other.write_text(json.dumps(dict(protocol='last_token', settings=dict(n=1, last_k=128),
                                     results=[dict(ckpt='m', variant='vanilla', mult=1.0, ppl=3.6)])))
    rows = rpg.main(dict(rpg.DEFAULTS, inputs=inputs + [again], ppl=[ppl, str(other)], out_dir=str(tmp / 'out')))
    plain = {r['mult']: r for r in rows if r['ckpt'] == 'm'}
    assert plain[0.5]['scores']['niah_single_1'] == 50.0 and plain[1.0]['ppl'] == 3.6
    assert f'- m: perplexity from {other} (last_token protocol, the last 128 token(s) of 1 segments)' in (
        tmp / 'out' / 'ruler.md').read_text()


def test_the_committed_smollm2_cells_average_as_analysis_ruler_wrote():
    path = os.path.join(ROOT, 'results', 'ruler', 'smollm2_plain.json')
    data = json.load(open(path))
    cells, bos = rpg.read_cells(rpg.read_files([path])[0])
    rows = rpg.page_rows(cells, {})
    assert bos == {path: data['settings']['bos']}
    written = {a['mult']: a['score'] for a in data['averages'] if a['tasks'] == 4}
    assert written and {r['mult']: r['average'] for r in rows if r['complete']} == pytest.approx(written)


def test_the_cost_counts_every_sample_run_so_far(tmp_path):
    """Cells still running count, every method of a model together; a sample without its CPU time is not
    counted."""
    rows = [cell('m', 'vt', 0.5, [1, 0], cpu=[10.0, 30.0]), cell('m+yarn2', 'vt', 0.5, [1], cpu=[50.0], partial=True),
            cell('m', 'niah_single_1', 1.0, [0], cpu=[7200.0]), cell('g', 'vt', 1.0, [0, 0])]
    rpg.main(dict(rpg.DEFAULTS, inputs=[write(tmp_path / 'a.json', rows)], out_dir=str(tmp_path / 'out')))
    saved = json.loads((tmp_path / 'out' / 'ruler.json').read_text())['costs']
    assert saved == [dict(model='m', mult=0.5, L_ex=4096, samples=3, cpu_hours=pytest.approx(90 / 3600),
                          cpu_seconds_per_sample=pytest.approx(30.0)),
                     dict(model='m', mult=1.0, L_ex=8192, samples=1, cpu_hours=pytest.approx(2.0),
                          cpu_seconds_per_sample=pytest.approx(7200.0))]
    md = (tmp_path / 'out' / 'ruler.md').read_text()
    assert '| m | 0.5 (4,096) | 3 | 0.0 | 30.0 |' in md and 'In all 4 samples, 2.0 CPU-hours.' in md


def test_the_committed_cost_is_the_samples_own():
    path = os.path.join(ROOT, 'results', 'ruler', 'smollm2_plain.json')
    data = json.load(open(path))
    by_hand = {}
    for r in data['results']:
        by_hand.setdefault(r['mult'], []).extend(s['cpu_seconds'] for s in r['samples'])
    got = {c['mult']: c for c in rpg.costs(rpg.read_files([path])[0])}
    assert set(got) == set(by_hand)
    for mult, cpu in by_hand.items():
        assert (got[mult]['samples'], got[mult]['cpu_hours']) == (len(cpu), pytest.approx(sum(cpu) / 3600))


@pytest.mark.parametrize('change, match', [
    (dict(inputs=[]), 'inputs is empty'),
    (dict(ppl=['/nowhere/ppl.json']), "ppl='/nowhere/ppl.json' cannot be read as JSON"),
    (dict(inputs=['PPL']), 'not the JSON expected here'),
])
def test_bad_inputs_are_one_line(grid, change, match):
    tmp, inputs, ppl = grid
    cfg = dict(rpg.DEFAULTS, inputs=inputs, ppl=[ppl], out_dir=str(tmp / 'out'))
    cfg.update({k: [ppl] if v == ['PPL'] else v for k, v in change.items()})
    with pytest.raises(ConfigError, match=match) as e:
        rpg.main(cfg)
    assert '\n' not in str(e.value)
    with pytest.raises(ConfigError, match='no finished cell'):
        rpg.main(dict(cfg, inputs=[str(tmp / 'pi.json')], ppl=[]))


def test_the_page_is_a_step_after_the_grid():
    commands = [s.command for s in steps_tasks.ruler()]
    at = next(i for i, c in enumerate(commands) if c.startswith('python -m analysis.ruler_page'))
    grid = [i for i, c in enumerate(commands) if c.startswith('python -m analysis.ruler ')]
    assert at > max(grid) and '--inputs=results/ruler/smollm2_plain.json,' in commands[at]


def test_only_the_methods_equal_to_plain_up_to_l_tr_run_past_it_only():
    """tests/test_ruler.py checks that dynamic NTK, LM-Infinite, a window of L_tr and a stream of W = L_tr with sinks
    answer as the plain model up to L_tr; the steps that run at 2 L_tr only are those, with those settings (SmolLM2's
    L_tr is 8,192), and every other method runs at every length."""
    grid = [s.command for s in steps_tasks.ruler()
            if s.command.startswith('python -m analysis.ruler ') and '--template=' not in s.command]
    past = [c for c in grid if ' --lengths=2 ' in c]
    assert all(' --lengths=0.25,0.5,1,2 ' in c for c in grid if c not in past)
    covered = ('--rope_scaling=dynamic', '--lm_infinite=True', '--windowed=True', '--cache_window=8192 --n_starting=4')
    for c in past:
        assert sum(opt in c for opt in covered) == 1 and '--windowed_at' not in c, c
        assert ('--ckpt=smollm2' in c) or ('--ckpt=gemma3' in c and '--lm_infinite=True' in c), c
    assert len(past) == 2 * len(steps_tasks.PAST_ONLY)
