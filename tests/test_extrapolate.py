"""
extrapolate.py against independent facts: losses recomputed directly with the model, hand-computed kernels and
formulas, a copying oracle for the passkey task, and Lemma 2.3 on the random model it assumes. CPU, seconds.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import extrapolate as ex
from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
V = 64



def tiny(pe='alibi', **kw):
    args = dict(vocab_size=V, block_size=16, n_layer=2, n_head=4, n_embd=32, pe=pe)
    args.update(kw)
    torch.manual_seed(0)
    model = GPT(GPTConfig(**args)).eval()
    with torch.no_grad():  # random kernels instead of the zero init, so that every encoding acts
        for name, p in model.pe.named_parameters():
            if name in ('table', 'r'):
                p.normal_(0, 1)
    return model


def make_split(doc_lengths=(300, 40, 500, 10, 260), seed=0):
    """Documents of random tokens 1..V-1 joined by eot 0, with their start offsets."""
    rng = np.random.default_rng(seed)
    parts, docs, at = [], [], 0
    for i, n in enumerate(doc_lengths):
        if i:
            parts.append(np.zeros(1, dtype=np.uint16))
            at += 1
        docs.append(at)
        parts.append(rng.integers(1, V, n).astype(np.uint16))
        at += n
    return ex.Split(np.concatenate(parts), np.array(docs), {'tokenizer': 'bytes'}, 'hand')


def direct_ce(model, ids, target):
    """The loss of `target` after the input `ids`, straight from the model's logits."""
    with torch.no_grad():
        logits, _ = model(torch.tensor(ids, dtype=torch.long)[None])
    return F.cross_entropy(logits[0, -1][None].float(), torch.tensor([int(target)])).item()


# ------------------------------------------------------------------------------------------------ ppl

def test_draw_ends_keeps_every_context_inside_one_document():
    split = make_split()
    ends, info = ex.draw_ends(split, 64, 50, seed=1)
    starts, stops = ex.document_bounds(split.docs, len(split.tokens))
    assert len(ends) == 50 == len(set(ends.tolist()))
    for e in ends:
        d = np.searchsorted(starts, e, side='right') - 1
        assert starts[d] <= e - 64 and e < stops[d]          # context and scored token in document d
        assert (split.tokens[e - 64:e + 1] != 0).all()       # never crosses an eot
    assert info['docs_too_short'] == 2 and info['docs_long_enough'] == 3  # the 40- and 10-token documents
    assert info['positions'] == (300 - 64) + (500 - 64) + (260 - 64)
    with pytest.raises(ex.CLIError, match='no document'):
        ex.draw_ends(split, 600, 5, seed=1)


def test_last_token_ppl_equals_hand_computed_loss():
    split, model = make_split(), tiny('alibi')
    ends, _ = ex.draw_ends(split, 64, 6, seed=2)
    for L in (16, 40, 64):
        got = ex.last_token_losses(model, split.tokens, ends, L, batch_tokens=100)  # several batches
        want = [direct_ce(model, split.tokens[e - L:e], split.tokens[e]) for e in ends]
        assert np.allclose(got, want, atol=1e-5)


class ConstantModel(torch.nn.Module):
    """Logits that ignore the input: the loss identifies the scored target token and nothing else."""

    def __init__(self):
        super().__init__()
        self.v = torch.linspace(-3, 3, V) ** 3  # distinct log-probs for distinct tokens

    def forward(self, idx, targets=None, reduction='mean'):
        logits = self.v.expand(*idx.shape, V)
        if targets is None:
            return logits[:, [-1]], None
        return logits, F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), reduction='none').view(targets.shape)


def test_last_token_scores_the_same_tokens_at_every_length():
    split, model = make_split(), ConstantModel()
    ends, _ = ex.draw_ends(split, 256, 40, seed=3)
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
    ends, _ = ex.draw_ends(split, 48, 3, seed=4)
    got = ex.last_token_losses(model, split.tokens, ends, 48, last_k=3).reshape(3, 3)
    for i, e in enumerate(ends):
        for j, t in enumerate(range(e - 2, e + 1)):  # token t with the 48 - (e - t) tokens of this window before it
            assert abs(got[i, j] - direct_ce(model, split.tokens[e - 48:t], split.tokens[t])) < 1e-5


