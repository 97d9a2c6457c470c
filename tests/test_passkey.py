"""passkey.py: the prompt layout by hand, and the scoring against a copying oracle and a uniform model."""
import json
import math

import pytest
import torch

from analysis import passkey as pk
from lexgpt.config import ConfigError, parse_config
from helpers import figures_written, save_ckpt, tiny


def byte_encode(text):
    return list(text.encode())


def test_passkey_prompt_layout_by_hand():
    ids, ans, at = pk.passkey_prompt('text', 400, 0.5, '12345', byte_encode)
    text = bytes(ids).decode()
    t = pk.PASSKEY_STYLES['text']
    assert text.startswith(t['intro']) and text.endswith(t['question']) and bytes(ans).decode() == '12345'
    assert len(ids) + len(ans) - 1 <= 400 and len(ids) + len(ans) - 1 > 400 - len(t['filler'])
    n_fill = text.count(t['filler'])
    assert text.count('12345') == 2 and text[at:].startswith(t['needle'].format(key='12345'))
    assert text[len(t['intro']):at].count(t['filler']) == round(0.5 * n_fill)
    first, _, at0 = pk.passkey_prompt('code', 300, 0.0, '777', byte_encode)
    last, _, at1 = pk.passkey_prompt('code', 300, 1.0, '777', byte_encode)
    assert at0 == len(pk.PASSKEY_STYLES['code']['intro']) and bytes(last[at1:]).decode().startswith('pass_key = 777')
    assert bytes(last[at1:]).decode().count(pk.PASSKEY_STYLES['code']['filler']) == 0


class CopyOracle(torch.nn.Module):
    """Predicts the token that followed the most recent earlier occurrence of the last 8 tokens (an ideal
    induction head): it retrieves any passkey whose question repeats the needle's prefix."""

    def forward(self, idx, targets=None, reduction='mean', last_k=0):
        logits = torch.zeros(*idx.shape, 256)
        for b, row in enumerate(idx.tolist()):
            seq = bytes(row)
            for t in range(8, len(row)):
                at = seq.rfind(seq[t - 7:t + 1], 0, t)
                if at >= 0:
                    logits[b, t, seq[at + 8]] = 10.0
        return logits[:, -last_k:], None


class Uniform(torch.nn.Module):
    def forward(self, idx, targets=None, reduction='mean', last_k=0):
        return torch.zeros(*idx.shape, 256)[:, -last_k:], None


@pytest.mark.parametrize('style', ['text', 'code'])
def test_passkey_scoring_with_a_copying_oracle_and_a_uniform_model(style):
    keys = ['03817', '99999', '12345']
    for depth in (0.0, 0.5, 1.0):
        made = [pk.passkey_prompt(style, 350, depth, k, byte_encode) for k in keys]
        res = pk.score_answers(CopyOracle(), [p for p, _, _ in made], [a for _, a, _ in made])
        assert all(r['exact'] and r['digit_acc'] == 1.0 and r['rank'] == 0 for r in res)
        res = pk.score_answers(Uniform(), [p for p, _, _ in made], [a for _, a, _ in made])
        # all logits equal: nothing is strictly above the answer (rank 0), but log-prob is chance
        assert all(r['logprob'] == pytest.approx(-math.log(256)) for r in res)
    # a wrong key in the prompt: the oracle copies it, so the scored answer is wrong at the differing digits
    prompt, _, _ = pk.passkey_prompt(style, 350, 0.5, '11111', byte_encode)
    r = pk.score_answers(CopyOracle(), [prompt], [list(b'11911')])[0]
    assert not r['exact'] and r['digit_acc'] == pytest.approx(0.8)


def test_a_forward_holds_at_most_batch_tokens_and_a_prompt_its_bos():
    """Prompts of one shape go in forward passes of at most batch_tokens tokens (at least one prompt), with the same
    scores; a BOS id starts the prompt, which still fits its length."""
    made = [pk.passkey_prompt('code', 350, 0.5, k, byte_encode, bos=0) for k in ('03817', '99999', '12345')]
    assert all(p[0] == 0 and p[1:3] == byte_encode('# ') and len(p) + len(a) - 1 <= 350 for p, a, _ in made)
    sizes, oracle = [], CopyOracle()
    counting = lambda idx, **kw: (sizes.append(idx.numel()), CopyOracle.forward(oracle, idx, **kw))[1]
    oracle.forward = counting
    args, n = ([p for p, _, _ in made], [a for _, a, _ in made]), len(made[0][0]) + len(made[0][1]) - 1
    whole, split = pk.score_answers(oracle, *args), pk.score_answers(oracle, *args, batch_tokens=2 * n + 1)
    assert whole == split and sizes == [3 * n, 2 * n, n]


