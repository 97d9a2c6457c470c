"""
extrapolate.py (ppl and position) against independent facts: losses recomputed directly with the model, the tokens
each protocol must score, seed groups averaged by hand, RegularGPT's plain implementation. CPU, seconds.
"""
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lexgpt import corpus, evaluation
import extrapolate as ex
from lexgpt.config import ConfigError, parse_config
from helpers import V, direct_ce, make_split, save_ckpt, save_split, tiny

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cfg(**kw):
    return dict(ex.DEFAULTS, **kw)


def plain_window_losses(model, tokens, s, L):
    """RegularGPT's per-token losses of tokens[s:s+L] -> tokens[s+1:s+L+1] by its dense reference implementation."""
    x = torch.from_numpy(tokens[s:s + L + 1].astype(np.int64))[None]
    with torch.no_grad():
        return model(x[:, :-1], targets=x[:, 1:], reduction='none', regular_impl='plain')[1][0].double().numpy()


# ------------------------------------------------------------------------------------------------ protocols

def test_draw_ends_keeps_every_context_inside_one_document():
    split = make_split()
    ends, info = corpus.draw_ends(split, 64, 50, seed=1)
    starts, stops = corpus.document_bounds(split.docs, len(split.tokens))
    assert len(ends) == 50 == len(set(ends.tolist()))
    for e in ends:
        d = np.searchsorted(starts, e, side='right') - 1
        assert starts[d] <= e - 64 and e < stops[d]          # context and scored token in document d
        assert (split.tokens[e - 64:e + 1] != 0).all()       # never crosses an eot
    assert info['docs_too_short'] == 2 and info['docs_long_enough'] == 3  # the 40- and 10-token documents
    assert info['positions'] == (300 - 64) + (500 - 64) + (260 - 64)
    with pytest.raises(ConfigError, match='no document'):
        corpus.draw_ends(split, 600, 5, seed=1)


def spans(doc_lengths, context):
    """Every position e that may be scored with `context` tokens before it, built from make_split's layout alone:
    documents of the given lengths, one eot between neighbours; e lies in the same document as e - context."""
    out, at = set(), 0
    for i, n in enumerate(doc_lengths):
        at += 1 if i else 0
        out |= set(range(at + context, at + n))
        at += n
    return out


@pytest.mark.parametrize('context', [1, 10, 64, 259, 499])
def test_draw_ends_covers_exactly_the_valid_positions(context):
    """Asking for more than there are gives every valid position once; fewer gives valid positions only, whatever
    the seed."""
    lengths = (300, 40, 500, 10, 260)
    split, want = make_split(lengths), spans(lengths, context)
    ends, info = corpus.draw_ends(split, context, 10 ** 6, seed=0)
    assert sorted(ends.tolist()) == sorted(want) and info['positions'] == len(want) == info['n_drawn']
    for seed in range(20):
        ends, _ = corpus.draw_ends(split, context, 30, seed)
        assert len(set(ends.tolist())) == min(30, len(want)) and set(ends.tolist()) <= want


def test_last_token_ppl_equals_hand_computed_loss():
    split, model = make_split(), tiny('alibi')
    ends, _ = corpus.draw_ends(split, 64, 6, seed=2)
    for L in (16, 40, 64):
        got = ex.last_token_losses(model, split.tokens, ends, L, batch_tokens=100)  # several batches
        want = [direct_ce(model, split.tokens[e - L:e], split.tokens[e]) for e in ends]
        assert np.allclose(got, want, atol=1e-5)


class ConstantModel(torch.nn.Module):
    """Logits that ignore the input: the loss identifies the scored target token and nothing else."""

    def __init__(self):
        super().__init__()
        self.v = torch.linspace(-3, 3, V) ** 3  # distinct log-probs for distinct tokens

    def forward(self, idx, targets=None, reduction='mean', last_k=0):
        logits = self.v.expand(*idx.shape, V)[:, -last_k:]
        if targets is None:
            return logits[:, [-1]], None
        return logits, F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction='none').view(targets.shape)


