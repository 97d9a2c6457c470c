"""
Train a GPT on data/<dataset>/{train,val}.bin: on CPU, on one GPU, or on many GPUs/nodes through torchrun.

  python train.py configs/tiny.py --pe=alibi --out_dir=out/tiny-alibi
  python train.py configs/tiny.py --pe=alibi --out_dir=out/tiny-alibi --init_from=resume   # continue exactly
  torchrun --standalone --nproc_per_node=8 train.py configs/thesis_162m.py --pe=rope
  torchrun --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 --master_port=29500 --nproc_per_node=8 train.py ...

  python train.py configs/tiny.py --init_from=out/tiny-rope/ckpt.pt --block_size=1024 --rope_scaling=yarn \
      --rope_scale=4 --max_iters=200 --out_dir=out/tiny-rope-yarn        # fine-tune at 4x the length

Every eval_interval iterations: loss estimates, out_dir/log.{csv,json} and an atomic out_dir/ckpt.pt (a temporary
file, then a rename) that holds everything needed to continue bit-for-bit (model, optimizer, RNG states,
data-sampling generator, log so far); at the end loss.png. init_from=auto resumes when out_dir holds a checkpoint.
A non-finite loss stops the run and leaves the last checkpoint as it was. Checkpoints are read with
weights_only=True, so a downloaded one cannot run code. gradient_accumulation_steps counts the micro-batches of all
processes together, so the data order does not depend on their number. configs/thesis_162m.py follows the
authors' GPT-NeoX settings. On a busy CPU prefix OMP_NUM_THREADS=1.

A fine-tune (init_from=<checkpoint or pretrained model>) takes the settings of FINETUNE_KEYS you give (those that
leave the weights' shapes alone: block_size, dropout, window, the RoPE extension, ...) and keeps the checkpoint's
for every other one: a Mistral keeps its sliding window and a Llama 3.1 its scaling unless told (--window=0). Its
first line names each such setting with where it came from; an architecture setting given is reported as unused.
"""
import csv
import dataclasses
import json
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from lexgpt import config
from lexgpt import pretrained
from lexgpt import rope_scaling
from lexgpt.config import ConfigError, run
from lexgpt.corpus import data_folder, load_meta, split_path
from lexgpt.device import forward_backward, optimizer_step, pick_device, precision
from lexgpt.loading import ckpt_kind, PRETRAINED, read_checkpoint, save_checkpoint
from lexgpt.outputs import environment
from model import GPTConfig, make_model

DEFAULTS = dict(
    # I/O
    out_dir='out',
    init_from='scratch',  # 'scratch', 'resume' (out_dir/ckpt.pt), 'auto' (resume if it exists), or a checkpoint
                          # to fine-tune: train.py's, or a pretrained model (smollm2, a .gguf file, a Hugging Face
                          # folder or hub name)
    flex=True,  # on CUDA, attention with a bias through FlexAttention (False: SDPA with float masks)
    eval_interval=250,  # estimate losses, write the logs and the checkpoint every this many iterations
    eval_iters=50,  # batches per split in each loss estimate
    log_interval=10,  # log the training loss of every this many iterations
    # data
    dataset='pycode',
    data_dir='',  # '' means data/<dataset>
    batch_size=16,  # sequences per micro-batch per process
    gradient_accumulation_steps=1,  # micro-batches per optimizer step, over all processes together
    # AdamW and the learning-rate schedule: linear warmup, cosine decay to min_lr
    learning_rate=6e-4,
    max_iters=5000,
    weight_decay=0.1,
    beta1=0.9,
    beta2=0.95,
    grad_clip=1.0,  # 0 disables clipping
    decay_lr=True,
    warmup_iters=100,
    lr_decay_iters=None,  # None means max_iters
    min_lr=6e-5,
    # system
    device='auto',  # 'auto' picks cuda when there is one; or cpu, cuda, cuda:1
    dtype='auto',  # 'auto': bfloat16 on GPUs that support it, else float16 (with a GradScaler); float32 on CPU
    compile=False,  # torch.compile the model
    backend='auto',  # DDP backend; 'auto' means nccl on cuda, gloo on cpu
    seed=1337,
)
# Every GPTConfig field is a config key as well, so `--pe=rope --window=64` just work.
for _f in dataclasses.fields(GPTConfig):
    DEFAULTS.setdefault(_f.name, _f.default if _f.default is not dataclasses.MISSING else _f.default_factory())
