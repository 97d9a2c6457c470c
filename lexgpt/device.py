"""
Where a model runs and at what precision, and one training step there. pick_device and precision turn the scripts'
--device and --dtype into a device name and an autocast context (bf16 where supported, fp16 on older GPUs, float32 on
a CPU); on_device makes a model take and give CPU tensors while it runs elsewhere, so that the evaluation code stays
on the CPU; forward_backward and optimizer_step are one step of gradient accumulation, clipping and the optimizer,
as train.py and tools/bench.py run it.
"""
from contextlib import nullcontext

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from lexgpt.config import ConfigError


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


# the evaluation scripts' options: cuda and bfloat16 for a large model (config.py's --help reads these comments)
EVAL_DEVICE = dict(
    device='cpu',               # cpu | cuda | cuda:<index> | mps | auto (cuda where torch sees a GPU)
    dtype='float32',            # float32 | bfloat16 | float16 | auto (bfloat16 where supported, float32 on a CPU)
)


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


# ---- one training step (train.py, tools/bench.py)

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
