import csv
import hashlib
import json
import math
import os
import socket
import subprocess
import sys
from contextlib import nullcontext

import numpy as np
import pytest
import torch

from lexgpt import corpus, outputs
import train
from lexgpt.config import ConfigError, parse_config
from lexgpt.loading import load_model
from model import GPT, GPTConfig, sinusoid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VOCAB = 64


def make_data(path):
    """Random tokens with a little structure (each token often repeats its predecessor) so losses move."""
    rng = np.random.default_rng(0)
    os.makedirs(path, exist_ok=True)
    for split, n in (('train', 6000), ('val', 1500)):
        tokens = rng.integers(0, VOCAB, n)
        repeat = rng.random(n) < 0.5
        for i in range(1, n):
            if repeat[i]:
                tokens[i] = tokens[i - 1]
        tokens.astype(np.uint16).tofile(os.path.join(path, f'{split}.bin'))
    meta = dict(tokenizer='bytes', vocab_size=VOCAB, sep_ids=[1, 2], eot=0)
    json.dump(meta, open(os.path.join(path, 'meta.json'), 'w'))
    return str(path)


def small_cfg(tmp_path, **kw):
    cfg = parse_config(train.DEFAULTS, [os.path.join(ROOT, 'configs', 'test.py')])
    cfg.update(data_dir=make_data(tmp_path / 'data'), out_dir=str(tmp_path / 'out'), n_layer=2, n_head=2, n_embd=16,
               block_size=16, batch_size=4, eval_iters=2, eval_interval=4, log_interval=1, max_iters=12,
               warmup_iters=3, lr_decay_iters=12, dropout=0.1, device='cpu')  # dropout: the RNG state matters
    cfg.update(kw)
    return cfg


def test_a_uint32_corpus_trains_on_the_ids_load_split_reads(tmp_path, monkeypatch):
    """Ids past 65,535 are stored as uint32 (data.prepare, meta's dtype). Read as uint16 instead, every value would be
    below 65,536, so no vocabulary check would fire: the batches train.py draws must be load_split's windows."""
    rng, vocab = np.random.default_rng(1), 70_000
    data = tmp_path / 'big'  # small_cfg writes its own corpus into tmp_path / 'data'
    data.mkdir()
    for split, n in (('train', 3000), ('val', 600)):
        rng.integers(0, vocab, n).astype(np.uint32).tofile(data / f'{split}.bin')
    json.dump(dict(tokenizer='big', vocab_size=vocab, sep_ids=[1, 2], eot=0, dtype='uint32',
                   tokens=dict(train=3000, val=600)), open(data / 'meta.json', 'w'))
    drawn, get_batch = [], train.get_batch
    monkeypatch.setattr(train, 'get_batch', lambda *a, **kw: drawn.append((a[0], a[1], get_batch(*a, **kw)))
                        or drawn[-1][2])
    train.main(small_cfg(tmp_path, data_dir=str(data), max_iters=2, eval_iters=1, eval_interval=2))
    assert len(drawn) == 6 and any(x.max() >= 65_536 for _, _, (x, _) in drawn)  # 2 steps, 2 evaluations x 2 splits
    for path, offsets, (x, _) in drawn:
        tokens = corpus.load_split(str(data), os.path.basename(path)[:-4]).tokens
        assert torch.equal(x, torch.from_numpy(tokens[offsets.numpy()[:, None] + np.arange(16)].astype(np.int64)))


def losses(rows):
    return [(r['iter'], r['train_loss'], r['val_loss'], r['lr']) for r in rows]


def test_lr_schedule_hand_values():
    cfg = dict(learning_rate=1.0, min_lr=0.1, warmup_iters=10, lr_decay_iters=110, max_iters=200, decay_lr=True)
    assert train.get_lr(0, cfg) == pytest.approx(1 / 11)  # warmup starts above zero
    assert train.get_lr(9, cfg) == pytest.approx(10 / 11)
    assert train.get_lr(10, cfg) == pytest.approx(1.0)  # peak
    assert train.get_lr(60, cfg) == pytest.approx(0.55)  # cosine half way: the mean of peak and floor
    assert train.get_lr(110, cfg) == pytest.approx(0.1)  # end of decay
    assert train.get_lr(150, cfg) == pytest.approx(0.1)
    assert train.get_lr(200, dict(cfg, lr_decay_iters=None)) == pytest.approx(0.1)  # None: decay to max_iters
    assert train.get_lr(0, dict(cfg, decay_lr=False)) == 1.0