DEFAULTS['vocab_size'] = None  # None means meta.json's vocab_size
DEFAULTS['bipe_sep_ids'] = None  # None means meta.json's sep_ids, else GPTConfig's default
LOG_FIELDS = ['iter', 'train_loss', 'val_loss', 'lr', 'time']
# model settings a fine-tune (init_from=<checkpoint>) takes from the config; every other one is the checkpoint's
FINETUNE_KEYS = ('block_size', 'dropout', 'window', 'rope_scaling', 'rope_scale', 'rope_original_len', 'rope_beta_fast',
                 'rope_beta_slow', 'rope_attn_factor', 'rope_truncate', 'randomized_positions', 'flex', 'extend_layers')


def get_lr(it, cfg):
    """Linear warmup from lr/(warmup+1) to lr, then cosine decay to min_lr at lr_decay_iters, then min_lr."""
    lr, min_lr, warmup = cfg['learning_rate'], cfg['min_lr'], cfg['warmup_iters']
    decay_iters = cfg['lr_decay_iters'] if cfg['lr_decay_iters'] is not None else cfg['max_iters']
    if not cfg['decay_lr']:
        return lr
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    if it >= decay_iters:
        return min_lr
    progress = (it - warmup) / max(1, decay_iters - warmup)
    return min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (lr - min_lr)


def sample_offsets(gen, n_tokens, block_size, n_micro, batch_size):
    """Window starts for a whole optimizer step, drawn at once by every process from the same generator, so
    that the data order depends neither on the number of processes nor on anything but the generator state."""
    return torch.randint(n_tokens - block_size, (n_micro, batch_size), generator=gen)


def get_batch(path, offsets, block_size, device, vocab_size=None, dtype='uint16'):
    """dtype: the ids' type in the .bin (meta.json's dtype: uint32 for a pretrained model's large vocabulary)."""
    # A fresh memmap per batch: numpy memmaps keep pages referenced and memory creeps up otherwise.
    data = np.memmap(path, dtype=dtype, mode='r')
    block = torch.from_numpy(data[offsets.numpy()[:, None] + np.arange(block_size + 1)].astype(np.int64))
    if vocab_size is not None and block.max() >= vocab_size:  # on CPU, before an index error deep in the model
        raise ConfigError(f"{path} holds token id {int(block.max())}, but vocab_size={vocab_size} allows ids "
                          f"0..{vocab_size - 1}; leave vocab_size unset to take meta.json's, or set it larger")
    x, y = block[:, :-1].contiguous(), block[:, 1:].contiguous()
    if device.startswith('cuda'):
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x, y


@torch.no_grad()
def estimate_loss(model, paths, n_tokens, cfg, ctx, device, dtype):
    """Mean loss over eval_iters batches per split. The windows come from a generator seeded afresh each time:
    every evaluation sees the same windows, and the training data order (data_gen) is left untouched."""
    out = {}
    model.eval()
    for split in ('train', 'val'):
        gen = torch.Generator().manual_seed(cfg['seed'] + 1)
        losses = []
        for _ in range(cfg['eval_iters']):
            offsets = sample_offsets(gen, n_tokens[split], cfg['block_size'], 1, cfg['batch_size'])[0]
            x, y = get_batch(paths[split], offsets, cfg['block_size'], device, cfg['vocab_size'], dtype)
            with ctx:
                _, loss = model(x, y)
            losses.append(loss.item())
        out[split] = sum(losses) / len(losses)
    model.train()
    return out


def rng_state():
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    # numpy's array becomes a list so the checkpoint loads with torch.load(weights_only=True)
    state = dict(python=random.getstate(), numpy=(kind, keys.tolist(), pos, has_gauss, cached),
                 torch=torch.get_rng_state())
    if torch.cuda.is_available():
        state['cuda'] = torch.cuda.get_rng_state()
    return state


def set_rng_state(state):
    random.setstate(state['python'])
    kind, keys, pos, has_gauss, cached = state['numpy']
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state['torch'])
    if 'cuda' in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state['cuda'])


def write_log(out_dir, rows, new_row=None):
    """Append new_row (the last of rows) to log.csv, or rewrite it whole when there is none; rewrite log.json."""
    with open(os.path.join(out_dir, 'log.csv'), 'w' if new_row is None else 'a', newline='') as f:
        writer = csv.DictWriter(f, LOG_FIELDS)
        if new_row is None:
            writer.writeheader()
        writer.writerows(rows if new_row is None else [new_row])
    with open(os.path.join(out_dir, 'log.json.tmp'), 'w') as f:
        json.dump(rows, f)
    os.replace(os.path.join(out_dir, 'log.json.tmp'), os.path.join(out_dir, 'log.json'))


