"""
What several scripts need, in one module (no script imports another script):
device and precision; data folders, their meta.json and document-aware windows; the tokenizer; checkpoints
(atomic save, safe load into a model); one training step; result files, tables and timing; the evaluation-time
attention variants; the input-gradient tools of the receptive-field analysis.
"""
import glob
import json
import os
import re
import resource
import sys
import time
from collections import namedtuple
from contextlib import contextmanager, nullcontext

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import pretrained
from config import ConfigError
from model import GPT, GPTConfig, KVCache, make_model

ROOT = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------------------------
# Device and precision
# --------------------------------------------------------------------------------------------

def pick_device(device):
    if device == 'auto':
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError):
        kind = None
    if kind not in ('cpu', 'cuda', 'mps'):
        raise ConfigError(f"device={device!r} is not one of auto, cpu, cuda, cuda:<index>, mps")
    if kind == 'cuda' and not torch.cuda.is_available():
        raise ConfigError(f"device={device!r} but torch sees no CUDA GPU here; use device=cpu or auto")
    return device


def precision(device_type, dtype):
    """Resolve dtype='auto' and return (name, autocast context): bf16 where supported, fp16 on older GPUs
    (the caller then needs a GradScaler), float32 on CPU."""
    if dtype == 'auto':
        dtype = 'float32' if device_type == 'cpu' else ('bfloat16' if torch.cuda.is_bf16_supported() else 'float16')
    if dtype not in ('float32', 'bfloat16', 'float16'):
        raise ConfigError(f"dtype={dtype!r} is not one of auto, float32, bfloat16, float16")
    if dtype == 'float32':
        return dtype, nullcontext()
    return dtype, torch.autocast(device_type=device_type, dtype=getattr(torch, dtype))


EVAL_DEVICE = dict(device='cpu', dtype='float32')  # the evaluation scripts' options: cuda and bfloat16 for a large model


def on_device(model, device='cpu', dtype='float32'):
    """Run model's forward on `device` under `dtype`'s autocast, taking and giving CPU tensors (outputs in float32),
    so that the scripts' data and numpy code stay as they are. float32 on the CPU leaves the model untouched."""
    device = pick_device(device)
    _, ctx = precision(device.split(':')[0], dtype)
    if device == 'cpu' and dtype == 'float32':
        return model
    forward = model.to(device).forward
    move = lambda t, where: t.to(where) if torch.is_tensor(t) else t

    def moved(*args, **kw):
        with ctx:
            out = forward(*(move(a, device) for a in args), **{k: move(v, device) for k, v in kw.items()})
        return tuple(None if t is None else t.float().cpu() for t in out)
    model.forward = moved
    return model


# --------------------------------------------------------------------------------------------
# Data: data/<dataset>/{train,val,test}.bin (uint16 ids), {split}_docs.npy (document starts), meta.json
# --------------------------------------------------------------------------------------------

def data_folder(dataset='pycode', data_dir=''):
    return data_dir or os.path.join(ROOT, 'data', dataset)


def load_meta(folder):
    path = os.path.join(folder, 'meta.json')
    return json.load(open(path)) if os.path.exists(path) else {}


def split_path(folder, split):
    """The split's .bin, once it is known to belong to a whole corpus: data.prepare writes meta.json last, so a folder
    without one (or with a .bin of another length than meta.json says) is a preparation that stopped halfway."""
    path = os.path.join(folder, f'{split}.bin')
    if not os.path.exists(path):
        raise FileNotFoundError(f"no {path}: prepare the data first (python -m data.prepare --corpus=pycode) "
                                f"or point data_dir at a prepared folder")
    redo = "; prepare it again (python -m data.prepare)"
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


def load_split(folder, split):
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


