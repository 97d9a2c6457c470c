"""analysis/recall_page.py, the recall page (#72, part 3): a probe JSON that analysis.recall's main wrote for two seeds
of a tiny ALiBi (plain and windowed), its losses replaced by designed ones (text recalls past L_tr in one seed, random
only up to d = 8), beside perplexity and ERF JSONs in the shapes of results/ppl/ppl_last_token.json and
results/erf/erf.json; every cell of both tables against values worked out here with scipy alone."""
import json
import math
import re
import numpy as np
import pytest
import torch
from scipy import stats

import helpers
from analysis import recall as rc, recall_page as rp
from lexgpt.config import ConfigError, parse_config
from tools import steps_tasks

L_TR, S, N = 16, 4, 6
DISTANCES = [4, 8, 12, 16, 20, 28]  # at 2 L_tr two past L_tr
NOISE = 0.01 * np.array([1.0, -1.0, 2.0, -2.0, 0.5, -0.5])  # per span: sd > 0, mean 0


def designed(variant, kind, seed, d):
    """b_i of span i: text decays as 2/d, past L_tr it stays in seed 0 alone; random (and every windowed row) only up
    to d = 8, then a trace in seed 1 alone (0.004 in the seeds' mean)."""
    if variant == 'vanilla' and kind == 'text':
        return (2.0 / d if d <= L_TR or seed == 0 else 0.0) + NOISE
    return (0.2 if d <= 8 else 0.008 * seed) + NOISE


@pytest.fixture(scope='module')
def files(tmp_path_factory):
    """(folder, the probe JSON's path, its data): analysis.recall's main over alibi-s0 and -s1 at 1 and 2 L_tr,
    vanilla and windowed, then the designed losses written into its cells (each cell's statistics redone by the
    probe's own summary, so the JSON reads as a run that measured them), the ppl and ERF JSONs beside it."""
    tmp = tmp_path_factory.mktemp('page')
    for seed in (0, 1):
        helpers.save_ckpt(tmp / 'lm', helpers.tiny('alibi', seed=seed, strong=True), f'alibi-s{seed}')
    (tmp / 'data').mkdir()
    data_dir = helpers.save_split(tmp / 'data', helpers.make_split((300, 40, 500, 10, 260, 900)))
    pattern = str(tmp / 'lm' / 'alibi-s[0-9]*')
    torch.manual_seed(0)
    rc.main(dict(rc.DEFAULTS, ckpt=[pattern], data_dir=data_dir, lengths=[1.0, 2.0], n=N, span=S, skip=1,
                 distances=DISTANCES, windowed=True, out_dir=str(tmp / 'recall'), name='tiny_alibi'))
    path = tmp / 'recall' / 'tiny_alibi.json'
    data = json.loads(path.read_text())
    data['command'] = f'python -m analysis.recall --ckpt={pattern} --lengths=1,2 --n={N} --span={S} --windowed=True'
    for row in data['results']:
        seed, row['iters'] = int(row['ckpt'][-1]), 3200  # as train.py's runs: the iteration the checkpoint is from
        for c in row['cells']:
            rep = 1.0 + 0.1 * np.arange(N)
            pairs = np.stack([rep, rep + designed(row['variant'], c['kind'], seed, c['d'])], 1).tolist()
            c.update(rc.summary(pairs, data['settings']['min_benefit']))
    path.write_text(json.dumps(data))
    ppl = lambda ckpt, variant, mult, p, **kw: dict(ckpt=ckpt, group=ckpt[:-3], pe='alibi', L_tr=L_TR, variant=variant,
                                                    mult=mult, L_ex=int(mult * L_TR), ppl=p, n_scored=256, **kw)
    rows = [ppl('alibi-s0', 'vanilla', 1.0, 10.0), ppl('alibi-s0', 'vanilla', 2.0, 12.0),
            ppl('alibi-s1', 'vanilla', 1.0, 10.0), ppl('alibi-s1', 'vanilla', 2.0, 10.5),
            ppl('alibi-s0', 'windowed@L_tr', 1.0, 10.0), ppl('alibi-s0', 'windowed@L_tr', 2.0, 10.2),
            ppl('rope-s0', 'vanilla', 1.0, 8.0), ppl('rope-s0', 'vanilla', 2.0, 24.0),
            dict(ppl('rope-s1', 'vanilla', 1.0, None), losses_so_far=[1.0])]  # a row under way: left out
    (tmp / 'ppl.json').write_text(json.dumps(dict(command='python extrapolate.py', protocol='last_token',
                                                  lengths=[1.0, 2.0], results=rows)))
    erf = lambda ckpt, over, share: dict(ckpt=ckpt, pe='alibi', L_tr=L_TR, L_ex=4 * L_TR, variant='vanilla',
                                         segments=dict(n_drawn=10), erf=int(over * L_TR), erf_over_L_tr=over,
                                         share_last_L_tr=share)
    (tmp / 'erf.json').write_text(json.dumps(dict(command='python -m analysis.receptive_field', split='hand:test',
                                                  results=[erf('alibi-s0', 0.5, 0.9), erf('alibi-s1', 0.75, 0.8)])))
    return tmp, data