@pytest.mark.parametrize('how', ['stop', 'crash'])
def test_resume_equals_uninterrupted(tmp_path, monkeypatch, how):
    full = train.main(small_cfg(tmp_path / 'a'))
    ref_state = torch.load(tmp_path / 'a' / 'out' / 'ckpt.pt', weights_only=True)['model']

    cfg = small_cfg(tmp_path / 'b')
    if how == 'stop':  # N iterations (of a 2N schedule), then resume to 2N
        train.main(dict(cfg, max_iters=8))
    else:  # killed at iteration 6, two iterations after the checkpoint at 4
        real, calls = train.forward_backward, []

        def dying(*args):
            calls.append(1)
            if len(calls) > 6:
                raise KeyboardInterrupt
            return real(*args)
        monkeypatch.setattr(train, 'forward_backward', dying)
        with pytest.raises(KeyboardInterrupt):
            train.main(cfg)
        monkeypatch.setattr(train, 'forward_backward', real)
    resumed = train.main(dict(cfg, init_from='resume'))

    assert losses(resumed) == losses(full)  # identical, not merely close
    ckpt = torch.load(tmp_path / 'b' / 'out' / 'ckpt.pt', weights_only=True)  # loads without pickled code
    assert ckpt['iter_num'] == 12 and not any(k.startswith('_orig_mod.') for k in ckpt['model'])
    for k, v in ref_state.items():
        assert torch.equal(v, ckpt['model'][k]), k
    # the files agree with the returned log: rows of the lost stretch were dropped, none duplicated
    out = tmp_path / 'b' / 'out'
    assert losses(json.load(open(out / 'log.json'))) == losses(full)
    rows = list(csv.DictReader(open(out / 'log.csv')))
    assert [int(r['iter']) for r in rows] == [r['iter'] for r in full]
    assert (out / 'loss.png').stat().st_size > 0
    assert isinstance(load_model(str(out / "ckpt.pt"))[0], GPT)


def test_nan_stops_and_keeps_last_good_checkpoint(tmp_path, monkeypatch):
    real, calls = GPT.forward, []

    def poisoned(self, idx, targets=None, **kw):
        logits, loss = real(self, idx, targets, **kw)
        if self.training:
            calls.append(1)
            if len(calls) == 7:  # iteration 6: after the checkpoint at 4
                loss = loss * float('nan')
        return logits, loss
    monkeypatch.setattr(GPT, 'forward', poisoned)
    cfg = small_cfg(tmp_path)
    with pytest.raises(FloatingPointError, match=r'non-finite training loss nan at iter 6.*last good checkpoint'):
        train.main(cfg)
    ckpt = torch.load(os.path.join(cfg['out_dir'], 'ckpt.pt'), weights_only=True)
    assert ckpt['iter_num'] == 4
    assert all(torch.isfinite(v).all() for v in ckpt['model'].values())


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    path = str(tmp_path / 'ckpt.pt')
    train.save_checkpoint({'iter_num': 1, 'w': torch.ones(3)}, path)
    real_save = torch.save

    def broken_save(obj, f, *a, **kw):
        with open(f, 'wb') as fh:
            fh.write(b'PK\x03\x04 half a checkpoint')  # partial bytes, then the disk "fills up"
        raise OSError('No space left on device')
    monkeypatch.setattr(torch, 'save', broken_save)
    with pytest.raises(OSError):
        train.save_checkpoint({'iter_num': 2, 'w': torch.zeros(3)}, path)
    monkeypatch.setattr(torch, 'save', real_save)
    ckpt = torch.load(path, weights_only=True)
    assert ckpt['iter_num'] == 1 and torch.equal(ckpt['w'], torch.ones(3))
    assert os.listdir(tmp_path) == ['ckpt.pt']  # no stray .tmp