@pytest.mark.parametrize('pe', ['alibi', 'rope'])
def test_nonoverlap_equals_direct_computation(pe):
    split, model = make_split(), tiny(pe)
    start, n, L = 5, 96, 32
    got = ex.nonoverlap_losses(model, split.tokens, start, n, L, batch_tokens=64)
    want = []
    for s in range(start, start + n, L):
        for t in range(s + 1, s + L + 1):   # each target with the tokens from its segment's start only
            want.append(direct_ce(model, split.tokens[s:t], split.tokens[t]))
    assert got.shape == (n,) and np.allclose(got, want, atol=1e-5)


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
    with pytest.raises(ex.CLIError, match='stride=30 is outside 1..L_ex=24'):
        ex.sliding_losses(tiny(), make_split().tokens, 0, 60, 24, 30)


# ------------------------------------------------------------------------------------------------ erf

@pytest.mark.parametrize('pe', ['none', 'alibi', 'sinusoidal'])
def test_erf_of_windowed_model_is_bounded_by_window_times_layers(pe):
    w, R, L = 4, 3, 40
    model = tiny(pe, n_layer=R, window=w, block_size=L)
    split = make_split()
    ends, _ = ex.draw_ends(split, L, 5, seed=5)
    s = ex.receptive_field(model, split.tokens, ends, L)
    reach = R * (w - 1) + 1                  # the last token sees w-1 more tokens back per layer
    assert (s[:L - reach] == 0).all()        # exactly zero: masked keys are never read
    assert (s[L - reach:] > 0).all()
    assert abs(s.sum() - 1) < 1e-9
    erf = ex.erf_tokens(s)
    assert erf <= reach <= w * R
    c = ex.cumulative_from_end(s)
    assert abs(c[0] - 1) < 1e-9 and np.all(np.diff(c) <= 1e-12)
    assert all(p.grad is None for p in model.parameters())  # the parameters were left alone


def test_erf_tokens_on_hand_values():
    s = np.array([0.0, 0.005, 0.015, 0.08, 0.9])
    assert ex.erf_tokens(s) == 3          # the last 3 tokens hold 0.995 > 0.99, the last 2 only 0.98
    assert ex.erf_tokens(np.array([0.5, 0.5])) == 2


# ------------------------------------------------------------------------------------------------ kernels

def test_effective_length_counts_on_hand_set_alibi():
    model = tiny('alibi')   # 4 heads: slopes 2^-2, 2^-4, 2^-6, 2^-8; eff = first d with slope * d > 2
    tabs = ex.kernel_tables(model, 600)
    effs = ex.effective_lengths(tabs[0][0])
    assert effs.tolist() == [9, 33, 129, 513]
    assert ex.head_counts(effs, [0, 8, 9, 32, 33, 200, 513, 600]).tolist() == [0, 0, 1, 1, 2, 3, 4, 4]
    assert np.isinf(ex.effective_lengths(ex.kernel_tables(model, 100)[0][0])[3])  # beyond the table: never


def test_effective_length_on_hand_set_kerple_log():
    model = tiny('kerple_log')
    with torch.no_grad():  # -r1 log(1 + r2 d) < -2  <=>  d > (e^(2/r1) - 1) / r2
        model.pe.r1[0] = torch.tensor([1.0, 0.5, 2.0, 0.1])  # the set shared by every layer
        model.pe.r2[0] = torch.tensor([1.0, 2.0, 0.5, 1.0])
    effs = ex.effective_lengths(ex.kernel_tables(model, 1000)[1][0])
    want = [math.floor((math.exp(2 / r1) - 1) / r2) + 1 for r1, r2 in [(1, 1), (0.5, 2), (2, 0.5)]]
    assert effs[:3].tolist() == want == [7, 27, 4] and np.isinf(effs[3])


