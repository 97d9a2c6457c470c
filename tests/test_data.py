"""
data/prepare.py, run as a user would (python -m data.prepare, from the repository root) on small hand-made inputs,
or through main(cfg) where a test swaps a library out. CPU, no network: every output goes to a tmp folder.
The checks decode the bins and compare them with the inputs, not with the script's own helpers.
"""
import os
import sys
import json
import subprocess
from collections import Counter

import numpy as np
import pytest
from lexgpt import loading
from lexgpt import corpus
from lexgpt.config import ConfigError, parse_config
from data import prepare
from test_bad_inputs import error_line

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPLITS = ('train', 'val', 'test')
META_KEYS = {'tokenizer', 'vocab_size', 'sep_ids', 'eot', 'dtype', 'bos', 'docs', 'tokens', 'source'}


def run(*args, env=None):
    return subprocess.run([sys.executable, '-m', 'data.prepare', *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env=env)


def main(tmp_path, *args):
    return prepare.main(parse_config(prepare.DEFAULTS, [f'--out_dir={tmp_path / "out"}', *args]))


def load_split(out_dir, split):
    ids = np.memmap(os.path.join(out_dir, f'{split}.bin'), dtype=np.uint16, mode='r')
    docs = np.load(os.path.join(out_dir, f'{split}_docs.npy'))
    return np.array(ids), docs


def check_byte_corpus(out_dir, expected_docs):
    """The bins of a bytes-tokenized corpus hold exactly expected_docs (a list of bytes, all distinct),
    each in one split, joined by 0, with doc offsets at their starts; returns {split: [doc bytes]}."""
    with open(os.path.join(out_dir, 'meta.json')) as f:
        meta = json.load(f)
    assert set(meta) == META_KEYS
    assert (meta['tokenizer'], meta['vocab_size'], meta['sep_ids'], meta['eot']) == ('bytes', 256, [46, 10], 0)
    got = {}
    for s in SPLITS:
        ids, docs = load_split(out_dir, s)
        assert ids.max() < 256
        raw = ids.astype(np.uint8).tobytes()
        pieces = raw.split(b'\0')  # the inputs hold no 0 byte, so this recovers the documents
        assert docs.dtype == np.int64 and docs[0] == 0
        starts = np.cumsum([0] + [len(p) + 1 for p in pieces[:-1]])
        assert docs.tolist() == starts.tolist()
        assert meta['docs'][s] == len(pieces) and meta['tokens'][s] == len(ids)
        got[s] = pieces
    # every document in exactly one split, nothing else
    assert Counter(p for s in SPLITS for p in got[s]) == Counter(expected_docs)
    assert all(got[s] for s in SPLITS)
    return got


def write_tree(root, files):
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(data)


def py_files(n=80):
    # varied lengths and some multi-byte UTF-8, each file distinct
    return {f"pkg{i % 3}/sub/mod_{i:03d}.py": (f"# module {i} \u00e9\u2192\U0001F600\n"
            f"def f{i}(x):\n    '''doc.'''\n    return x * {i}\n" + "pass\n" * (i % 7)).encode('utf-8')
            for i in range(n)}


def test_pycode_small_tree(tmp_path):
    good = py_files()
    bad = {'pkg0/nul.py': b'x = 1\0\n', 'pkg0/latin1.py': 'x = "\u00e9"\n'.encode('latin-1'),
           'pkg1/empty.py': b'', 'site-packages/other.py': b'import other\n', 'pkg2/notes.txt': b'not python\n'}
    src = tmp_path / 'src'
    write_tree(src, {**good, **bad})
    outs = [tmp_path / 'out1', tmp_path / 'out']
    r = run('--corpus=pycode', f'--src_dir={src}', f'--out_dir={outs[0]}')
    assert r.returncode == 0, r.stderr
    assert '80 files kept' in r.stdout
    main(tmp_path, f'--src_dir={src}')  # the same again, in-process, into outs[1]
    got = check_byte_corpus(outs[0], list(good.values()))
    # within a split, files come in sorted path order
    order = {data: rel for rel, data in good.items()}
    for s in SPLITS:
        rels = [order[p] for p in got[s]]
        assert rels == sorted(rels)
    # deterministic: a second run writes the same bytes
    for name in sorted(os.listdir(outs[0])):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


def test_pycode_stdlib_max_files(tmp_path):
    prepare.main(parse_config(prepare.DEFAULTS, ['--max_files=300', f'--out_dir={tmp_path}']))  # pycode: the default
    meta = json.loads((tmp_path / 'meta.json').read_text())
    assert sum(meta['docs'].values()) == 300 and 'stdlib' in meta['source']
    for s in SPLITS:
        ids, docs = load_split(tmp_path, s)
        assert len(ids) == meta['tokens'][s] and len(docs) == meta['docs'][s]
        for p in ids.astype(np.uint8).tobytes().split(b'\0'):
            p.decode('utf-8')


def hf_docs(n=80):
    return [f"Document {i}. It has a few sentences.\nA second line, caf\u00e9 {i * i}.\n" * (1 + i % 4)
            for i in range(n)]


def test_hf_jsonl_bytes(tmp_path):
    docs = hf_docs()
    path = tmp_path / 'corpus.jsonl'
    rows = [{'text': d, 'meta': {'i': i}} for i, d in enumerate(docs)]
    rows.insert(5, {'text': ''})            # empty: dropped
    rows.insert(9, {'text': 'has a \0 nul'})  # would collide with eot 0: dropped
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows), encoding='utf-8')
    outs = [tmp_path / 'out1', tmp_path / 'out']
    r = run('--corpus=openwebtext2', f'--text_file={path}', '--tokenizer=bytes', f'--out_dir={outs[0]}')
    assert r.returncode == 0, r.stderr
    main(tmp_path, '--corpus=openwebtext2', f'--text_file={path}', '--tokenizer=bytes')  # again, into outs[1]
    check_byte_corpus(outs[0], [d.encode('utf-8') for d in docs])
    for name in sorted(os.listdir(outs[0])):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    # --max_docs caps what is read
    with pytest.raises(ValueError, match="split 'val' got no documents \\(2 in all\\)"):  # 2 cannot fill 3 splits
        main(tmp_path / 'small', '--corpus=arxiv', f'--text_file={path}', '--tokenizer=bytes', '--max_docs=2')
    assert not (tmp_path / 'small' / 'out' / 'meta.json').exists()


