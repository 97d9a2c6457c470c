"""
Prepare a corpus into data/<corpus>/. Run from the repository root, as a module:

  python -m data.prepare --corpus=pycode                     # the offline default: this Python's stdlib .py files
  python -m data.prepare --corpus=pycode --src_dir=some/dir  # any tree of .py files instead
  python -m data.prepare --corpus=kjv                        # offline prose; needs: apt-get install bible-kjv
  python -m data.prepare --corpus=openwebtext2 --max_docs=2000   # also arxiv, github, pg19: the hub (internet)
  python -m data.prepare --corpus=pg19 --text_file=books.txt --tokenizer=bytes   # offline, from a local file
  python -m data.prepare --corpus=pycode --tokenizer=smollm2     # a pretrained model's tokenizer -> data/pycode-smollm2

Output of every corpus (what corpus.load_split reads):
  {train,val,test}.bin      np.uint16 token ids (uint32 past 65,536 ids: meta's dtype); documents joined by one `eot`
  {train,val,test}_docs.npy int64 start offset of each document in the .bin
                            (doc i is bin[docs[i] : docs[i+1]-1], the last one runs to the end)
  meta.json                 tokenizer, vocab_size, sep_ids, eot, docs, tokens, source; moved in last
All of it is written into a sibling folder and moved into place at the end, so a run stopped halfway leaves the
previous corpus whole; the readers (corpus.split_path, load_split) refuse a folder without meta.json, or whose
.bin lengths and document offsets disagree with it.
Documents stay whole and are split train/val/test 90/5/5 by an md5 hash of their name (or text), except where
the source has its own splits (PG-19). The tokenizers are loading.get_tokenizer's.
"""
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time

import numpy as np

from lexgpt import config
from lexgpt.corpus import ROOT
from lexgpt.loading import get_tokenizer
from lexgpt.pretrained import short_name
from lexgpt.config import ConfigError

DEFAULTS = dict(
    corpus='pycode',            # pycode | kjv | openwebtext2 | arxiv | github | pg19
    out_dir='',                 # where the files go ('' = data/<corpus>)
    tokenizer='',               # bytes | gpt2 | a pretrained model's (smollm2, a .gguf, a HF folder or hub
                                # name; out_dir data/<corpus>-<model>) ('' = the corpus's own: bytes for pycode
                                # and kjv, gpt2 else)
    bos=False,                  # put the tokenizer's BOS id before each document (pretrained tokenizers that have one)
    src_dir='',                 # pycode: the tree of .py files ('' = this Python's standard library)
    max_files=0,                # pycode: keep only the first N usable files, sorted by path (0 = all)
    bible='bible',              # kjv: the `bible` program of Debian's bible-kjv package
    dataset='',                 # hub corpora: the hub dataset ('' = the corpus's default mirror)
    dataset_config='',          # hub corpora: the hub dataset's config name ('' = none)
    text_field='text',          # hub corpora and text_file=*.jsonl: the field that holds a document
    text_file='',               # hub corpora: a local .txt or .jsonl read instead of the hub (no network)
    max_docs=0,                 # hub corpora: at most this many documents from each hub split, or from text_file
                                # (0 = all)
)
SPLITS = ('train', 'val', 'test')
SHARED_KEYS = ('corpus', 'out_dir', 'tokenizer', 'bos')
HUB_KEYS = ('dataset', 'dataset_config', 'text_field', 'text_file', 'max_docs')


def hash_split(key, val_frac=0.05, test_frac=0.05):
    # md5 rather than hash(): str hashes are salted per process, md5 gives the same split on every run and machine,
    # and a document keeps its split when others are added or removed
    u = int(hashlib.md5(key.encode('utf-8')).hexdigest()[:8], 16) / 2**32
    if u < test_frac:
        return 'test'
    if u < test_frac + val_frac:
        return 'val'
    return 'train'


def token_dtype(tok):
    """uint16 where every id fits, else uint32 (pretrained vocabularies of 65,536 ids and more); meta.json says
    which."""
    return np.uint16 if tok.vocab_size <= 2**16 else np.uint32


def batch_encoder(tok, bos=None):
    """list[str] -> [ids as token_dtype] with tok's ids, bos (an id) before each. GPT-2 goes through tiktoken's
    threaded batch encoder, which gives the ids of tok.encode (encode_ordinary: an '<|endoftext|>' in a text stays
    text) many times faster."""
    if tok.name == 'gpt2':
        import tiktoken  # get_tokenizer('gpt2') has loaded it already, so this neither fails nor downloads
        bpe = tiktoken.get_encoding('gpt2')
        return lambda texts: [np.array(ids, dtype=np.uint16)
                              for ids in bpe.encode_ordinary_batch(texts, num_threads=os.cpu_count() or 1)]
    head = [] if bos is None else [bos]
    return lambda texts: [np.array(head + tok.encode(t), dtype=token_dtype(tok)) for t in texts]


