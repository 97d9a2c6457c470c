"""receptive_field.py: the gradient reaches exactly the tokens the attention masks let through (windowed models,
RegularGPT's dilated tree), and the ERF on hand values."""
import json
import os

import numpy as np
import pytest

from lexgpt import evaluation
from lexgpt import corpus
from lexgpt import reference
from analysis import receptive_field as rf
from helpers import make_split, save_ckpt, save_split, stop_at_call, tiny
from lexgpt.config import parse_config


@pytest.mark.parametrize('pe', ['none', 'alibi', 'sinusoidal'])
def test_erf_of_windowed_model_is_bounded_by_window_times_layers(pe):
    w, R, L = 4, 3, 40
    model = tiny(pe, n_layer=R, window=w, block_size=L)
    split = make_split()
    ends, _ = corpus.draw_ends(split, L, 5, seed=5)
    s = rf.receptive_field(model, split.tokens, ends, L)
    reach = R * (w - 1) + 1                  # the last token sees w-1 more tokens back per layer
    assert (s[:L - reach] == 0).all()        # exactly zero: masked keys are never read
    assert (s[L - reach:] > 0).all()
    assert abs(s.sum() - 1) < 1e-9
    erf = evaluation.erf_tokens(s)
    assert erf <= reach <= w * R
    c = evaluation.cumulative_from_end(s)
    assert abs(c[0] - 1) < 1e-9 and np.all(np.diff(c) <= 1e-12)
    assert all(p.grad is None for p in model.parameters())  # the parameters were left alone


@pytest.mark.parametrize('pe, extra', [('rope', dict(key_window=16, n_starting=2, ceiling=16)), ('regular', {})])
def test_recompute_gives_the_same_gradient_and_reruns_each_block(pe, extra):
    """recompute=True (activation checkpointing) changes the memory, not the numbers: each block runs twice, once
    in the forward and once when the gradient reaches it, inside the same attention variant."""
    model, split, L = tiny(pe), make_split(), 32
    ends, _ = corpus.draw_ends(split, L, 3, seed=7)
    calls = []
    handles = [b.attn.register_forward_hook(lambda *a: calls.append(1)) for b in model.transformer.h]
    runs = {}
    for on in (False, True):
        calls.clear()
        with model.attention(**extra), rf.recompute_blocks(model, on):
            runs[on] = rf.receptive_field(model, split.tokens, ends, L)
        runs[on, 'calls'] = len(calls)
    for h in handles:
        h.remove()
    assert np.allclose(runs[True], runs[False], rtol=1e-9, atol=1e-12)
    assert runs[True, 'calls'] == 2 * runs[False, 'calls'] > 0
    assert all('forward' not in vars(b) for b in model.transformer.h)  # the class's forward is back


