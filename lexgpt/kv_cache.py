"""
The KV cache of incremental decoding (GPT.generate, sample.py) and of streaming (lexgpt/streaming.py): what each
layer keeps of the past keys and values, and the token index and position of each. model.py's attention reads it.
"""
import torch


class KVCache:
    """Past keys and values for incremental decoding. With cache_window > 0 it keeps only the first n_starting tokens
    and the last cache_window ones (constant memory): thesis 4.9.2's sliding cache or LM-Infinite's Λ-shaped one,
    masked to match; a local layer (add's window > 0) keeps its window's. relative=True (streaming; StreamingLLM
    3.2): keys are cached unrotated and rotated by their slot, so positions stay small in any stream while token indices
    (masks) count on; slots shrink the distances to the starting tokens, so pair it with ceiling=cache_window."""

    def __init__(self, cache_window=0, n_starting=0, relative=False):
        self.cache_window = cache_window
        self.n_starting = n_starting
        self.relative = relative
        # per layer: keys, values, FoX's potential, and the layer's own window (0: none)
        self.k, self.v, self.pot, self.window = {}, {}, {}, {}
        self.idx = None      # token index [Tk] of every cached key
        self.rel = None      # its relative position [b, Tk]
        self.next = 0        # the next token's index
        self.pe_state = None  # the encoding's running state (BiPE's segment)

    def first(self):  # the next token's position: its slot in a relative cache, else its index
        return (0 if self.idx is None else self.idx.numel()) if self.relative else self.next

    def add_positions(self, pos, pe_state):
        # a slot's token: the stream goes on; positions past the first call's are not asserted plain (a slot is not
        # a token index), which only makes the routes look at them more closely
        pos = pos._replace(idx=pos.idx + self.next - int(pos.idx[0]), plain=pos.plain and self.next == 0)
        self.idx = pos.idx if self.idx is None else torch.cat([self.idx, pos.idx])
        self.rel = pos.rel if self.rel is None else torch.cat([self.rel, pos.rel], dim=1)
        self.next = int(pos.idx[-1]) + 1
        self.pe_state = pe_state
        return pos

    def add(self, layer, k, v, pot=None, window=0):
        if layer in self.k:
            k = torch.cat([self.k[layer], k], dim=2)
            v = torch.cat([self.v[layer], v], dim=2)
            pot = torch.cat([self.pot[layer], pot], dim=2) if pot is not None else None
        self.k[layer], self.v[layer], self.pot[layer] = k, v, pot
        self.window[layer] = window
        return k, v, pot

    def last_potential(self, layer):
        """The last cached key's potential in `layer` (FoX's running sum goes on from it), or None."""
        pot = self.pot.get(layer)
        return None if pot is None else pot[:, :, -1:]

    def trim(self):
        n = self.idx.numel()
        keep = torch.arange(n, device=self.idx.device)
        if 0 < self.cache_window < n - self.n_starting:
            keep = torch.cat([keep[:self.n_starting], keep[n - self.cache_window:]])
        for layer in self.k:
            # the layer holds the last m tokens; of those, the ones that stay, and of these its window's
            m, w = self.k[layer].size(2), self.window[layer]
            sel = (keep[keep >= n - m] - (n - m))[-w if w else None:]
            if sel.numel() < m:
                self.k[layer] = self.k[layer][:, :, sel]
                self.v[layer] = self.v[layer][:, :, sel]
                if self.pot[layer] is not None:  # only differences count: re-based, it stays small in a long stream
                    self.pot[layer] = self.pot[layer][:, :, sel] - self.pot[layer][:, :, -1:]
        keep = keep[-max(k.size(2) for k in self.k.values()):]
        if keep.numel() < n:
            self.idx = self.idx[keep]
            # a relative cache's positions are its slots 0, 1, ...: the first ones stay
            self.rel = self.rel[:, :keep.numel()] if self.relative else self.rel[:, keep]