def write_corpus(out_dir, docs, tok, source, batch=256, bos=False):
    """docs yields (split, text); writes the bins, the doc offsets and meta.json into out_dir, returns meta."""
    if bos and tok.bos is None:
        raise ConfigError(f"bos=True but tokenizer {tok.name} has no BOS token to prepend")
    # everything goes into a sibling folder first: a run stopped halfway (an error, a kill, a full disk) leaves the
    # previous corpus whole; only install() below touches out_dir
    final, out_dir = out_dir, os.path.join(os.path.dirname(os.path.abspath(out_dir)),
                                           f'.{os.path.basename(os.path.abspath(out_dir))}.tmp{os.getpid()}')
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    try:
        meta = _write(out_dir, docs, tok, source, batch, bos)
        install(out_dir, final)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    return meta


def install(tmp, out_dir):
    """Move the files of tmp into out_dir, meta.json last and the old one removed first: the readers refuse a folder
    without meta.json, so not even a kill between two renames lets them read old offsets beside new tokens."""
    os.makedirs(out_dir, exist_ok=True)
    meta_path = os.path.join(out_dir, 'meta.json')
    if os.path.exists(meta_path):
        os.remove(meta_path)
    for name in sorted(os.listdir(tmp), key=lambda n: n == 'meta.json'):
        os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))


def _write(out_dir, docs, tok, source, batch, bos):
    meta_path = os.path.join(out_dir, 'meta.json')
    dtype = token_dtype(tok)
    encode, eot = batch_encoder(tok, tok.bos if bos else None), np.array([tok.eot], dtype=dtype)
    starts, ntok, skipped = {s: [] for s in SPLITS}, {s: 0 for s in SPLITS}, 0
    files = {s: open(os.path.join(out_dir, f'{s}.bin'), 'wb') for s in SPLITS}
    try:
        for chunk in iter(lambda: list(itertools.islice(docs, batch)), []):
            for (split, _), ids in zip(chunk, encode([text for _, text in chunk])):
                # an eot inside a document would split it in two for every reader of the bins
                if len(ids) == 0 or (ids == tok.eot).any():
                    skipped += 1
                    continue
                if starts[split]:
                    eot.tofile(files[split])
                    ntok[split] += 1
                starts[split].append(ntok[split])
                ids.tofile(files[split])
                ntok[split] += len(ids)
    finally:
        for f in files.values():
            f.close()
    for s in SPLITS:
        if not starts[s]:  # np.memmap cannot open an empty file, so fail here rather than in training
            n_docs = sum(map(len, starts.values()))
            raise ValueError(f"split {s!r} got no documents ({n_docs} in all); give it more data")
        np.save(os.path.join(out_dir, f'{s}_docs.npy'), np.array(starts[s], dtype=np.int64))
    meta = dict(tokenizer=tok.name, vocab_size=tok.vocab_size, sep_ids=tok.sep_ids, eot=tok.eot,
                dtype=np.dtype(dtype).name, bos=tok.bos if bos else None,
                docs={s: len(starts[s]) for s in SPLITS}, tokens=dict(ntok), source=source)
    with open(meta_path, 'w') as f:
        json.dump(meta, f, indent=2)
    if skipped:
        print(f"skipped {skipped} empty documents or documents containing the eot id")
    return meta


# --------------------------------------------------------------------------------------------
# pycode: the Python standard library's .py files (offline)
# --------------------------------------------------------------------------------------------

# site-packages is whatever happens to be installed here, not the stdlib; __pycache__ holds no .py anyway.
# The stdlib's own test directories stay in: with them CPython 3.11 gives ~1,800 files / ~31 MB, without them
# ~12 MB; 31 MB is still small, and real test code is code too.
SKIP_DIRS = {'site-packages', 'dist-packages', '__pycache__'}


