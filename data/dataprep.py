"""
Shared code for the data/<name>/prepare.py scripts: tokenizers, the by-document
train/val/test split, the writer of the nanoGPT-style bins, and the Hugging Face
hub / local-file reader used by the real corpora (openwebtext2, arxiv, github, pg19).

Output layout of every corpus folder:
  {train,val,test}.bin      np.uint16 token ids; documents joined by one `eot` token
  {train,val,test}_docs.npy int64 start offset of each document in the .bin
                            (doc i is bin[docs[i] : docs[i+1]-1], the last one runs to the end)
  meta.json                 tokenizer, vocab_size, sep_ids, eot, docs, tokens, source
"""
import os
import sys
import json
import hashlib
import itertools
import argparse

import numpy as np

SPLITS = ('train', 'val', 'test')
TOKENIZERS = ('bytes', 'gpt2')


def die(msg):
    # one line on stderr and a non-zero exit: these scripts are run by hand, a traceback only hides the cause
    sys.exit(f"error: {msg}")


def hash_split(key, val_frac=0.05, test_frac=0.05):
    # md5 rather than hash(): str hashes are salted per process, md5 gives the same split on every run and machine,
    # and a document keeps its split when others are added or removed
    u = int(hashlib.md5(key.encode('utf-8')).hexdigest()[:8], 16) / 2**32
    if u < test_frac:
        return 'test'
    if u < test_frac + val_frac:
        return 'val'
    return 'train'


def get_tokenizer(name):
    """-> dict(name, vocab_size, eot, sep_ids, encode_batch: list[str] -> list[np.uint16 array])"""
    if name == 'bytes':
        # raw UTF-8 bytes; 0 never occurs in real text, so it is free to mark document boundaries
        enc = lambda texts: [np.frombuffer(t.encode('utf-8'), dtype=np.uint8).astype(np.uint16) for t in texts]
        return dict(name='bytes', vocab_size=256, eot=0, sep_ids=[ord('.'), ord('\n')], encode_batch=enc)
    if name == 'gpt2':
        try:
            import tiktoken
            bpe = tiktoken.get_encoding('gpt2')
        except Exception as e:  # tiktoken fetches its BPE files on first use; offline that is a network error
            die(f"cannot load tiktoken's gpt2 encoding ({type(e).__name__}); it is downloaded once and cached, "
                f"so run once with internet or point TIKTOKEN_CACHE_DIR at a cache, or use --tokenizer=bytes")
        # encode_ordinary: '<|endoftext|>' inside a document is plain text, never the eot id
        enc = lambda texts: [np.array(ids, dtype=np.uint16)
                             for ids in bpe.encode_ordinary_batch(texts, num_threads=os.cpu_count() or 1)]
        sep = [bpe.encode_ordinary('.')[0], bpe.encode_ordinary('\n')[0]]  # [13, 198]
        return dict(name='gpt2', vocab_size=bpe.n_vocab, eot=bpe.eot_token, sep_ids=sep, encode_batch=enc)
    die(f"unknown tokenizer {name!r}; allowed: {', '.join(TOKENIZERS)}")


def write_corpus(out_dir, docs, tok, source, batch=256):
    """docs yields (split, text); writes the bins, the doc offsets and meta.json into out_dir, returns meta."""
    assert tok['vocab_size'] <= 2**16, "uint16 bins"
    os.makedirs(out_dir, exist_ok=True)
    meta_path = os.path.join(out_dir, 'meta.json')
    if os.path.exists(meta_path):  # written last, so a run that fails halfway leaves no meta beside half-new bins
        os.remove(meta_path)
    eot = np.array([tok['eot']], dtype=np.uint16)
    files = {s: open(os.path.join(out_dir, f'{s}.bin'), 'wb') for s in SPLITS}
    starts = {s: [] for s in SPLITS}
    ntok = {s: 0 for s in SPLITS}
    skipped = 0

    def flush(pending):
        nonlocal skipped
        for (split, _), ids in zip(pending, tok['encode_batch']([t for _, t in pending])):
            # an eot inside a document would split it in two for every reader of the bins
            if len(ids) == 0 or (ids == tok['eot']).any():
                skipped += 1
                continue
            if starts[split]:
                eot.tofile(files[split])
                ntok[split] += 1
            starts[split].append(ntok[split])
            ids.tofile(files[split])
            ntok[split] += len(ids)

    pending = []
    for split, text in docs:
        assert split in SPLITS, split
        pending.append((split, text))
        if len(pending) == batch:
            flush(pending)
            pending = []
    flush(pending)
    for f in files.values():
        f.close()

    for s in SPLITS:
        if not starts[s]:  # np.memmap cannot open an empty file, so fail here rather than in training
            die(f"split {s!r} got no documents ({sum(map(len, starts.values()))} in all); give it more data")
        np.save(os.path.join(out_dir, f'{s}_docs.npy'), np.array(starts[s], dtype=np.int64))
    meta = dict(tokenizer=tok['name'], vocab_size=tok['vocab_size'], sep_ids=tok['sep_ids'], eot=tok['eot'],
                docs={s: len(starts[s]) for s in SPLITS}, tokens=dict(ntok), source=source)
    with open(meta_path, 'w') as f:
        json.dump(meta, f, indent=2)
    if skipped:
        print(f"skipped {skipped} empty documents or documents containing the eot id")
    return meta