def test_hf_txt_bytes(tmp_path):
    docs = hf_docs()
    path = tmp_path / 'books.txt'
    path.write_text('<|endoftext|>\n'.join(docs), encoding='utf-8')
    main(tmp_path, '--corpus=pg19', f'--text_file={path}', '--tokenizer=bytes')
    check_byte_corpus(tmp_path / 'out', [d.encode('utf-8') for d in docs])


def test_unknown_tokenizer(tmp_path, monkeypatch):
    """Through data.prepare's entry point in this process (a message exits with status 1, no traceback); the one line
    a user sees on stderr: test_hub_failure_is_one_line_and_writes_nothing."""
    path = tmp_path / 'x.txt'
    path.write_text('hello\n')
    msg = error_line(monkeypatch, 'data.prepare', ['--corpus=github', f'--text_file={path}',
                                                   '--tokenizer=sentencepiece', f'--out_dir={tmp_path}'])
    assert isinstance(msg, str) and msg.startswith('error: ') and '\n' not in msg, msg
    assert 'sentencepiece' in msg and 'bytes' in msg and 'gpt2' in msg
    assert not (tmp_path / 'train.bin').exists()




def test_hash_split_by_hand():
    # md5('a') = 0cc175b9...: 0x0cc175b9 / 2^32 = 0.0498 < 0.05 -> test; md5('b') = 92eb5ffe...: 0.574 -> train;
    # and md5('doc 32') = 188cfa56...: 0.0959, in [0.05, 0.10) -> val
    assert [prepare.hash_split(k) for k in ('a', 'b', 'doc 32')] == ['test', 'train', 'val']


