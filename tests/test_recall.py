"""analysis/recall.py, the repeated-span probe: its inputs by hand, the reach that windows and a bounded cache allow
(exactly zero benefit past it, in float64), causality, the t-interval against scipy's own test, a model trained here
to copy, and the command's JSON rebuilt and rescored by an independent scorer."""
import json
import re
import runpy
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy import stats

import helpers
from analysis import recall as rc
from analysis.recall_inputs import cell_inputs, distance_grid, draw_fillers, draw_spans, recall_pair, KINDS
from lexgpt import evaluation, progress
from lexgpt.config import ConfigError, parse_config
from lexgpt.evaluation import VARIANT_DEFAULTS, variants
from lexgpt.resume import cells_so_far
from lexgpt.streaming import stream_losses, stream_refusal
from model import GPT, GPTConfig

SPLIT = helpers.make_split((300, 40, 500, 10, 260, 900))


def test_recall_pair_by_hand():
    """S exactly twice, at p1 = L - s - d and at the end; the control differs only inside the earlier copy; the BOS
    replaces position 0 and the length stays L."""
    filler, S, S2 = np.arange(100, 140), np.array([1, 2, 3, 4]), np.array([5, 6, 7, 8])
    for d, bos in [(4, None), (10, None), (36, None), (35, 0)]:
        rep, ctl = recall_pair(filler, S, S2, d, bos)
        p1 = 40 - 4 - d
        assert len(rep) == len(ctl) == 40
        at = [i for i in range(37) if list(rep[i:i + 4]) == [1, 2, 3, 4]]
        assert at == [p1, 36]
        assert list(ctl[p1:p1 + 4]) == [5, 6, 7, 8] and np.flatnonzero(rep != ctl).tolist() == list(range(p1, p1 + 4))
        keep = np.ones(40, bool)
        keep[p1:p1 + 4] = keep[36:] = False
        if bos is not None:
            assert rep[0] == ctl[0] == bos
            keep[0] = False
        assert (rep[keep] == filler[keep]).all()
    for d, bos, top in [(3, None, 36), (37, None, 36), (36, 0, 35)]:  # d from s = 4 to L - s (- 1 with a BOS)
        with pytest.raises(ValueError, match=f'^d={d} is outside 4..{top}: the copies of 4 tokens must not overlap'):
            recall_pair(filler, S, S2, d, bos)
    with pytest.raises(ValueError, match="^S has 4 tokens, S' 3: they must be as long$"):
        recall_pair(filler, S, S2[:3], 10)


def test_too_many_spans_for_the_split_are_refused_by_name():
    """2n spans of s tokens may take at most half the split (SPLIT: 2,015 tokens with its eots, half 1,007): n = 125
    at s = 4 is 1,000 tokens and drawn, n = 126 (1,008) refused; a split whose documents hold fewer disjoint spans
    than asked (300 documents of 3 tokens and one of 20: two spans of 8) says so. The fillers may start anywhere up
    to len - L_ex, so L_ex = len - 1 leaves one start, 0."""
    vocab = np.arange(1, helpers.V)
    assert len(draw_spans(SPLIT, 4, 125, 0, ['text'], vocab)['text']) == 125
    with pytest.raises(ConfigError, match=r"^n=126 spans of s=4 tokens \(and as many S'\) need more than half of "
                                          r"hand's 2015 tokens; use a smaller n or span$"):
        draw_spans(SPLIT, 4, 126, 0, ['text'], vocab)
    short = helpers.make_split((3,) * 300 + (20,))
    with pytest.raises(ConfigError, match=r'^hand holds fewer than 4 disjoint spans of 8 tokens inside its documents'):
        draw_spans(short, 8, 2, 0, ['text'], vocab)
    assert draw_fillers(SPLIT, len(SPLIT.tokens) - 1, None, 2, 4, 0) == [0, 0]
    # L_ex = 2,000 leaves starts 0..14; a filler may end where S starts (S at 2,000: only 0 is clear) or start where
    # it ends (S at 10..13: only 14)
    assert [draw_fillers(SPLIT, 2000, [[a, a]], 1, 4, 0) for a in (2000, 10)] == [[0], [14]]
    with pytest.raises(ConfigError, match=r'^L_ex=2000: found no filler in hand clear of span 0; use shorter lengths$'):
        draw_fillers(SPLIT, 2000, [[12, 12]], 1, 4, 0)  # S at 12..15 leaves no start in 0..14