def draw_ends(split, context, n, seed):
    """Positions e of n scored tokens, each with `context` tokens before it inside the same document, drawn uniformly
    without replacement over all such positions of the split. Documents shorter than context + 1 tokens are skipped:
    they cannot hold the longest context, and the last-token protocol must score the same tokens at every length."""
    starts, ends = document_bounds(split.docs, len(split.tokens))
    room = np.clip(ends - starts - context, 0, None)  # valid e: start + context .. end - 1
    total = int(room.sum())
    if total == 0:
        raise ConfigError(f"no document of {split.name} has more than {context} tokens; use shorter lengths or another split")
    take = min(n, total)
    pick = np.sort(np.random.default_rng(seed).choice(total, size=take, replace=False))
    cum = np.cumsum(room)
    doc = np.searchsorted(cum, pick, side='right')
    e = starts[doc] + context + (pick - (cum[doc] - room[doc]))
    info = dict(context=int(context), n_requested=int(n), n_drawn=int(take), docs_used=int(len(np.unique(doc))),
                docs_long_enough=int((room > 0).sum()), docs_too_short=int((room == 0).sum()), positions=total)
    return e, info


def windows(tokens, starts, L):
    """Inputs tokens[s:s+L] and next-token targets tokens[s+1:s+L+1] for each start s -> two int64 [n, L] tensors."""
    ix = np.asarray(starts)[:, None] + np.arange(L + 1)
    chunk = torch.from_numpy(np.asarray(tokens[ix], dtype=np.int64))
    return chunk[:, :-1], chunk[:, 1:]


# --------------------------------------------------------------------------------------------
# Tokenizer: bytes (offline, the default corpora), GPT-2 BPE (tiktoken, the real corpora) or a pretrained model's own
# --------------------------------------------------------------------------------------------

# bos: the id a pretrained model wants before each input, or None
Tokenizer = namedtuple('Tokenizer', 'name vocab_size eot sep_ids encode decode bos', defaults=(None,))
TOKENIZERS = ('bytes', 'gpt2')


def get_tokenizer(name):
    """encode: str -> list of ids; decode: ids -> str. sep_ids end a BiPE segment ('.' and newline). A name that is
    a pretrained model's folder, .gguf file or hub name gives that model's tokenizer (pretrained.tokenizer)."""
    if name not in TOKENIZERS and (os.path.exists(name) or '/' in name or name in pretrained.ALIASES):
        return Tokenizer(**pretrained.tokenizer(name))
    if name == 'bytes':
        # raw UTF-8 bytes; 0 never occurs in real text, so it is free to mark document boundaries
        return Tokenizer('bytes', 256, 0, [ord('.'), ord('\n')], lambda s: list(s.encode('utf-8')),
                         lambda ids: bytes(ids).decode('utf-8', errors='replace'))
    if name == 'gpt2':
        try:
            import tiktoken
            bpe = tiktoken.get_encoding('gpt2')
        except Exception as e:  # tiktoken fetches its BPE files on first use; offline that is a network error
            raise ConfigError(f"cannot load tiktoken's gpt2 encoding ({type(e).__name__}); it is downloaded once and "
                              f"cached, so run once with internet or point TIKTOKEN_CACHE_DIR at a cache") from None
        # encode_ordinary: '<|endoftext|>' inside a text is plain text, never the eot id
        sep = [bpe.encode_ordinary('.')[0], bpe.encode_ordinary('\n')[0]]  # [13, 198]
        return Tokenizer('gpt2', bpe.n_vocab, bpe.eot_token, sep, bpe.encode_ordinary, bpe.decode)
    raise ConfigError(f"unknown tokenizer {name!r}; allowed: {', '.join(TOKENIZERS)}, or a pretrained model's folder, "
                      f".gguf file or hub name (org/name)")


# --------------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------------

