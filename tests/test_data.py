"""
data/: the prepare scripts, run as a user would (subprocess), on small hand-made inputs. CPU, no network.
The checks decode the bins and compare them with the inputs, not with the scripts' own helpers.
"""
import os
import sys
import json
import importlib.util
import subprocess
from collections import Counter

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPLITS = ('train', 'val', 'test')
META_KEYS = {'tokenizer', 'vocab_size', 'sep_ids', 'eot', 'docs', 'tokens', 'source'}


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


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
    outs = [tmp_path / 'out1', tmp_path / 'out2']
    for out in outs:
        r = run('data/pycode/prepare.py', f'--src_dir={src}', f'--out_dir={out}')
        assert r.returncode == 0, r.stderr
        assert '80 files kept' in r.stdout
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
    r = run('data/pycode/prepare.py', '--max_files=300', f'--out_dir={tmp_path}')
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / 'meta.json').read_text())
    assert sum(meta['docs'].values()) == 300 and 'stdlib' in meta['source']
    for s in SPLITS:
        ids, docs = load_split(tmp_path, s)
        assert len(ids) == meta['tokens'][s] and len(docs) == meta['docs'][s]
        for p in ids.astype(np.uint8).tobytes().split(b'\0'):
            p.decode('utf-8')


def hf_docs(n=80):
    return [f"Document {i}. It has a few sentences.\nA second line, caf\u00e9 {i * i}.\n" * (1 + i % 4) for i in range(n)]


def test_hf_jsonl_bytes(tmp_path):
    docs = hf_docs()
    path = tmp_path / 'corpus.jsonl'
    rows = [{'text': d, 'meta': {'i': i}} for i, d in enumerate(docs)]
    rows.insert(5, {'text': ''})            # empty: dropped
    rows.insert(9, {'text': 'has a \0 nul'})  # would collide with eot 0: dropped
    path.write_text(''.join(json.dumps(r) + '\n' for r in rows), encoding='utf-8')
    outs = [tmp_path / 'out1', tmp_path / 'out2']
    for out in outs:
        r = run('data/openwebtext2/prepare.py', f'--text_file={path}', '--tokenizer=bytes', f'--out_dir={out}')
        assert r.returncode == 0, r.stderr
    check_byte_corpus(outs[0], [d.encode('utf-8') for d in docs])
    for name in sorted(os.listdir(outs[0])):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    # --max_docs caps what is read
    r = run('data/arxiv/prepare.py', f'--text_file={path}', '--tokenizer=bytes', '--max_docs=2',
            f'--out_dir={tmp_path / "small"}')
    assert r.returncode != 0 and 'no documents' in r.stderr  # 2 docs cannot fill three splits, and it says so
    assert not (tmp_path / 'small' / 'meta.json').exists()


def test_hf_txt_bytes(tmp_path):
    docs = hf_docs()
    path = tmp_path / 'books.txt'
    path.write_text('<|endoftext|>\n'.join(docs), encoding='utf-8')
    r = run('data/pg19/prepare.py', f'--text_file={path}', '--tokenizer=bytes', f'--out_dir={tmp_path / "out"}')
    assert r.returncode == 0, r.stderr
    check_byte_corpus(tmp_path / 'out', [d.encode('utf-8') for d in docs])


def test_unknown_tokenizer(tmp_path):
    path = tmp_path / 'x.txt'
    path.write_text('hello\n')
    r = run('data/github/prepare.py', f'--text_file={path}', '--tokenizer=sentencepiece', f'--out_dir={tmp_path}')
    assert r.returncode != 0
    assert 'sentencepiece' in r.stderr and 'bytes' in r.stderr and 'gpt2' in r.stderr
    assert 'Traceback' not in r.stderr
    assert not (tmp_path / 'train.bin').exists()


def test_gpt2_unavailable_message(monkeypatch, capsys):
    # offline, tiktoken cannot fetch its BPE files; that must end in one clear line, not a traceback
    tiktoken = pytest.importorskip('tiktoken')
    monkeypatch.syspath_prepend(os.path.join(ROOT, 'data'))
    import dataprep

    def offline(name):
        raise ConnectionError('no network')
    monkeypatch.setattr(tiktoken, 'get_encoding', offline)
    with pytest.raises(SystemExit) as e:
        dataprep.get_tokenizer('gpt2')
    msg = str(e.value)
    assert msg.startswith('error:') and 'gpt2' in msg and '\n' not in msg


def test_kjv_parse():
    spec = importlib.util.spec_from_file_location('kjv_prepare', os.path.join(ROOT, 'data/kjv/prepare.py'))
    kjv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kjv)  # the script's work is under __main__, so this only defines parse_books
    dump = ("\nGenesis 1\n\n  1 In the beginning.\n  2 And the earth.\n\nGenesis 2\n\n  1 Thus the heavens.\n"
            "\n1 John 1\n\n  1 That which was from the beginning.\n")
    assert kjv.parse_books(dump) == [
        ('Genesis', 'Genesis 1\nIn the beginning.\nAnd the earth.\n\nGenesis 2\nThus the heavens.\n'),
        ('1 John', '1 John 1\nThat which was from the beginning.\n')]