def test_the_explicit_route_reruns_its_query_blocks_under_a_gradient_past_16_blocks(monkeypatch):
    """LM-Infinite's rotary ceiling takes fastattn's explicit route under a gradient. Past 16 query blocks' worth of
    probabilities (here: small blocks) each block keeps only q, k, v and is rerun in the backward: every block's
    logits are computed twice, and the gradient equals the reference's (route='reference')."""
    model, split, L = tiny('rope'), make_split(), 32
    ends, _ = corpus.draw_ends(split, L, 3, seed=7)
    calls, real = [], reference.scores
    monkeypatch.setattr(reference, 'scores', lambda *a: calls.append(1) or real(*a))
    runs = {}
    for impl, block_elems in [('reference', 1 << 22), ('auto', 1 << 22), ('auto', 64)]:
        calls.clear()
        with model.attention(key_window=16, n_starting=2, ceiling=8, route=impl, block_elems=block_elems):
            runs[impl, block_elems] = rf.receptive_field(model, split.tokens, ends, L), len(calls)
    n_layer = model.config.n_layer
    assert runs['auto', 1 << 22][1] == n_layer  # one query block per layer, not rerun
    # block_elems=64 gives query_blocks' smallest blocks, 16 queries each; the last layer runs the last query alone
    # (last_k=1): one block, too few logits to be rerun
    blocks = -(-L // 16) * (n_layer - 1)
    assert runs['auto', 64][1] == 2 * blocks + 1, (runs['auto', 64][1], blocks)
    for key in [('auto', 1 << 22), ('auto', 64)]:
        assert np.allclose(runs[key][0], runs['reference', 1 << 22][0], rtol=1e-6, atol=1e-10)


def test_erf_tokens_on_hand_values():
    s = np.array([0.0, 0.005, 0.015, 0.08, 0.9])
    assert evaluation.erf_tokens(s) == 3          # the last 3 tokens hold 0.995 > 0.99, the last 2 only 0.98
    assert evaluation.erf_tokens(np.array([0.5, 0.5])) == 2
    # regular_lang.py's 90%: the last token holds 0.9, not more; the last two 0.98
    assert evaluation.erf_tokens(s, 0.9) == 2 and evaluation.erf_tokens(s, 0.85) == 1
    assert evaluation.erf_tokens(np.array([0.1, 0.2, 0.3])) == 3  # no tail holds the mass: the whole input


@pytest.mark.parametrize('C, T', [(2, 40), (3, 30)])
def test_regular_gpt_last_token_reaches_every_token(C, T):
    """Thesis 6.2.2: after its ceil(log_C T) levels the last token has seen every token, token 0 included."""
    split = make_split()
    ends, _ = corpus.draw_ends(split, T, 4, seed=6)
    gather = tiny('regular', chunk_size=C, regular_impl='gather')
    s = rf.receptive_field(gather, split.tokens, ends, T)
    assert (s > 0).all() and abs(s.sum() - 1) < 1e-9
    plain = rf.receptive_field(tiny('regular', chunk_size=C, regular_impl='plain'), split.tokens, ends, T)
    assert np.allclose(s, plain, atol=1e-6)  # the sparse path and the dense reference agree


def test_main_with_the_windowed_variant_and_a_regular_gpt(tmp_path, capsys):
    data = save_split(tmp_path, make_split())
    paths = [save_ckpt(tmp_path, tiny('alibi'), 'alibi'), save_ckpt(tmp_path, tiny('regular'), 'regular')]
    out = rf.main(parse_config(rf.DEFAULTS, [f"--ckpt={','.join(paths)}", f'--data_dir={data}', '--length=2', '--n=3',
                                             '--windowed=True', f"--out_dir={tmp_path / 'res'}"]))
    assert sorted(p.name for p in (tmp_path / 'res').iterdir()) == ['erf.json', 'erf.md', 'erf.png']
    got = {(r['ckpt'], r['variant']): r for r in out}
    # RegularGPT's gather path refuses a window (a one-line note), the dense one would honour it
    assert sorted(got) == [('alibi', 'vanilla'), ('alibi', 'windowed@L_tr'), ('regular', 'vanilla')]
    assert "regular_impl='plain'" in capsys.readouterr().out
    # windowed@L_tr over 2 layers: the last of 32 tokens reaches 2 * (16 - 1) + 1 = 31 of them, not token 0
    s = np.array(got[('alibi', 'windowed@L_tr')]['s'])
    assert s[0] == 0 and (s[1:] > 0).all() and got[('alibi', 'windowed@L_tr')]['erf'] <= 31
    assert (np.array(got[('alibi', 'vanilla')]['s']) > 0).all()
    saved = json.loads((tmp_path / 'res' / 'erf.json').read_text())['results']
    assert len(saved) == 3  # each row with s and its cumulative c from the end (c_m: the share on tokens m..L_ex)
    assert all(np.allclose(r['c'], np.cumsum(r['s'][::-1])[::-1], atol=1e-5) for r in saved)


def test_span_table_and_render_from_a_hand_made_json(tmp_path):
    """The span table on hand values (s = 0.1 .. 0.4 over 4 tokens: the last 1 holds 40%, the first 2 30%), and
    --render redoes the .md and .png from the JSON alone, leaving the JSON as it was."""
    row = dict(ckpt='hand', variant='vanilla', L_tr=2, L_ex=4, erf=4, erf_over_L_tr=2.0, share_last_L_tr=0.7,
               s=[0.1, 0.2, 0.3, 0.4])
    short = dict(row, ckpt='short', L_ex=2, s=[0.25, 0.75])  # inputs not longer than k get '-'
    header, table = rf.span_shares([row, short], spans=[1, 2, 8])
    assert header == ['checkpoint', 'attention', 'L_ex', 'last 1', 'last 2', 'first 1', 'first 2']
    assert table[0] == ['hand', 'vanilla', 4, '40.00%', '70.00%', '10.00%', '30.00%']
    assert table[1] == ['short', 'vanilla', 2, '75.00%', '-', '25.00%', '-']
    path = tmp_path / 'erf_hand.json'
    path.write_text(json.dumps(dict(command='by hand', results=[row])))
    before = path.read_text()
    rf.main(dict(rf.DEFAULTS, render=str(path), spans=[1, 2]))
    assert path.read_text() == before
    assert '| hand | vanilla | 4 | 40.00% | 70.00% | 10.00% | 30.00% |' in (tmp_path / 'erf_hand.md').read_text()
    assert (tmp_path / 'erf_hand.png').stat().st_size > 0
    with pytest.raises(rf.ConfigError, match="render='nothing.txt'"):
        rf.main(dict(rf.DEFAULTS, render='nothing.txt'))


def test_the_figure_draws_c_from_position_1_a_colour_per_checkpoint_a_style_per_variant():
    """report()'s figure on hand rows: each row's c_m at m = 1..L_ex, one colour per checkpoint and one line style
    per variant, and a dotted line where the last L_tr tokens start (L_ex - L_tr + 1)."""
    row = lambda ckpt, variant: dict(ckpt=ckpt, variant=variant, L_tr=2, L_ex=4, erf=3, erf_over_L_tr=1.5,
                                     share_last_L_tr=0.7, s=[0.1, 0.2, 0.3, 0.4])
    rows = [row(c, v) for c in ('a', 'b') for v in ('vanilla', 'windowed@L_tr')]
    _, fig = rf.report(dict(spans=[1]), rows)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    curves = [lines[f"{r['ckpt']} {r['variant']} (ERF 3)"] for r in rows]
    for line in curves:
        assert list(line.get_xdata()) == [1, 2, 3, 4] and np.allclose(line.get_ydata(), [1.0, 0.9, 0.7, 0.4])
    colour = [line.get_color() for line in curves]
    assert colour[0] == colour[1] != colour[2] == colour[3]
    assert [line.get_linestyle() for line in curves] == ['-', '--', '-', '--']
    (start,) = [line for line in fig.axes[0].get_lines() if list(line.get_xdata()) == [3, 3]]
    assert start.get_linestyle() == ':'


def test_a_stopped_run_goes_on_with_reuse_to_the_same_gradient(tmp_path, monkeypatch):
    """The JSON is kept as the segments go; --reuse of it scores only the segments it lacks and ends with the s of an
    uninterrupted run, bit for bit; a finished file is taken whole; a file of other settings is refused."""
    data, ckpt = save_split(tmp_path, make_split()), save_ckpt(tmp_path, tiny('alibi'), 'alibi')
    base = dict(rf.DEFAULTS, ckpt=[ckpt], data_dir=data, length=2, n=5, batch_tokens=32, windowed=True,
                out_dir=str(tmp_path))
    whole = rf.main(dict(base, name='whole'))
    monkeypatch.setattr(rf, 'SAVE_SECONDS', 0.0)
    # the vanilla row's 5 segments, then 2 of the windowed row's; the 8th is stopped
    stop_at_8th, calls = stop_at_call(8, rf.embedding_grad_norms)
    monkeypatch.setattr(rf, 'embedding_grad_norms', stop_at_8th)
    with pytest.raises(KeyboardInterrupt):
        rf.main(dict(base, name='stopped'))
    kept = json.loads((tmp_path / 'stopped.json').read_text())
    assert kept['partial'] and [r.get('segments_so_far') for r in kept['results']] == [None, 2]
    split = json.loads((tmp_path / 'whole.json').read_text())['split']
    assert split == kept['split'] == f"{os.path.basename(data)}:test"  # which split, in the kept file too
    calls.clear()
    again = rf.main(dict(base, name='stopped', reuse=str(tmp_path / 'stopped.json')))
    assert len(calls) == 3  # the windowed row's last 3 segments, nothing else
    assert [r['s'] for r in again] == [r['s'] for r in whole] and [r['erf'] for r in again] == [r['erf'] for r in whole]
    assert 'partial' not in json.loads((tmp_path / 'stopped.json').read_text())
    calls.clear()
    assert [r['s'] for r in rf.main(dict(base, name='once_more', reuse=str(tmp_path / 'stopped.json')))] == \
        [r['s'] for r in whole] and calls == []
    with pytest.raises(rf.ConfigError, match="'n': 5.*'n': 4"):
        rf.main(dict(base, n=4, name='other', reuse=str(tmp_path / 'whole.json')))
    with pytest.raises(rf.ConfigError, match="'seed': 1337.*'seed': 7"):  # other segments: refused too
        rf.main(dict(base, seed=7, name='other', reuse=str(tmp_path / 'whole.json')))


def test_n_of_one_is_enough_and_an_extension_reaches_the_model(tmp_path):
    """n = 1 segment is a measurement (n = 0 is refused in one line); --rope_scaling=pi loads the model with its
    positions interpolated, which moves the gradient (the label says so too)."""
    data, ckpt = save_split(tmp_path, make_split()), save_ckpt(tmp_path, tiny('rope'), 'rope')
    base = dict(rf.DEFAULTS, ckpt=[ckpt], data_dir=data, length=2, n=1, out_dir=str(tmp_path))
    with pytest.raises(rf.ConfigError, match='n=0 and batch_tokens=8192 must be positive'):
        rf.main(dict(base, n=0))
    (plain,) = rf.main(base)
    (pi,) = rf.main(dict(base, rope_scaling='pi', rope_scale=2.0, name='pi'))
    assert len(plain['s']) == 32 and pi['ckpt'].endswith('+pi2') and not np.allclose(plain['s'], pi['s'])
