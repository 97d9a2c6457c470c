"""
What a name on the command line loads, decided in one place (`ckpt_kind`): a train.py checkpoint (a ckpt.pt file or a
folder holding one) or a pretrained model (an alias such as smollm2, a .gguf file, a Hugging Face folder or a hub
name), as a model, its training config and its corpus meta; the tokenizer a corpus or a model names; checkpoint
files written atomically and read safely; trained runs grouped by seed for the evaluation scripts.
"""
import os
import re
from collections import namedtuple

import torch

from lexgpt import aliases
from lexgpt import pretrained
from lexgpt import rope_scaling
from lexgpt.config import ConfigError
from lexgpt.corpus import data_folder, load_meta
from lexgpt.device import on_device
from lexgpt.outputs import matching
from model import GPT, GPTConfig, make_model


# bos: the id a pretrained model wants before each input, or None
Tokenizer = namedtuple('Tokenizer', 'name vocab_size eot sep_ids encode decode bos', defaults=(None,))
TOKENIZERS = ('bytes', 'gpt2')


PRETRAINED = ('alias', 'gguf', 'folder', 'hub')  # the kinds that pretrained.py converts
HUB_NAME = re.compile(r'[\w.-]+(/[\w.-]+)?')  # gpt2, HuggingFaceTB/SmolLM2-135M
SEED = re.compile(r'(.+)-s(\d+)')  # a run's folder <group>-s<seed>: runs of one group differ by their seed alone


def ckpt_kind(name):
    """What a checkpoint name is, decided here for every script: 'checkpoint' (train.py's ckpt.pt, or a folder holding
    one), 'alias' (smollm2: a file a package ships), 'gguf', 'folder' (a Hugging Face folder: config.json and
    safetensors) or 'hub' (a hub name: org/name, or a bare name such as gpt2, that is no file or folder here)."""
    name = str(name)
    if name in aliases.ALIASES:
        return 'alias'
    if name.endswith('.gguf'):
        return 'gguf'
    if os.path.isdir(name):
        has = lambda f: os.path.exists(os.path.join(name, f))
        return 'folder' if has('config.json') and not has('ckpt.pt') else 'checkpoint'
    local = os.path.exists(name) or os.path.exists(name.split('/')[0]) or name.endswith('.pt')
    return 'hub' if HUB_NAME.fullmatch(name) and not local else 'checkpoint'


def get_tokenizer(name):
    """encode: str -> list of ids; decode: ids -> str. sep_ids end a BiPE segment ('.' and newline). bytes and gpt2
    (tiktoken's BPE) are the corpora's own; any other name is a pretrained model's (ckpt_kind), whose tokenizer it
    gives."""
    what = ckpt_kind(name) if name not in TOKENIZERS else 'tokenizer'
    if what in PRETRAINED and (what != 'hub' or '/' in name):
        return Tokenizer(**pretrained.tokenizer(name))  # a bare word is no model here: a typo of bytes or gpt2
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
    """A pretrained checkpoint (pretrained.py) as load_model's triple. Its data is data/<corpus>-<model> as
    data.prepare --tokenizer=<model> writes it; the meta names the model's tokenizer."""
    model = GPT.from_pretrained(path, **overrides)
    config = dict(dataset='pycode-' + pretrained.short_name(path), pretrained=str(path))
    meta = load_meta(data_folder(config['dataset'])) or dict(tokenizer=str(path), vocab_size=model.config.vocab_size)
    return model, config, meta


def load_trained(path, **overrides):
    """train.py's checkpoint -> (model, training config, corpus meta, the checkpoint's dict)."""
    ckpt = read_checkpoint(path)
    args = rope_scaling.over_checkpoint(ckpt['model_args'], overrides)
    unknown = sorted(set(args) - set(GPTConfig.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"checkpoint {checkpoint_file(path)} has model settings this model.py does not know: "
                          f"{unknown}")
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
    return model.eval(), config, meta, ckpt


Loaded = namedtuple('Loaded', 'model config meta ckpt folder path')


def load(path, **overrides):
    """Any name `ckpt_kind` knows -> Loaded: the model in eval mode on CPU, its training config dict, its corpus meta,
    the checkpoint's dict ({} for a pretrained model), the run's folder name and the file read. The one place a
    name's kind decides how it loads. overrides change model settings that leave the weights alone (window=,
    rope_scaling= at evaluation), by rope_scaling.over_checkpoint's rule: what is asked replaces the checkpoint's,
    the rest keeps it."""
    if ckpt_kind(path) in PRETRAINED:  # named after the model, and never in training
        model, config, meta = load_pretrained(path, **overrides)
        return Loaded(model, config, meta, {}, pretrained.short_name(path), str(path))
    file = checkpoint_file(path)
    model, config, meta, ckpt = load_trained(file, **overrides)
    return Loaded(model, config, meta, ckpt, os.path.basename(os.path.dirname(os.path.abspath(file))), file)


def load_model(path, **overrides):
    """Any name `ckpt_kind` knows, trained here or pretrained -> (model, training config, corpus meta) of `load`."""
    return load(path, **overrides)[:3]


class Run:
    """A trained model loaded for evaluation; runs named <name>-s<seed> form one group (mean over seeds). `label`
    marks evaluation-time overrides in the name (rope-s0+yarn4 in group rope+yarn4)."""

    def __init__(self, path, label='', **overrides):
        self.model, self.config, self.meta, ckpt, folder, self.path = load(path, **overrides)
        self.iters = ckpt.get('iter_num')  # a checkpoint is saved at every evaluation: this says how far training got
        self.finished = self.iters is None or self.iters >= self.config.get('max_iters', 0)
        self.name = folder + label
        seeded = SEED.fullmatch(folder)
        self.group = (seeded.group(1) if seeded else folder) + label
        self.L_tr = self.model.config.block_size  # train.py trains on block_size-token windows
        self.pe = self.model.config.pe


def load_runs(patterns, label='', empty_ok=False, device='cpu', dtype='float32', **overrides):
    """Checkpoint paths or glob patterns (out/lm/*-s0) -> [Run], in the order given; equal names get #2, #3. Their
    models run on device under dtype (on_device).
    A glob leaves out runs that are still training (so a seed that is not done yet does not enter a mean);
    name such a run without a wildcard to evaluate it anyway. empty_ok: [] rather than an error when all are."""
    runs = []
    for p in patterns:
        hits, wild = matching(p, 'ckpt')
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
        raise ConfigError(f"every run that ckpt={','.join(patterns)} matches is still training; "
                          f"name one without a wildcard")
    seen = {}
    for r in runs:
        seen[r.name] = seen.get(r.name, 0) + 1
        if seen[r.name] > 1:
            r.name = r.group = f'{r.name}#{seen[r.name]}'
    return runs


def run_folder(pattern):
    """'out/lm/rope-s*' or 'out/lm/rope-s*/ckpt.pt' -> ('out/lm', 'rope-s*')."""
    return os.path.split(os.path.dirname(pattern) if pattern.endswith('.pt') else os.path.normpath(pattern))


def data_of(runs, data_dir=''):
    """The data folder of the first run's training corpus, unless data_dir says otherwise."""
    config = runs[0].config if runs else {}
    return data_dir or data_folder(config.get('dataset', 'pycode'), config.get('data_dir', ''))