def plot_losses(rows, path, bytes_tokenizer, title=''):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    steps = [r for r in rows if r['val_loss'] is None]
    evals = [r for r in rows if r['val_loss'] is not None]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([r['iter'] for r in steps], [r['train_loss'] for r in steps], lw=0.8, alpha=0.5, label='train (batch)')
    ax.plot([r['iter'] for r in evals], [r['train_loss'] for r in evals], 'o-', label='train (estimate)')
    ax.plot([r['iter'] for r in evals], [r['val_loss'] for r in evals], 's-', label='val (estimate)')
    ax.set_xlabel('iteration')
    ax.set_ylabel('loss (nats per token)')
    if bytes_tokenizer:  # one token is one byte, so loss / ln 2 is bits per byte
        ax.secondary_yaxis('right', functions=(lambda x: x / math.log(2), lambda x: x * math.log(2))) \
            .set_ylabel('bits per byte')
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def kept(ckpt_path):
    return (f"the last good checkpoint {ckpt_path} is left as it was" if os.path.exists(ckpt_path)
            else f"no checkpoint was written ({ckpt_path} does not exist)")


def check_choices(cfg):
    for key, allowed in [('init_from', ('scratch', 'resume', 'auto')),
                         ('dtype', ('auto', 'float32', 'bfloat16', 'float16')),
                         ('backend', ('auto', 'nccl', 'gloo'))]:
        value = cfg.get(key, '')
        fine_tune = key == 'init_from' and (os.path.exists(value) or ckpt_kind(value) in PRETRAINED)
        if key in cfg and cfg[key] not in allowed and not fine_tune:
            raise ConfigError(f"{key}={cfg[key]!r} is not one of {', '.join(allowed)}"
                              + (', a checkpoint to fine-tune or a pretrained model' if key == 'init_from' else ''))
    for key in ('max_iters', 'eval_interval', 'eval_iters', 'log_interval', 'batch_size',
                'gradient_accumulation_steps'):
        if cfg[key] < 1:  # max_iters=0 would save no checkpoint
            raise ConfigError(f"{key}={cfg[key]} must be positive")
    for key in ('warmup_iters', 'lr_decay_iters', 'grad_clip', 'learning_rate', 'min_lr', 'weight_decay'):
        if cfg[key] is not None and cfg[key] < 0:
            raise ConfigError(f"{key}={cfg[key]} must be >= 0" + (' (0: no clipping)' if key == 'grad_clip' else ''))
    if os.path.exists(cfg['out_dir']) and not os.path.isdir(cfg['out_dir']):
        raise ConfigError(f"out_dir={cfg['out_dir']!r} is a file; it must be a folder (made if missing)")
    # the model settings, before any data is read: a bad one fails at once, naming the value
    GPTConfig(**{f.name: cfg[f.name] for f in dataclasses.fields(GPTConfig) if cfg.get(f.name) is not None})


def main(cfg):
    """Train with the settings in cfg (a dict like DEFAULTS); returns the log rows of this out_dir."""
    given = config.given(cfg, DEFAULTS)
    cfg = dict(cfg)
    check_choices(cfg)

    # --- processes and devices -------------------------------------------------------------------
    ddp = 'RANK' in os.environ  # set by torchrun
    device = pick_device(cfg['device'])
    if ddp:
        backend = cfg['backend'] if cfg['backend'] != 'auto' else ('nccl' if device.startswith('cuda') else 'gloo')
        dist.init_process_group(backend=backend)
        rank, world = dist.get_rank(), dist.get_world_size()
        if device.startswith('cuda'):
            device = f"cuda:{os.environ['LOCAL_RANK']}"
            torch.cuda.set_device(device)
    else:
        rank, world = 0, 1
    try:
        if cfg['gradient_accumulation_steps'] % world:
            raise ConfigError(f"gradient_accumulation_steps={cfg['gradient_accumulation_steps']} must be divisible "
                              f"by the number of processes ({world})")
        if device.startswith('cuda'):
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        rows = _train(cfg, device, ddp, rank, world, given)
        if ddp:
            # rank 0 may still be evaluating, saving and plotting: the others wait here, or tearing the group down
            # under it aborts them at exit (SIGABRT) and torchrun then kills rank 0 before its final save
            dist.barrier()
        return rows
    finally:
        if ddp:
            dist.destroy_process_group()