def test_kernels_command_explains_encodings_without_a_bias(tmp_path, capsys):
    path = save_ckpt(tmp_path, tiny('rope'), 'r')
    with pytest.raises(ex.CLIError, match='none of the checkpoints has a bias'):
        ex.run(['kernels', '--ckpt', path, '--out_dir', str(tmp_path)])
    assert "pe='rope' has no distance bias" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------ attention

def test_temperature_search_and_length_rule():
    split, model = make_split(), tiny('t5')
    ends, _ = ex.draw_ends(split, 32, 3, seed=6)
    _, tr = ex.attention_stats(model, split.tokens, ends, 32)
    grid = {t: ex.attention_stats(model, split.tokens, ends, 32, t)[1] for t in ex.TAU_GRID}
    assert ex.search_temperature(tr['pmax'], {t: g['pmax'] for t, g in grid.items()}) == 1.0
    assert ex.search_temperature(tr['entropy'], {t: g['entropy'] for t, g in grid.items()}) == 1.0
    pm = [grid[t]['pmax'] for t in ex.TAU_GRID]
    assert all(a < b for a, b in zip(pm, pm[1:]))   # a lower temperature sharpens attention
    assert ex.TAU_GRID == [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5]
    assert ex.length_rule(4096, 256) == pytest.approx(math.log(256) / math.log(4096)) == pytest.approx(2 / 3)
    assert ex.length_rule(256, 256) == 1.0
    # the closed forms give tau = 1 when nothing changes, and Prop 5.2 by hand
    assert ex.prop52_tau(256, 256, 1.3, 1.3) == pytest.approx(1.0)
    assert ex.prop51_tau(256, 256, 0.2, 1.3, 1.3) == pytest.approx(1.0)
    assert ex.prop52_tau(256, 1024, 1.0, 2.0) == pytest.approx(2 / math.sqrt(1 + 2 * math.log(4)))


def test_prop51_solves_its_fixed_point():
    L_tr, L_ex, p, s_tr, s_ex = 512, 4096, 0.5, 1.0, 1.0
    tau = ex.prop51_tau(L_tr, L_ex, p, s_tr, s_ex)
    rhs = (math.log(L_tr) + math.log(p) + s_tr ** 2 / 2) / (math.log(L_ex) + math.log(p) + s_ex ** 2 / (2 * tau ** 2))
    assert 0 < tau < 1 and tau == pytest.approx(rhs)
    assert math.isnan(ex.prop51_tau(L_tr, L_ex, 0.3, 1.5, 1.8))  # no real root: no temperature aligns P_max


def test_attention_stats_on_a_hand_distribution():
    stats = ex.AttnStats(2)
    probs = torch.tensor([[[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]]])  # [1, 1, 3, 3]
    stats(1, probs, None, None)
    per_layer, _ = stats.means()
    assert per_layer['pmax'][1] == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert per_layer['entropy'][1] == pytest.approx((0 + math.log(2) + 1.5 * math.log(2)) / 3)


@pytest.mark.parametrize('pe', ['alibi', 'rope', 't5', 'kerple_biaswht', 'sinusoidal', 'sandwich'])
def test_layer0_logits_reproduce_the_models_attention(pe):
    model = tiny(pe)
    idx = torch.randint(0, V, (2, 30))
    seen = {}
    model.set_attention(hook=lambda l, p, qi, ki: seen.setdefault(l, p[:, :, -1].clone()) if l == 0 else None)
    with torch.no_grad():
        model(idx)
    model.set_attention()
    logits = ex.layer0_last_row_logits(model, idx)
    assert torch.allclose(logits.softmax(-1), seen[0], atol=1e-5)


# ------------------------------------------------------------------------------------------------ passkey

def byte_encode(texts):
    return [list(t.encode()) for t in texts]