def test_last_token_scores_the_same_tokens_at_every_length():
    split, model = make_split(), ConstantModel()
    ends, _ = corpus.draw_ends(split, 256, 40, seed=3)
    want = -model.v.log_softmax(-1)[torch.from_numpy(split.tokens[ends].astype(np.int64))].double().numpy()
    for L in (16, 64, 256):
        assert np.allclose(ex.last_token_losses(model, split.tokens, ends, L), want)
    # last_k: the k tokens ending at each e, again the same at every length
    want_k = -model.v.log_softmax(-1)[torch.from_numpy(
        split.tokens[ends[:, None] - 3 + np.arange(4)].astype(np.int64))].double().numpy().reshape(-1)
    for L in (16, 256):
        assert np.allclose(ex.last_token_losses(model, split.tokens, ends, L, last_k=4), want_k)


def test_last_k_losses_equal_direct_computation():
    split, model = make_split(), tiny('kerple_log')
    ends, _ = corpus.draw_ends(split, 48, 3, seed=4)
    got = ex.last_token_losses(model, split.tokens, ends, 48, last_k=3).reshape(3, 3)
    for i, e in enumerate(ends):
        for j, t in enumerate(range(e - 2, e + 1)):  # token t with the 48 - (e - t) tokens of this window before it
            assert abs(got[i, j] - direct_ce(model, split.tokens[e - 48:t], split.tokens[t])) < 1e-5


@pytest.mark.parametrize('pe', ['alibi', 'rope', 'regular'])
def test_nonoverlap_equals_direct_computation(pe):
    split, model = make_split(), tiny(pe, regular_impl='gather')
    start, n, L = 5, 96, 32
    got = ex.nonoverlap_losses(model, split.tokens, start, n, L, batch_tokens=64)
    want = []
    for s in range(start, start + n, L):
        if pe == 'regular':  # its depth grows with the input, so a prefix is no stand-in: the whole window, densely
            want += plain_window_losses(model, split.tokens, s, L).tolist()
            continue
        for t in range(s + 1, s + L + 1):   # each target with the tokens from its segment's start only
            want.append(direct_ce(model, split.tokens[s:t], split.tokens[t]))
    assert got.shape == (n,) and np.allclose(got, want, atol=1e-5)


def test_the_nonoverlap_span_ends_at_the_last_token_that_has_a_target(tmp_path):
    """#59: from offset 32, a split of 160 tokens holds 4 x 32 inputs but only 127 targets: the span is the 3 x 32
    that have one each (max_tokens allows more), and every one of them is scored."""
    tokens = np.random.default_rng(0).integers(1, V, 160).astype(np.uint16)
    split = corpus.Split(tokens, [0], {'tokenizer': 'bytes'}, 'hand')
    assert ex.scored_span(cfg(protocol='nonoverlap', offset=32, max_tokens=1000), split, None, 32) == (
        None, dict(offset=32, n_tokens=96))
    data, model = save_split(tmp_path, split), tiny('alibi')
    rows = ex.main(cfg(ckpt=[save_ckpt(tmp_path, model, 'a')], data_dir=data, protocol='nonoverlap', offset=32,
                       max_tokens=1000, lengths=[1, 2], out_dir=str(tmp_path / 'res')))['results']
    assert [r['n_scored'] for r in rows] == [96, 96]
    want = [direct_ce(model, tokens[s:t], tokens[t]) for s in range(32, 128, 32) for t in range(s + 1, s + 33)]
    assert rows[1]['loss'] == pytest.approx(np.mean(want), abs=1e-5)