def read_pycode(cfg):
    """One document per file, split by its path relative to src_dir: a file keeps its split as the tree changes."""
    stdlib = sysconfig.get_paths()['stdlib']
    src = os.path.abspath(cfg['src_dir'] or stdlib)
    if not os.path.isdir(src):
        raise FileNotFoundError(f"src_dir={cfg['src_dir']!r} is not a directory")
    paths = []  # sorted walk, links not followed: the same tree gives the same corpus, byte for byte
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        paths += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith('.py')]
    paths.sort(key=lambda path: os.path.relpath(path, src).replace(os.sep, '/'))
    files, dropped = [], 0
    for path in paths:
        with open(path, 'rb') as f:
            raw = f.read()
        try:
            text = raw.decode('utf-8')  # strict: the bytes tokenizer re-encodes it to exactly these bytes
        except UnicodeDecodeError:
            text = None
        if not text or '\0' in text:  # 0 is the bytes tokenizer's document separator; an empty file is no document
            dropped += 1
            continue
        files.append((os.path.relpath(path, src).replace(os.sep, '/'), text))
        if len(files) == cfg['max_files']:
            break
    if not files:
        raise ValueError(f"no usable .py files under {src}")
    print(f"{len(files)} files kept, {dropped} dropped (not UTF-8, contains a 0 byte, or empty) from {src}")
    source = (f"Python {sys.version.split()[0]} stdlib .py files ({src})" if src == os.path.abspath(stdlib)
              else f".py files under {src}")
    return ((hash_split(rel), text) for rel, text in files), source + ", one file per document, split by path hash"


# --------------------------------------------------------------------------------------------
# kjv: the King James Bible of Debian's bible-kjv package (offline, optional)
# --------------------------------------------------------------------------------------------

def parse_books(dump):
    """`bible` output -> [(book, text)]. The dump is a 'Book N' heading per chapter, then one
    '  V verse' line per verse. Verse numbers are dropped (noise for a prose model), chapter headings kept."""
    books = []
    for line in dump.splitlines():
        head = re.fullmatch(r'(\S.*) (\d+)', line)
        verse = re.fullmatch(r'\s+\d+ (.*)', line)
        if head:
            book = head.group(1)
            if not books or books[-1][0] != book:
                books.append((book, []))
            books[-1][1].append(('\n' if books[-1][1] else '') + line + '\n')
        elif verse:
            books[-1][1].append(verse.group(1).strip() + '\n')
    return [(book, ''.join(parts)) for book, parts in books]


def read_kjv(cfg):
    """The KJV (1611), one book per document. Debian ships it in main; its copyright file says the text's copyright
    has expired (public domain in most countries; in the UK the Crown still holds printing rights by letters patent).
    Its data file is compressed in a format of its own, so we read it through the package's `bible` program."""
    if shutil.which(cfg['bible']) is None:
        raise FileNotFoundError(f"bible={cfg['bible']!r} not found; install it with: apt-get install bible-kjv")
    # a huge line width so that no verse is wrapped across lines
    dump = subprocess.run([cfg['bible'], '-l1000000', 'gen1:1-rev22:21'], capture_output=True, text=True,
                          check=True).stdout
    books = parse_books(dump)
    if len(books) != 66:
        raise ValueError(f"expected the 66 books of the KJV, parsed {len(books)}; has `bible`'s output changed?")
    print(f"{len(books)} books")
    # split by book name: with 66 documents this gives 3 to 4 books each to val and test
    return (((hash_split(book), text) for book, text in books),
            'King James Bible (Debian bible-kjv-text), one book per document, split by book-name hash')


# --------------------------------------------------------------------------------------------
# The real corpora: the Hugging Face hub, or a local .txt / .jsonl standing in for it
# --------------------------------------------------------------------------------------------

# The Pile's original host is gone. suolyer/pile_<subset> are community mirrors holding the subset's documents from
# the Pile's validation and test files (no train split); their splits are pooled and re-split 90/5/5 by a hash of each
# document. PG-19 keeps its own book-level splits, so numbers compare with the literature; deepmind/pg19 is a
# loading-script dataset, which recent `datasets` releases may refuse to run. None of these names could be checked
# from our offline machines: if one has moved, pass --dataset=<another mirror> with the same text field and splits.
PG19_SPLITS = {'train': 'train', 'validation': 'val', 'test': 'test'}
HUB = dict(
    openwebtext2=('suolyer/pile_openwebtext2', {}, 'OpenWebText2 subset of the Pile'),
    arxiv=('suolyer/pile_arxiv', {}, 'ArXiv subset of the Pile'),
    github=('suolyer/pile_github', {}, 'GitHub subset of the Pile'),
    pg19=('deepmind/pg19', PG19_SPLITS, 'PG-19, Project Gutenberg books before 1919'),  # ~11 GB: use max_docs
)