def page(tmp, **kw):
    cfg = parse_config(rp.DEFAULTS, [f"--inputs={tmp / 'recall' / 'tiny_*.json'}", f"--erf={tmp / 'erf.json'}",
                                     f"--ppl={tmp / 'ppl.json'}", '--ppl_at=2', f"--out_dir={tmp / 'out'}"])
    rp.main(dict(cfg, **kw))
    md = (tmp / 'out' / 'recall.md').read_text()
    tables = [[[x.strip() for x in line.strip('|').split('|')] for line in block.splitlines() if line.startswith('|')]
              for block in md.split('\n\n') if block.startswith('|')]
    return [{(r[0], r[1], *([r[2]] if t[0][2] == 'kind' else [])): dict(zip(t[0], r)) for r in t[2:]}
            for t in tables]


def by_hand(variant, kind, mult, floor):
    """(horizon, share, each seed's horizon, (d, p) at the largest d > L_tr, seeds, {d: p}) from the designed b alone:
    the seeds' mean per span, a t-interval over the N spans, significant where its lower end lies above the floor."""
    L = int(mult * L_TR)
    ds = rc.distance_grid(L, L_TR, S, asked=DISTANCES)
    seeds = (0, 1)
    half = lambda b: stats.t.ppf(0.975, N - 1) * stats.sem(b)
    sig = lambda b: b.mean() - half(b) > floor
    mean_b = {d: np.mean([designed(variant, kind, s, d) for s in seeds], 0) for d in ds}
    horizon = max([d for d in ds if sig(mean_b[d])], default=0)
    far = [d for d in ds if d > L_TR]
    share = np.mean([mean_b[d].mean() for d in far]) / mean_b[ds[0]].mean() if far and sig(mean_b[ds[0]]) else None
    own = [max([d for d in ds if sig(designed(variant, kind, s, d))], default=0) for s in seeds]
    p_at = {d: stats.ttest_1samp(b, floor, alternative='greater').pvalue for d, b in mean_b.items()}
    return horizon, share, own, (far[-1] if far else None, p_at.get(far[-1]) if far else None), len(seeds), p_at