def test_config_errors(tmp_path):
    with pytest.raises(ValueError, match=r"unknown pe='bogus'; choose one of: .*alibi.*rope"):
        train.main(small_cfg(tmp_path, pe='bogus'))
    with pytest.raises(ConfigError, match=r"init_from='restart' is not one of scratch, resume, auto, "
                                          r"a checkpoint to fine-tune or a pretrained"):
        train.main(small_cfg(tmp_path, init_from='restart'))
    for name in ('smollm2', 'HuggingFaceTB/SmolLM2-135M'):  # no path on disk, yet pretrained models to fine-tune
        train.check_choices(dict(train.DEFAULTS, init_from=name))
    with pytest.raises(FileNotFoundError, match=r'nowhere.*prepare the data first'):
        train.main(small_cfg(tmp_path, data_dir=str(tmp_path / 'nowhere')))
    with pytest.raises(FileNotFoundError, match=r"init_from='resume' but there is no"):
        train.main(small_cfg(tmp_path, out_dir=str(tmp_path / 'empty'), init_from='resume'))
    with pytest.raises(ConfigError, match=r'has 1500 tokens, not more than block_size\+1 = 2001'):
        train.main(small_cfg(tmp_path, block_size=2000))
    with pytest.raises(ValueError, match=r'n_embd=30 must be divisible by n_head=4'):
        train.main(small_cfg(tmp_path, n_embd=30, n_head=4))
    # on the command line: one line on stderr naming the value, exit status 1, no traceback (more bad values, each
    # through train.py's entry point in this process: test_bad_inputs.py's table)
    r = subprocess.run([sys.executable, 'train.py', 'configs/test.py', '--learning_rat=1',
                        f'--out_dir={tmp_path / "cli"}'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.count('\n') == 1, r.stderr
    assert all(w in r.stderr for w in ["unknown config key 'learning_rat'", "did you mean 'learning_rate'"]), r.stderr


# --- DDP ---------------------------------------------------------------------------------------

def _model():
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=VOCAB, block_size=16, n_layer=2, n_head=2, n_embd=16, pe='alibi'))


def _micro_batches():
    g = torch.Generator().manual_seed(0)
    return [(torch.randint(VOCAB, (3, 16), generator=g), torch.randint(VOCAB, (3, 16), generator=g))
            for _ in range(4)]


def test_accumulated_gradients_equal_one_backward_on_the_concatenated_batch():
    """forward_backward over 4 micro-batches gives the gradient of the mean loss of their concatenation: each
    micro-batch's loss divided by their number. Under torchrun each process does its share of them and DDP averages
    over the processes (test_torchrun_two_processes_match_one: 2 micro-batches a process)."""
    model, batches = _model(), _micro_batches()
    train.forward_backward(model, batches, nullcontext(), torch.amp.GradScaler('cpu', enabled=False))
    got = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    _, loss = model(torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches]))
    loss.backward()
    for n, p in model.named_parameters():
        torch.testing.assert_close(got[n], p.grad, rtol=1e-5, atol=1e-7, msg=n)


def test_torchrun_two_processes_match_one(tmp_path):
    """train.py end to end under torchrun (gloo, 2 CPU processes) logs the losses of one process that does
    both processes' micro-batches through gradient accumulation."""
    cfg = small_cfg(tmp_path, max_iters=4, gradient_accumulation_steps=4, dropout=0.0)  # 2 micro-batches a process
    single = train.main(cfg)
    args = [f'--{k}={v!r}' for k, v in cfg.items()
            if k in ('data_dir', 'n_layer', 'n_head', 'n_embd', 'block_size', 'batch_size', 'eval_iters',
                     'eval_interval', 'log_interval', 'max_iters', 'warmup_iters', 'lr_decay_iters', 'dropout',
                     'gradient_accumulation_steps', 'device')]
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    r = subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node=2', '--master_addr=127.0.0.1',
                        f'--master_port={port}', 'train.py', 'configs/test.py', f"--out_dir={tmp_path / 'ddp'}", *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert '2 process(es)' in r.stdout
    ddp = json.load(open(tmp_path / 'ddp' / 'log.json'))
    assert [r['iter'] for r in ddp] == [r['iter'] for r in single]
    for a, b in zip(ddp, single):
        for key in ('train_loss', 'val_loss'):
            assert (a[key] is None) == (b[key] is None)
            if a[key] is not None:
                assert math.isclose(a[key], b[key], rel_tol=1e-5), (a, b)