@pytest.mark.parametrize('stride', [1, 8, 13, 24])
def test_sliding_scores_every_token_once_with_its_window_context(stride):
    split, model = make_split(), tiny('alibi')
    start, n, L = 3, 60, 24
    got = ex.sliding_losses(model, split.tokens, start, n, L, stride, batch_tokens=50)
    assert got.shape == (n,)
    windows = list(range(start, start + n - L + 1, stride))
    if windows[-1] + L < start + n:
        windows.append(start + n - L)
    for i, t in enumerate(range(start + 1, start + n + 1)):
        ws = next(w for w in windows if w + L >= t)       # the first window whose targets reach t
        assert abs(got[i] - direct_ce(model, split.tokens[ws:t], split.tokens[t])) < 1e-5
    if stride == L:  # the windows that tile the span are non-overlapping segments
        assert np.allclose(got[:48], ex.nonoverlap_losses(model, split.tokens, start, 48, L))


def test_sliding_rejects_a_stride_longer_than_the_window():
    with pytest.raises(ConfigError, match='stride=30 is outside 1..L_ex=24'):
        ex.sliding_losses(tiny(), make_split().tokens, 0, 60, 24, 30)


# ------------------------------------------------------------------------------------------------ ppl end to end

def test_ppl_end_to_end(tmp_path):
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('alibi'), 'tiny-alibi')
    b = save_ckpt(tmp_path, tiny('rope'), 'tiny-rope')
    out = tmp_path / 'res'
    rows = ex.main(cfg(ckpt=[a, b], data_dir=data, lengths=[1, 2, 4], n=7, lm_infinite=True, n_starting=2,
                       out_dir=str(out)))['results']
    assert {f.name for f in out.iterdir()} == {'ppl_last_token.json', 'ppl_last_token.md', 'ppl_last_token.png'}
    saved = json.loads((out / 'ppl_last_token.json').read_text())
    assert len(saved['results']) == len(rows) == 2 * 2 * 3 and saved['command'].startswith('python ')
    assert all(r['n_scored'] == 7 and r['peak_rss_mb'] > 0 for r in rows)
    # LM-Infinite at L_ex = L_tr changes nothing: the Λ-mask covers everything and no distance exceeds the ceiling
    one = {(r['ckpt'], r['variant']): r['loss'] for r in rows if r['mult'] == 1}
    assert one[('tiny-alibi', 'vanilla')] == pytest.approx(one[('tiny-alibi', 'LM-Inf(n_start=2)')], abs=1e-6)
    # the vanilla number equals a direct computation on the same tokens
    split = corpus.load_split(data, 'test')
    ends, _ = corpus.draw_ends(split, 64, 7, seed=1337)
    model = tiny('alibi')
    want = np.mean([direct_ce(model, split.tokens[e - 32:e], split.tokens[e]) for e in ends])
    got = next(r['loss'] for r in rows if r['ckpt'] == 'tiny-alibi' and r['variant'] == 'vanilla' and r['mult'] == 2)
    assert got == pytest.approx(want, abs=1e-5)
    md = (out / 'ppl_last_token.md').read_text()
    assert '| model | 1 L_tr | 2 L_tr | 4 L_tr |' in md
    names = [line.split(' |')[0][2:] for line in md.splitlines()[4:7]]
    assert names == ['tiny-alibi', 'tiny-alibi [LM-Inf(n_start=2)]', 'tiny-rope']
    assert '±' not in md  # single runs show as they are