def test_the_tables_cells_by_hand(files):
    tmp, data = files
    summary, verdicts, _ = page(tmp)
    floor = data['settings']['min_benefit']
    n_layer = helpers.tiny('alibi').config.n_layer
    for variant in ('vanilla', 'windowed@L_tr'):
        row = summary['alibi', variant]
        for kind in ('text', 'random'):
            for mult in (1.0, 2.0):
                h, share, own, _, seeds, _ = by_hand(variant, kind, mult, floor)
                spread = f' [{min(own)}–{max(own)}]' if len(set(own)) > 1 else ''
                shown = '—' if share is None else f'{share:.2f}'
                assert row[f'{kind} {mult:g}x'] == f'{h}{spread} / {shown} ({N}×{seeds})', (variant, kind, mult)
    vanilla, windowed = summary['alibi', 'vanilla'], summary['alibi', 'windowed@L_tr']
    assert vanilla['text 2x'].startswith('28 [16–28] / ') and windowed['random 2x'].startswith('8 / ')
    assert vanilla['ppl 2x / 1x (tokens×seeds)'] == f'{(12 / 10 + 10.5 / 10) / 2:.3f} (256×2)'
    assert windowed['ppl 2x / 1x (tokens×seeds)'] == '1.020 (256×1)'
    assert vanilla['ERF / L_tr (segments×seeds)'] == f'{(0.5 + 0.75) / 2:.2f} @4x (10×2)'
    assert vanilla['grad. on last L_tr'] == '0.850'
    assert windowed['ERF / L_tr (segments×seeds)'] == '' and windowed['grad. on last L_tr'] == ''  # no ERF row
    assert vanilla['reach (tokens)'] == 'inf' and windowed['reach (tokens)'] == str(n_layer * L_TR)
    rope = summary['rope', 'vanilla']  # perplexity measured, the probe not run yet: empty recall cells
    assert rope['text 2x'] == rope['random 1x'] == rope['reach (tokens)'] == ''
    assert rope['ppl 2x / 1x (tokens×seeds)'] == '3.000 (256×1)'
    for (model, variant, kind), v in verdicts.items():
        if model == 'rope':
            continue
        h, _, _, (d, p), seeds, p_at = by_hand(variant, kind, 2.0, floor)
        assert (v['L_ex'], v['horizon'], v['largest d > L_tr'], v['n (spans×seeds)']) == ('2x', str(h), str(d),
                                                                                           f'{N}×{seeds}')
        assert float(v['p']) == pytest.approx(p, rel=0.06)  # shown to 2 digits
        assert float(v['p there']) == pytest.approx(p_at[h], rel=0.06)
    ok = lambda v: (v['flat (<= 1.1)'], v['recall past L_tr'], v['verdict'])
    assert ok(verdicts['alibi', 'vanilla', 'text']) == ('no', 'yes', 'recall past L_tr, ppl rises')
    assert ok(verdicts['alibi', 'vanilla', 'random']) == ('no', 'no', 'neither')
    assert ok(verdicts['alibi', 'windowed@L_tr', 'text']) == ('yes', 'no', 'flat, no recall past L_tr')


def test_the_seed_as_the_unit_by_hand(files):
    """The third table: at each d each seed's mean benefit over the spans, a t-test over the two seeds (scipy's, or
    where both seeds agree exactly the mean against the floor); text recalls past L_tr in seed 0 alone, so over seeds
    it does not, and the verdict differs from the spans'."""
    tmp, data = files
    *_, seeds = page(tmp)
    floor = data['settings']['min_benefit']
    ds = rc.distance_grid(2 * L_TR, L_TR, S, asked=DISTANCES)
    for variant, kind in [('vanilla', 'text'), ('vanilla', 'random'), ('windowed@L_tr', 'text')]:
        b = {d: np.array([designed(variant, kind, s, d).mean() for s in (0, 1)]) for d in ds}
        p = {d: stats.ttest_1samp(x, floor, alternative='greater').pvalue if x[0] != x[1] else float(x[0] <= floor)
             for d, x in b.items()}
        half = {d: stats.t.ppf(0.975, 1) * stats.sem(x) for d, x in b.items()}
        horizon = max(d for d in ds if b[d].mean() - half[d] > floor)
        row = seeds['alibi', variant, kind]
        assert (row['seeds'], row['L_ex'], row['horizon (seeds)'], row['largest d > L_tr']) == (
            '2', '2x', str(horizon), str(ds[-1]))
        assert float(row['benefit there (seed mean)']) == pytest.approx(b[ds[-1]].mean(), abs=6e-5)
        assert float(row['p (over seeds)']) == pytest.approx(p[ds[-1]], rel=0.06)
    text = seeds['alibi', 'vanilla', 'text']
    assert text['horizon (seeds)'] == '16' and text['verdict (seeds)'] == 'neither'  # the spans': recall past L_tr
    assert text["same as the spans'"] == 'no' and seeds['alibi', 'vanilla', 'random']["same as the spans'"] == 'yes'
    assert seeds['alibi', 'windowed@L_tr', 'text']['verdict (seeds)'] == 'flat, no recall past L_tr'
    assert text["each seed's ppl 2x / 1x"] == '1.200, 1.050' and text['flat seeds'] == '1 of 2'  # alibi-s0, -s1
    assert ('rope', 'vanilla', 'text') not in seeds  # not probed: no line