def test_passkey_prompt_layout_by_hand():
    ids, ans, at = ex.passkey_prompt('text', 400, 0.5, '12345', byte_encode)
    text = bytes(ids).decode()
    t = ex.PASSKEY_STYLES['text']
    assert text.startswith(t['intro']) and text.endswith(t['question']) and bytes(ans).decode() == '12345'
    assert len(ids) + len(ans) - 1 <= 400 and len(ids) + len(ans) - 1 > 400 - len(t['filler'])
    n_fill = text.count(t['filler'])
    assert text.count('12345') == 2 and text[at:].startswith(t['needle'].format(key='12345'))
    assert text[len(t['intro']):at].count(t['filler']) == round(0.5 * n_fill)
    first, _, at0 = ex.passkey_prompt('code', 300, 0.0, '777', byte_encode)
    last, _, at1 = ex.passkey_prompt('code', 300, 1.0, '777', byte_encode)
    assert at0 == len(ex.PASSKEY_STYLES['code']['intro']) and bytes(last[at1:]).decode().startswith('pass_key = 777')
    assert bytes(last[at1:]).decode().count(ex.PASSKEY_STYLES['code']['filler']) == 0


class CopyOracle(torch.nn.Module):
    """Predicts the token that followed the most recent earlier occurrence of the last 8 tokens (an ideal
    induction head): it retrieves any passkey whose question repeats the needle's prefix."""

    def forward(self, idx, targets=None, reduction='mean'):
        logits = torch.zeros(*idx.shape, 256)
        for b, row in enumerate(idx.tolist()):
            seq = bytes(row)
            for t in range(8, len(row)):
                at = seq.rfind(seq[t - 7:t + 1], 0, t)
                if at >= 0:
                    logits[b, t, seq[at + 8]] = 10.0
        return logits, None


class Uniform(torch.nn.Module):
    def forward(self, idx, targets=None, reduction='mean'):
        return torch.zeros(*idx.shape, 256), None


@pytest.mark.parametrize('style', ['text', 'code'])
def test_passkey_scoring_with_a_copying_oracle_and_a_uniform_model(style):
    keys = ['03817', '99999', '12345']
    for depth in (0.0, 0.5, 1.0):
        made = [ex.passkey_prompt(style, 350, depth, k, byte_encode) for k in keys]
        res = ex.score_answers(CopyOracle(), [p for p, _, _ in made], [a for _, a, _ in made])
        assert all(r['exact'] and r['digit_acc'] == 1.0 and r['rank'] == 0 for r in res)
        res = ex.score_answers(Uniform(), [p for p, _, _ in made], [a for _, a, _ in made])
        # all logits equal: nothing is strictly above the answer (rank 0), but log-prob is chance
        assert all(r['logprob'] == pytest.approx(-math.log(256)) for r in res)
    # a wrong key in the prompt: the oracle copies it, so the scored answer is wrong at the differing digits
    prompt, _, _ = ex.passkey_prompt(style, 350, 0.5, '11111', byte_encode)
    r = ex.score_answers(CopyOracle(), [prompt], [list(b'11911')])[0]
    assert not r['exact'] and r['digit_acc'] == pytest.approx(0.8)


# ------------------------------------------------------------------------------------------------ nope

def test_nope_variance_matches_lemma_2_3_on_the_random_model():
    d, H, L = 256, 4, 64
    for sigma in (0.02, 0.002):   # logit variance d^2 sigma^4 / H << 1: near-uniform attention (Property 2.1)
        var, lemma = ex.nope_variance(d, H, L, sigma, n_samples=16)
        assert lemma[0] == pytest.approx(d ** 2 * sigma ** 4) and lemma[9] == pytest.approx(d ** 2 * sigma ** 4 / 10)
        assert np.all(np.abs(var / lemma - 1) < 0.15)
    var, lemma = ex.nope_variance(d, H, L, 0.2, n_samples=4)  # peaked attention: the lemma underestimates
    assert np.median(var / lemma) > 3


def test_nope_probe_runs_and_returns_mae_per_depth():
    mae = ex.nope_probe(d=16, H=2, L=8, n_layer=2, steps=5, n_train=4, batch_tokens=16, n_test=4)
    assert mae.shape == (3, 8) and np.all((mae >= 0) & (mae <= 7))


# ------------------------------------------------------------------------------------------------ CLI

