"""Streaming through a bounded, cache-relative KV cache (lexgpt.kv_cache.KVCache(relative=True), streaming.stream_*):
it must equal one full forward under LM-Infinite's Λ mask and distance ceiling, chunked or token by token, at any stream
offset, in constant memory."""
import json

import numpy as np
import pytest
import torch

import extrapolate as ex
import helpers
from lexgpt import evaluation, progress, streaming
from lexgpt.outputs import fmt_ppl
from lexgpt.streaming import position_buckets, stream_steps, stream_losses, stream_refusal
from lexgpt.config import ConfigError, parse_config
from model import POSITIONAL_ENCODINGS, KVCache

W, S = 16, 4  # window and starting (sink) tokens; helpers.tiny trains on L_tr = 16
STREAMABLE = [p for p in POSITIONAL_ENCODINGS if stream_refusal(helpers.tiny(p)) is None]  # all but a few, below


def text(n, seed=0):
    return np.random.default_rng(seed).integers(1, helpers.V, n).astype(np.uint16)


def streamed(model, tokens, step, window=W, n_starting=S):
    steps = stream_steps([tokens], len(tokens) - 1, step)
    return np.concatenate(list(stream_losses(model, steps, window, n_starting)))


@pytest.mark.parametrize('pe, n_starting',
                         [(p, S) for p in STREAMABLE] + [(p, 0) for p in ('rope', 'alibi', 'fox', 'cope')])
def test_stream_equals_full_forward_under_lambda_mask(pe, n_starting):
    model, tokens = helpers.tiny(pe, strong=True), text(81)
    x, y = (torch.from_numpy(tokens[a:a + 80].astype(np.int64))[None] for a in (0, 1))
    with torch.no_grad(), model.attention(key_window=W, n_starting=n_starting, ceiling=W if n_starting else 0):
        full = model(x, targets=y, reduction='none')[1][0].double().numpy()
    np.testing.assert_allclose(streamed(model, tokens, 7, n_starting=n_starting), full, atol=2e-5)


@pytest.mark.parametrize('pe', ['rope', 'alibi', 'fox'])
def test_many_tokens_a_step_equals_token_by_token(pe):
    model, tokens = helpers.tiny(pe, strong=True), text(61, seed=1)
    np.testing.assert_allclose(streamed(model, tokens, 16), streamed(model, tokens, 1), atol=2e-5)


def offset_losses(model, tokens, offset, relative=True, n_starting=S, step=8):
    """Losses of tokens[n_starting:] after the sinks tokens[:n_starting] and a jump of the stream to `offset`, as if
    offset - n_starting tokens between them had streamed through the cache and been dropped."""
    cache, out = KVCache(cache_window=W, n_starting=n_starting, relative=relative), []
    t = torch.from_numpy(tokens.astype(np.int64))[None]
    with torch.no_grad(), model.attention(ceiling=W if n_starting else 0):
        if n_starting:
            model(t[:, :n_starting], cache=cache)
        cache.next = offset
        for a in range(n_starting, t.size(1) - 1, step):
            b = min(a + step, t.size(1) - 1)
            out.append(model(t[:, a:b], targets=t[:, a + 1:b + 1], cache=cache, reduction='none')[1][0])
            assert cache.k[0].size(2) <= n_starting + W and cache.idx.numel() <= n_starting + W
    return torch.cat(out).double().numpy()


@pytest.mark.parametrize('pe', ['rope', 'xpos', 'alibi', 'kerple_log'])
def test_losses_at_stream_offset_2_24_equal_those_at_0(pe):
    model, tokens = helpers.tiny(pe, strong=True), text(70, seed=2)
    np.testing.assert_allclose(offset_losses(model, tokens, 2 ** 24), offset_losses(model, tokens, S), atol=1e-5)