def source_checkpoint(cfg):
    """The checkpoint init_from names, as read_checkpoint gives it; a pretrained model is converted (pretrained.py) and
    its source recorded in the config that the fine-tune's checkpoints save."""
    if ckpt_kind(cfg['init_from']) not in PRETRAINED:
        return read_checkpoint(cfg['init_from'])
    try:
        args, state, info = pretrained.load(cfg['init_from'], GPTConfig.__dataclass_fields__)
    except ConfigError as e:
        if ckpt_kind(cfg['init_from']) != 'hub':
            raise
        raise ConfigError(f"init_from={cfg['init_from']!r} is not one of scratch, resume, auto, a checkpoint to "
                          f"fine-tune or a pretrained model here, and as a hub name: {e}") from None
    cfg['pretrained'] = info
    return dict(model_args=dataclasses.asdict(GPTConfig(**args)), model=state)


def build_model(cfg, ckpt_path, master, given=()):
    """-> (model, its settings, the checkpoint to resume from or None), by cfg['init_from']: a new model, the one in
    ckpt_path to continue, or a trained one to fine-tune (its weights and architecture, the config's settings that
    leave the weights' shapes alone, e.g. a RoPE extension at a longer length). given: the settings the user set; a
    fine-tune takes those and keeps the checkpoint's for the rest (rope_scaling.over_checkpoint)."""
    if cfg['init_from'] == 'auto':
        cfg['init_from'] = 'resume' if os.path.exists(ckpt_path) else 'scratch'
    if cfg['init_from'] == 'scratch':
        model_args = {f.name: cfg[f.name] for f in dataclasses.fields(GPTConfig)}
        return make_model(GPTConfig(**model_args)), model_args, None
    if cfg['init_from'] == 'resume':
        if not os.path.exists(ckpt_path):
            raise FileNotFoundError(f"init_from='resume' but there is no {ckpt_path}")
        ckpt = read_checkpoint(ckpt_path)
        # the architecture is the checkpoint's, whatever the config says
        model_args = dict(ckpt['model_args'], flex=cfg['flex'])
        changed = sorted(k for k, v in ckpt['config'].items() if k in cfg and cfg[k] != v and k != 'init_from')
        if master and changed:
            print(f"note: resuming with settings that differ from the checkpoint's: {', '.join(changed)}")
    else:
        ckpt, src = None, source_checkpoint(cfg)
        asked = {k: cfg[k] for k in FINETUNE_KEYS if k in given}
        model_args = dataclasses.asdict(GPTConfig(**rope_scaling.over_checkpoint(src['model_args'], asked)))
        if master:
            print(f"fine-tuning {cfg['init_from']} (trained on {src['model_args']['block_size']} tokens) with "
                  + ', '.join(f"{k}={model_args[k]!r} ({'asked' if k in asked else 'the checkpoint'})"
                              for k in FINETUNE_KEYS))
            ignored = sorted(k for k in given if k in src['model_args'] and k not in FINETUNE_KEYS
                             and cfg[k] != src['model_args'][k])
            if ignored:  # the weights fix these; say so rather than train something else than asked
                print("note: fine-tuning keeps the checkpoint's architecture; these settings are not used: "
                      + ', '.join(f"{k}={cfg[k]!r} (checkpoint: {src['model_args'][k]!r})" for k in ignored))
    model = make_model(GPTConfig(**model_args))
    model.load_state_dict((ckpt or src)['model'])
    return model, model_args, ckpt