def read_local(path, text_field):
    """.jsonl: one JSON object per line, its text_field is a document. Anything else is plain text with
    documents separated by lines holding only <|endoftext|> (a file without one is a single document)."""
    with open(path, encoding='utf-8') as f:
        if path.endswith('.jsonl'):
            for line in f:
                if line.strip():
                    yield json.loads(line)[text_field]
            return
        text = f.read()
    doc = []
    for line in text.splitlines(keepends=True):
        if line.strip() == '<|endoftext|>':
            yield ''.join(doc)
            doc = []
        else:
            doc.append(line)
    yield ''.join(doc)


def read_hub(dataset, dataset_config, text_field, max_docs):
    """-> iterator of (hub_split, text) over every split the dataset has. Streaming, so that max_docs needs no full
    download; `datasets` is imported here, so that the offline paths never touch it."""
    try:
        from datasets import load_dataset
        ds = load_dataset(dataset, dataset_config, streaming=True)
    except Exception as e:
        raise ConfigError(f"cannot load {dataset!r} from the hub ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}); try --dataset=<another mirror> or "
                          f"--text_file=<local .txt/.jsonl>") from None
    # the load above runs now, so a failed load stops us before any file is written; the rows stream later
    return ((s, row[text_field]) for s in sorted(ds) for row in itertools.islice(ds[s], max_docs))


def read_hub_corpus(cfg):
    dataset, split_map, description = HUB[cfg['corpus']]
    dataset = cfg['dataset'] or dataset
    max_docs = cfg['max_docs'] or None
    if cfg['text_file']:
        if not os.path.isfile(cfg['text_file']):
            raise FileNotFoundError(f"text_file={cfg['text_file']!r}: no such file")
        rows = (('local', t) for t in itertools.islice(read_local(cfg['text_file'], cfg['text_field']), max_docs))
        source = f"local file {os.path.basename(cfg['text_file'])} ({description})"
    else:
        rows = read_hub(dataset, cfg['dataset_config'] or None, cfg['text_field'], max_docs)
        source = (f"hub dataset {dataset}" + (f" ({cfg['dataset_config']})" if cfg['dataset_config'] else '') +
                  f": {description}")
    # hub splits not in split_map (all of the Pile mirrors', and a local file's) are spread by a hash of the text
    return ((split_map.get(hub_split) or hash_split(text), text) for hub_split, text in rows), source


# corpus -> (reader, default tokenizer, the options it reads besides SHARED_KEYS)
CORPORA = dict(pycode=(read_pycode, 'bytes', ('src_dir', 'max_files')), kjv=(read_kjv, 'bytes', ('bible',)),
               **{name: (read_hub_corpus, 'gpt2', HUB_KEYS) for name in HUB})


def main(cfg):
    t0 = time.time()
    if cfg['corpus'] not in CORPORA:
        raise ConfigError(f"unknown corpus {cfg['corpus']!r}; allowed: {', '.join(CORPORA)}")
    read, default_tokenizer, keys = CORPORA[cfg['corpus']]
    for key, value in cfg.items():  # an option of another corpus would be ignored silently: refuse it instead
        if value != DEFAULTS[key] and key not in SHARED_KEYS + keys:
            raise ConfigError(f"{key}={value!r} does not apply to corpus={cfg['corpus']!r}; "
                              f"its options: {', '.join(SHARED_KEYS + keys)}")
    if cfg['max_files'] < 0 or cfg['max_docs'] < 0:
        raise ConfigError(f"max_files={cfg['max_files']} and max_docs={cfg['max_docs']} must be >= 0 (0 = all)")
    tok = get_tokenizer(cfg['tokenizer'] or default_tokenizer)  # before any download: a missing tokenizer fails first
    own = tok.name not in ('bytes', 'gpt2')  # a pretrained model's tokenizer: its data folder is named after it
    out_dir = cfg['out_dir'] or os.path.join(ROOT, 'data', cfg['corpus'] + ('-' + short_name(tok.name) if own else ''))
    docs, source = read(cfg)
    meta = write_corpus(out_dir, docs, tok, source, bos=cfg['bos'])
    for s in SPLITS:
        print(f"{s:>5}: {meta['docs'][s]:>9,} docs {meta['tokens'][s]:>14,} tokens")
    print(f"wrote {out_dir} ({source}; tokenizer {tok.name}) in {time.time() - t0:.1f}s")
    return meta


if __name__ == '__main__':
    config.run(main, DEFAULTS, __doc__)
