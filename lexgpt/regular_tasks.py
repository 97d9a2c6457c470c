"""
The regular-language tasks of thesis ch. 6 (section 6.4.1, Table 6.1), as a library: pure numpy, no torch.

Two families. Deletang et al. 2023 (transduction of the final answer): random strings labelled by a rule; train
lengths 1..40, test 41..500. Bhattamishra et al. 2020 (recognition: is the string in the language?): train lengths
1..50, test 51..100, every length holding half members (sampled uniformly among the members of that length, by
counting paths through the language's automaton) and half non-members (uniform strings, rejection sampled). A length
at which either class is empty (odd lengths of D_n and tomita_5, lengths 1-2 of tomita_3/4) is skipped.

A task holds its alphabet (`symbols`, id i = symbols[i]) and number of classes, and offers
  sample(rng, L, n, p_one) -> (x int64 [n, L] of symbol ids, y int64 [n] of class ids)
  test_set(L, n, p_one)    the same, seeded by the length alone (every model is tested on the same strings)
  parse(text), label(text) a string of symbols -> ids [1, L], and its class
  length_ranges(...)       the training and test lengths
  window_state(x, i, w)    the transition of a window of the string (parity_check and cycle_navigation only)
"""
import numpy as np


class Task:
    name, symbols, n_classes = '', '', 0
    family, train_max, test_range, test_stride = '', 0, (0, 0), 1
    has_window_state = False

    def usable(self, L):
        return L >= 1

    def allowed(self):
        return 'any length >= 1'

    def lengths(self, lo, hi):
        return [L for L in range(lo, hi + 1) if self.usable(L)]

    def check_length(self, L):
        if not self.usable(L):
            raise ValueError(f"task {self.name} has no strings of length {L}; allowed: {self.allowed()}")

    def labels(self, x):
        raise NotImplementedError

    def sample(self, rng, L, n, p_one=0.5):
        """Uniform strings over the task's symbols, labelled by its rule."""
        self.check_length(L)
        x = rng.integers(0, len(self.symbols), (n, L))
        return x, self.labels(x)

    def test_set(self, L, n, p_one=0.5):
        # seeded by the length (and P(1)) only, never by the model or its seed, so every model sees the same strings
        return self.sample(np.random.default_rng([20240, L, int(round(p_one * 1000))]), L, n, p_one)

    def parse(self, text):
        """A string of the task's symbols -> ids [1, L]."""
        bad = [c for c in text if c not in self.symbols]
        if bad:
            raise ValueError(f"symbol {bad[0]!r} is not in task {self.name}'s alphabet {list(self.symbols)}")
        return np.array([[self.symbols.index(c) for c in text]], dtype=np.int64)

    def label(self, text):
        return int(self.labels(self.parse(text))[0])

    def length_ranges(self, train_max=0, test_min=0, test_max=0, test_stride=0):
        """-> (training lengths 1..train_max, test lengths test_min..test_max, every test_stride-th plus the last),
        usable lengths only; 0 means the family's default."""
        train_max = train_max or self.train_max
        lo, hi = test_min or self.test_range[0], test_max or self.test_range[1]
        test = self.lengths(lo, hi)
        stride = test_stride or self.test_stride
        if stride > 1:
            test = sorted(set(test[::stride] + test[-1:]))
        train = self.lengths(1, train_max)
        if not train or not test:
            raise ValueError(f"task {self.name} has no usable lengths in train 1..{train_max} or test {lo}..{hi}")
        return train, test

    def window_state(self, x, i, width):
        raise ValueError(f"task {self.name} has no transition per window; allowed: "
                         f"{', '.join(t.name for t in TASKS.values() if t.has_window_state)}")


# --------------------------------------------------------------------------------------------
# Deletang et al. 2023: transduction (thesis 6.4.1)
# --------------------------------------------------------------------------------------------

class Deletang(Task):
    family, train_max, test_range = 'deletang', 40, (41, 500)
    test_stride = 10  # 460 test lengths: every 10th is enough on a CPU


class EvenPairs(Deletang):
    name, symbols, n_classes = 'even_pairs', 'ab', 2

    def labels(self, x):
        # 1 when the number of 'ab' and 'ba' pairs is even (equivalently: first symbol == last symbol)
        return ((x[:, 1:] != x[:, :-1]).sum(1) % 2 == 0).astype(np.int64)