def test_main_scores_every_cell_and_refuses_bad_settings(tmp_path):
    paths = [save_ckpt(tmp_path, tiny('kerple_log', vocab_size=256, block_size=64), 'k'),
             save_ckpt(tmp_path, tiny('regular', vocab_size=256, block_size=64), 'r')]
    cfg = dict(pk.DEFAULTS, ckpt=paths, lengths=[4], depths=[0, 1], n=2, attn_temperature='0.9',
               out_dir=str(tmp_path / 'res'))
    out = pk.main(cfg)
    assert sorted(p.name for p in (tmp_path / 'res').iterdir()) == ['passkey.json', 'passkey.md', 'passkey.png']
    assert [(r['ckpt'], r['variant']) for r in out] == [('k', 'vanilla'), ('k', 'tau=0.9'), ('r', 'vanilla'),
                                                        ('r', 'tau=0.9')]
    # every cell: the prompt and the key but its last digit fill 4 L_tr = 256 tokens up to less than one filler line
    room = lambda c: 256 - (c['prompt_tokens'] + 5 - 1)
    filler = len(pk.PASSKEY_STYLES['code']['filler'])
    assert all(c['L_ex'] == 256 and 0 <= room(c) < filler for r in out for c in r['cells'])
    assert len(json.loads((tmp_path / 'res' / 'passkey.json').read_text())['keys']) == 2
    with pytest.raises(ConfigError, match='n=0, digits=5 and batch_tokens=16384 must be positive'):
        pk.main(dict(cfg, n=0))
    with pytest.raises(ConfigError, match=r'depths=\[0, 1.5\]: expected numbers in \[0, 1\]'):
        pk.main(dict(cfg, depths=[0, 1.5]))
    with pytest.raises(ConfigError, match="a vocabulary smaller than the bytes tokenizer's 256"):
        pk.main(dict(cfg, ckpt=[save_ckpt(tmp_path, tiny('alibi'), 'small')]))


def test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid(tmp_path, monkeypatch):
    """Each cell's accuracy, log-prob, digit accuracy and rank are the means over its keys (hand scores: two keys,
    one exact); the JSON names the lengths and depths of its grid; a row at exactly m x L_tr carries no L_ex label.
    Run through the command line, with a RoPE extension in the run's name."""
    path = save_ckpt(tmp_path, tiny('rope', vocab_size=256, block_size=64), 'r')
    hand = [dict(exact=True, logprob=-1.0, digit_acc=1.0, rank=0.0), dict(exact=False, logprob=-3.0, digit_acc=0.4,
                                                                          rank=7.0)]
    monkeypatch.setattr(pk, 'score_answers', lambda model, prompts, answers, *rest: hand[:len(prompts)])
    figures = figures_written(monkeypatch, pk)
    out = pk.main(parse_config(pk.DEFAULTS, [f'--ckpt={path}', '--lengths=4', '--depths=0', '--n=2',
                                             '--rope_scaling=pi', '--rope_scale=2', f"--out_dir={tmp_path / 'res'}"]))
    (cell,) = out[0]['cells']
    assert out[0]['ckpt'] == 'r+pi2' and (cell['accuracy'], cell['mean_logprob']) == (0.5, -2.0)
    assert (cell['digit_acc'], cell['mean_rank']) == (pytest.approx(0.7), 3.5)
    saved = json.loads((tmp_path / 'res' / 'passkey.json').read_text())
    assert (saved['lengths'], saved['depths']) == ([4.0], [0.0])
    assert '| 4 | 0.50 / -2.00 |' in (tmp_path / 'res' / 'passkey.md').read_text()
    # each colour bar on its own scale: exact match 0..1, log-prob a uniform guess over 256 bytes .. 0
    bars = {ax.get_ylabel(): ax.get_ylim() for ax in figures[0].axes if ax.get_ylabel() not in ('', 'L_ex / L_tr')}
    assert bars == {'exact match': (0.0, 1.0), 'mean log-prob per key token': (pytest.approx(-math.log(256)), 0.0)}


def test_a_length_shorter_than_the_prompt_is_labelled_by_what_the_model_saw(tmp_path, capsys):
    """0.1 x L_tr = 6 tokens cannot hold the code prompt (129 tokens without fillers): its cells and table row say
    L_ex = 129, the length the model was run at, not 6; lengths <= 0 are refused."""
    path = save_ckpt(tmp_path, tiny('alibi', vocab_size=256, block_size=64), 'a')
    cfg = dict(pk.DEFAULTS, ckpt=[path], lengths=[0.1], depths=[0.5], n=1, out_dir=str(tmp_path / 'res'))
    cell = pk.main(cfg)[0]['cells'][0]
    assert cell['L_ex'] == cell['prompt_tokens'] + 5 - 1 == 129
    assert '| 0.1 (L_ex=129) |' in (tmp_path / 'res' / 'passkey.md').read_text()
    assert 'L_ex=129' in capsys.readouterr().out
    with pytest.raises(ConfigError, match=r'lengths=\[0.1, 0\]: expected positive'):
        pk.main(dict(cfg, lengths=[0.1, 0]))