def test_bad_options_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match="max_docs=3 does not apply to corpus='pycode'; its options: .*max_files"):
        main(tmp_path, '--max_docs=3')
    with pytest.raises(ConfigError, match="unknown corpus 'wiki'; "
                                          "allowed: pycode, kjv, openwebtext2, arxiv, github, pg19"):
        main(tmp_path, '--corpus=wiki')
    with pytest.raises(FileNotFoundError, match="bible='/nowhere/bible' not found; install it with: apt-get install"):
        main(tmp_path, '--corpus=kjv', '--bible=/nowhere/bible')
    with pytest.raises(FileNotFoundError, match="text_file='/nowhere.jsonl': no such file"):
        main(tmp_path, '--corpus=pg19', '--text_file=/nowhere.jsonl', '--tokenizer=bytes')
    assert not (tmp_path / 'out').exists()


def stand_in_gpt2(tiktoken):
    """A tiktoken encoding shaped like gpt2 (one id per byte, '<|endoftext|>' the last id) that needs no download."""
    return tiktoken.Encoding('gpt2', pat_str=r"""\s+|\S+""", mergeable_ranks={bytes([i]): i for i in range(256)},
                             special_tokens={'<|endoftext|>': 256})


def test_gpt2_path_with_a_stand_in_encoding(tmp_path, monkeypatch):
    # the real gpt2 files need a download; the stand-in runs loading's tokenizer definition and the batch encoder
    tiktoken = pytest.importorskip('tiktoken')
    monkeypatch.setattr(tiktoken, 'get_encoding', lambda name: stand_in_gpt2(tiktoken))
    docs = hf_docs()
    docs[3] = 'the text <|endoftext|> inside a document is text, not the eot id\n'
    path = tmp_path / 'corpus.jsonl'
    path.write_text(''.join(json.dumps({'text': d}) + '\n' for d in docs), encoding='utf-8')
    meta = main(tmp_path, '--corpus=github', f'--text_file={path}')
    assert (meta['tokenizer'], meta['vocab_size'], meta['eot'], meta['sep_ids']) == ('gpt2', 257, 256, [46, 10])
    got = []
    for s in SPLITS:
        ids, starts = load_split(tmp_path / 'out', s)
        cuts = np.flatnonzero(ids == 256)  # documents joined by the eot id, and it occurs nowhere else
        assert starts.tolist() == [0] + (cuts + 1).tolist()
        pieces = np.split(ids, cuts)  # every piece after the first starts with its eot
        got += [bytes(p[i > 0:].astype(np.uint8)).decode('utf-8') for i, p in enumerate(pieces)]
    assert Counter(got) == Counter(docs)


def test_gpt2_unavailable_message(tmp_path, monkeypatch):
    # offline, tiktoken cannot fetch its BPE files; that must end in one clear line, before any file is written
    tiktoken = pytest.importorskip('tiktoken')

    def offline(name):
        raise ConnectionError('no network')
    monkeypatch.setattr(tiktoken, 'get_encoding', offline)
    path = tmp_path / 'x.txt'
    path.write_text('hello\n')
    with pytest.raises(ConfigError) as e:
        main(tmp_path, '--corpus=openwebtext2', f'--text_file={path}')
    assert 'gpt2' in str(e.value) and '\n' not in str(e.value)
    assert not (tmp_path / 'out').exists()