def test_distance_grid_by_hand():
    assert distance_grid(1024, 256, 32) == [32, 64, 128, 256, 512, 992]
    assert distance_grid(256, 256, 32) == [32, 64, 128, 224]  # at 1x L - s stands for L_tr
    assert distance_grid(4096, 256, 32, ratio=4, bos=1) == [32, 128, 256, 512, 2048, 4063]
    assert distance_grid(1024, 256, 32, asked=[16, 100, 992, 993]) == [100, 992]


def test_spans_and_fillers_from_the_split():
    """Text spans lie inside documents (no eot), pairwise disjoint; each filler is clear of its span's S and S'; the
    rows of a cell are the offsets' tokens with the copies written over them."""
    s, n, L, d = 8, 6, 64, 20
    spans = draw_spans(SPLIT, s, n, 3, KINDS, np.arange(1, helpers.V))
    starts = sorted(a for pair in spans['text'] for a in pair)
    assert len(starts) == 2 * n and all(b - a >= s for a, b in zip(starts, starts[1:]))
    assert all((SPLIT.tokens[a:a + s] != 0).all() for a in starts)
    assert all(len(S) == len(S2) == s and set(S) <= set(range(1, helpers.V)) for S, S2 in spans['random'])
    fillers = draw_fillers(SPLIT, L, spans['text'], n, s, 3)
    assert all(f + L <= a or a + s <= f for f, pair in zip(fillers, spans['text']) for a in pair)
    for kind in KINDS:
        x = cell_inputs(SPLIT, spans, kind, fillers, L, d, s)
        assert x.shape == (2 * n, L)
        for i, f in enumerate(fillers):
            S, S2 = ([SPLIT.tokens[a:a + s] for a in spans['text'][i]] if kind == 'text' else spans['random'][i])
            p1 = L - s - d
            assert list(x[2 * i, p1:p1 + s]) == list(S) == list(x[2 * i, -s:]) == list(x[2 * i + 1, -s:])
            assert list(x[2 * i + 1, p1:p1 + s]) == list(S2)
            assert list(x[2 * i, :p1]) == list(SPLIT.tokens[f:f + p1])
            assert list(x[2 * i, p1 + s:L - s]) == list(SPLIT.tokens[f + p1 + s:f + L - s])


def probe_for(s, n, kinds=KINDS, seed=0):
    """The probe's spans and fillers over SPLIT, as main draws them."""
    cfg = dict(rc.DEFAULTS, span=s, n=n, seed=seed, kinds=list(kinds))
    return rc.Probe(cfg, SPLIT, np.arange(1, helpers.V), None)


def per_token(model, L, d, s, skip, stream, share, n=4):
    """[n, s - skip] float64 loss(control) - loss(repeat) of each span's scored tokens (random spans), by whole
    forwards or with each span's prefix run once (tree_losses)."""
    probe, m = probe_for(s, n, ('random',)), s - skip
    x = torch.from_numpy(probe.inputs('random', L, d))
    if share:
        p1 = L - s - d
        loss = rc.tree_losses(model, x[0::2, :p1], {p1: x[:, p1:]}, m, stream, step=5)[p1]
    else:
        loss = rc.scored_losses(model, x, m, stream, step=5)
    return (loss[1::2] - loss[0::2]).numpy()


def benefit(model, L, d, s, skip, stream, share, n=4):
    probe = probe_for(s, n)
    pairs = rc.batch_pairs(model, probe, L, range(n), [('text', d), ('random', d)], s - skip, stream, 5, share)
    return [rc.summary(p) for p in pairs.values()]


