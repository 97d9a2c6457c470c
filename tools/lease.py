"""
The GPU lease (#42): the few minutes a session is lent a GPU, and the steps it runs in them, each under its own time
budget and resumed from its JSON next time. `bash results.sh lease` (python -m tools.results lease) runs session()
below, what a session with a GPU runs first, whatever its issue: at most 7 minutes (LEASE_S) on one H100, so that a
rerun fits the lease too. On the device:

  run(command='bash results.sh lease', timeout_s=480)   # then here: tar -xzf <files_at>/lease.tgz, and commit

Each step runs under its own budget (`timeout`) and writes results/gpu/lease/<step>.json (its command, the machine,
the corpus, figures, targets met or missed) and .md as soon as it ends:

  python -m tools.lease OUT_DIR STEP BUDGET_S COMMAND...
  python -m tools.lease results/gpu/lease eval 100 python -m tools.bench configs/tiny.py --mode=eval ... \
      --json=<OUT_DIR>/eval.bench.json

A GPU is lent for a few minutes at a time, and a call can be cut at any moment. So a step whose JSON says "done" under
the same command is skipped: the next lease goes on where this one stopped (delete the JSON to measure a step again;
a step whose command has changed is measured again). A step that failed or ran out of time writes its JSON too, with
the output's last lines, and is tried again next time. So the lease's work and the mid-scale table grow lease by lease.

The JSON holds the command as the step list has it, the machine (GPU, Python, torch), the corpus (which Python's
standard library: the device runs another Python than ours), status, seconds, the figures (bench.py's --json file,
pytest's counts, train.py's log) and, where the issue sets targets, each target met or missed in figures.
LEASE_END (seconds since the epoch, set by session) is when the lease's minutes are up: a step whose budget, plus
LEASE_RESERVE seconds for what must follow it (the mid-scale runs' scoring), does not fit in what is left is not
started, so that a later, cheaper one can be. Exit status: 0 done now, 10 done before, 11 not started for lack of
time, 124 out of time, 1 failed.

  python -m tools.lease --check OUT_DIR STEP COMMAND...   # exit 10 if the step is done under that command, else 0

What the device lacks comes along in .lease/ (git-ignored), carried by a device call's `carry`: SmolLM2's GGUF (98 MB:
more than one call carries) and the gguf package. Here:

  split -n 2 $(python -c "from lexgpt import aliases; print(aliases.locate('smollm2'))") .lease/smollm2.gguf.part
  pip download --no-deps -d .lease/whl gguf==0.19.0

then a first call (command 'true') carries .lease/smollm2.gguf.partaa, and the lease's call, within the 30 s the
machine stays warm, carries .lease/smollm2.gguf.partab and .lease/whl. Compiled kernels (a compiled model, flex) are
kept in .lease/inductor, which stays on the warm machine between calls, so that a later call finds them.
LEASE_DRY=1: the same steps and code paths on the CPU at toy sizes (2 iterations, at most 256 tokens) into $LEASE_OUT
(tests/test_lease.py runs it), so that the lease cannot rot between leases.
"""
import datetime
import glob
import importlib.metadata
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time

from tools.lease_figures import figures
from tools.steps import Step

DONE_BEFORE, NO_TIME = 10, 11
# thesis Table 3.4 (GitHub, 162M parameters, GPT-NeoX on GPUs): seconds per training step; sinusoidal is the
# cheapest there, as 'none' is here, so each encoding's time over it stands beside our ratio to none
THESIS_SEC_PER_STEP = dict(sinusoidal=0.298, alibi=0.302, kerple_log=0.307, kerple_power=0.321, rope=0.332, t5=0.340)


def machine():
    """Python, torch and the GPU of this machine, read without importing torch (a step's process does that)."""
    try:
        torch = importlib.metadata.version('torch')
    except importlib.metadata.PackageNotFoundError:
        torch = None
    try:
        gpu = subprocess.run(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'], capture_output=True,
                             text=True, timeout=30).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        gpu = None
    return dict(python=platform.python_version(), torch=torch, gpu=gpu, cpus=os.cpu_count())


def corpus():
    """What the data folder of this lease was made from (its meta.json), e.g. 'Python 3.12.3 stdlib .py files'."""
    path = os.path.join(os.environ.get('LEASE_DATA', 'data/pycode'), 'meta.json')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        meta = json.load(f)
    return dict(source=meta.get('source'), tokens=meta.get('tokens'))