def test_hub_failure_is_one_line_and_writes_nothing(tmp_path):
    pytest.importorskip('datasets')
    env = dict(os.environ, HF_HUB_OFFLINE='1', HF_DATASETS_OFFLINE='1')  # never downloads, fails like a lost network
    r = run('--corpus=arxiv', '--tokenizer=bytes', '--max_docs=2', f'--out_dir={tmp_path / "out"}', env=env)
    assert r.returncode == 1 and r.stderr.startswith("error: cannot load 'suolyer/pile_arxiv' from the hub")
    assert r.stderr.count('\n') == 1 and not (tmp_path / 'out').exists()


def test_kjv_parse():
    dump = ("\nGenesis 1\n\n  1 In the beginning.\n  2 And the earth.\n\nGenesis 2\n\n  1 Thus the heavens.\n"
            "\n1 John 1\n\n  1 That which was from the beginning.\n")
    assert prepare.parse_books(dump) == [
        ('Genesis', 'Genesis 1\nIn the beginning.\nAnd the earth.\n\nGenesis 2\nThus the heavens.\n'),
        ('1 John', '1 John 1\nThat which was from the beginning.\n')]


def test_a_preparation_stopped_halfway_leaves_the_previous_corpus_whole(tmp_path):
    """Everything is written beside out_dir and moved in at the end: an error (or a kill) part way through the
    documents leaves the last corpus byte for byte, and the readers keep reading it."""
    tok = loading.get_tokenizer('bytes')
    docs = [(s, f'{s} document {i}\n' * (i + 1)) for i in range(4) for s in SPLITS]
    out = tmp_path / 'corpus'
    prepare.write_corpus(str(out), iter(docs), tok, 'first')
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}

    def stopped():
        yield from reversed(docs[3:])
        raise KeyboardInterrupt  # as a Ctrl-C half way

    with pytest.raises(KeyboardInterrupt):
        prepare.write_corpus(str(out), stopped(), tok, 'second', batch=2)
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before
    assert os.listdir(tmp_path) == ['corpus']  # no half-written folder beside it
    split = corpus.load_split(str(out), 'val')
    assert np.array(split.tokens).astype(np.uint8).tobytes().split(b'\0') == [d.encode() for s, d in docs if s == 'val']
    assert json.loads((out / 'meta.json').read_text())['source'] == 'first'


def test_a_missing_folder_names_the_command_that_writes_it(tmp_path):
    """A model's folder in data/ is <corpus>-<tokenizer> (data.prepare's own naming): the error says that command, not
    the bytes corpus' (which would write data/pycode and leave the model's folder missing); elsewhere, --out_dir."""
    data = os.path.join(corpus.ROOT, 'data')
    cases = ((os.path.join(data, 'pycode-no_such_model'), '--corpus=pycode --tokenizer=no_such_model)'),
             (os.path.join(data, 'no_such_corpus'), '--corpus=no_such_corpus)'),
             (str(tmp_path / 'pycode-gemma3'), f"--corpus=<corpus> --out_dir={tmp_path}/pycode-gemma3)"))
    for folder, command in cases:
        assert not os.path.exists(folder)
        with pytest.raises(FileNotFoundError) as err:
            corpus.load_split(folder, 'test')
        expected = f"no {os.path.join(folder, 'test.bin')}: prepare the data first (python -m data.prepare {command}"
        assert expected in str(err.value)


def test_a_dataset_is_read_from_data_slash_its_name_unless_data_dir_says():
    """Where data.prepare writes a corpus by default (data/<corpus>, data/<corpus>-<model> in the repository) is where
    train.py and the loaders read it; a data_dir is taken as given."""
    assert corpus.data_folder() == loading.data_of([]) == os.path.join(ROOT, 'data', 'pycode')
    assert corpus.data_folder('pycode-gemma3') == os.path.join(ROOT, 'data', 'pycode-gemma3')
    assert corpus.data_folder('pycode', 'elsewhere/corpus') == 'elsewhere/corpus'