@pytest.mark.parametrize('share', [False, True])
@pytest.mark.parametrize('n_layer, stream', [(1, False), (3, False), (1, True), (3, True)])
def test_no_benefit_past_the_reach_of_a_window_or_a_bounded_cache(n_layer, stream, share):
    """A window of w keys (or a bounded cache of W, no sinks) moves information at most w - 1 tokens back a layer, so
    in float64 every scored token's loss is exactly the same in repeat and control once d > n_layer (w - 1) + s - skip
    (the first scored token, at L - s + skip - 1, is then beyond reach of the copy's last, at L - d - 1); one token
    closer it is not. For the mean over spans: benefit exactly 0 for every d > n_layer * w + s, not before."""
    w, s, skip, L = 6, 8, 2, 64
    model = helpers.sharp('alibi', n_layer=n_layer).double()
    edge = n_layer * (w - 1) + s - skip
    kw, cache = (dict(), (w, 0)) if stream else (dict(key_window=w), None)
    with model.attention(**kw):
        assert (per_token(model, L, edge + 1, s, skip, cache, share) == 0).all()
        assert (per_token(model, L, edge, s, skip, cache, share)[:, 0] != 0).all()
        for d in range(n_layer * w + s + 1, L - s + 1, 3):
            assert all(c['benefit'] == 0 and c['ci95'] == [0, 0] for c in benefit(model, L, d, s, skip, cache, share))
        assert all(abs(c['benefit']) > 1e-3 for c in benefit(model, L, s + 2, s, skip, cache, share))


@pytest.mark.parametrize('pe, kw', [(pe, {}) for pe in ('alibi', 'rope', 'fox', 'cope', 'bipe_alibi', 't5', 'fire')]
                         + [('rope', dict(layer_attn=((6, 10000.0), (0, 10000.0))))])  # a local layer, as Gemma 3's
def test_a_prefix_run_once_gives_what_whole_forwards_give(pe, kw):
    """tree_losses (each span's filler once through a KV cache, forked for its inputs) against a whole forward per
    input, in float64 (but for the routes' float32 parts: ALiBi's potential), plain, windowed, under LM-Infinite's
    Λ mask and ceiling, and through a bounded-cache stream."""
    model, s, L, n = helpers.tiny(pe, strong=True, bipe_sep_ids=(5, 9), **kw), 6, 40, 3
    model, tol = (model, 2e-5) if pe == 'fire' else (model.double(), 1e-6)  # FIRE's MLP runs in float32 only
    probe = probe_for(s, n)
    cells = [(k, d) for k in KINDS for d in (6, 11, 20, 34)]
    streams = [] if stream_refusal(model) else [({}, (8, 2))]  # main streams only what streaming allows
    lm_infinite = dict(key_window=8, n_starting=2, ceiling=8, topk=0, topk_from_layer=5)  # evaluation.variants' kwargs
    for kw, stream in [({}, None), (dict(key_window=8), None), (lm_infinite, None)] + streams:
        with model.attention(**kw):
            whole, shared = (rc.batch_pairs(model, probe, L, range(n), cells, s - 1, stream, 7, share)
                             for share in (False, True))
        for c in cells:
            np.testing.assert_allclose(shared[c], whole[c], rtol=tol, err_msg=f'{pe} {kw} {stream} {c}')


def test_shareable_refuses_what_a_cache_changes():
    lm_infinite = dict(variants(dict(VARIANT_DEFAULTS, no_vanilla=True, lm_infinite=True))[0][1](8, 2.0))
    assert rc.shareable(helpers.tiny('alibi'), lm_infinite) and rc.shareable(helpers.tiny('alibi'), dict(key_window=8))
    assert not rc.shareable(helpers.tiny('alibi'), dict(lm_infinite, topk=2))
    assert not rc.shareable(helpers.tiny('alibi'), dict(attn_temperature=0.9))
    assert not rc.shareable(helpers.tiny('regular'), {})
    assert not rc.shareable(helpers.tiny('rope', randomized_positions=64), {})
    assert not rc.shareable(helpers.tiny('rope', rope_scaling='dynamic', rope_scale=2.0), {})


def cell_input_pairs(L, d, s, n=4):
    return probe_for(s, n, ('text',)).inputs('text', L, d)


def test_stream_scoring_equals_streaming_stream_losses():
    """scored_losses through the bounded cache (its own loop: no head on unscored positions) against the losses of
    streaming.stream_losses over the same input, with sinks and distance ceiling."""
    model, s, L = helpers.tiny('rope', strong=True).double(), 8, 50
    x = torch.from_numpy(cell_input_pairs(L, 20, s, n=1))
    mine = rc.scored_losses(model, x, s - 3, (12, 2), step=7)
    for row in range(2):
        steps = [(x[row:row + 1, a:min(a + 7, L - 1)], x[row:row + 1, a + 1:min(a + 8, L)]) for a in range(0, L - 1, 7)]
        ref = np.concatenate(list(stream_losses(model, steps, 12, 2)))
        np.testing.assert_allclose(mine[row].numpy(), ref[-(s - 3):], rtol=1e-6)