def save_ckpt(tmp_path, model, name):
    os.makedirs(tmp_path / name, exist_ok=True)
    path = str(tmp_path / name / 'ckpt.pt')
    args = {k: getattr(model.config, k) for k in GPTConfig.__dataclass_fields__}
    torch.save(dict(model_args=args, model=model.state_dict(), config=dict(dataset='hand')), path)
    return str(tmp_path / name)


def save_split(tmp_path, split, name='test'):
    split.tokens.tofile(tmp_path / f'{name}.bin')
    np.save(tmp_path / f'{name}_docs.npy', split.docs)
    (tmp_path / 'meta.json').write_text(json.dumps(dict(tokenizer='bytes', vocab_size=V)))
    return str(tmp_path)


def test_ppl_command_end_to_end(tmp_path):
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('alibi'), 'tiny-alibi')
    b = save_ckpt(tmp_path, tiny('rope'), 'tiny-rope')
    out = tmp_path / 'res'
    rows = ex.run(['ppl', '--ckpt', a, b, '--data_dir', data, '--lengths', '1,2,4', '--n', '7', '--lm_infinite',
                   '--n_starting', '2', '--out_dir', str(out)])
    assert {f.name for f in out.iterdir()} == {'ppl_last_token.json', 'ppl_last_token.md', 'ppl_last_token.png'}
    saved = json.loads((out / 'ppl_last_token.json').read_text())
    assert len(saved['results']) == len(rows) == 2 * 2 * 3
    assert all(r['n_scored'] == 7 and r['peak_rss_mb'] > 0 for r in rows)
    # LM-Infinite at L_ex = L_tr changes nothing: the Λ-mask covers everything and no distance exceeds the ceiling
    one = {(r['ckpt'], r['variant']): r['loss'] for r in rows if r['mult'] == 1}
    assert one[('tiny-alibi', 'vanilla')] == pytest.approx(one[('tiny-alibi', 'LM-Inf(n_start=2)')], abs=1e-6)
    # the vanilla number equals a direct computation on the same tokens
    ends, _ = ex.draw_ends(ex.load_split([], data, 'test'), 64, 7, seed=1337)
    model = GPT.from_checkpoint(os.path.join(a, 'ckpt.pt')).eval()
    want = np.mean([direct_ce(model, ex.load_split([], data, 'test').tokens[e - 32:e],
                              ex.load_split([], data, 'test').tokens[e]) for e in ends])
    got = next(r['loss'] for r in rows if r['ckpt'] == 'tiny-alibi' and r['variant'] == 'vanilla' and r['mult'] == 2)
    assert got == pytest.approx(want, abs=1e-5)
    md = (out / 'ppl_last_token.md').read_text()
    assert '| L_ex / L_tr | tiny-alibi | tiny-alibi [LM-Inf(n_start=2)] | tiny-rope |' in md


@pytest.mark.parametrize('argv, message', [
    (['bogus'], "invalid choice: 'bogus' (choose from 'ppl', 'position', 'erf', 'kernels', 'attention', 'passkey', 'nope')"),
    (['ppl', '--ckpt', 'x', '--lengths', '1,-2'], "bad length '-2' in '1,-2': expected positive multiples"),
    (['ppl', '--ckpt', 'x', '--lengths', '1,two'], "bad length 'two'"),
    (['ppl', '--ckpt', 'x', '--protocol', 'overlap'], "invalid choice: 'overlap' (choose from 'last_token', 'nonoverlap', 'sliding')"),
    (['ppl', '--ckpt', 'x', '--n', '0'], "expected a positive integer, got '0'"),
    (['ppl', '--ckpt', 'x', '--temperature', 'hot'], "bad temperature 'hot'"),
    (['passkey', '--ckpt', 'x', '--depths', '0,1.5'], "expected comma-separated numbers in [0, 1]"),
    (['ppl', '--ckpt', 'no/such/run'], "no checkpoint at 'no/such/run'"),
])
def test_cli_errors_name_the_bad_value(argv, message):
    with pytest.raises(ex.CLIError) as e:
        ex.run(argv)
    assert message in str(e.value)