def test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree(tmp_path):
    """A uint32 corpus (ids past 65,535) read back whole; a meta without counts trusted; the bin's length, the offsets'
    count, their start and their end each checked against meta.json and the bin: one line naming the file."""
    ids, meta = [70000, 1, 70001], dict(dtype='uint32', tokens=dict(val=3), docs=dict(val=2))

    def folder(name, offsets=(0, 2), **changes):
        (tmp_path / name).mkdir()
        np.array(ids, dtype=np.uint32).tofile(tmp_path / name / 'val.bin')
        np.save(tmp_path / name / 'val_docs.npy', np.array(offsets))
        (tmp_path / name / 'meta.json').write_text(json.dumps({k: v for k, v in dict(meta, **changes).items() if v}))
        return str(tmp_path / name)

    for f in (folder('ok'), folder('no_counts', tokens=None, docs=None)):
        split = corpus.load_split(f, 'val')
        assert split.tokens.tolist() == ids and split.docs.tolist() == [0, 2]
    with pytest.raises(ConfigError, match='val.bin holds 3 tokens but .*/meta.json says 4'):
        corpus.load_split(folder('long', tokens=dict(val=4)), 'val')
    # the last offset must be a token of the bin: (0, 3) on 3 tokens points past its end
    for bad in (folder('three_docs', docs=dict(val=3)), folder('from_1', offsets=(1, 2)),
                folder('past_end', offsets=(0, 3))):
        with pytest.raises(ConfigError, match='val_docs.npy does not fit'):
            corpus.load_split(bad, 'val')


def test_document_bounds_exclude_the_eot_that_ends_each_document():
    """Documents at offsets 0, 3, 7 of a 10-token bin, each but the last followed by its eot (data/prepare.py's
    format): by hand, their own tokens are [0, 2), [3, 6) and [7, 10); end_room counts the ends with 1 token before."""
    starts, ends = corpus.document_bounds([0, 3, 7], 10)
    assert starts.tolist() == [0, 3, 7] and ends.tolist() == [2, 6, 10]
    split = corpus.Split(np.zeros(10, dtype=np.uint16), np.array([0, 3, 7]), {}, 'hand:val')
    assert corpus.end_room(split, 1).tolist() == [1, 2, 2]


def test_draw_ends_reports_what_was_asked_and_what_was_drawn():
    """The same hand-made documents ([0, 2), [3, 6), [7, 10)) with 1 token of context: the ends are 1, 4, 5, 8, 9;
    asking for 10 draws all 5 of them, and the info says 10 asked, 5 drawn, from 3 documents."""
    split = corpus.Split(np.zeros(10, dtype=np.uint16), np.array([0, 3, 7]), {}, 'hand:val')
    ends, info = corpus.draw_ends(split, 1, 10, seed=0)
    assert ends.tolist() == [1, 4, 5, 8, 9]
    assert info == dict(context=1, n_requested=10, n_drawn=5, docs_used=3, docs_long_enough=3, docs_too_short=0,
                        positions=5)


def test_slices_are_inputs_and_their_next_tokens():
    """tokens 0..9, starts 0 and 3, L = 4: inputs [s, s+4) and targets shifted by one, by hand; with a BOS (99) the
    input's first token is replaced by it and the targets stay. The tokens are uint16, as data/prepare.py writes them:
    the tensors are int64 all the same (an embedding takes no uint16)."""
    tokens = np.arange(10, dtype=np.uint16)
    x, y = corpus.slices(tokens, [0, 3], 4)
    assert x.tolist() == [[0, 1, 2, 3], [3, 4, 5, 6]] and y.tolist() == [[1, 2, 3, 4], [4, 5, 6, 7]]
    assert str(x.dtype) == str(y.dtype) == 'torch.int64'
    x, y = corpus.slices(tokens, [0, 3], 4, bos=99)
    assert x.tolist() == [[99, 1, 2, 3], [99, 4, 5, 6]] and y.tolist() == [[1, 2, 3, 4], [4, 5, 6, 7]]