def run(command, budget):
    """-> (exit status, output, seconds). `timeout` stops the command's whole process group at the budget (and
    kills it 10 s later if it has not stopped); 124 or 137 means it ran out of time."""
    t0 = time.time()
    proc = subprocess.Popen(['timeout', '-k', '10', str(budget), 'bash', '-c', command], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors='replace', bufsize=1,
                            env=dict(os.environ, PYTHONUNBUFFERED='1'))
    lines = []
    for line in proc.stdout:  # shown as it comes, so a cut call still shows how far it got
        sys.stdout.write(line)
        lines.append(line)
    return proc.wait(), ''.join(lines), time.time() - t0


def markdown(rec, output):
    lines = [f"# {rec['step']}: {rec['status']} in {rec['seconds']:.0f} s (budget {rec['budget_s']} s)", '',
             f"`{rec['step_command']}` (results.sh lease)", '',
             f"Machine: {rec['machine']['gpu'] or 'no GPU'}, Python {rec['machine']['python']}, torch "
             f"{rec['machine']['torch']}; data: {(rec['corpus'] or {}).get('source')}"
             + (f". A dry run (LEASE_DRY=1): toy sizes on the CPU, not a measurement{rec.get('note', '')}."
                if rec['dry_run'] else '.'), '']
    if rec['targets']:
        lines += ['| target | measured | wanted | met |', '|---|---|---|---|']
        lines += [f"| {t['what']} | {t['value']} | {t['target']} | "
                  f"{'-' if t['met'] is None else 'yes' if t['met'] else '**no**'} |" for t in rec['targets']]
        lines.append('')
    fig = rec['figures'] or {}
    if fig.get('mode') == 'train':
        lines += ['Ratio to the cheapest encoding: ours to none, thesis Table 3.4 (sec/step, 162M, GPT-NeoX) to '
                  'sinusoidal:', '', '| pe | ours / none | thesis / sinusoidal |', '|---|---|---|']
        for pe, r in fig['results'].items():
            thesis = THESIS_SEC_PER_STEP.get(pe.partition('+')[0])
            theirs = f"{thesis / THESIS_SEC_PER_STEP['sinusoidal']:.2f}" if thesis else '-'
            lines.append(f"| {pe} | {r['ratio_to_none']:.2f} | {theirs} |")
        lines.append('')
    t = fig.get('train') or {}
    if t.get('iters'):
        lines += [f"Trained {t.get('params_m')}M parameters for {t['iters']} iterations "
                  f"({t.get('tokens', 0) / 1e6:.1f}M "
                  f"tokens) in {t['train_seconds']:.0f} s: validation loss {t['val_loss']:.4f}.", '']
    # the tables the step printed, each with the line that says what it holds; else the output's last lines
    out, tables = output.splitlines(), []
    for i, line in enumerate(out):
        if line.startswith('|') and (i == 0 or not out[i - 1].startswith('|')):  # a table starts
            tables += [out[i - 2], ''] if i >= 2 and out[i - 2].strip() and not out[i - 2].startswith('|') else []
        if line.startswith('|'):
            tables += [line] + ([''] if i + 1 == len(out) or not out[i + 1].startswith('|') else [])
    lines += tables if tables and rec['status'] == 'done' else ['```', *out[-30:], '```']
    return '\n'.join(lines).rstrip() + '\n'


def write(path, text):
    with open(path + '.tmp', 'w') as f:  # then renamed: a call cut mid-write leaves the last file whole
        f.write(text)
    os.replace(path + '.tmp', path)