def test_absolute_positions_at_2_24_would_break_rope():
    # the check above can fail: the same stream with keys rotated by their index (the plain cache) drifts at 2^24
    model, tokens = helpers.tiny('rope', strong=True), text(70, seed=2)
    at0, far = (offset_losses(model, tokens, o, relative=False, n_starting=0) for o in (0, 2 ** 24))
    assert np.abs(far - at0).max() > 1e-4  # a random model is near uniform: 2.6e-4 here, 0.75 nats trained (#29)
    np.testing.assert_allclose(offset_losses(model, tokens, 2 ** 24, n_starting=0), at0, atol=1e-5)


def test_cache_holds_at_most_s_plus_w_and_the_first_tokens():
    model, tokens = helpers.tiny('rope'), text(100, seed=3)
    cache = KVCache(cache_window=W, n_starting=S, relative=True)
    with torch.no_grad():
        for x, _ in stream_steps([tokens], 99, 10):
            model(x, cache=cache)
            assert all(k.size(2) <= S + W for k in cache.k.values())
    assert cache.idx.tolist() == list(range(S)) + list(range(99 - W, 99))
    assert cache.rel.tolist() == [list(range(S + W))]  # positions are slots: the stream's length never shows


def test_stream_steps_join_parts_and_refuse_a_short_stream():
    a, b = np.arange(5, dtype=np.uint16), np.arange(100, 110, dtype=np.uint16)
    got = list(stream_steps([a, b], 12, 5))
    assert [x.tolist() for x, _ in got] == [[[0, 1, 2, 3, 4]], [[100, 101, 102, 103, 104]], [[105, 106]]]
    assert [y.tolist() for _, y in got] == [[[1, 2, 3, 4, 100]], [[101, 102, 103, 104, 105]], [[106, 107]]]
    with pytest.raises(ConfigError, match='tokens=15: the stream holds only 14 targets'):
        list(stream_steps([a, b], 15, 5))


def test_windows_baseline_scores_each_step_from_scratch():
    model, tokens = helpers.tiny('alibi'), text(33, seed=4)
    got = np.concatenate(list(stream_losses(model, stream_steps([tokens], 32, W), W, 0, fresh=True)))
    x, y = (torch.from_numpy(tokens[a:a + 32].astype(np.int64)).view(2, W) for a in (0, 1))
    with torch.no_grad():
        want = model(x, targets=y, reduction='none')[1].reshape(-1).double().numpy()
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_position_buckets_double():
    assert position_buckets(1000).tolist() == [0, 64, 128, 256, 512, 1000]
    assert position_buckets(64).tolist() == [0, 64]


@pytest.mark.parametrize('pe, refused', [('learned', True), ('sinusoidal', True), ('bipe_rope', True), ('fire', True),
                                         ('regular', True), ('rope', False), ('fox', False), ('cope', False)])
def test_refusal_follows_the_rule(pe, refused):
    why = stream_refusal(helpers.tiny(pe))
    assert (why is not None) == refused
    assert set(POSITIONAL_ENCODINGS) - set(STREAMABLE) == {'learned', 'sinusoidal', 'bipe_rope', 'bipe_alibi', 'fire',
                                                           'regular'}
    if refused:
        assert why.startswith(f"pe={pe!r} cannot stream")


