"""
The inputs of the recall probe (analysis/recall.py): the spans S and S' and the fillers, drawn once from a data
split, and the two inputs of one (span, distance) cell that differ only inside the earlier copy.

Layout of an input of L tokens (positions 0..L-1), s = len(S), distance d, p1 = L - s - d:

    filler[0:p1]  S (repeat) or S' (control) at p1..p1+s-1  filler[p1+s:L-s]  S at L-s..L-1

The filler is tokens[f : f+L] of the split with those two stretches written over; with a BOS id, position 0 holds it
(corpus.with_bos's rule: replaced, not prepended, so the input keeps its L tokens). d counts from the start of the
earlier copy to the start of the last one, s <= d <= L - s (L - s - 1 with a BOS).
"""
import numpy as np

from lexgpt.config import ConfigError
from lexgpt.corpus import draw_ends

KINDS = ('text', 'random')  # S from the split's text | s random ids (Olsson et al. 2022's repeated random tokens)


def recall_pair(filler, S, S2, d, bos=None):
    """-> (repeat, control), int64 arrays as long as filler: S at p1 = L - s - d in the repeat, S2 there in the
    control, S at the end of both, bos (if any) at position 0."""
    L, s = len(filler), len(S)
    if len(S2) != s:
        raise ValueError(f"S has {s} tokens, S' {len(S2)}: they must be as long")
    lo, p1 = (1 if bos is not None else 0), L - s - d
    if d < s or p1 < lo:
        raise ValueError(f"d={d} is outside {s}..{L - s - lo}: the copies of {s} tokens must not overlap and must "
                         f"fit in {L} tokens" + (' after the BOS' if lo else ''))
    repeat = np.array(filler, dtype=np.int64)
    repeat[L - s:] = S
    if bos is not None:
        repeat[0] = bos
    control = repeat.copy()
    repeat[p1:p1 + s], control[p1:p1 + s] = S, S2
    return repeat, control


def max_distance(L, s, bos=None):
    return L - s - (1 if bos is not None else 0)


def distance_grid(L, L_tr, s, ratio=2.0, bos=None, asked=()):
    """The distances of a row of L_ex = L: asked (tokens) where given, else s, s*ratio, s*ratio^2, ... plus L_tr and
    the largest distance L - s, so that a row holds d < L_tr, d = L_tr (or L - s, next to it at 1x) and d > L_tr;
    only those in s..max_distance, ascending."""
    top = max_distance(L, s, bos)
    if asked:
        grid = set(asked)
    else:
        grid, d = {L_tr, top}, float(s)
        while d <= top:
            grid.add(int(round(d)))
            d *= ratio
    return sorted(d for d in grid if s <= d <= top)


def disjoint_starts(split, s, count, seed):
    """count start offsets of s-token spans inside documents of the split (corpus.draw_ends: uniform over all such
    spans), pairwise disjoint, in random order."""
    room = len(split.tokens)
    if count * s > room // 2:
        raise ConfigError(f"n={count // 2} spans of s={s} tokens (and as many S') need more than half of "
                          f"{split.name}'s {room} tokens; use a smaller n or span")
    ends, _ = draw_ends(split, s, min(2 * count + 16, room // s), seed)  # sorted; a few to spare for overlaps
    starts, last = [], -s
    for e in ends - s:
        if e >= last + s:
            starts.append(int(e))
            last = e
    if len(starts) < count:
        raise ConfigError(f"{split.name} holds fewer than {count} disjoint spans of {s} tokens inside its documents; "
                          f"use a smaller n or span")
    return [int(x) for x in np.random.default_rng(seed).permutation(starts)[:count]]


def draw_spans(split, s, n, seed, kinds, vocab):
    """The spans of every kind, one pair (S, S') per i < n, the same at every length and distance:
    'text': [S start, S' start] offsets in the split; 'random': [S ids, S' ids], each id uniform over `vocab` (the
    ids the split holds, less the eot and the BOS: natural predictability removed, every id one the model has seen)."""
    out = {}
    if 'text' in kinds:
        starts = disjoint_starts(split, s, 2 * n, seed)
        out['text'] = [[a, b] for a, b in zip(starts[:n], starts[n:])]
    if 'random' in kinds:
        rng = np.random.default_rng([seed, 1])
        out['random'] = [[rng.choice(vocab, s).tolist(), rng.choice(vocab, s).tolist()] for _ in range(n)]
    return out


def draw_fillers(split, L, text_spans, n, s, seed):
    """n filler offsets f (tokens[f:f+L], crossing documents as a non-overlapping protocol's window does), each
    drawn uniformly with the stretch it takes clear of span i's S and S' in the split (so S appears nowhere else in
    the input); the same fillers serve both kinds."""
    top = len(split.tokens) - L
    if top < 1:
        raise ConfigError(f"L_ex={L}: {split.name} holds only {len(split.tokens)} tokens; use shorter lengths")
    rng, out = np.random.default_rng([seed, 2, L]), []
    for i in range(n):
        avoid = text_spans[i] if text_spans else []
        for _ in range(1000):
            f = int(rng.integers(0, top))
            if all(f + L <= a or a + s <= f for a in avoid):
                out.append(f)
                break
        else:
            raise ConfigError(f"L_ex={L}: found no filler in {split.name} clear of span {i}; use shorter lengths")
    return out


def span_tokens(split, spans, kind, i, s):
    """Span i's (S, S') of one kind as int64 id arrays of s tokens."""
    a, b = spans[kind][i]
    if kind == 'text':
        return tuple(np.asarray(split.tokens[x:x + s], dtype=np.int64) for x in (a, b))
    return np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)


def cell_inputs(split, spans, kind, fillers, L, d, s, bos=None, which=None):
    """The 2n inputs [2n, L] of one cell (or of the spans `which`), span i's repeat at row 2i and its control at
    2i+1 (a forward pass holds both of a span wherever it holds two rows)."""
    rows = []
    for i in range(len(fillers)) if which is None else which:
        f = fillers[i]
        S, S2 = span_tokens(split, spans, kind, i, s)
        rows += recall_pair(split.tokens[f:f + L], S, S2, d, bos)
    return np.stack(rows)