def read_record(path):
    """A step's JSON, or {} where it has not been written."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def done_before(out_dir, step, command):
    """Whether <out_dir>/<step>.json says done, under this command (one that results.sh has changed since is not)."""
    path = os.path.join(out_dir, step + '.json')
    before = read_record(path)
    if before.get('status') == 'done' and before.get('step_command') != command:
        print(f"lease: {step} was done under another command ({before.get('step_command')}); measured again")
    return before.get('status') == 'done' and before.get('step_command') == command


def main(out_dir, step, budget, command):
    path = os.path.join(out_dir, step + '.json')
    if done_before(out_dir, step, command):
        print(f"lease: {step} done before ({path}); skipped")
        return DONE_BEFORE
    left = float(os.environ['LEASE_END']) - time.time() if os.environ.get('LEASE_END') else float('inf')
    reserve = int(os.environ.get('LEASE_RESERVE') or 0)
    if left < budget + reserve:
        after = f" and {reserve} s for what follows it" if reserve else ''
        print(f"lease: {step} needs up to {budget} s{after}, {max(left, 0):.0f} s are left; not started (next lease)")
        return NO_TIME
    print(f"lease: {step} (budget {budget} s, {left:.0f} s left): {command}", flush=True)
    rc, output, seconds = run(command, budget)
    fig, met, done = figures(command, output, rc)
    status = 'done' if done else 'timeout' if rc in (124, 137) else 'failed'
    # `command` is the step list's line (what makes this file again: bash results.sh lease, once it is deleted);
    # `step_command` the part that measures
    rec = dict(step=step, command=f'python -m tools.lease {out_dir} {step} {budget} {command}', step_command=command,
               status=status, rc=rc, seconds=round(seconds, 1), budget_s=budget,
               dry_run=bool(os.environ.get('LEASE_DRY')), when=datetime.datetime.now().isoformat(timespec='seconds'),
               machine=machine(), corpus=corpus(), figures=fig,
               targets=[dict(what=w, value=v, target=t, met=m) for w, v, t, m in met], output_tail=output[-4000:])
    os.makedirs(out_dir, exist_ok=True)
    write(path, json.dumps(rec, indent=1, default=str) + '\n')
    write(os.path.join(out_dir, step + '.md'), markdown(rec, output))
    print(f"lease: {step} {status} in {seconds:.0f} s; wrote {path} and {step}.md")
    return 0 if done else 124 if status == 'timeout' else 1


def same_as(out_dir, step, budget, command, ran):
    """A dry run's step with an earlier step's command (tests_60 repeats tests; on a CPU train_eager is
    train_compiled; eval_128k's toy lengths are eval's) is written as done by it, its figures copied: not run again,
    seconds saved in every test run."""
    earlier = ran.setdefault(re.sub(r' --json=\S+', '', command), step)
    path = os.path.join(out_dir, earlier + '.json')
    rec = read_record(path) if earlier != step else {}  # none: no time to start it
    if rec.get('status') != 'done' or done_before(out_dir, step, command):
        return False
    rec.update(step=step, step_command=command, budget_s=budget, seconds=0, same_as=earlier, note=f"; {earlier}'s run",
               command=f'python -m tools.lease {out_dir} {step} {budget} {command}')
    write(os.path.join(out_dir, step + '.json'), json.dumps(rec, indent=1, default=str) + '\n')
    write(os.path.join(out_dir, step + '.md'), markdown(rec, rec['output_tail']))
    print(f"lease: {step} is {earlier}'s command in a dry run; recorded as done by it, not run again")
    return True


# ---- the session: its steps, cheapest first within each issue's group, and the mid-scale table ----

CUDA_TESTS = 'tests/test_attention.py tests/test_pretrained.py tests/test_gemma3.py'  # every test_cuda_* lives here
MID_PES = ('sinusoidal', 'rope', 'alibi', 'sandwich', 'sandwich_smoothed', 'kerple_log', 'kerple_power', 't5')


def plan(dry=False, out=None, pretrained='.lease/smollm2.gguf'):
    """The sizes and places of a lease: an H100's, or (dry) toy sizes on the CPU that no budget stops."""
    p = dict(out='results/gpu/lease', device='cuda', xdist='-n 8', compile=True, data='data/pycode',
             mid_dir='out/lease_mid', mid_runs=int(os.environ.get('MID_RUNS') or 40),
             mid_par=int(os.environ.get('MID_PAR') or 4), eval='--lengths=8192,32768 --rounds=3 --warmup=1',
             eval_long='--lengths=32768,131072 --rounds=2 --warmup=1', train='--rounds=5 --warmup=2',
             pre='--lengths=8192,32768 --rounds=3 --warmup=1', prep='', mid='', nonoverlap='--max_tokens=262144',
             last='--n=1000', m124='--vocab_size=50304', eval124='--lengths=8192,32768,131072 --rounds=3 --warmup=1',
             attn124='--lengths=512 --attn_batch=32 --rounds=10', mid_s=240, score_s=180, pretrained=pretrained)
    if dry:
        o = out or '/tmp/lease-dry'
        p.update(out=o, device='cpu', xdist='', compile=False, data=f'{o}/data/pycode', mid_dir=f'{o}/out/lease_mid',
                 mid_runs=2, mid_par=2, eval='--lengths=64,128 --rounds=1 --warmup=0',
                 eval_long='--lengths=64,128 --rounds=1 --warmup=0', pre='--lengths=64,256 --rounds=1 --warmup=0',
                 train='--rounds=2 --warmup=0 --n_layer=2 --n_head=4 --n_embd=64 --block_size=16 --batch_size=2 '
                 '--vocab_size=256', prep='--max_files=200', nonoverlap='--max_tokens=2048', last='--n=4',
                 mid='--max_iters=2 --eval_interval=2 --eval_iters=1 --n_layer=2 --n_head=2 --n_embd=32 '
                 '--block_size=16 --batch_size=2', m124='--n_layer=2 --n_head=4 --n_embd=64 --block_size=16 '
                 '--batch_size=2 --vocab_size=256 --dtype=float32', eval124='--lengths=64,128,256 --rounds=1 '
                 '--warmup=0', mid_s=120, score_s=60,
                 attn124='--lengths=32 --attn_batch=2 --rounds=1 --attn_impls=dense')  # a process per pass
    return p