class CyclicWalk(Deletang):
    """Each symbol moves a counter on a cycle of `modulus` by moves[symbol]; the class is where it ends, from 0.
    Moves on a cycle compose by addition, so any window x[a..b] has one transition of its own, the sum of its moves
    (thesis 6.6.3: 2 transitions for PARITY, 5 for Cycle Navigation); the PCA of Fig. 6.3 colours by it."""
    moves, modulus = (), 1
    has_window_state = True

    def labels(self, x):
        return np.array(self.moves)[x].sum(1) % self.modulus

    def window_state(self, x, i, width):
        """The transition of the tokens x[i-width+1 .. i] (clipped at 0), as the net move mod `modulus`."""
        return int(np.array(self.moves)[x[max(0, i - width + 1):i + 1]].sum() % self.modulus)


class ParityCheck(CyclicWalk):
    name, symbols, n_classes = 'parity_check', 'ab', 2
    moves, modulus = (0, 1), 2  # the class is 1 when the number of b's is odd

    def sample(self, rng, L, n, p_one=0.5):
        self.check_length(L)
        x = (rng.random((n, L)) < p_one).astype(np.int64)  # 'b' (=1) with probability p_one (Table 6.2)
        return x, self.labels(x)


class CycleNavigation(CyclicWalk):
    """Moves 0 = stay, 1 = +1, 2 = -1 on a cycle of 5, starting at 0; the class is the end position."""
    name, symbols, n_classes = 'cycle_navigation', '012', 5
    moves, modulus = (0, 1, -1), 5