def test_fine_tune_from_a_checkpoint_at_a_longer_length_with_rope_scaling(tmp_path):
    """init_from=<checkpoint>: its weights and architecture, the config's block_size and RoPE extension, YaRN's
    original length set to the checkpoint's training length, a fresh optimizer from iteration 0."""
    base = small_cfg(tmp_path / 'a', pe='rope', max_iters=4)
    train.main(base)
    src = str(tmp_path / 'a' / 'out' / 'ckpt.pt')
    tuned = small_cfg(tmp_path / 'b', init_from=src, block_size=32, rope_scaling='yarn', rope_scale=2.0, max_iters=2,
                      n_layer=3,  # an architecture setting: it stays the checkpoint's
                      learning_rate=0.0, min_lr=0.0)  # so the weights after the steps are the ones it started from
    rows = train.main(tuned)
    assert rows[0]['iter'] == 0
    model, config, _ = load_model(str(tmp_path / 'b' / 'out' / 'ckpt.pt'))
    c = model.config
    assert (c.block_size, c.rope_scaling, c.rope_scale, c.rope_original_len, c.n_layer) == (32, 'yarn', 2.0, 16, 2)
    source = load_model(src)[0].state_dict()
    assert all(torch.equal(p, source[n]) for n, p in model.state_dict().items())


def test_checkpoints_and_result_jsons_record_the_kernels_and_versions_they_ran_with(tmp_path):
    """#71: the last digits of a figure depend on torch's build and the CPU kernels it dispatched to (the sinusoidal
    demo differed between an AVX2 and an AVX512 machine), so a checkpoint and a result JSON say which. The capability
    is what torch ran with, not what the CPU offers: forced to the plain kernels, the JSON says DEFAULT."""
    train.main(small_cfg(tmp_path, max_iters=4, eval_interval=4))
    ckpt = torch.load(tmp_path / 'out' / 'ckpt.pt', weights_only=False)
    assert ckpt['environment'] == dict(torch=torch.__version__, numpy=np.__version__, cpu=outputs.cpu_model(),
                                       cpu_capability=torch.backends.cpu.get_cpu_capability(),
                                       mkl_instructions=os.environ.get('MKL_ENABLE_INSTRUCTIONS'))
    code = "from lexgpt.outputs import write_outputs; write_outputs(%r, 'r', dict(x=1))" % str(tmp_path)
    subprocess.run([sys.executable, '-c', code], cwd=ROOT, check=True, capture_output=True,
                   env=dict(os.environ, ATEN_CPU_CAPABILITY='default'))
    saved = json.load(open(tmp_path / 'r.json'))
    assert saved['environment']['cpu_capability'] == 'DEFAULT' and saved['x'] == 1
    assert saved['environment']['torch'] == torch.__version__ and saved['command'].startswith('python ')


def test_the_sinusoidal_table_is_the_same_under_every_cpu_kernel_set():
    """#71: the sinusoidal demo moved between an AVX2 and an AVX512 machine, and the sin/cos kernels were the first
    suspect. They are not it: forced to each instruction set torch has here, the table is the same bit for bit (on a
    CPU without AVX512, torch falls back to AVX2 and the check still holds). This process's own set is read here;
    a process is forced to each other one."""
    table = 'hashlib.sha256(sinusoid(torch.arange(4096), 128).numpy().tobytes()).hexdigest()'
    code = f"import hashlib, torch; from model import sinusoid; print(torch.backends.cpu.get_cpu_capability(), {table})"
    seen = {torch.backends.cpu.get_cpu_capability(): eval(table, dict(hashlib=hashlib, torch=torch, sinusoid=sinusoid))}
    for capability in [c for c in ('avx2', 'avx512') if c.upper() not in seen]:
        out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, check=True, capture_output=True, text=True,
                             env=dict(os.environ, ATEN_CPU_CAPABILITY=capability)).stdout.split()
        seen[out[0]] = out[1]
    assert len(set(seen.values())) == 1, seen