def test_seed_groups_show_mean_and_sample_std(tmp_path):
    data = save_split(tmp_path, make_split())
    for s in range(3):
        save_ckpt(tmp_path, tiny("alibi", seed=s), f"alibi-s{s}")
    save_ckpt(tmp_path, tiny('t5'), 't5-s0')
    out = tmp_path / 'res'
    res = ex.main(cfg(ckpt=[str(tmp_path / 'alibi-s*'), str(tmp_path / 't5-s0')], data_dir=data, lengths=[1, 2],
                      n=5, protocol='nonoverlap', max_tokens=128, out_dir=str(out)))
    rows, groups = res['results'], res['groups']
    assert sorted({r['ckpt'] for r in rows}) == ['alibi-s0', 'alibi-s1', 'alibi-s2', 't5-s0']
    # seed s's number is its own model's: the three seeds differ
    split = corpus.load_split(data, 'test')
    s1 = ex.nonoverlap_losses(tiny('alibi', seed=1), split.tokens, 0, 128, 32).mean()
    assert next(r['loss'] for r in rows if r['ckpt'] == 'alibi-s1' and r['mult'] == 2) == pytest.approx(s1, abs=1e-6)
    md = (out / 'ppl_nonoverlap.md').read_text()
    cells = []
    for m in (1, 2):
        ppl = np.array([r['ppl'] for r in rows if r['ckpt'].startswith('alibi') and r['mult'] == m])
        mean, sd = ppl.mean(), np.sqrt(((ppl - ppl.mean()) ** 2).sum() / 2)  # sample std of 3 values
        assert sd > 0 and 10 < mean < 100
        g = next(g for g in groups if g['group'] == 'alibi' and g['mult'] == m)
        assert g['n'] == 3 and g['runs'] == ['alibi-s0', 'alibi-s1', 'alibi-s2']
        assert g['ppl_mean'] == pytest.approx(mean) and g['ppl_std'] == pytest.approx(sd)
        cells.append(f'{mean:.2f} ± {sd:.2f} (n=3)')  # perplexities of 10..100: two decimals
    assert f'| alibi | {cells[0]} | {cells[1]} |' in md and 'standard deviation' in md
    assert '| t5-s0 | ' in md  # one seed: shown by its name
    assert len(json.loads((out / 'ppl_nonoverlap.json').read_text())['groups']) == 2 * 2


def test_the_defaults_are_those_the_committed_tables_were_made_with():
    """A default changed in DEFAULTS or VARIANT_DEFAULTS (LM-Infinite's n_starting = 10, say) silently changes what
    `bash results.sh` makes again: each committed perplexity table recorded, for every setting its command leaves out,
    today's default."""
    keys, checked = ('n_starting', 'topk', 'topk_from_layer', 'max_tokens', 'offset', 'stride', 'seed', 'last_k',
                     'base_len', 'protocol'), 0
    for path in glob.glob(os.path.join(ROOT, 'results', '**', '*.json'), recursive=True):
        with open(path) as f:
            data = json.load(f)
        command = data.get('command', '') if isinstance(data, dict) else ''
        if not command.startswith('python extrapolate.py') or '--mode=merge' in command or 'n_starting' not in data.get(
                'settings', {}):
            continue
        given = set(re.findall(r'--(\w+)=', command))
        for key in (set(keys) - given) & set(data['settings']):  # (older tables recorded fewer)
            assert data['settings'][key] == ex.DEFAULTS[key], (path, key)
            checked += 1
    assert checked > 100


def test_rope_extension_at_evaluation_base_len_and_merge(tmp_path):
    """A RoPE checkpoint evaluated with YaRN it was not trained with is labelled +yarn4 and equals a model built with
    it; base_len measures runs of different training lengths on the same tokens; merge joins two tables."""
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('rope'), 'rope-s0')
    b = save_ckpt(tmp_path, tiny('rope', block_size=32), 'long-s0')
    base = cfg(data_dir=data, lengths=[1, 2], n=6, base_len=16, out_dir=str(tmp_path / 'r'))
    plain = ex.main(dict(base, ckpt=[a, b], name='plain'))
    yarn = ex.main(dict(base, ckpt=[a], rope_scaling='yarn', rope_scale=4.0, name='yarn'))
    assert {r['ckpt'] for r in yarn['results']} == {'rope-s0+yarn4'} and yarn['groups'][0]['group'] == 'rope+yarn4'
    # the same tokens for both runs (16 and 32 tokens of context at 1x and 2x), whatever their training length
    scored = {(r['ckpt'], r['L_ex']) for r in plain['results']}
    assert scored == {(n, L) for n in ('rope-s0', 'long-s0') for L in (16, 32)}
    split = corpus.load_split(data, 'test')
    ends, _ = corpus.draw_ends(split, 32, 6, seed=1337)
    model = tiny('rope', rope_scaling='yarn', rope_scale=4.0)
    want = np.mean([direct_ce(model, split.tokens[e - 16:e], split.tokens[e]) for e in ends])
    assert next(r['loss'] for r in yarn['results'] if r['mult'] == 1) == pytest.approx(want, abs=1e-5)
    merged = ex.main(cfg(mode='merge', inputs=[str(tmp_path / 'r' / 'plain.json'), str(tmp_path / 'r' / 'yarn.json')],
                         out_dir=str(tmp_path / 'r'), name='all'))
    assert len(merged['groups']) == 3 * 2
    md = (tmp_path / 'r' / 'all.md').read_text()
    assert '| model | 1 x 16 | 2 x 16 |' in md
    assert [line.split(' |')[0][2:] for line in md.splitlines()[4:7]] == ['rope-s0', 'long-s0', 'rope-s0+yarn4']
    ex.main(dict(base, ckpt=[a], n=5, name='other'))
    with pytest.raises(ConfigError, match='other.json was made with other settings'):
        ex.main(cfg(mode='merge', inputs=[str(tmp_path / 'r' / 'plain.json'), str(tmp_path / 'r' / 'other.json')],
                    out_dir=str(tmp_path / 'r')))