@pytest.mark.parametrize('pe', ['alibi', 'rope', 'fox', 'cope'])
def test_logits_before_the_earlier_copy_are_the_same_in_repeat_and_control(pe):
    L, s, d = 48, 8, 24
    model, p1 = helpers.tiny(pe, strong=True).double(), L - s - d
    x = torch.from_numpy(cell_input_pairs(L, d, s, n=2))
    with torch.no_grad():
        logits = model(x, targets=x)[0]
    for i in range(2):
        assert torch.equal(logits[2 * i, :p1], logits[2 * i + 1, :p1])
        assert not torch.equal(logits[2 * i, p1], logits[2 * i + 1, p1])


def test_summary_against_scipy_and_row_verdict_by_hand():
    rng = np.random.default_rng(0)
    rep = rng.normal(2.0, 0.3, 20)
    b = rng.normal(0.2, 0.5, 20)
    out = rc.summary(np.stack([rep, rep + b], 1).tolist())
    ci = stats.t.interval(0.95, 19, loc=b.mean(), scale=stats.sem(b))
    assert out['benefit'] == pytest.approx(b.mean()) and out['ci95'] == pytest.approx(list(ci))
    assert out['p'] == pytest.approx(stats.ttest_1samp(b, 0, alternative='greater').pvalue)
    assert out['significant'] == (ci[0] > 0) and out['n'] == 20 and out['repeat_loss'] == pytest.approx(list(rep))
    for floor in (ci[0] - 0.01, ci[0] + 0.01):  # recall counts where the CI lies above the floor
        above = rc.summary(np.stack([rep, rep + b], 1).tolist(), floor)
        assert above['significant'] == (floor < ci[0])
        assert above['p'] == pytest.approx(stats.ttest_1samp(b, floor, alternative='greater').pvalue)
    cell = lambda d, benefit, sig: dict(kind='text', mult=4, L_ex=64, d=d, benefit=benefit, significant=sig)
    row = [cell(32, 0.1, True), cell(4, 0.8, True), cell(8, 0.5, True), cell(20, 0.3, False), cell(48, 0.3, False)]
    v = rc.row_verdict(row, 16)
    assert v['horizon'] == 32 and v['share_beyond_L_tr'] == pytest.approx((0.3 + 0.1 + 0.3) / 3 / 0.8)
    assert rc.row_verdict([cell(4, 0.1, False), cell(32, 0.5, True)], 16)['share_beyond_L_tr'] is None


@pytest.fixture(scope='module')
def copier():
    """A 2-layer RoPE GPT trained here (200 steps, ~3 s) on random 8-token strings repeated: it learns to copy the
    token 8 back."""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=helpers.V, block_size=24, n_layer=2, n_head=2, n_embd=32, pe='rope'))
    opt, g = torch.optim.AdamW(model.parameters(), lr=1e-2), torch.Generator().manual_seed(0)
    for _ in range(200):
        seq = torch.randint(1, helpers.V, (16, 8), generator=g).repeat(1, 4)[:, :25]
        loss = model(seq[:, :-1], seq[:, 1:])[1]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def test_a_model_trained_to_copy_shows_a_positive_benefit_at_small_d(copier):
    s, L, n = 8, 32, 16
    probe = probe_for(s, n, seed=1)
    for share in (False, True):
        pairs = rc.batch_pairs(copier, probe, L, range(n), [(k, s) for k in KINDS], s - 2, None, 256, share)
        for kind in KINDS:
            out = rc.summary(pairs[kind, s])
            assert out['significant'] and out['benefit'] > 0.3 and out['loss_control'] > out['loss_repeat']