def test_the_json_and_figure(files, monkeypatch):
    tmp, data = files
    figures = helpers.figures_written(monkeypatch, rp)
    page(tmp)
    out = json.loads((tmp / 'out' / 'recall.json').read_text())
    assert out['command'].startswith('python') and 'partial' not in out and out['sources']['ppl'] == [
        str(tmp / 'ppl.json')]
    assert out['sources']['inputs'] == [str(tmp / 'recall' / 'tiny_alibi.json')]  # the glob, expanded here
    row = out['results'][0]
    assert (row['group'], row['variant'], row['runs']) == ('alibi', 'vanilla', ['alibi-s0', 'alibi-s1'])
    assert row['recall']['text@2']['seed_horizons'] == [28, 16] and row['reach'] == 'inf'
    assert row['recall']['text@2']['runs'] == ['alibi-s0', 'alibi-s1'] and row['iters'] == 3200
    assert row['ppl']['curve'] == {'1.0': 10.0, '2.0': 11.25}  # alibi's own rows: (12 + 10.5) / 2 at 2x
    assert out['rule']['flat'] == 'ppl(2 L_tr) / ppl(L_tr) <= 1.1'  # the verdict's rule, beside the verdicts
    rope = next(r for r in out['results'] if r['group'] == 'rope')  # measured in perplexity, not probed yet
    assert (rope['L_tr'], rope['iters'], rope['ppl']['curve']) == (L_TR, None, {'1.0': 8.0, '2.0': 24.0})
    assert (tmp / 'out' / 'recall.png').stat().st_size > 0
    # the figure: per probed row, benefit against d (a line per kind and L_ex, L_tr dotted), its ppl beside it
    ax, side = figures[0].axes[:2]
    lines = {line.get_label(): line for line in ax.get_lines()}
    cells = row['recall']['text@2']['cells']
    assert list(lines['text 2x'].get_xdata()) == [c['d'] for c in cells]
    assert np.allclose(lines['text 2x'].get_ydata(), [c['benefit'] for c in cells])
    assert lines['random 1x'].get_linestyle() == '--' and lines['text 1x'].get_linestyle() == '-'
    assert any(list(line.get_xdata()) == [L_TR, L_TR] and line.get_linestyle() == ':' for line in ax.get_lines())
    (curve,) = [line for line in side.get_lines() if len(line.get_xdata()) == 2 and line.get_marker() == '.']
    assert list(curve.get_ydata()) == [1.0, 1.125] and side.get_xlabel() == 'L_ex / L_tr'  # 10 and 11.25, over 1x's
    assert any(list(line.get_ydata()) == [rp.PPL_FLAT] * 2 for line in side.get_lines())  # the flat rule's line
    assert side.get_ylim()[0] <= 0.9 and side.get_ylim()[1] >= rp.PPL_FLAT  # a flat curve is drawn flat


def test_a_partial_input_makes_a_partial_page(files, tmp_path):
    tmp, data = files
    (tmp_path / 'recall').mkdir()
    part = dict(data, partial=True)
    part['results'] = [dict(r, cells=[dict(c, benefit=None) if c['mult'] == 2.0 and r['ckpt'] == 'alibi-s1' else c
                                      for c in r['cells']]) for r in data['results']]
    (tmp_path / 'recall' / 'tiny_alibi.json').write_text(json.dumps(part))
    summary, *_ = page(tmp_path, erf=[], ppl=[])
    # seed 1 has no cell at 2 L_tr yet: that row is seed 0's alone, the 1x row still both seeds'
    assert summary['alibi', 'vanilla']['text 2x'].endswith(f'({N}×1)')
    assert summary['alibi', 'vanilla']['text 1x'].endswith(f'({N}×2)')
    assert summary['alibi', 'vanilla']['ppl 2x / 1x (tokens×seeds)'] == ''
    assert json.loads((tmp_path / 'out' / 'recall.json').read_text())['partial'] is True