def line(*parts):
    """One command line from parts, some of them empty (as the shell joined its words)."""
    return ' '.join(' '.join(parts).split())


def fixed_steps(p):
    """[(step, budget in seconds, command)] before the mid-scale table. Budgets as the first lease (2026-11-27, H100)
    found them: 19 of the 28 CUDA tests in 90 s (each worker compiles flex anew); eval_128k had not reached 131,072
    tokens at 90 s (flex compiles again for every new length); #60's eager steps took 57 s for 5 encodings."""
    d, o, tb = f"--device={p['device']}", p['out'], 'python -m tools.bench configs/thesis_162m.py'
    tiny = 'python -m tools.bench configs/tiny.py --mode=eval'
    tests = line('python -m pytest -q -rfEs -p no:cacheprovider', p['xdist'], CUDA_TESTS, '-k cuda')
    pes = f"--pes=none,alibi,kerple_log,t5,sandwich,rope,alibi+lm_infinite --data_dir={p['data']}"
    thesis = '--pes=none,rope,alibi,kerple_log,t5 --vocab_size=50304 --peak_tflops=989'
    routes = '--pes=none,alibi,kerple_log+flex,kerple_log+dense,t5+flex,t5+dense,sandwich+flex,sandwich+dense ' \
        '--peak_tflops=989'
    return [
        # (a) the CUDA-gated tests: FlexAttention forward and backward, bf16 autocast, float32 grouped-query attention
        ('tests', 150, tests),
        # (b) the eval forward per encoding against the unbiased kernel (targets: <= 1.5x at 32k, memory linear)
        ('eval', 100, line(tiny, d, pes, p['eval'], f'--json={o}/eval.bench.json')),
        ('eval_128k', 120, line(tiny, d, pes, p['eval_long'], f'--json={o}/eval_128k.bench.json')),
        # (c) the thesis config's training step (GPT-2 vocabulary; bf16), compiled, then not; MFU against the H100
        # SXM's (and H200's) dense bf16 peak of 989 TFLOPS; the thesis' Table 3.4 beside the ratios
        ('train_compiled', 180, line(tb, '--mode=train', d, thesis, f"--compile={p['compile']}", p['train'],
                                     f'--json={o}/train_compiled.bench.json')),
        ('train_eager', 60, line(tb, '--mode=train', d, thesis, '--compile=False', p['train'],
                                 f'--json={o}/train_eager.bench.json')),
        # (d) SmolLM2-135M against transformers at 8k and 32k, in bf16 (transformers' float32 at 32k ran out of memory)
        ('pretrained', 60, line(f"python -m tools.bench --mode=pretrained --pretrained={p['pretrained']}", d,
                                '--dtype=bfloat16', p['pre'], f'--json={o}/pretrained.bench.json')),
        # (e) #60: a learned bias's training by FlexAttention's backward and by the dense route, one layer at the 124M
        # model's shape, then whole eager steps (lexgpt/routes.py's rule follows these), then the CUDA tests again
        ('attention_124m', 120, line(tb, '--mode=attention', d, '--attn_pe=kerple_log', '--attn_impls=causal,'
                                     'sdpa_mask_grad,flex_grad,dense', p['m124'], p['attn124'],
                                     f'--json={o}/attention_124m.bench.json')),
        ('train_routes', 180, line(tb, '--mode=train', d, routes, p['m124'], '--compile=False', p['train'],
                                   f'--json={o}/train_routes.bench.json')),
        ('tests_60', 150, tests),
        # (f) #60's targets: the 124M model's eval forward to 128k tokens, one flex compilation per encoding for all
        # lengths; its compiled training step, none's uncompiled one beside it (MFU >= 40%, biases <= 1.25x none)
        ('eval_124m', 300, line(tb, '--mode=eval', d, pes, p['m124'], p['eval124'],
                                f'--json={o}/eval_124m.bench.json')),
        ('train_124m', 300, line(tb, '--mode=train', d, '--pes=none,none+eager,rope,alibi,sandwich,kerple_log,t5 '
                                 '--peak_tflops=989', p['m124'], f"--compile={p['compile']}", p['train'],
                                 f'--json={o}/train_124m.bench.json')),
    ]