class ModularArithmetic(Deletang):
    """Numbers 0-4 alternating with + - *, odd length; the class is the value mod 5, with * binding tighter."""
    name, symbols, n_classes = 'modular_arithmetic', '01234+-*', 5

    def usable(self, L):
        return L >= 1 and L % 2 == 1

    def allowed(self):
        return 'odd lengths >= 1 (number, operator, number, ...)'

    def sample(self, rng, L, n, p_one=0.5):
        self.check_length(L)
        x = rng.integers(0, 5, (n, L))
        x[:, 1::2] = rng.integers(5, 8, (n, L // 2))
        return x, self.labels(x)

    def labels(self, x):
        out = []
        for row in x.tolist():
            total, sign, term = 0, 1, row[0]   # sum of finished terms, sign of the open term, its product
            for op, num in zip(row[1::2], row[2::2]):
                if op == 7:
                    term = term * num % 5
                else:
                    total, sign, term = (total + sign * term) % 5, (1 if op == 5 else -1), num
            out.append((total + sign * term) % 5)
        return np.array(out, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# Bhattamishra et al. 2020: recognition, through a finite automaton
# --------------------------------------------------------------------------------------------

class DFA:
    """A finite automaton: delta[q, s] -> q (state 0 is the start). Counting the accepted completions of every
    state gives exact uniform sampling of the members of a given length (a uniform choice among all accepted
    strings, made one symbol at a time with probabilities proportional to the completions left)."""

    def __init__(self, delta, accept):
        self.delta = np.array(delta, dtype=np.int64)
        self.accept = np.array(accept, dtype=bool)
        self.counts = [[int(a) for a in self.accept]]  # counts[t][q]: accepted strings of length t from q (exact ints)

    def count(self, t):
        while len(self.counts) <= t:
            prev = self.counts[-1]
            self.counts.append([sum(prev[r] for r in row) for row in self.delta.tolist()])
        return self.counts[t]

    def run(self, x):
        q = np.zeros(len(x), dtype=np.int64)
        for t in range(x.shape[1]):
            q = self.delta[q, x[:, t]]
        return self.accept[q]

    def sample_members(self, rng, L, n):
        self.count(L)
        S = self.delta.shape[1]
        q, x = np.zeros(n, dtype=np.int64), np.zeros((n, L), dtype=np.int64)
        for t in range(L):
            left = self.counts[L - t - 1]
            # P(symbol s | state q) = completions after s / completions from q, as floats (ints can exceed 2^64)
            table = np.array([[left[r] / max(1, self.counts[L - t][p]) for r in row]
                              for p, row in enumerate(self.delta.tolist())])
            cum = np.cumsum(table[q], axis=1)
            s = np.minimum((rng.random(n)[:, None] * cum[:, -1:] >= cum).sum(1), S - 1)
            x[:, t], q = s, self.delta[q, s]
        return x


class Bhattamishra(Task):
    """Recognition tasks of Bhattamishra et al. 2020: class 1 for members, 0 for non-members."""
    family, train_max, test_range, n_classes = 'bhattamishra', 50, (51, 100), 2
    symbols = '01'
    dfa = None

    def usable(self, L):
        members, total = self.dfa.count(L)[0], len(self.symbols) ** L
        return L >= 1 and 0 < members < total

    def allowed(self):
        return f"lengths where both exist, e.g. {self.lengths(1, 12)}"

    def check_length(self, L):
        if not self.usable(L):
            raise ValueError(f"task {self.name} has no members or no non-members of length {L}; "
                             f"allowed: {self.allowed()}")

    def labels(self, x):
        return self.dfa.run(x).astype(np.int64)

    def sample(self, rng, L, n, p_one=0.5):
        self.check_length(L)
        pos = self.dfa.sample_members(rng, L, n // 2)
        neg = []
        while sum(len(a) for a in neg) < n - n // 2:  # rejection: uniform strings that are not members
            x = rng.integers(0, len(self.symbols), (2 * n, L))
            neg.append(x[~self.dfa.run(x)])
        x = np.concatenate([pos, np.concatenate(neg)[:n - n // 2]])
        y = np.concatenate([np.ones(n // 2, np.int64), np.zeros(n - n // 2, np.int64)])
        order = rng.permutation(n)
        return x[order], y[order]


class Dyck(Bhattamishra):
    """D_n of Bhattamishra et al. 2020 over the two symbols a = 0, b = 1 (as in the RegularGPT authors' task code):
    D_0 = empty, D_n = (a D_{n-1} b)*, i.e. balanced brackets of one kind nested at most n deep, so recognising it
    means counting the depth up to n. The automaton's state is the depth 0..n, plus a dead state n+1. Every string
    of odd length is a non-member; those lengths have no members and are skipped like every one-class length."""

    def __init__(self, n):
        self.name, self.n = f'D_{n}', n
        dead = n + 1
        delta = [[d + 1 if d < n else dead, d - 1 if d > 0 else dead] for d in range(n + 1)] + [[dead, dead]]
        self.dfa = DFA(delta, [d == 0 for d in range(n + 2)])


class Tomita(Bhattamishra):
    def __init__(self, k):
        self.name = f'tomita_{k}'
        if k == 3:
            # no odd run of 1s immediately followed by an odd run of 0s. States: 0 neutral, 1 odd 1-run, 2 even 1-run,
            # 3 odd 0-run after an odd 1-run, 4 even 0-run after an odd 1-run, 5 dead; the string end closes a run
            self.dfa = DFA([[0, 1], [3, 2], [0, 1], [4, 5], [3, 1], [5, 5]], [1, 1, 1, 0, 1, 0])
        elif k == 4:   # no '000': the state counts trailing 0s, 3 is dead
            self.dfa = DFA([[1, 0], [2, 0], [3, 0], [3, 3]], [1, 1, 1, 0])
        elif k == 5:   # even #0 and even #1: state = 2 * (#0 mod 2) + (#1 mod 2)
            self.dfa = DFA([[2, 1], [3, 0], [0, 3], [1, 2]], [1, 0, 0, 0])
        elif k == 6:   # (#0 - #1) mod 3 == 0: state = (#0 - #1) mod 3
            self.dfa = DFA([[1, 2], [2, 0], [0, 1]], [1, 0, 0])
        else:
            raise ValueError(f"tomita_{k} is not implemented; allowed: tomita_3..tomita_6")


TASKS = {t.name: t for t in [EvenPairs(), ModularArithmetic(), ParityCheck(), CycleNavigation(),
                             Dyck(2), Dyck(3), Dyck(4), Dyck(12),
                             Tomita(3), Tomita(4), Tomita(5), Tomita(6)]}


def get_task(name):
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}")
    return TASKS[name]