def test_a_later_ppl_file_fills_in_and_is_named(files, tmp_path):
    """A second --ppl file (another protocol's table) gives a model the first lacks its ratio, and the page names
    that file beside it; where both hold a row, the first file's stays."""
    tmp, _ = files
    row = lambda ckpt, mult, p: dict(ckpt=ckpt, group=ckpt[:-3], pe='fire', L_tr=L_TR, variant='vanilla', mult=mult,
                                     L_ex=int(mult * L_TR), ppl=p, n_scored=1000)
    other = tmp_path / 'thesis_ppl.json'
    rows = [row('fire-s0', 1.0, 5.0), row('fire-s0', 2.0, 6.0), row('alibi-s0', 1.0, 1.0), row('alibi-s0', 2.0, 9.0)]
    other.write_text(json.dumps(dict(command='python extrapolate.py', protocol='last_token',
                                     settings=dict(n=1000, last_k=1), results=rows)))
    summary, *_ = page(tmp, ppl=[str(tmp / 'ppl.json'), str(other)])
    assert summary['fire', 'vanilla']['ppl 2x / 1x (tokens×seeds)'] == '1.200 (1000×1)'
    assert summary['alibi', 'vanilla']['ppl 2x / 1x (tokens×seeds)'] == f'{(12 / 10 + 10.5 / 10) / 2:.3f} (256×2)'
    notes = [line for line in (tmp / 'out' / 'recall.md').read_text().splitlines() if 'perplexity from' in line]
    assert notes == [f'- fire (vanilla): perplexity from {other} (last_token protocol, the last 1 token(s) of 1000 '
                     'segments)']
    same = tmp_path / 'same.json'  # the first file's settings: no line
    same.write_text(json.dumps(dict(json.loads(other.read_text()), settings=None)))
    page(tmp, ppl=[str(tmp / 'ppl.json'), str(same)])
    assert 'perplexity from' not in (tmp / 'out' / 'recall.md').read_text()


def test_a_longer_trained_run_gets_its_own_row_perplexity_and_no_shorter_runs_erf(files, tmp_path):
    """The same runs probed again after 4x the training (the longer-training rows: same names, iters 12,800) make rows
    of their own, named by their iterations; their perplexity is the rows recording 12,800, and the ERF and the
    perplexity rows that record none (older JSONs: the tables' 3,200) stay with the 3,200-iteration row."""
    tmp, data = files
    (tmp_path / 'recall').mkdir()
    (tmp_path / 'recall' / 'tiny_alibi.json').write_text(json.dumps(data))
    long = dict(data, results=[dict(r, iters=12800) for r in data['results']])
    (tmp_path / 'recall' / 'tiny_long_alibi.json').write_text(json.dumps(long))
    row = lambda ckpt, mult, p: dict(ckpt=ckpt, group='alibi', pe='alibi', L_tr=L_TR, variant='vanilla', mult=mult,
                                     L_ex=int(mult * L_TR), ppl=p, n_scored=256, iters=12800)
    ppl_long = tmp_path / 'ppl_long.json'
    ppl_long.write_text(json.dumps(dict(command='python extrapolate.py', protocol='last_token', results=[
        row('alibi-s0', 1.0, 4.0), row('alibi-s0', 2.0, 6.0), row('alibi-s1', 1.0, 4.0), row('alibi-s1', 2.0, 5.0)])))
    cfg = parse_config(rp.DEFAULTS, [f"--inputs={tmp_path / 'recall' / 'tiny_*.json'}", f"--erf={tmp / 'erf.json'}",
                                     f"--ppl={tmp / 'ppl.json'},{ppl_long}", '--ppl_at=2', f"--out_dir={tmp_path}"])
    rows = rp.main(cfg)
    md = (tmp_path / 'recall.md').read_text()
    short, longer = [next(r for r in rows if r['group'] == 'alibi' and r['variant'] == 'vanilla' and r['iters'] == i)
                     for i in (3200, 12800)]
    assert short['ppl']['ratio'] == pytest.approx((12 / 10 + 10.5 / 10) / 2) and short['erf'] is not None
    assert longer['ppl']['ratio'] == pytest.approx((6 / 4 + 5 / 4) / 2) and longer['erf'] is None
    assert '| alibi (12800 it) | vanilla |' in md and '| alibi (3200 it) | vanilla | text |' in md