def load_data(cfg):
    """-> (the train and val .bin paths, their token counts, meta.json); vocab_size and bipe_sep_ids default to
    meta's."""
    data_dir = data_folder(cfg['dataset'], cfg['data_dir'])
    paths = {split: split_path(data_dir, split) for split in ('train', 'val')}
    meta = load_meta(data_dir)
    n_tokens = {split: len(np.memmap(path, dtype=meta.get('dtype', 'uint16'), mode='r'))
                for split, path in paths.items()}
    for split, n in n_tokens.items():
        if n <= cfg['block_size'] + 1:
            raise ConfigError(f"{paths[split]} has {n} tokens, not more than block_size+1 = {cfg['block_size'] + 1}")
    if cfg['vocab_size'] is None:
        if 'vocab_size' not in meta:
            raise ConfigError(f"vocab_size is not set and {os.path.join(data_dir, 'meta.json')} does not give it")
        cfg['vocab_size'] = meta['vocab_size']
    elif cfg['vocab_size'] < meta.get('vocab_size', 0):
        raise ConfigError(f"vocab_size={cfg['vocab_size']} is smaller than the {meta['vocab_size']} ids of the "
                          f"tokenizer of {data_dir} (meta.json); leave it unset or set it >= {meta['vocab_size']}")
    if cfg['bipe_sep_ids'] is None:
        cfg['bipe_sep_ids'] = meta.get('sep_ids', GPTConfig.bipe_sep_ids)
    cfg['bipe_sep_ids'] = tuple(cfg['bipe_sep_ids'])
    return paths, n_tokens, meta


def make_optimizer(cfg, model, ckpt, device_type, rank, world):
    """-> (optimizer, grad scaler, data-order generator), each continued from ckpt when resuming."""
    data_gen = torch.Generator().manual_seed(cfg['seed'])  # the same on every process: see sample_offsets
    scaler = torch.amp.GradScaler(device_type, enabled=cfg['dtype'] == 'float16')
    optimizer = model.configure_optimizers(cfg['weight_decay'], cfg['learning_rate'],
                                           (cfg['beta1'], cfg['beta2']), device_type)
    if ckpt is not None:
        optimizer.load_state_dict(ckpt['optimizer'])
        scaler.load_state_dict(ckpt['scaler'])
        data_gen.set_state(ckpt['data_rng'])
        if len(ckpt['rng']) == world:
            set_rng_state(ckpt['rng'][rank])
        elif rank == 0:
            print(f"note: checkpoint was written by {len(ckpt['rng'])} processes, not {world}: "
                  f"the data order continues exactly, dropout randomness does not")
    return optimizer, scaler, data_gen


def gather_rng(ddp, world):
    """Every process's RNG state, for the checkpoint (every process must take part)."""
    if not ddp:
        return [rng_state()]
    states = [None] * world
    dist.all_gather_object(states, rng_state())
    return states


def wrap(model, cfg, ddp, device):
    """-> (the model to evaluate: compiled if asked, the one to train: under DDP when several processes run);
    `model` itself stays the plain GPT that is saved."""
    eval_model = torch.compile(model) if cfg['compile'] else model
    cuda = device.startswith('cuda')
    return eval_model, DDP(eval_model, device_ids=[torch.device(device).index] if cuda else None,
                           broadcast_buffers=False) if ddp else eval_model


def log_row(out_dir, log_rows, **row):
    log_rows.append(row)
    write_log(out_dir, log_rows, row)
    return row


def train_step(cfg, model, train_model, optimizer, scaler, batches, ctx, ddp, world, stop):
    """One optimizer step over this process's micro-batches; -> the loss, the same on every process."""
    loss = forward_backward(train_model, batches, ctx, scaler)
    if ddp:  # so that every process sees the same loss, logs it, and stops together on NaN
        dist.all_reduce(loss)
        loss = loss / world
    lossf = loss.item()
    if not math.isfinite(lossf):
        raise FloatingPointError(f"non-finite training loss {lossf}{stop}")
    optimizer_step(model, optimizer, scaler, cfg['grad_clip'])
    return lossf