def test_the_variants_give_lm_infinite_its_mask_ceiling_and_top_k():
    """LM-Infinite (Han et al. 2023, sec. 4, App. A): the first n_starting and the last L_tr tokens (the Λ mask),
    distances capped at L_tr, the top-k middle tokens from layer h on; windowed: the last L_tr (or windowed_at)
    tokens; a temperature per length, 1 at the lengths it does not name."""
    specs = dict(evaluation.variants(cfg(windowed=True, topk=5, topk_from_layer=1, n_starting=4,
                                         attn_temperature='2:0.9')))
    lm_inf = 'LM-Inf(n_start=4,top5@layer>=1)'
    assert list(specs) == ['vanilla', 'windowed@L_tr', lm_inf, 'tau(L)']
    assert specs[lm_inf](16, 2.0) == dict(key_window=16, n_starting=4, ceiling=16, topk=5, topk_from_layer=1)
    assert specs['vanilla'](16, 2.0) == {} and specs['windowed@L_tr'](16, 2.0) == dict(key_window=16)
    assert [specs['tau(L)'](16, m) for m in (2.0, 4.0)] == [dict(attn_temperature=0.9), dict(attn_temperature=1.0)]
    assert dict(evaluation.variants(cfg(windowed=True, windowed_at=8)))['windowed@8'](16, 1.0) == dict(key_window=8)


def test_parse_temperature_per_length():
    assert evaluation.parse_temperature('0.9') == {None: 0.9}
    assert evaluation.parse_temperature('2:0.95,4:0.9') == {2.0: 0.95, 4.0: 0.9}


def test_ppl_sliding_with_a_temperature_per_length(tmp_path):
    data = save_split(tmp_path, make_split())
    k = save_ckpt(tmp_path, tiny('kerple_log'), 'k')
    rows = ex.main(cfg(ckpt=[k], data_dir=data, protocol='sliding', lengths=[1, 2], max_tokens=256,
                       attn_temperature='2:0.9', out_dir=str(tmp_path / 'res')))['results']
    got = {(r['variant'], r['mult']): r['loss'] for r in rows}
    # 'tau(L)' is 1.0 at lengths it does not name, and 0.9 at 2x
    assert got[('tau(L)', 1)] == pytest.approx(got[('vanilla', 1)], abs=1e-9)
    model = tiny('kerple_log')
    with model.attention(attn_temperature=0.9):
        want = ex.sliding_losses(model, corpus.load_split(data, 'test').tokens, 0, 256, 32, 16).mean()
    assert got[('tau(L)', 2)] == pytest.approx(want, abs=1e-9) and got[('tau(L)', 2)] != got[('vanilla', 2)]
    written = sorted(f.name for f in (tmp_path / 'res').iterdir())
    assert written == ['ppl_sliding.json', 'ppl_sliding.md', 'ppl_sliding.png']