def cfg_for(tmp_path, **kw):
    ckpt = helpers.save_ckpt(tmp_path, helpers.tiny('alibi', strong=True), 'alibi-s0')
    (tmp_path / 'data').mkdir(exist_ok=True)
    data = helpers.save_split(tmp_path / 'data', SPLIT)
    argv = [f'--ckpt={ckpt}', f'--data_dir={data}', '--lengths=1,2', '--n=4', '--span=4', '--skip=1',
            f'--out_dir={tmp_path / "out"}']  # the options as a user gives them
    return dict(parse_config(rc.DEFAULTS, argv), **kw)


def rescored(model, split, data, row, cell):
    """An independent scorer: the inputs rebuilt from the JSON's offsets and ids alone, the losses straight from the
    model's full logits."""
    s, skip, L, d = data['settings']['span'], data['settings']['skip'], cell['L_ex'], cell['d']
    out = []
    for i, f in enumerate(data['fillers'][str(L)]):
        spans = data['spans'][cell['kind']][i]
        S, S2 = ([list(split.tokens[a:a + s]) for a in spans] if cell['kind'] == 'text' else spans)
        seq = list(split.tokens[f:f + L])
        both = [seq[:L - s - d] + list(c) + seq[L - d:L - s] + list(S) for c in (S, S2)]
        x = torch.tensor(both, dtype=torch.long)
        with torch.no_grad(), model.attention(**({'key_window': row['L_tr']} if row['variant'] != 'vanilla' else {})):
            logits = model(x, targets=x)[0].double()
        loss = F.cross_entropy(logits[:, L - s + skip - 1:L - 1].transpose(1, 2), x[:, L - s + skip:], reduction='none')
        out.append(loss.mean(-1).tolist())
    return out


def test_main_writes_what_an_independent_scorer_rebuilds(tmp_path, capsys):
    cfg = cfg_for(tmp_path, windowed=True, cache_window=8, n_starting=2)
    rows = rc.main(cfg)
    data = json.load(open(tmp_path / 'out' / 'recall.json'))
    assert data['command'].startswith('python') and 'partial' not in data and data['ci_method'] == rc.CI_METHOD
    assert data['settings']['min_benefit'] == 0.001  # the floor that results/recall/README.md states
    assert data['settings']['seed'] == 1337 and data['settings']['bos'] is None
    said = capsys.readouterr().out
    assert re.search(r'alibi-s0 +vanilla L_ex=32 +text: benefit by d 4:-?[\d.]+ .*; horizon \d+\n', said), said
    assert [r['variant'] for r in data['results']] == ['vanilla', 'windowed@L_tr', 'stream(S=2,W=8)'] == \
        [r['variant'] for r in rows]
    assert sorted(data['fillers']) == ['16', '32'] and len(data['spans']['text']) == 4
    model = helpers.tiny('alibi', strong=True)
    assert all(r['windows'] == [0] * model.config.n_layer for r in data['results'])  # no window of its own
    for row in data['results'][:2]:
        assert {(c['kind'], c['L_ex']) for c in row['cells']} == {(k, L) for k in KINDS for L in (16, 32)}
        for cell in row['cells']:
            assert cell['n'] == 4 and len(cell['repeat_loss']) == 4
            got = np.stack([cell['repeat_loss'], cell['control_loss']], 1)
            np.testing.assert_allclose(got, rescored(model, SPLIT, data, row, cell), atol=1e-5)
        assert [(v['mult'], v['kind']) for v in row['verdicts']] == [(m, k) for m in (1.0, 2.0) for k in KINDS]
        assert [v['horizon'] for v in row['verdicts']] == [
            max([c['d'] for c in row['cells'] if (c['kind'], c['mult']) == (v['kind'], v['mult'])
                 and c['ci95'][0] > data['settings']['min_benefit']], default=0) for v in row['verdicts']]
    assert (tmp_path / 'out' / 'recall.png').exists() and '### random' in open(tmp_path / 'out' / 'recall.md').read()


@pytest.mark.parametrize('share', [True, False])
def test_progress_speaks_while_a_batch_of_spans_runs(tmp_path, monkeypatch, capsys, share):
    """Progress counts the tokens through the model, its total exactly what the forwards take (plain, windowed and
    streamed), and may speak after every layer (here, PROGRESS_SECONDS = 0), not only after a batch of spans, which a
    pretrained model at 2 L_tr takes minutes over."""
    monkeypatch.setattr(progress, 'PROGRESS_SECONDS', 0.0)
    made = []

    class Counted(progress.Progress):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)
    monkeypatch.setattr(rc, 'Progress', Counted)
    rc.main(cfg_for(tmp_path, lengths=[1.0, 2.0], windowed=True, cache_window=8, share_prefix=share))
    assert len(made) == 6 and all(p.count == p.total > 0 for p in made)
    lines = [x for x in capsys.readouterr().err.splitlines() if 'alibi-s0 vanilla L_ex=16:' in x]
    assert len(lines) >= 2 * 3  # L_ex = 16's 4 spans are one batch: 3 distances (forwards), 2 layers each