def save_checkpoint(obj, path):
    """Write to path.tmp, then rename: a crash mid-write leaves the previous checkpoint whole."""
    tmp = path + '.tmp'
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except (RuntimeError, OSError) as e:  # a full disk or a file-size limit; torch's own message does not say so
        old = 'the previous checkpoint is left as it was' if os.path.exists(path) else 'no checkpoint was written'
        raise OSError(f"cannot write checkpoint {path} (disk full or a file-size limit? {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:100] if str(e) else ''}); {old}") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def checkpoint_file(path):
    """'out/tiny-alibi' or 'out/tiny-alibi/ckpt.pt' -> the file."""
    file = os.path.join(path, 'ckpt.pt') if os.path.isdir(path) else path
    if not os.path.isfile(file):
        raise FileNotFoundError(f"no checkpoint at {path!r}: expected a ckpt.pt file or a folder holding one "
                                f"(train.py writes out/<run>/ckpt.pt)")
    return file


def read_checkpoint(path, mmap=False):
    """The checkpoint's dict, loaded with weights_only=True: a downloaded checkpoint cannot run code."""
    file = checkpoint_file(path)
    try:
        ckpt = torch.load(file, map_location='cpu', weights_only=True, mmap=mmap)
    except Exception as e:  # truncated zip, not a torch file, or a pickle that needs code to load
        raise ConfigError(f"cannot read checkpoint {file}: it is truncated, corrupt or not a lexgpt checkpoint "
                          f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})") from None
    missing = [k for k in ('model_args', 'model') if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise ConfigError(f"checkpoint {file} has no {' or '.join(missing)}: not written by train.py")
    return ckpt


def load_pretrained(path, **overrides):
    """A pretrained checkpoint (alias, .gguf, Hugging Face folder; pretrained.py) as load_checkpoint's triple. Its data
    is data/<corpus>-<model> as data.prepare --tokenizer=<model> writes it; the meta names the model's tokenizer."""
    model = GPT.from_pretrained(path, **overrides)
    config = dict(dataset='pycode-' + pretrained.short_name(path), pretrained=str(path))
    meta = load_meta(data_folder(config['dataset'])) or dict(tokenizer=str(path), vocab_size=model.config.vocab_size)
    return model, config, meta


def load_checkpoint(path, ckpt=None, **overrides):
    """-> (model in eval mode on CPU, training config dict, corpus meta). overrides change model settings that do
    not touch the weights (e.g. window=, rope_scaling= at evaluation); ckpt: the file's contents when already read.
    A pretrained model (pretrained.is_pretrained) is converted."""
    if ckpt is None and pretrained.is_pretrained(path):
        return load_pretrained(path, **overrides)
    ckpt = ckpt or read_checkpoint(path)
    args = dict(ckpt['model_args'], **overrides)
    unknown = sorted(set(args) - set(GPTConfig.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"checkpoint {checkpoint_file(path)} has model settings this model.py does not know: {unknown}")
    if 'bipe_sep_ids' in args:
        args['bipe_sep_ids'] = tuple(args['bipe_sep_ids'])
    model = make_model(GPTConfig(**args))
    try:
        model.load_state_dict(ckpt['model'])
    except RuntimeError as e:
        raise ConfigError(f"checkpoint {checkpoint_file(path)} does not fit its model settings: "
                          f"{' '.join(s.strip() for s in str(e).splitlines()[1:]) or e}") from None
    config = ckpt.get('config') or {}
    meta = ckpt.get('meta') or load_meta(data_folder(config.get('dataset', 'pycode'), config.get('data_dir', '')))
    return model.eval(), config, meta


class Run:
    """A trained model loaded for evaluation; runs named <name>-s<seed> form one group (mean over seeds). `label`
    marks evaluation-time overrides in the name (rope-s0+yarn4 in group rope+yarn4)."""

    def __init__(self, path, label='', **overrides):
        if pretrained.is_pretrained(path):  # an alias, .gguf or Hugging Face folder: named after it, never training
            self.path, ckpt, folder = str(path), {}, pretrained.short_name(path)
            self.model, self.config, self.meta = load_pretrained(path, **overrides)
        else:
            self.path = checkpoint_file(path)
            ckpt = read_checkpoint(self.path)
            self.model, self.config, self.meta = load_checkpoint(self.path, ckpt, **overrides)
            folder = os.path.basename(os.path.dirname(os.path.abspath(self.path)))
        self.iters = ckpt.get('iter_num')  # a checkpoint is saved at every evaluation: this says how far training got
        self.finished = self.iters is None or self.iters >= self.config.get('max_iters', 0)
        self.name, self.group = folder + label, re.sub(r'-s\d+$', '', folder) + label
        self.L_tr = self.model.config.block_size  # train.py trains on block_size-token windows
        self.pe = self.model.config.pe


def load_runs(patterns, label='', empty_ok=False, device='cpu', dtype='float32', **overrides):
    """Checkpoint paths or glob patterns (out/lm/*-s0) -> [Run], in the order given; equal names get #2, #3. Their
    models run on device under dtype (on_device).
    A glob leaves out runs that are still training (so a seed that is not done yet does not enter a mean);
    name such a run without a wildcard to evaluate it anyway. empty_ok: [] rather than an error when all are."""
    runs = []
    for p in patterns:
        wild = any(c in p for c in '*?[')
        hits = sorted(glob.glob(p)) if wild else [p]
        if not hits:
            raise FileNotFoundError(f"no checkpoint matches {p!r}")
        for h in hits:
            if wild:
                try:
                    checkpoint_file(h)
                except FileNotFoundError:
                    print(f"note: {p!r} matches {h}, left out: no checkpoint yet (still training?)")
                    continue
            r = Run(h, label, **overrides)
            if wild and not r.finished:
                print(f"note: {p!r} matches {r.path}, left out: saved at iteration {r.iters} of "
                      f"{r.config['max_iters']} (still training?)")
                continue
            on_device(r.model, device, dtype)
            runs.append(r)
    if not patterns:
        raise ConfigError("ckpt is empty: give checkpoint files or out/<run> folders, e.g. --ckpt=out/tiny-alibi")
    if not runs and not empty_ok:
        raise ConfigError(f"every run that ckpt={','.join(patterns)} matches is still training; name one without a wildcard")
    seen = {}
    for r in runs:
        seen[r.name] = seen.get(r.name, 0) + 1
        if seen[r.name] > 1:
            r.name = r.group = f'{r.name}#{seen[r.name]}'
    return runs


def data_of(runs, data_dir=''):
    """The data folder of the first run's training corpus, unless data_dir says otherwise."""
    config = runs[0].config if runs else {}
    return data_dir or data_folder(config.get('dataset', 'pycode'), config.get('data_dir', ''))


# --------------------------------------------------------------------------------------------
# One training step (train.py, bench.py)
# --------------------------------------------------------------------------------------------

def forward_backward(model, batches, ctx, scaler):
    """Accumulate the gradient of the mean loss over the micro-batches and return that mean loss (detached).
    Under DDP the gradients are all-reduced (averaged over processes) only during the last backward."""
    total = 0.0
    for i, (x, y) in enumerate(batches):
        if isinstance(model, DDP):
            model.require_backward_grad_sync = i == len(batches) - 1
        with ctx:
            _, loss = model(x, y)
            loss = loss / len(batches)
        scaler.scale(loss).backward()
        total = total + loss.detach()
    return total


def optimizer_step(model, optimizer, scaler, grad_clip):
    """Clip the (unscaled) gradient norm to grad_clip (0: no clipping), step, and clear the gradients."""
    if grad_clip > 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)


# --------------------------------------------------------------------------------------------
# Results: files, tables, plots, time and memory
# --------------------------------------------------------------------------------------------

def plt():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as pyplot
    return pyplot


def md_table(header, rows):
    lines = ['| ' + ' | '.join(map(str, header)) + ' |', '|' + '---|' * len(header)]
    lines += ['| ' + ' | '.join(map(str, r)) + ' |' for r in rows]
    return '\n'.join(lines) + '\n'


def read_json(path, option):
    """A JSON file named by the option `option`, or a one-line error that names both."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{option}={path!r} cannot be read as JSON ({e})") from None


def write_outputs(out_dir, stem, data, markdown=None, fig=None):
    """<out_dir>/<stem>.json (with the command that made it), .md and .png; returns the path without extension."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, stem)
    data = dict(command='python ' + ' '.join([os.path.basename(sys.argv[0])] + sys.argv[1:]), **data)
    with open(base + '.json.tmp', 'w') as f:  # then renamed: a run stopped mid-write leaves the last JSON whole
        json.dump(data, f, indent=1, default=float)
    os.replace(base + '.json.tmp', base + '.json')
    written = [base + '.json']
    if markdown is not None:
        with open(base + '.md', 'w') as f:
            f.write(markdown)
        written.append(base + '.md')
    if fig is not None:
        fig.savefig(base + '.png', dpi=100)
        plt().close(fig)
        written.append(base + '.png')
    print('wrote ' + ', '.join(written))
    return base


def check_memory(nbytes, what):
    """Refuse up front, with the estimate, what would need more memory than the machine has free (MemAvailable of
    /proc/meminfo; no check where that is unknown): a one-line error instead of the kernel's OOM kill."""
    try:
        with open('/proc/meminfo') as f:
            free = int(re.search(r'MemAvailable:\s+(\d+)', f.read()).group(1)) * 1024
    except (OSError, AttributeError):
        return
    if nbytes > free:
        raise ConfigError(f"{what} needs about {nbytes / 2**30:,.1f} GiB of memory, more than the "
                          f"{free / 2**30:.1f} GiB available here; use a smaller one")


def _status_kb(field):
    try:
        with open('/proc/self/status') as f:
            return int(re.search(rf'{field}:\s+(\d+)', f.read()).group(1))
    except (OSError, AttributeError):
        return None


def rss_mb(field='RssAnon'):
    """Resident memory now, MB. RssAnon (the heap: tensors, the cache) is what a process grows by; VmRSS also counts
    shared-library pages, which the kernel drops and maps back as other processes need memory."""
    return (_status_kb(field) or 0) / 1024


class Meter:
    """Wall time and peak resident memory (RSS) of a block. The kernel's peak (VmHWM) is reset first by writing 5 to
    /proc/self/clear_refs, so `peak_mb` is the whole process' peak *during this block* and `delta_mb` its excess
    over the RSS at the start. Where the reset is not allowed we fall back to ru_maxrss, which only ever grows,
    and `method` says so."""

    def __enter__(self):
        try:
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
            self.method = 'VmHWM, reset per block'
        except OSError:
            self.method = 'ru_maxrss (process lifetime peak, not reset)'
        self.rss0 = (_status_kb('VmRSS') or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        hwm = _status_kb('VmHWM') if self.method.startswith('VmHWM') else None
        self.peak_mb = (hwm or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
        self.delta_mb = self.peak_mb - self.rss0
        return False

    def record(self):
        return dict(seconds=round(self.seconds, 2), threads=torch.get_num_threads(), peak_rss_mb=round(self.peak_mb, 1),
                    delta_rss_mb=round(self.delta_mb, 1))


@contextmanager
def last_positions(model, k):
    """Only the last k positions reach the head of our GPT (a model without transformer.ln_f: all of them), so that
    a forward with targets of the last k tokens scores those alone: a 49k vocabulary's logits at every one of 16k
    positions would take GBs."""
    norm = getattr(getattr(model, 'transformer', None), 'ln_f', None)
    keep = norm.register_forward_hook(lambda module, inp, h: h[:, -k:]) if norm is not None else None
    try:
        yield norm is not None
    finally:
        if keep is not None:
            keep.remove()


# --------------------------------------------------------------------------------------------
# Evaluation-time attention variants (extrapolate.py, receptive_field.py, passkey.py): each adds a column
# next to the unmodified model, through `with model.attention(...)`
# --------------------------------------------------------------------------------------------

VARIANT_DEFAULTS = dict(
    windowed=False,             # windowed@L_tr: every token sees the last L_tr tokens only (thesis Figs. 3.5/3.7)
    lm_infinite=False,          # LM-Infinite: Λ-mask (n_starting + last L_tr tokens) and distance ceiling L_tr
    n_starting=10,              # LM-Infinite's starting tokens (the paper: 5..100 work)
    topk=0,                     # LM-Infinite's top-k middle tokens (implies lm_infinite; the paper: 5)
    topk_from_layer=5,          # top-k only in layers >= this one, 0-based (the paper's h = 5 on Llama-2)
    temperature='',             # softmax temperature (thesis ch. 5): '0.9', or per length multiple '2:0.95,4:0.9'
    no_vanilla=False,           # leave out the unmodified model
)


def parse_temperature(text):
    """'0.9' (every length) or '2:0.95,4:0.9' (per length multiple; others 1.0) -> {mult or None: tau}."""
    out = {}
    for part in str(text).split(','):
        try:
            m, t = part.split(':') if ':' in part else (None, part)
            out[None if m is None else float(m)] = float(t)
        except ValueError:
            raise ConfigError(f"bad temperature {part!r} in {text!r}: expected a number like 0.9 or per-length "
                              f"pairs like 2:0.95,4:0.9") from None
    if any(not (t > 0) for t in out.values()):
        raise ConfigError(f"temperature must be positive, got {text!r}")
    return out


def variants(cfg):
    """[(label, fn(L_tr, mult) -> model.attention kwargs)]: vanilla first, then the modifications asked for."""
    out = [] if cfg['no_vanilla'] else [('vanilla', lambda L_tr, m: {})]
    if cfg['windowed']:
        out.append(('windowed@L_tr', lambda L_tr, m: dict(local=L_tr)))
    if cfg['lm_infinite'] or cfg['topk']:
        # LM-Infinite (paper 002, sec. 4, App. A): Λ-mask = first n_starting + last L_pretrain tokens, distance
        # ceiling L_pretrain; top-k middle tokens at distance L_pretrain / 2, in the layers from topk_from_layer on
        k, ns, h = cfg['topk'], cfg['n_starting'], cfg['topk_from_layer']
        label = f'LM-Inf(n_start={ns}' + (f',top{k}@layer>={h})' if k else ')')
        out.append((label, lambda L_tr, m: dict(local=L_tr, n_starting=ns, ceiling=L_tr, topk=k, topk_from_layer=h)))
    if cfg['temperature']:
        taus = parse_temperature(cfg['temperature'])
        label = f'tau={taus[None]}' if list(taus) == [None] else 'tau(L)'
        out.append((label, lambda L_tr, m: dict(temperature=taus.get(m, taus.get(None, 1.0)))))
    if not out:
        raise ConfigError("no_vanilla=True leaves nothing to evaluate; add windowed, lm_infinite, topk or temperature")
    return out


def ex_len(mult, L_tr):
    """A length given as a multiple of the training length -> tokens."""
    L = int(round(mult * L_tr))
    if L < 2:
        raise ConfigError(f"length multiple {mult:g} x L_tr={L_tr} gives {L} tokens; need at least 2")
    return L


# --------------------------------------------------------------------------------------------
# Receptive field (thesis 4.5.1): receptive_field.py and regular_lang.py
# --------------------------------------------------------------------------------------------

ERF_MASS = 0.99  # thesis 4.5.1: ERF = the most recent tokens holding 99% of the normalised gradient


def embedding_grad_norms(model, emb, loss_fn):
    """|g_m| = |d loss / d e_m| for every output e_m [B, T] of the embedding module emb, loss = loss_fn() (a forward
    pass run here); a hook makes e a fresh leaf, so no parameter gets a gradient. Returns float64 [B, T]."""
    grads = {}

    def leaf(module, inp, out):
        out = out.detach().requires_grad_(True)
        grads['e'] = out
        return out

    handle = emb.register_forward_hook(leaf)
    flags = [p.requires_grad for p in model.parameters()]
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        with torch.enable_grad():
            loss_fn().backward()
    finally:
        handle.remove()
        for p, f in zip(model.parameters(), flags):
            p.requires_grad_(f)
    return grads['e'].grad.double().norm(dim=-1).cpu()


def cumulative_from_end(s):
    """c_m = sum_{n >= m} s_n (thesis 4.5.1), c[0] = 1."""
    return np.cumsum(s[::-1])[::-1]


def erf_tokens(s, mass=ERF_MASS):
    """ERF counted from the end: the smallest number r of most recent tokens whose normalised gradient exceeds `mass`."""
    tail = np.cumsum(s[::-1])
    return int(np.argmax(tail > mass) + 1) if tail[-1] > mass else len(s)


# --------------------------------------------------------------------------------------------
# Streaming (extrapolate.py protocol=stream, bench.py mode=stream): one long text through a bounded cache
# --------------------------------------------------------------------------------------------

STREAM_ROWS = ('sinks', 'no_sinks', 'windows')


def stream_refusal(model):
    """Why `model` cannot stream, in one line, or None. The rule: a token's logits may depend on positions only
    through distances (rotary, biases, weights, FoX's gates, CoPE), which a cache-relative position keeps at any
    stream length. Absolute parts (learned, sinusoidal, BiPE's in-segment sinusoid) would meet positions they never
    saw, FIRE's bias reads the query's own position, and RegularGPT has no cache."""
    kinds = set(model.pe.kinds)
    if model.config.pe == 'regular':
        return "pe='regular' cannot stream: RegularGPT has no KV cache (its depth grows with the input)"
    if kinds & {'absolute', 'query'}:
        why = 'absolute positions' if 'absolute' in kinds else "a bias that reads the query's absolute position"
        return (f"pe={model.config.pe!r} cannot stream: {why} would grow past anything it was trained on; "
                f"streaming needs an encoding of distances only (rotary, bias, weight, potential, content or none)")
    return None


def stream_chunks(parts, n_tokens, chunk):
    """(input, target) pairs [1, <= chunk] over the first n_tokens targets of one stream, the token arrays `parts`
    (memmaps) joined end to end; read a chunk at a time, so memory does not grow with the stream."""
    bounds = np.cumsum([0] + [len(p) for p in parts])
    if n_tokens + 1 > bounds[-1]:
        raise ConfigError(f"tokens={n_tokens}: the stream holds only {bounds[-1] - 1} targets")

    def take(a, b):
        got = [p[max(a - s, 0):max(b - s, 0)] for p, s in zip(parts, bounds[:-1])]
        return torch.from_numpy(np.concatenate(got).astype(np.int64))[None]
    for p in range(0, n_tokens, chunk):
        c = min(chunk, n_tokens - p)
        yield take(p, p + c), take(p + 1, p + c + 1)


@torch.inference_mode()
def stream_losses(model, chunks, window, n_starting, fresh=False):
    """Per-token losses [c] of each chunk, scored through a relative KVCache that keeps the first n_starting tokens
    and the last `window` ones: every token is predicted from at most n_starting + window tokens, at distances
    capped at `window` (LM-Infinite's ceiling), which equals one forward over the whole stream under
    model.attention(local=window, n_starting=n_starting, ceiling=window). fresh: each chunk from scratch instead."""
    cache, device = KVCache(local=window, n_starting=n_starting, relative=True), next(model.parameters()).device
    with model.attention(ceiling=window if n_starting else 0):  # without starting tokens no distance reaches it
        for x, y in chunks:
            loss = model(x.to(device), targets=y.to(device), cache=None if fresh else cache, reduction='none')[1][0]
            yield loss.double().cpu().numpy()


def position_buckets(n_tokens, first=64):
    """Log-spaced edges of stream positions, as LM-Infinite's Fig. 1 plots: [0, first), then one bucket per
    doubling, the last one ending at n_tokens."""
    edges, e = [0], first
    while e < n_tokens:
        edges, e = edges + [e], 2 * e
    return np.array(edges + [n_tokens], dtype=np.int64)