def test_regular_gpt_ppl_matches_its_plain_implementation_and_skips_what_gather_refuses(tmp_path, capsys):
    data = save_split(tmp_path, make_split())
    path = save_ckpt(tmp_path, tiny('regular'), 'regular')
    rows = ex.main(cfg(ckpt=[path], data_dir=data, lengths=[1, 4], n=5, windowed=True,
                       out_dir=str(tmp_path)))['results']
    split = corpus.load_split(data, 'test')
    ends, _ = corpus.draw_ends(split, 64, 5, seed=1337)
    model = tiny('regular')
    want = np.mean([direct_ce(model, split.tokens[e - 64:e], split.tokens[e], regular_impl='plain') for e in ends])
    got = {(r['variant'], r['mult']): r for r in rows}
    assert got[('vanilla', 4)]['loss'] == pytest.approx(want, abs=1e-5)
    assert got[('windowed@L_tr', 4)]['loss'] is None and "regular_impl='plain'" in capsys.readouterr().out
    # the dense implementation honours the window
    rows = ex.main(cfg(ckpt=[path], data_dir=data, lengths=[4], n=5, windowed=True, regular_impl='plain',
                       out_dir=str(tmp_path)))['results']
    windowed = next(r for r in rows if r['variant'] == 'windowed@L_tr')
    with model.attention(key_window=16):
        want = np.mean([direct_ce(model, split.tokens[e - 64:e], split.tokens[e], regular_impl='plain') for e in ends])
    assert windowed['loss'] == pytest.approx(want, abs=1e-5)


# ------------------------------------------------------------------------------------------------ position

@pytest.mark.parametrize('pe', ['t5', 'regular'])
def test_position_loss_is_the_mean_over_segments_at_each_position(tmp_path, pe):
    data = save_split(tmp_path, make_split())
    path = save_ckpt(tmp_path, tiny(pe), 'm')
    out = ex.main(cfg(mode='position', ckpt=[path], data_dir=data, length=2, n=3, regular_impl='plain',
                      out_dir=str(tmp_path / 'res')))
    assert sorted(f.name for f in (tmp_path / 'res').iterdir()) == ['position.json', 'position.md', 'position.png']
    curves = {r['variant']: np.array(r['loss_by_position']) for r in out}
    assert list(curves) == ['vanilla', 'windowed@L_tr']
    split, model = corpus.load_split(data, 'test'), tiny(pe)
    ends, _ = corpus.draw_ends(split, 32, 3, seed=1337)
    for p in (0, 15, 31):  # position p of each segment is predicted from the p + 1 tokens before it
        if pe == 'regular':  # ... by as many layers as the whole segment needs
            want = np.mean([plain_window_losses(model, split.tokens, e - 32, 32)[p] for e in ends])
        else:
            want = np.mean([direct_ce(model, split.tokens[e - 32:e - 32 + p + 1], split.tokens[e - 32 + p + 1])
                            for e in ends])
        assert curves['vanilla'][p] == pytest.approx(want, abs=1e-4)
    # within L_tr the window hides nothing
    assert np.allclose(curves['vanilla'][:16], curves['windowed@L_tr'][:16], atol=1e-4)