class Stopped(Exception):
    """A run stopped from outside (Ctrl-C, a killed job)."""


def test_reuse_goes_on_inside_a_cell_and_ends_as_an_uninterrupted_run(tmp_path, monkeypatch):
    # L_ex = 16: d = 4, 8, 12, two spans a batch; L_ex = 32: d = 4, 8, 16, 28, one span a batch
    cfg = cfg_for(tmp_path, kinds=['text'], batch_tokens=64)
    full = rc.main(dict(cfg, name='full'))
    monkeypatch.setattr(rc, 'SAVE_SECONDS', 0.0)
    calls, real = [], rc.batch_pairs

    def stopping(*a, **kw):
        calls.append(1)
        if stopping.armed and len(calls) == 4:  # the 2 batches of L_ex = 16 and the first span of L_ex = 32 are done
            stopping.armed = False
            raise Stopped
        return real(*a, **kw)
    stopping.armed = True
    monkeypatch.setattr(rc, 'batch_pairs', stopping)
    with pytest.raises(Stopped):
        rc.main(cfg)
    part = json.load(open(tmp_path / 'out' / 'recall.json'))
    cells = part['results'][0]['cells']
    drop = lambda c: {k: v for k, v in c.items() if k != 'spans_scored_before'}
    assert part['partial'] and [c['benefit'] is None for c in cells] == [False] * 3 + [True] * 4
    assert all(len(c['spans_so_far']) == 1 for c in cells[3:])
    # stopped again before its first new span: one row per run and variant still, its cells those it was given
    monkeypatch.setattr(rc, 'batch_pairs', helpers.stop_at_call(1, real)[0])
    with pytest.raises(KeyboardInterrupt):
        rc.main(dict(cfg, reuse=str(tmp_path / 'out' / 'recall.json'), name='twice'))
    twice = json.load(open(tmp_path / 'out' / 'twice.json'))['results']
    assert len(twice) == 1 and [drop(c) for c in twice[0]['cells']] == [drop(c) for c in cells]
    monkeypatch.setattr(rc, 'batch_pairs', stopping)
    calls.clear()
    again = rc.main(dict(cfg, reuse=str(tmp_path / 'out' / 'recall.json')))
    # once more on the finished file (its seconds set to a value no run here takes): every cell read back, and the
    # record of what they cost kept
    data = json.loads((tmp_path / 'out' / 'recall.json').read_text())
    data['results'][0]['seconds'] = 1234.5
    (tmp_path / 'out' / 'kept_from.json').write_text(json.dumps(data))
    kept = rc.main(dict(cfg, reuse=str(tmp_path / 'out' / 'kept_from.json'), name='kept'))
    assert kept[0]['cells'] == again[0]['cells'] and kept[0]['seconds'] == 1234.5
    assert [drop(c) for c in again[0]['cells']] == full[0]['cells'] and len(calls) == 3
    assert [c.get('spans_scored_before') for c in again[0]['cells']] == [None] * 3 + [1] * 4
    with pytest.raises(ConfigError, match='was made with settings'):
        rc.main(dict(cfg, reuse=str(tmp_path / 'out' / 'recall.json'), span=5))
    # stopped as L_ex = 16 ends, before a throttled save: its cells are final in the JSON all the same
    monkeypatch.setattr(rc, 'SAVE_SECONDS', 3600.0)
    monkeypatch.setattr(rc, 'batch_pairs', helpers.stop_at_call(3, real)[0])
    with pytest.raises(KeyboardInterrupt):
        rc.main(dict(cfg, name='ended'))
    ended = json.load(open(tmp_path / 'out' / 'ended.json'))['results'][0]['cells']
    assert [c['d'] for c in ended] == [c['d'] for c in full[0]['cells'][:3]] and ended == full[0]['cells'][:3]