def print_summary(meta):
    for s in SPLITS:
        print(f"{s:>5}: {meta['docs'][s]:>9,} docs {meta['tokens'][s]:>14,} tokens")


# -----------------------------------------------------------------------------
# real corpora: the Hugging Face hub, or a local .txt / .jsonl standing in for it

def read_local(path, text_field):
    """.jsonl: one JSON object per line, its text_field is a document. Anything else is plain text with
    documents separated by lines holding only <|endoftext|> (a file without one is a single document)."""
    if path.endswith('.jsonl'):
        with open(path, encoding='utf-8') as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)[text_field]
    else:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        doc = []
        for line in text.splitlines(keepends=True):
            if line.strip() == '<|endoftext|>':
                yield ''.join(doc)
                doc = []
            else:
                doc.append(line)
        yield ''.join(doc)


def read_hub(dataset, config, text_field, max_docs=None):
    """-> iterator of (hub_split, text) over every split the dataset has. Streaming, so that --max_docs
    needs no full download; imported here so that the offline paths never touch `datasets`."""
    try:
        from datasets import load_dataset
        ds = load_dataset(dataset, config, streaming=True)
    except Exception as e:
        die(f"cannot load {dataset!r} from the hub ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); "
            f"try --dataset=<another mirror> or --text_file=<local .txt/.jsonl>")
    # a plain function returning a generator, so that a failed load stops us before any file is written
    return ((s, row[text_field]) for s in sorted(ds) for row in itertools.islice(ds[s], max_docs))


def prepare_hf(name, dataset, config=None, text_field='text', split_map=None, description=''):
    """CLI of the real corpora. split_map: hub split name -> our split; hub splits not in it are pooled
    and spread over train/val/test by a hash of the document text (the Pile subset mirrors ship only
    their validation and test files, so that is the split for them)."""
    split_map = split_map or {}
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    p = argparse.ArgumentParser(description=f"prepare data/{name}: {description}")
    p.add_argument('--dataset', default=dataset, help='hub dataset name')
    p.add_argument('--config', default=config, help='hub dataset config')
    p.add_argument('--text_field', default=text_field)
    p.add_argument('--text_file', default=None, help='local .txt or .jsonl used instead of the hub (no network)')
    p.add_argument('--tokenizer', default='gpt2', help=f"one of: {', '.join(TOKENIZERS)}")
    p.add_argument('--max_docs', type=int, default=None, help='take at most this many documents from each hub split')
    p.add_argument('--out_dir', default=here)
    args = p.parse_args()

    tok = get_tokenizer(args.tokenizer)  # before any download: a missing tokenizer should fail first
    if args.text_file:
        if not os.path.exists(args.text_file):
            die(f"no such file: {args.text_file}")
        rows = (('local', t) for t in itertools.islice(read_local(args.text_file, args.text_field), args.max_docs))
        source = f"local file {os.path.basename(args.text_file)} ({description})"
    else:
        rows = read_hub(args.dataset, args.config, args.text_field, args.max_docs)
        source = f"hub dataset {args.dataset}" + (f" ({args.config})" if args.config else '') + f": {description}"

    docs = ((split_map.get(hub_split) or hash_split(text), text) for hub_split, text in rows)
    meta = write_corpus(args.out_dir, docs, tok, source)
    print(f"wrote {args.out_dir} ({source}, tokenizer {tok['name']})")
    print_summary(meta)