def mid_runs():
    """(g) the mid-scale table's runs (configs/lease_mid.py): Tables 3.3 and 4.3's eight encodings at seed 0, then
    seeds 1-4."""
    return [f'{pe}-s{seed}' for seed in range(5) for pe in MID_PES]


def mid_command(p, run):
    pe, seed = run.rsplit('-s', 1)
    return line(f"python train.py configs/lease_mid.py --pe={pe} --seed={seed} --device={p['device']}",
                f"--data_dir={p['data']} --out_dir={p['mid_dir']}/{run} --init_from=auto", p['mid'])


def score_commands(p):
    """[(command, its JSON)]: every run trained, scored in one extrapolate.py process per protocol (flex compiled
    once per encoding for every length): non-overlapping (Table 3.3: the same first 2^18 test tokens at every length)
    and last-token (Table 4.3: 1000 segments, the last token of each)."""
    e = f"--lengths=1,2,4,8,16 --data_dir={p['data']} --device={p['device']} --out_dir={p['out']}"
    return [(line(f"python extrapolate.py --ckpt={p['mid_dir']}/*-s[0-9]*", e, f'--protocol={protocol}', extra,
                  f'--name=mid_{protocol}'), f"{p['out']}/mid_{protocol}.json")
            for protocol, extra in (('nonoverlap', p['nonoverlap']), ('last_token', p['last']))]


def steps():
    """The lease's steps as the step list has them (tools/steps.py), at an H100's sizes."""
    p = plan()
    leased = fixed_steps(p) + [(f'mid_{r}', p['mid_s'], mid_command(p, r)) for r in mid_runs()]
    return [Step('lease', f"python -m tools.lease {p['out']} {name} {budget} {command}", f'{budget} s',
                 outputs=(f"{p['out']}/{name}.json",)) for name, budget, command in leased] + \
        [Step('lease', command, '3 min', outputs=(out,), reuse=out) for command, out in score_commands(p)]


def run_here(command, reuse=None):
    """A command that is not a lease step (the corpus, the mid-scale scoring), with --reuse=FILE if FILE exists."""
    args = shlex.split(command) + ([f'--reuse={reuse}'] if reuse and os.path.exists(reuse) else [])
    return subprocess.run([sys.executable if args[0] == 'python' else args[0], *args[1:]]).returncode


def nonempty(path):
    return os.path.exists(path) and os.path.getsize(path) > 0


def pack(p, pending):
    """What is done so far goes to the device call's $OUT (the runs trained and not yet scored stay out of it)."""
    if os.environ.get('OUT'):
        held = [f'--exclude-from={pending}'] if nonempty(pending) else []
        subprocess.run(['tar', '-czf', os.path.join(os.environ['OUT'], 'lease.tgz'), *held, p['out']])


def score_mid(p, pending):
    """Score every run trained (the rows of earlier leases kept by --reuse); then their step files may go back."""
    if all(run_here(command, reuse=out) == 0 for command, out in score_commands(p)) and os.path.exists(pending):
        os.remove(pending)
    pack(p, pending)


