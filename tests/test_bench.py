"""bench.py: the candidate attention implementations equal the reference, the interleaving arithmetic, and each
mode running end to end on a very small model (timings themselves are never asserted)."""
import json

import pytest
import torch

from tools import bench
@pytest.mark.filterwarnings('ignore:flex_attention called without torch.compile')
@pytest.mark.parametrize('pe', ['alibi', 'kerple_log', 't5'])
@pytest.mark.parametrize('impl', ['sdpa_mask', 'sdpa_mask_grad', 'flex_eager', 'dense', 'fast'])
def test_attention_candidates_equal_the_plain_reference(impl, pe):
    g = torch.Generator().manual_seed(0)
    q, k, v = [torch.randn(2, 4, 70, 16, generator=g) for _ in range(3)]
    enc = bench.POSITIONAL_ENCODINGS[pe](bench.GPTConfig(pe=pe, n_head=4, n_embd=64))
    with torch.no_grad():
        ref = bench.attention_impl('plain', q, k, v, enc)
        assert torch.allclose(bench.attention_impl(impl, q, k, v, enc), ref, atol=1e-5)
        assert not torch.allclose(bench.attention_impl('causal', q, k, v, enc), ref, atol=1e-3)  # the bias acts


def test_interleaving_rotates_the_order_and_takes_per_round_ratios():
    times = {'none': [1.0, 2.0, 1.0, 4.0], 'a': [2.0, 2.0, 3.0, 4.0]}   # a slow second round hits both
    calls, seen = [], {'none': 0, 'a': 0}

    def step(name):
        calls.append(name)
        seen[name] += 1
        return dict(s=times[name][seen[name] - 1])
    res, ratio = bench.interleaved(['none', 'a'], rounds=3, warmup=1, step=step)
    assert calls == ['none', 'a', 'a', 'none', 'none', 'a', 'a', 'none']
    assert [r['s'] for r in res['a']] == [2.0, 3.0, 4.0]
    assert ratio['a'] == pytest.approx(1.0)  # per-round ratios 1, 3, 1: the median ignores the odd round
    assert ratio['none'] == 1.0


@pytest.mark.parametrize('mode, extra', [('train', {}), ('eval', dict(lengths=[32, 64], variants=['', 'lm_infinite'])),
                                         ('regular', dict(lengths=[16, 32]))])
def test_modes_run_on_a_tiny_model(mode, extra, capsys, tmp_path):
    cfg = dict(bench.DEFAULTS, mode=mode, pes=['alibi', 'kerple_log'], rounds=1, warmup=0, n_layer=1, n_head=2,
               n_embd=16, block_size=16, batch_size=2, vocab_size=32, device='cpu', json=str(tmp_path / 'b.json'),
               **extra)
    out = bench.main(cfg)
    printed, said = capsys.readouterr()
    # stdout is the page results.sh tees into a .md: the header and the table; progress and 'wrote' on stderr
    assert printed.lstrip('\n').startswith(('training step on', 'no-grad forward', 'RegularGPT forward'))
    assert f"wrote {tmp_path / 'b.json'}" in said and 'wrote' not in printed
    saved = json.load(open(tmp_path / 'b.json'))  # --json: the same figures, with the command and the machine
    assert saved['mode'] == mode and saved['command'].startswith('python ') and saved['torch'] == torch.__version__
    if mode == 'train':
        assert list(out) == ['none', 'alibi', 'kerple_log'] and '| none |' in printed
        assert out['none']['ratio_to_none'] == 1.0 and out['alibi']['mfu'] is None  # MFU on a GPU only
        assert [r['tokens_per_s'] for r in saved['results'].values()] == [o['tokens_per_s'] for o in out.values()]
    elif mode == 'eval':
        names = ('none', 'alibi', 'kerple_log', 'alibi+lm_infinite', 'kerple_log+lm_infinite')
        assert set(out) == {(name, T) for name in names for T in (32, 64)}
        assert out['none', 32]['ratio'] == 1.0
        # the table names the route each forward took (routes.choose)
        for row in ('| none | causal |', '| alibi | tiled |', '| kerple_log+lm_infinite | tiled |'):
            assert row in printed
        taken = {(r['name'], r['T'], r['route']) for r in saved['results'] if r['name'] == 'alibi'}
        assert taken == {('alibi', 32, 'tiled'), ('alibi', 64, 'tiled')}
    else:
        assert set(out) == {16, 32} and set(out[16]) == {'plain', 'gather', 'reduce'}


def test_train_takes_the_route_a_training_call_prefers(capsys):
    """results.sh lease times kerple_log's training by flex and by dense beside none; on a CPU (no flex) both take
    dense, and the table says so; a route that is not one is refused."""
    cfg = dict(bench.DEFAULTS, mode='train', pes=['kerple_log+dense', 'kerple_log+flex', 'alibi'], rounds=1, warmup=0,
               n_layer=1, n_head=2, n_embd=16, block_size=16, batch_size=2, vocab_size=32, device='cpu')
    out = bench.main(cfg)
    assert {name: r['route'] for name, r in out.items()} == {
        'none': 'causal', 'kerple_log+dense': 'dense', 'kerple_log+flex': 'dense', 'alibi': 'folded'}
    assert '| kerple_log+flex | dense |' in capsys.readouterr().out
    with pytest.raises(bench.ConfigError, match="'t5\\+fast' names no route; train takes"):
        bench.main(dict(cfg, pes=['t5+fast']))


def test_eval_takes_one_variant_of_one_encoding(capsys):
    """results.sh lease times alibi+lm_infinite beside the plain encodings, without LM-Infinite for all of them."""
    cfg = dict(bench.DEFAULTS, mode='eval', pes=['alibi', 'alibi+lm_infinite'], lengths=[32], rounds=1, warmup=0,
               n_layer=1, n_head=2, n_embd=16, block_size=16, vocab_size=32, device='cpu')
    assert {name for name, _ in bench.main(cfg)} == {'none', 'alibi', 'alibi+lm_infinite'}
    with pytest.raises(bench.ConfigError, match='unknown'):
        bench.main(dict(cfg, pes=['alibi+lm_infinity']))