def seed_process(seed):
    """Seed Python's, numpy's and torch's random generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _train(cfg, device, ddp, rank, world, given):
    master = rank == 0
    device_type = 'cuda' if device.startswith('cuda') else 'cpu'
    cfg['dtype'], ctx = precision(device_type, cfg['dtype'])
    n_micro = cfg['gradient_accumulation_steps'] // world  # this process's share of the micro-batches
    out_dir = cfg['out_dir']
    ckpt_path = os.path.join(out_dir, 'ckpt.pt')
    if master:
        os.makedirs(out_dir, exist_ok=True)
    paths, n_tokens, meta = load_data(cfg)
    ids = meta.get('dtype', 'uint16')  # of the token files, read once rather than per batch
    bytes_tokenizer = meta.get('tokenizer') == 'bytes'

    seed_process(cfg['seed'] + rank)  # dropout differs per process; DDP copies rank 0's initial weights
    model, model_args, ckpt = build_model(cfg, ckpt_path, master, given)
    iter_num, best_val_loss, log_rows, elapsed = (0, float('inf'), [], 0.0) if ckpt is None else \
        (ckpt['iter_num'], ckpt['best_val_loss'], ckpt['log'], ckpt['elapsed'])  # the saved log ends at the checkpoint
    cfg.update(model_args)
    model.to(device)
    optimizer, scaler, data_gen = make_optimizer(cfg, model, ckpt, device_type, rank, world)
    del ckpt
    eval_model, train_model = wrap(model, cfg, ddp, device)
    tokens_per_iter = cfg['gradient_accumulation_steps'] * cfg['batch_size'] * cfg['block_size']
    if master:
        print(f"{model.get_num_params() / 1e6:.2f}M parameters, pe={cfg.get('pe')}, {world} process(es) on "
              f"{device} in {cfg['dtype']}, {tokens_per_iter} tokens per iteration, "
              f"starting at iter {iter_num} of {cfg['max_iters']}")
        write_log(out_dir, log_rows)

    t_start = time.time() - elapsed  # time counts only the iterations that were kept
    resumed_at = iter_num if cfg['init_from'] == 'resume' else None
    while True:
        stop = '; stopping, ' + kept(ckpt_path)  # a NaN before the first save leaves no checkpoint to speak of
        lr = get_lr(iter_num, cfg)
        for group in optimizer.param_groups:
            group['lr'] = lr
        # the checkpoint at resumed_at was written right after this evaluation; it is in the log already
        if (iter_num % cfg['eval_interval'] == 0 or iter_num == cfg['max_iters']) and iter_num != resumed_at:
            states = gather_rng(ddp, world)
            if master:
                losses = estimate_loss(eval_model, paths, n_tokens, cfg, ctx, device, ids)
                if not all(map(math.isfinite, losses.values())):
                    raise FloatingPointError(f"non-finite loss estimate {losses} at iter {iter_num}{stop}")
                best_val_loss = min(best_val_loss, losses['val'])
                row = log_row(out_dir, log_rows, iter=iter_num, train_loss=losses['train'], val_loss=losses['val'],
                              lr=lr, time=time.time() - t_start)
                bpb = f" ({losses['val'] / math.log(2):.4f} bits/byte)" if bytes_tokenizer else ''
                print(f"iter {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}{bpb}")
                if iter_num > 0:
                    save_checkpoint(dict(model=model.state_dict(), optimizer=optimizer.state_dict(),
                                         scaler=scaler.state_dict(), model_args=model_args, config=cfg, meta=meta,
                                         iter_num=iter_num, best_val_loss=best_val_loss, rng=states,
                                         data_rng=data_gen.get_state(), log=log_rows, elapsed=row['time'],
                                         environment=environment()),
                                    ckpt_path)
        if iter_num >= cfg['max_iters']:
            break

        t0 = time.time()
        offsets = sample_offsets(data_gen, n_tokens['train'], cfg['block_size'],
                                 cfg['gradient_accumulation_steps'], cfg['batch_size'])
        batches = [get_batch(paths['train'], o, cfg['block_size'], device, cfg['vocab_size'], ids)
                   for o in offsets[rank * n_micro:(rank + 1) * n_micro]]
        lossf = train_step(cfg, model, train_model, optimizer, scaler, batches, ctx, ddp, world,
                           f" at iter {iter_num}{stop}")
        dt = time.time() - t0
        if master and iter_num % cfg['log_interval'] == 0:
            log_row(out_dir, log_rows, iter=iter_num, train_loss=lossf, val_loss=None, lr=lr,
                    time=time.time() - t_start)
            mfu = f", mfu {100 * model.estimate_mfu(cfg['batch_size'] * n_micro, dt):.1f}% of an A100" \
                if device_type == 'cuda' else ''
            print(f"iter {iter_num}: loss {lossf:.4f}, lr {lr:.2e}, {dt * 1000:.0f} ms, "
                  f"{tokens_per_iter / dt:,.0f} tok/s{mfu}")
        iter_num += 1

    if master:
        plot_losses(log_rows, os.path.join(out_dir, 'loss.png'), bytes_tokenizer,
                    f"{out_dir}: pe={cfg.get('pe')}, block_size {cfg['block_size']}")
        print(f"done: best val loss {best_val_loss:.4f}; {ckpt_path}, {out_dir}/log.csv, {out_dir}/loss.png")
    return log_rows


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