def test_extrapolate_stream_rows_equal_full_forwards_per_bucket(tmp_path):
    # the stream crosses from the test split into train; every row is recomputed by one forward over the whole stream
    data, model = tmp_path / 'data', helpers.tiny('rope', strong=True)
    data.mkdir()
    test, train = helpers.make_split(), helpers.make_split(seed=1)
    helpers.save_split(data, test), helpers.save_split(data, train, 'train')
    path = helpers.save_ckpt(tmp_path, model, 'rope-s0')
    got = ex.main(parse_config(ex.DEFAULTS, [f'--ckpt={path}', f'--data_dir={data}', '--protocol=stream',
                                             '--tokens=1200', '--n_starting=4', '--stream_step=50',
                                             f'--out_dir={tmp_path / "out"}']))
    stream = np.concatenate([test.tokens, train.tokens])[:1201].astype(np.int64)
    x, y = torch.from_numpy(stream[:-1])[None], torch.from_numpy(stream[1:])[None]
    edges = position_buckets(1200)
    with torch.no_grad():
        with model.attention(key_window=W, n_starting=S, ceiling=W):
            sinks = model(x, targets=y, reduction='none')[1][0]
        with model.attention(key_window=W):
            no_sinks = model(x, targets=y, reduction='none')[1][0]
        windows = model(x.view(-1, W), targets=y.view(-1, W), reduction='none')[1].reshape(-1)
    for row, full in zip(got['results'], (sinks, no_sinks, windows)):
        want = [np.exp(full[a:b].double().mean().item()) for a, b in zip(edges, edges[1:])]
        np.testing.assert_allclose(row['ppl_by_bucket'], want, rtol=1e-5)
        assert row['n_tokens'] == 1200 and row['tokens_per_s'] > 0
    assert [r['label'] for r in got['results']] == ['S=4, W=16', 'S=0, W=16', 'windows of 16 from scratch']
    assert (tmp_path / 'out' / 'stream.md').exists() and (tmp_path / 'out' / 'stream.png').exists()
    # each perplexity under the bucket it belongs to: ends 64, 128, ..., 1024, 1200 (position_buckets)
    header = next(line for line in (tmp_path / 'out' / 'stream.md').read_text().splitlines() if line.startswith('|'))
    assert header == ('| model | attention | 64 | 128 | 256 | 512 | 1,024 | 1,200 | all | tokens/s | tokens/CPU s '
                      '| peak RSS |')
    saved = json.loads((tmp_path / 'out' / 'stream.json').read_text())
    assert saved['settings'] == dict(split='test', tokens=1200, n_starting=4, cache_window=None, bos=None)


def test_extrapolate_stream_refuses_absolute_positions_in_one_line(tmp_path):
    data = helpers.save_split(tmp_path, helpers.make_split())
    path = helpers.save_ckpt(tmp_path, helpers.tiny('learned'), 'learned-s0')
    with pytest.raises(ConfigError, match=r"learned-s0: pe='learned' cannot stream: absolute positions"):
        ex.main(parse_config(ex.DEFAULTS, [f'--ckpt={path}', f'--data_dir={data}', '--protocol=stream',
                                           '--tokens=100']))


def test_extrapolate_stream_reuse_keeps_other_runs_and_takes_done_rows(tmp_path):
    data = helpers.save_split(tmp_path, helpers.make_split())
    a, b = (helpers.save_ckpt(tmp_path, helpers.tiny(pe), f'{pe}-s0') for pe in ('alibi', 'rope'))
    base = [f'--data_dir={data}', '--protocol=stream', '--tokens=200', f'--out_dir={tmp_path / "out"}']
    first = ex.main(parse_config(ex.DEFAULTS, base + [f'--ckpt={a},{b}', '--stream_rows=sinks']))
    helpers.save_ckpt(tmp_path, helpers.tiny('alibi', seed=1), 'alibi-s0')  # new weights, same iteration: taken
    again = ex.main(parse_config(ex.DEFAULTS, base + [f'--ckpt={a}', f'--reuse={tmp_path / "out" / "stream.json"}']))
    assert [(r['ckpt'], r['row']) for r in again['results']] == [('rope-s0', 'sinks'), ('alibi-s0', 'sinks'),
                                                                 ('alibi-s0', 'no_sinks'), ('alibi-s0', 'windows')]
    assert again['results'][:2] == first['results'][::-1]
    with pytest.raises(ConfigError, match='was made with settings'):
        ex.main(parse_config(ex.DEFAULTS, base[:2] + ['--tokens=100', f'--ckpt={a}',
                                                      f'--reuse={tmp_path / "out" / "stream.json"}']))