def test_cli_error_is_one_line_on_stderr():
    p = subprocess.run([sys.executable, os.path.join(ROOT, 'extrapolate.py'), 'ppl', '--ckpt', 'x', '--lengths', '0'],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode != 0 and p.stdout == ''
    assert p.stderr.strip().splitlines() == ["error: argument --lengths: bad length '0' in '0': expected positive "
                                             "multiples of the training length, e.g. 1,2,4,8,16"]


def test_parse_temperature_per_length():
    assert ex.parse_temperature('0.9') == {None: 0.9}
    assert ex.parse_temperature('2:0.95,4:0.9') == {2.0: 0.95, 4.0: 0.9}


@pytest.mark.parametrize('argv, files', [
    (['position', '--length', '2', '--n', '3', '--lm_infinite'], ['position.json', 'position.md', 'position.png']),
    (['erf', '--length', '2', '--n', '3', '--windowed'], ['erf.json', 'erf.md', 'erf.png']),
    (['kernels'], ['kernels.json', 'kernels.md', 'kernels.png', 'kernels_effective_length.png']),
    (['attention', '--lengths', '1,2', '--n', '2'], ['attention.json', 'attention.md', 'attention.png']),
    (['passkey', '--lengths', '2', '--depths', '0,1', '--n', '2', '--style', 'text'],
     ['passkey.json', 'passkey.md', 'passkey.png']),
    (['ppl', '--protocol', 'sliding', '--lengths', '1,2', '--max_tokens', '256', '--temperature', '2:0.9'],
     ['ppl_sliding.json', 'ppl_sliding.md', 'ppl_sliding.png']),
])
def test_every_subcommand_writes_its_outputs(tmp_path, argv, files):
    data = save_split(tmp_path, make_split())
    ckpts = [save_ckpt(tmp_path, tiny('kerple_log', vocab_size=256), 'k'), save_ckpt(tmp_path, tiny('t5'), 't')]
    if argv[0] == 'passkey':
        ckpts = ckpts[:1]   # byte prompts need the 256-token vocabulary
    out = tmp_path / 'res'
    extra = [] if argv[0] == 'kernels' else ['--data_dir', data]
    ex.run(argv + ['--ckpt', *ckpts, '--out_dir', str(out)] + extra)
    assert sorted(f.name for f in out.iterdir()) == sorted(files)
    saved = json.loads((out / files[0]).read_text())
    assert saved['command'].startswith('python extrapolate.py ' + argv[0])


def test_nope_command_writes_its_outputs(tmp_path):
    ex.run(['nope', '--d', '32', '--heads', '2', '--L', '16', '--samples', '2', '--sigmas', '0.02', '--probe_d', '16',
            '--probe_L', '8', '--probe_layers', '1', '--probe_steps', '3', '--probe_train', '2',
            '--out_dir', str(tmp_path)])
    assert sorted(f.name for f in tmp_path.iterdir()) == ['nope.json', 'nope.md', 'nope.png']
    with pytest.raises(ex.CLIError, match='--d=30 is not divisible by --heads=4'):
        ex.run(['nope', '--d', '30', '--heads', '4'])


def test_ppl_reuse_takes_matching_rows_and_refuses_other_settings(tmp_path):
    data = save_split(tmp_path, make_split())
    a = save_ckpt(tmp_path, tiny('alibi'), 'a')
    b = save_ckpt(tmp_path, tiny('t5'), 'b')
    common = ['ppl', '--data_dir', data, '--lengths', '1,2', '--n', '4', '--out_dir', str(tmp_path / 'r')]
    first = ex.run(common + ['--ckpt', a, '--name', 'one'])
    both = ex.run(common + ['--ckpt', a, b, '--reuse', str(tmp_path / 'r' / 'one.json'), '--name', 'two'])
    assert [r.get('reused_from') is not None for r in both] == [True, True, False, False]
    assert [r['loss'] for r in both[:2]] == [r['loss'] for r in first]
    with pytest.raises(ex.CLIError, match='was made with settings'):
        ex.run(common[:-2] + ['--n', '5', '--ckpt', a, '--reuse', str(tmp_path / 'r' / 'one.json'),
                              '--out_dir', str(tmp_path / 'r')])