@pytest.mark.parametrize('change, match', [
    (dict(kinds=['text', 'words']), 'kinds=text,words; allowed: text, random'),
    (dict(skip=4), 'span=4, skip=4'),
    (dict(n=1), 'n=1'),
    (dict(distances=[0, 8]), r'distances=\[0, 8\]'),
    (dict(ratio=1.0), 'ratio=1'),
    (dict(no_vanilla=True), 'no_vanilla=True leaves nothing'),
    (dict(lengths=[0.0]), 'lengths: 0 is not a positive'),
])
def test_bad_settings_are_one_line(tmp_path, change, match):
    with pytest.raises(ConfigError, match=match):
        rc.main(cfg_for(tmp_path, **change))


def test_spans_in_several_batches_give_the_cells_of_one_batch(tmp_path):
    """batch_tokens = 64 holds one span's repeat and control at L_ex = 32 (two at 16): each batch of whole forwards
    scores its own spans, and the cells equal those of a run that takes all four spans at once through a shared
    prefix (the shared prefix in several batches: test_reuse_goes_on_inside_a_cell_and_ends_as_an_uninterrupted_run)."""
    whole = rc.main(cfg_for(tmp_path, name='whole'))
    split = rc.main(cfg_for(tmp_path, name='split', share_prefix=False, batch_tokens=64))
    for a, b in zip(whole[0]['cells'], split[0]['cells']):
        assert (a['kind'], a['d'], b['n']) == (b['kind'], b['d'], 4)
        np.testing.assert_allclose(b['repeat_loss'], a['repeat_loss'], atol=1e-5)
        np.testing.assert_allclose(b['control_loss'], a['control_loss'], atol=1e-5)


def test_the_fillers_keep_clear_of_each_spans_copies(tmp_path):
    """A filler of L_ex tokens never covers its span's S or S' in the split (S appears nowhere else in the input):
    64 spans and L_ex = 256 in a split of 2,010 tokens, where a filler drawn blind would overlap them."""
    cfg = dict(rc.DEFAULTS, span=4, n=64)
    probe = rc.Probe(cfg, SPLIT, rc.split_vocab(SPLIT, None), None)
    for f, (a, b) in zip(probe.filler(256), probe.spans['text']):
        assert all(f + 256 <= x or x + 4 <= f for x in (a, b))


def test_a_models_bos_is_kept_out_of_the_random_spans_and_recorded(tmp_path, monkeypatch):
    """A tokenizer that puts BOS 7 first (pretrained_info): the settings record it, no random span draws it; with
    --bos=False neither. n = 2 spans is the least a confidence interval takes, and is accepted."""
    monkeypatch.setattr(evaluation, 'bos_id', lambda model, on=True: 7 if on else None)
    for on, want in ((True, 7), (False, None)):
        rc.main(cfg_for(tmp_path, lengths=[1.0], n=2, kinds=['random'], bos=on))
        data = json.load(open(tmp_path / 'out' / 'recall.json'))
        ids = {t for pair in data['spans']['random'] for span in pair for t in span}
        assert data['settings']['bos'] == want and (7 not in ids if on else True)
        assert data['vocab_size_random'] == len(rc.split_vocab(SPLIT, want))


def test_so_far_carries_each_reused_cell_once_and_leaves_the_file_alone(tmp_path):
    """A partial JSON holds the cells scored so far and, once each, the file's cells not reached yet: in the row of
    their run and variant, after its own (one row each), or in a row of their own for a run not begun."""
    cell = lambda d: dict(kind='text', mult=1.0, d=d, benefit=0.1)
    old = dict(ckpt='a-s0', variant='vanilla', iters=5, cells=[cell(4), cell(8), cell(12)])
    later = dict(old, ckpt='a-s1', cells=[cell(4)])
    path = tmp_path / 'old.json'
    path.write_text(json.dumps(dict(settings={'n': 4}, spans={}, results=[old, later])))
    prev = rc.previous_cells(str(path), {'n': 4}, {})
    got = cells_so_far([dict(old, cells=[cell(4)])], prev)
    assert [(r['ckpt'], [c['d'] for c in r['cells']]) for r in got] == [('a-s0', [4, 8, 12]), ('a-s1', [4])]
    assert [c['d'] for c in prev.data['results'][0]['cells']] == [4, 8, 12]