@pytest.mark.parametrize('change, match', [
    (dict(ppl=['/nowhere/ppl.json']), "ppl='/nowhere/ppl.json' cannot be read as JSON"),
    (dict(inputs=['/nowhere/tiny_*.json']), r"inputs='/nowhere/tiny_\*.json': no file matches"),
    (dict(erf=['/nowhere/erf_*.json']), r"erf='/nowhere/erf_\*.json': no file matches"),
    (dict(erf=['PROBE']), 'not the JSON expected here'),
    (dict(inputs=[]), 'inputs is empty'),
    (dict(ppl_at=1.0), 'ppl_at=1'),
])
def test_bad_inputs_are_one_line(files, change, match):
    tmp, _ = files
    change = {k: [str(tmp / 'recall' / 'tiny_alibi.json')] if v == ['PROBE'] else v for k, v in change.items()}
    with pytest.raises(ConfigError, match=match) as e:
        page(tmp, **change)
    assert '\n' not in str(e.value)


def test_the_rule_in_one_place():
    assert rp.chapter4(1.1, 17, 16)[:2] == (True, True) and rp.chapter4(1.1001, 16, 16)[:2] == (False, False)
    assert rp.chapter4(None, 32, 16) == (None, True, '') and rp.variant_window('stream(S=4,W=2048)', 256) == 2048
    assert rp.variant_window('LM-Inf(n_start=10)', 256) == 256 and rp.variant_window('vanilla', 256) is None
    assert rp.variant_window('windowed@512', 256) == 512 and rp.reach(dict(  # no checkpoint here: not known
        command='python -m analysis.recall --ckpt=nowhere/alibi-s0', runs=[dict(ckpt='alibi-s0')], variant='vanilla',
        L_tr=16)) is None


def test_the_reach_from_the_windows_a_probe_recorded():
    """Without the checkpoint: each layer passes information at most its window back (its own or the variant's, the
    smaller), so the reach is their sum; a layer with neither lets it through from anywhere."""
    def reach(windows, variant):
        return rp.reach(dict(command='python -m analysis.recall --ckpt=nowhere/x-s0', variant=variant, L_tr=16,
                             runs=[dict(ckpt='x-s0', windows=windows)]))
    assert reach([0, 0, 0], 'vanilla') == math.inf and reach([0, 0, 0], 'windowed@L_tr') == 3 * 16
    assert reach([8, 0], 'vanilla') == math.inf and reach([8, 0], 'windowed@L_tr') == 8 + 16
    assert reach([8, 32], 'windowed@L_tr') == 8 + 16 and reach([8, 32], 'stream(S=4,W=4)') == 4 + 4


def test_the_page_is_a_step_after_the_tiny_probes():
    """The step comes after every tiny probe and before the pretrained ones (it does not wait for them), its glob
    literal: tools/results runs a command without a shell, and the page expands it itself."""
    commands = [s.command for s in steps_tasks.recall()]
    at = next(i for i, c in enumerate(commands) if c.startswith('python -m analysis.recall_page'))
    tiny = [i for i, c in enumerate(commands) if '--name=tiny_' in c]
    assert at == max(tiny) + 1 and '--inputs=results/recall/tiny_*.json' in commands[at]
    assert steps_tasks.recall()[at].outputs == ('results/recall/recall.json',)


def test_the_pretrained_methods_equal_to_plain_up_to_l_tr_are_probed_past_it_only():
    """As RULER's (tests/test_ruler_page.py): the steps probing at 2 L_tr only are tools/steps_tasks.PAST_ONLY's,
    with the settings tests/test_ruler.py shows to give the plain model's logits up to L_tr; the rest probe at every
    length."""
    pretrained = [s.command for s in steps_tasks.recall() if re.search(r'--ckpt=(smollm2|gemma3) ', s.command)]
    past = [c for c in pretrained if ' --lengths=2 ' in c]
    assert all(' --lengths=0.25,0.5,1,2 ' in c for c in pretrained if c not in past)
    covered = ('--rope_scaling=dynamic', '--no_vanilla=True --lm_infinite=True', '--no_vanilla=True --windowed=True')
    for c in past:
        assert sum(opt in c for opt in covered) == 1 and '--windowed_at' not in c and '--cache_window' not in c, c
    names = {tuple(re.search(r'--name=(smollm2|gemma3)_(\w+)', c).groups()) for c in past}
    assert names == steps_tasks.PAST_ONLY - {('smollm2', 'stream')}  # RULER's stream keeps L_tr keys; the probe's 2,048
