"""
The corpora on disk, as data.prepare writes them: data/<dataset>/{train,val,test}.bin (token ids), {split}_docs.npy
(document starts) and meta.json; a split read back whole, document bounds, and the windows the protocols score.
"""
import json
import os

import numpy as np
import torch

from lexgpt.config import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository, above lexgpt/
SPLITS = ('train', 'val', 'test')  # what data.prepare writes


def data_folder(dataset='pycode', data_dir=''):
    return data_dir or os.path.join(ROOT, 'data', dataset)


def load_meta(folder):
    path = os.path.join(folder, 'meta.json')
    return json.load(open(path)) if os.path.exists(path) else {}


def prepare_command(folder):
    """The data.prepare line that writes a folder: data/pycode-gemma3 is corpus pycode in gemma3's tokenizer (prepare's
    own naming); a folder elsewhere is prepare's --out_dir, its corpus unknown."""
    folder = os.path.abspath(folder)
    if os.path.dirname(folder) != os.path.join(ROOT, 'data'):
        return f"python -m data.prepare --corpus=<corpus> --out_dir={folder}"
    corpus, _, tokenizer = os.path.basename(folder).partition('-')
    return f"python -m data.prepare --corpus={corpus}" + (f" --tokenizer={tokenizer}" if tokenizer else '')


def split_path(folder, split):
    """The split's .bin, once it is known to belong to a whole corpus: data.prepare writes meta.json last, so a folder
    without one (or with a .bin of another length than meta.json says) is a preparation that stopped halfway."""
    path = os.path.join(folder, f'{split}.bin')
    if not os.path.exists(path):
        raise FileNotFoundError(f"no {path}: prepare the data first ({prepare_command(folder)}) "
                                f"or point data_dir at a prepared folder")
    redo = f"; prepare it again ({prepare_command(folder)})"
    if not os.path.exists(os.path.join(folder, 'meta.json')):
        raise ConfigError(f"{folder} has no meta.json: its preparation did not finish{redo}")
    n = os.path.getsize(path) // np.dtype(load_meta(folder).get('dtype', 'uint16')).itemsize
    if n == 0:  # np.memmap's own error ('cannot mmap an empty file') names no file
        raise ConfigError(f"{path} is empty: a split needs tokens{redo}")
    expected = load_meta(folder).get('tokens', {}).get(split)
    if expected is not None and expected != n:
        raise ConfigError(f"{path} holds {n} tokens but {folder}/meta.json says {expected}{redo}")
    return path


class Split:
    """tokens (np.uint16 or uint32 memmap), document start offsets, and the corpus meta of one data split."""

    def __init__(self, tokens, docs=None, meta=None, name=''):
        self.tokens = tokens
        self.docs = np.asarray(docs if docs is not None else [0], dtype=np.int64)
        self.meta, self.name = meta or {}, name

    @property
    def bits_unit(self):
        # one byte-level token is one byte, so loss / ln 2 is bits per byte
        return 'bits/byte' if self.meta.get('tokenizer') == 'bytes' else 'bits/token'


def check_split(split):
    """A split name that data.prepare writes, or a one-line error (not 'prepare the data first' for a typo)."""
    if split not in SPLITS:
        raise ConfigError(f"split={split!r}; allowed: {', '.join(SPLITS)}")


def load_split(folder, split):
    check_split(split)
    path = split_path(folder, split)
    docs = os.path.join(folder, f'{split}_docs.npy')
    meta = load_meta(folder)  # a pretrained model's ids of 65,536 and more are uint32 (data.prepare)
    tokens = np.memmap(path, dtype=meta.get('dtype', 'uint16'), mode='r')
    starts = np.load(docs) if os.path.exists(docs) else None
    # offsets of another corpus would index past the end, or cut documents in the wrong places
    n_docs = meta.get('docs', {}).get(split)
    if starts is not None and (len(starts) == 0 or starts[0] != 0 or (np.diff(starts) <= 0).any()
                               or starts[-1] >= len(tokens) or n_docs not in (None, len(starts))):
        raise ConfigError(f"{docs} does not fit {path} ({len(tokens)} tokens): the document offsets must rise from 0 "
                          f"and stay below the length; prepare the data again (python -m data.prepare)")
    return Split(tokens, starts, meta, f'{os.path.basename(os.path.normpath(folder))}:{split}')


def document_bounds(docs, n_tokens):
    """[start, end) of each document's own tokens: doc i is bin[docs[i] : docs[i+1]-1], the eot after it excluded."""
    starts = np.asarray(docs, dtype=np.int64)
    return starts, np.append(starts[1:] - 1, n_tokens)


def end_room(split, context):
    """Per document, how many tokens have `context` tokens before them inside it (the last-token protocol's ends)."""
    starts, ends = document_bounds(split.docs, len(split.tokens))
    return np.clip(ends - starts - context, 0, None)  # valid e: start + context .. end - 1


def check_n(split, context, n, what):
    """n scored tokens, each after `context` tokens of its document: more than the split holds is a one-line error
    naming the most there are (draw_ends would quietly take them all, fewer than the n a reader is told)."""
    most = int(end_room(split, context).sum())
    if n > most:
        raise ConfigError(f"n={n}: {split.name} holds {most} tokens with {context} tokens of context before them in "
                          f"their document ({what}); allowed n <= {most}")


def draw_ends(split, context, n, seed):
    """Positions e of n scored tokens, each with `context` tokens before it inside the same document, drawn uniformly
    without replacement over all such positions of the split. Documents shorter than context + 1 tokens are skipped:
    they cannot hold the longest context, and the last-token protocol must score the same tokens at every length."""
    room = end_room(split, context)
    total = int(room.sum())
    if total == 0:
        raise ConfigError(f"no document of {split.name} has more than {context} tokens; "
                          "use shorter lengths or another split")
    take = min(n, total)
    pick = np.sort(np.random.default_rng(seed).choice(total, size=take, replace=False))
    cum = np.cumsum(room)
    doc = np.searchsorted(cum, pick, side='right')
    starts = document_bounds(split.docs, len(split.tokens))[0]
    e = starts[doc] + context + (pick - (cum[doc] - room[doc]))
    info = dict(context=int(context), n_requested=int(n), n_drawn=int(take), docs_used=int(len(np.unique(doc))),
                docs_long_enough=int((room > 0).sum()), docs_too_short=int((room == 0).sum()), positions=total)
    return e, info


def slices(tokens, starts, L, bos=None):
    """Inputs tokens[s:s+L] and next-token targets tokens[s+1:s+L+1] for each start s -> two int64 [n, L] tensors;
    bos (an id): each input starts with it (with_bos)."""
    ix = np.asarray(starts)[:, None] + np.arange(L + 1)
    block = torch.from_numpy(np.asarray(tokens[ix], dtype=np.int64))
    return with_bos(block[:, :-1], bos), block[:, 1:]


def with_bos(x, bos):
    """The one rule by which an input cut from a corpus [n, T] starts with a pretrained model's BOS: its first token is
    replaced by bos, as llama.cpp's llama-perplexity does to each chunk. Replaced rather than prepended, an input keeps
    its length (L_ex = L_tr still means L_tr tokens) and its targets, the scored tokens at every length: the replaced
    token is no target of its own input. bos None (our own checkpoints, SmolLM2, --bos=False): x as it is."""
    if bos is None:
        return x
    x = x.clone()
    x[:, 0] = bos
    return x