@pytest.mark.filterwarnings("ignore:'analysis.recall' found in sys.modules:RuntimeWarning")  # run again as __main__
def test_the_command_line_names_a_bad_value_in_one_line(monkeypatch):
    """`python -m analysis.recall --kinds=words`, through the module's own entry point (run here as __main__): one
    line naming the value and the allowed ones."""
    monkeypatch.setattr(sys, 'argv', ['analysis/recall.py', '--kinds=words'])
    with pytest.raises(SystemExit, match=r'^error: kinds=words; allowed: text, random$'):
        runpy.run_module('analysis.recall', run_name='__main__')


def test_the_probe_table_by_hand():
    """recall_report.tables on hand-made cells (L_tr = 32): at 1x d = 4, 8, 40 with benefits 0.5, 0.2 (not
    significant), 0.1: horizon 40, share past L_tr 0.1 / 0.5 = 0.20; at 2x one distance (horizon 4, nothing past
    L_tr: —); at 4x a cell still running (no benefit): no line."""
    from analysis.recall_report import tables
    cell = lambda d, b, sig, mult=1.0: dict(kind='text', mult=mult, L_ex=int(64 * mult), d=d, benefit=b,
                                            ci95=None if b is None else [b - 0.01, b + 0.01], significant=sig)
    cells = [cell(4, 0.5, True), cell(40, 0.1, True), cell(8, 0.2, False), cell(4, 0.3, True, 2.0),
             cell(4, None, False, 4.0)]
    assert tables(dict(kinds=['text']), [dict(ckpt='a-s0', variant='vanilla', L_tr=32, cells=cells)]) == (
        '### text: recall benefit (nats/token, 95% CI) by d\n\n'
        '| model | L_ex / L_tr | d=4 | d=8 | d=40 | horizon | share > L_tr |\n|---|---|---|---|---|---|---|\n'
        '| a-s0 [vanilla] | 1 | 0.500 ± 0.010 | 0.200 ± 0.010 · | 0.100 ± 0.010 | 40 | 0.20 |\n'
        '| a-s0 [vanilla] | 2 | 0.300 ± 0.010 |  |  | 4 | — |\n\n')


def test_the_figure_plots_each_lengths_own_cells():
    """recall_report.curve draws one kind at one length: text at 1x from cells at d = 4 and 8 (0.5, 0.3), not the
    random cell at d = 4 or the 2x cell at d = 16 beside them, its band the cells' 95% CI; over two seeds (0.5 and
    0.7, 0.3 and 0.1) the seeds' mean 0.6, 0.2 with a band of one sd (ddof 1: 0.1414); nothing where no cell fits."""
    from analysis.recall_report import curve

    class Ax:
        def __init__(self):
            self.lines, self.bands = [], []

        def plot(self, x, y, *args, **kw):
            self.lines.append((list(x), [round(float(v), 4) for v in y], kw['color'], kw['label']))

        def fill_between(self, x, lo, hi, **kw):
            self.bands.append((list(x), [round(float(v), 4) for v in lo], [round(float(v), 4) for v in hi]))
    cell = lambda kind, mult, d, b: dict(kind=kind, mult=mult, d=d, benefit=b, ci95=[b - 0.1, b + 0.1])
    one = [dict(cells=[cell('text', 1.0, 4, 0.5), cell('text', 1.0, 8, 0.3), cell('random', 1.0, 4, 0.9),
                       cell('text', 2.0, 16, 0.2)])]
    two = one + [dict(cells=[cell('text', 1.0, 4, 0.7), cell('text', 1.0, 8, 0.1)])]
    ax = Ax()
    for runs in (one, two):
        curve(ax, runs, 'text', 1.0, 'C0')
        curve(ax, runs, 'text', 4.0, 'C1')
    assert ax.lines == [([4, 8], [0.5, 0.3], 'C0', '1x L_tr'), ([4, 8], [0.6, 0.2], 'C0', '1x L_tr (2 seeds)')]
    assert ax.bands == [([4, 8], [0.4, 0.2], [0.6, 0.4]), ([4, 8], [0.4586, 0.0586], [0.7414, 0.3414])]