def passes_stopping_after(n, monkeypatch):
    """score_answers as it is, but the (n+1)-th call dies as a stopped run would; -> the prompts of each call made
    (cleared by the test, the count starts again)."""
    scored, real = [], pk.score_answers

    def counting(model, prompts, answers, *rest):
        if len(scored) == n:
            raise RuntimeError('stopped')
        scored.append(len(prompts))
        return real(model, prompts, answers, *rest)

    monkeypatch.setattr(pk, 'score_answers', counting)
    return scored


def test_reuse_keeps_scored_cells_and_a_stopped_run_keeps_what_it_scored(tmp_path, monkeypatch):
    """--reuse scores only the cells its JSON lacks; the JSON is rewritten after each scored cell, so a run that
    dies mid-way leaves its finished cells for the next one; a file with other keys is refused."""
    path = save_ckpt(tmp_path, tiny('alibi', vocab_size=256, block_size=64), 'a')
    cfg = dict(pk.DEFAULTS, ckpt=[path], lengths=[4], depths=[0, 1], n=2, out_dir=str(tmp_path / 'res'))
    first = pk.main(cfg)[0]['cells']
    done = str(tmp_path / 'res' / 'passkey.json')
    scored = passes_stopping_after(2, monkeypatch)
    with pytest.raises(RuntimeError, match='stopped'):  # two new depths, then a third that dies
        pk.main(dict(cfg, depths=[0, 0.25, 0.5, 1, 0.75], reuse=done))
    stopped = json.loads((tmp_path / 'res' / 'passkey.json').read_text())
    rows = stopped['results']
    assert stopped['partial'] is True
    kept = [c for r in rows for c in r['cells']]  # depth 1, reused but not reached, follows in the run's row
    assert len(rows) == 1
    assert [c['depth'] for c in kept] == [0, 0.25, 0.5, 1]
    assert kept[0] == first[0] and kept[3] == first[1]
    scored.clear()
    again = pk.main(dict(cfg, depths=[0, 0.25, 0.5, 0.75, 1], reuse=done))[0]['cells']
    assert scored == [2]  # only depth 0.75 was scored
    assert again[:3] == kept[:3] and again[4] == kept[3]
    assert 'partial' not in json.loads((tmp_path / 'res' / 'passkey.json').read_text())
    # once more on the finished file (its seconds set to a value no run here takes): every cell read back, the record
    # of what they cost kept
    data = json.loads((tmp_path / 'res' / 'passkey.json').read_text())
    data['results'][0]['seconds'] = 1234.5
    (tmp_path / 'res' / 'passkey.json').write_text(json.dumps(data))
    same = pk.main(dict(cfg, depths=[0, 0.25, 0.5, 0.75, 1], reuse=done, name='same'))[0]
    assert same['cells'] == data['results'][0]['cells'] and same['seconds'] == 1234.5
    md = (tmp_path / 'res' / 'passkey.md').read_text()
    assert '| L_ex / L_tr | depth 0 | depth 0.25 | depth 0.5 | depth 0.75 | depth 1 |' in md
    with pytest.raises(ConfigError, match=r"reuse=.* was made with style='code' and keys \['\d+', '\d+'\], this run"):
        pk.main(dict(cfg, n=3, reuse=done))
    (tmp_path / 'half.json').write_text('{"style": "co')  # what a write cut short would leave
    with pytest.raises(ConfigError, match=r"reuse='.*half.json' cannot be read as JSON"):
        pk.main(dict(cfg, reuse=str(tmp_path / 'half.json')))


def test_a_cell_stopped_half_way_keeps_its_keys_and_goes_on_from_them(tmp_path, monkeypatch):
    """With one prompt per forward pass, the JSON holds a cell's keys as they are scored (keys_so_far, no accuracy
    yet); --reuse of it scores only the keys left, and the cell is the one an unstopped run makes."""
    path = save_ckpt(tmp_path, tiny('alibi', vocab_size=256, block_size=64), 'a')
    cfg = dict(pk.DEFAULTS, ckpt=[path], lengths=[4], depths=[0.5], n=3, batch_tokens=1, out_dir=str(tmp_path))
    whole = pk.main(dict(cfg, name='whole'))[0]['cells'][0]
    passes = passes_stopping_after(2, monkeypatch)
    with pytest.raises(RuntimeError, match='stopped'):  # two keys scored, the third pass dies
        pk.main(cfg)
    cell = json.loads((tmp_path / 'passkey.json').read_text())['results'][0]['cells'][0]
    assert cell['accuracy'] is None and len(cell['keys_so_far']) == 2 and passes == [1, 1]
    passes.clear()
    again = pk.main(dict(cfg, reuse=str(tmp_path / 'passkey.json')))[0]['cells'][0]
    assert passes == [1] and again.pop('keys_scored_before') == 2 and again == whole