def mid_table(p):
    """(g) A run leaves most of an H100 idle (alibi-s0 alone: 51 ms a step, 11% of the bf16 peak), so mid_par of them
    train side by side, a train.py process and a step each; then every run trained is scored. Budget: alone, a run
    trained in 54-97 s and was scored in 1-3 minutes; mid_s for the runs side by side and score_s for scoring them
    are guesses from those until a lease records the steps' seconds."""
    pending = os.path.join(p['mid_dir'], 'unscored.txt')  # trained, not yet scored: their step files stay here
    if nonempty(pending):  # trained by a call that ended before it scored them
        score_mid(p, pending)
    todo = [r for r in mid_runs() if not done_before(p['out'], f'mid_{r}', mid_command(p, r))][:p['mid_runs']]
    while todo:
        batch, todo = todo[:p['mid_par']], todo[p['mid_par']:]
        procs = [subprocess.Popen([sys.executable, '-m', 'tools.lease', p['out'], f'mid_{r}', str(p['mid_s']),
                                   *mid_command(p, r).split()], env=dict(os.environ, LEASE_RESERVE=str(p['score_s'])))
                 for r in batch]
        rcs = {r: proc.wait() for r, proc in zip(batch, procs)}
        os.makedirs(p['mid_dir'], exist_ok=True)
        with open(pending, 'a') as f:
            f.writelines(f'mid_{r}.*\n' for r, rc in rcs.items() if rc == 0)
        if {0, DONE_BEFORE} & set(rcs.values()):  # DONE_BEFORE: trained by a call that ended before the scoring
            score_mid(p, pending)
        if not {0, DONE_BEFORE, 1, 124} & set(rcs.values()):  # none started: no time left for more
            break


def session():
    """`bash results.sh lease`: each step under its budget (a failed one says why in its JSON; the others still run),
    then the mid-scale table. LEASE_DRY=1: toy sizes on the CPU into $LEASE_OUT, no step skipped for time (an hour;
    LEASE_S=0 still tests the skipping), a command two steps run, but for its --json file, once (same_as);
    LEASE_PRETRAINED: another model for step (d)."""
    dry, pretrained = bool(os.environ.get('LEASE_DRY')), os.environ.get('LEASE_PRETRAINED') or 'smollm2'
    if not os.environ.get('LEASE_PRETRAINED') and os.path.exists('.lease/smollm2.gguf.partab'):
        pretrained = '.lease/smollm2.gguf'  # SmolLM2's GGUF, carried in two parts
        with open(pretrained, 'wb') as whole:
            for part in sorted(glob.glob('.lease/smollm2.gguf.part*')):
                with open(part, 'rb') as f:
                    whole.write(f.read())
    p = plan(dry, os.environ.get('LEASE_OUT'), pretrained)
    os.environ.update(LEASE_END=str(int(time.time()) + int(os.environ.get('LEASE_S') or (3600 if dry else 420))),
                      LEASE_DATA=p['data'])  # LEASE_DATA: corpus() reads it
    inductor = f"{p['out']}/inductor" if dry else os.environ.get('TORCHINDUCTOR_CACHE_DIR') or \
        os.path.abspath('.lease/inductor')
    os.environ['TORCHINDUCTOR_CACHE_DIR'] = inductor
    if os.path.isdir('.lease/whl'):  # packages carried as wheels (the device has no registry)
        subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-index', '--no-deps', '--target',
                        '/tmp/lease-site', *glob.glob('.lease/whl/*.whl')])
        os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, ['/tmp/lease-site', os.environ.get('PYTHONPATH')]))
    # the device's own Python makes the corpus: its standard library is not ours (each JSON names the one used)
    if not os.path.exists(os.path.join(p['data'], 'meta.json')):
        run_here(line('python -m data.prepare --corpus=pycode', f"--out_dir={p['data']}", p['prep']))
    pending, ran = os.path.join(p['mid_dir'], 'unscored.txt'), {}
    for name, budget, command in fixed_steps(p):
        if not (dry and same_as(p['out'], name, budget, command, ran)):
            main(p['out'], name, budget, command)
        pack(p, pending)
    mid_table(p)
    return 0


if __name__ == '__main__':
    if len(sys.argv) >= 5 and sys.argv[1] == '--check':
        sys.exit(DONE_BEFORE if done_before(sys.argv[2], sys.argv[3], ' '.join(sys.argv[4:])) else 0)
    if len(sys.argv) < 5 or not sys.argv[3].isdigit():
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), ' '.join(sys.argv[4:])))