# ------------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize('argv, message', [
    (['--mode=bogus'], "mode='bogus'; allowed: ppl, position"),
    (['--protocol=overlap'], "protocol='overlap'; allowed: last_token, nonoverlap, sliding"),
    (['--lengths=1,two'], "config key 'lengths' in --lengths=1,two must be of type float"),
    (['--lengths=1,-2'], "lengths: -2 is not a positive multiple of L_tr"),
    (['--lengths=1,0.01'], "length multiple 0.01 x L_tr=16 gives 0 tokens"),
    (['--split=nosuch'], "split='nosuch'; allowed: train, val, test"),
    # the documents' own tokens (300, 40, 500, 10, 260) past 256 of context: 44 + 244 + 4; past 64: 236 + 436 + 196
    (['--n=5000'], "holds 292 tokens with 256 tokens of context before them in their document (the longest L_ex of a); "
                   "allowed n <= 292"),
    (['--mode=position', '--n=5000', '--length=4'], "holds 868 tokens with 64 tokens of context"),
    (['--rope_scaling=yarm'], "rope_scaling='yarm', rope_scale=4; allowed: pi, ntk"),
    (['--device=gpu'], "device='gpu' is not one of auto, cpu"),
    (['--n=-1'], "n=-1 must be an integer >= 0"),
    (['--attn_temperature=hot'], "bad attn_temperature 'hot'"),
    (['--ckpt=no/such/run'], "no checkpoint at 'no/such/run'"),
])
def test_bad_input_names_the_bad_value(tmp_path, argv, message):
    data = save_split(tmp_path, make_split())
    path = save_ckpt(tmp_path, tiny(), 'a')
    with pytest.raises((ConfigError, FileNotFoundError)) as e:
        ex.main(parse_config(ex.DEFAULTS, [f'--ckpt={path}', f'--data_dir={data}', '--n=2', f'--out_dir={tmp_path}']
                             + argv))
    assert message in str(e.value)


@pytest.mark.parametrize('argv, most', [(['--lengths=1,16'], 292), (['--mode=position', '--length=4'], 868)])
def test_n_equal_to_the_most_the_split_holds_is_scored_and_one_more_refused(tmp_path, argv, most):
    """The bound of the errors above is inclusive: n = 292 (the documents' 44 + 244 + 4 tokens past 256 of context,
    counted by hand above) scores every one of them, at every length; n = 293 is refused, naming 292."""
    data = save_split(tmp_path, make_split())
    path = save_ckpt(tmp_path, tiny(), 'a')
    common = [f'--ckpt={path}', f'--data_dir={data}', f'--out_dir={tmp_path}'] + argv
    out = ex.main(parse_config(ex.DEFAULTS, common + [f'--n={most}']))
    rows = out['results'] if isinstance(out, dict) else out
    assert rows and all(r['n_scored'] == most if 'n_scored' in r else r['segments']['n_drawn'] == most for r in rows)
    with pytest.raises(ConfigError, match=f'allowed n <= {most}$'):
        ex.main(parse_config(ex.DEFAULTS, common + [f'--n={most + 1}']))


def test_cli_error_is_one_line_on_stderr():
    p = subprocess.run([sys.executable, os.path.join(ROOT, 'extrapolate.py'), '--ckpt=x', '--protocol=overlap'],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode != 0 and p.stdout == ''
    assert p.stderr.strip().splitlines() == ["error: protocol='overlap'; "
                                             "allowed: last_token, nonoverlap, sliding, stream"]


@pytest.mark.parametrize('pe', ['alibi', 'regular'])
def test_every_token_losses_run_the_head_a_slice_at_a_time(monkeypatch, pe):
    """With room for 2 x 5 x V logits the head sees at most 5 positions per call, and the per-token losses equal one
    plain forward's: a 262,144-id vocabulary then never holds [B, T, V] logits at once (issue #41)."""
    model = tiny(pe)
    x = torch.randint(0, V, (2, 23), generator=torch.Generator().manual_seed(4))
    y = torch.randint(0, V, (2, 23), generator=torch.Generator().manual_seed(5))
    sizes = []
    model.lm_head.register_forward_hook(lambda m, inp, out: sizes.append(inp[0].size(1)))
    monkeypatch.setattr(evaluation, 'HEAD_ELEMENTS', 2 * 5 * V)
    with torch.no_grad():
        got = evaluation.every_token_losses(model, x, y)
        sliced = sizes[:]
        want = model(x, targets=y, reduction='none')[1]
    assert max(sliced) == 5 and sum(sliced) == 23 and got.shape == (2, 23)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)