def test_extrapolate_stream_bad_settings_are_one_line(tmp_path):
    """A ppl JSON given to a stream's --reuse, and a row the stream does not have, each named with what is allowed."""
    data = helpers.save_split(tmp_path, helpers.make_split())
    a = helpers.save_ckpt(tmp_path, helpers.tiny('alibi'), 'alibi-s0')
    base = [f'--ckpt={a}', f'--data_dir={data}', '--tokens=100', f'--out_dir={tmp_path / "out"}']
    ex.main(parse_config(ex.DEFAULTS, base + ['--lengths=1', '--n=2']))
    foreign = f'--reuse={tmp_path / "out" / "ppl_last_token.json"}'
    not_stream = r"ppl_last_token.json' is not a stream JSON of extrapolate.py \(protocol=stream"
    with pytest.raises(ConfigError, match=not_stream):
        ex.main(parse_config(ex.DEFAULTS, base + ['--protocol=stream', foreign]))
    with pytest.raises(ConfigError, match=r'^stream_rows=sinks,tail; allowed: sinks, no_sinks, windows$'):
        ex.main(parse_config(ex.DEFAULTS, base + ['--protocol=stream', '--stream_rows=sinks,tail']))


def test_a_stream_row_records_its_settings_and_speed_and_says_its_perplexity(tmp_path, monkeypatch, capsys):
    """One row on a clock that says 4 s for the whole stream: 200 tokens / 4 s = 50 tokens/s; the row names its group
    and stream step, and its printed line its perplexity. A model whose tokenizer puts BOS 7 first: the stream's
    settings say so, and --bos=False says None."""
    data = helpers.save_split(tmp_path, helpers.make_split())
    a = helpers.save_ckpt(tmp_path, helpers.tiny('alibi'), 'alibi-s0')

    class FourSeconds(progress.Meter):
        def __exit__(self, *exc):
            super().__exit__(*exc)
            self.seconds = 4.0
            return False
    monkeypatch.setattr(streaming, 'Meter', FourSeconds)
    monkeypatch.setattr(evaluation, 'bos_id', lambda model, on=True: 7 if on else None)
    base = [f'--ckpt={a}', f'--data_dir={data}', '--protocol=stream', '--tokens=200', '--stream_rows=sinks',
            '--stream_step=25', f'--out_dir={tmp_path / "out"}']
    got = ex.main(parse_config(ex.DEFAULTS, base))
    row = got['results'][0]
    assert (row['group'], row['stream_step'], row['tokens_per_s'], row['seconds']) == ('alibi', 25, 50.0, 4.0)
    assert f"ppl {fmt_ppl(row['ppl']):>8} over 200 tokens" in capsys.readouterr().out
    assert got['settings']['bos'] == 7
    assert ex.main(parse_config(ex.DEFAULTS, base + ['--bos=False']))['settings']['bos'] is None


def test_a_stream_file_older_than_its_settings_is_read_as_it_meant(tmp_path, capsys):
    """Files made before cache_window None meant L_tr said 0 for it, and files made before settings.bos have none (no
    BOS was put first): --reuse of such a file takes its rows. A row needs only ckpt, row and iters to be read."""
    data = helpers.save_split(tmp_path, helpers.make_split())
    a = helpers.save_ckpt(tmp_path, helpers.tiny('alibi'), 'alibi-s0')
    base = [f'--ckpt={a}', f'--data_dir={data}', '--protocol=stream', '--tokens=200', '--stream_rows=sinks',
            f'--out_dir={tmp_path / "out"}']
    first = ex.main(parse_config(ex.DEFAULTS, base))
    old = tmp_path / 'old.json'
    settings = {k: v for k, v in first['settings'].items() if k != 'bos'}
    old.write_text(json.dumps(dict(first, settings=dict(settings, cache_window=0))))
    capsys.readouterr()
    again = ex.main(parse_config(ex.DEFAULTS, base + [f'--reuse={old}', '--name=again']))
    assert f'sinks: taken from {old}' in capsys.readouterr().out
    assert again['results'] == first['results']
    assert streaming.stream_problem(dict(protocol='stream', results=[dict(ckpt='a', row='sinks', iters=3)])) == ''
