"""The library; nothing here is run on its own. Read model.py first.

Imports run one way (tests/test_imports.py). The modules below model.py are those it imports, and what they import in
turn: none of them imports model.py or anything that does. The modules above it take a model from model.py (loading,
streaming) or serve the scripts; analysis/, data/, the scripts and tools/ stand above those.

Below model.py:
  reference.py      the reference attention, every option in one explicit softmax, and the rules the routes share
                    with it: the options, one call's facts, the mask, the distance ceiling, the logit scale, FoX's term
  routes.py         the fast attention routes, each equal to reference.attention_reference, and the dispatcher
  flexattn.py       FlexAttention (routes.py's GPU route): its score and mask functions, compiled once per device
  kv_cache.py       the KV cache of decoding and streaming: the past keys and values each layer keeps
  rope_scaling.py   RoPE's extensions (PI, NTK, dynamic NTK, YaRN, Llama 3): the frequencies per layer
  regular_fast.py   RegularGPT's fast forwards (regular_impl gather and reduce), equal to its plain one
  pretrained.py     pretrained families (Llama, Mistral, Qwen2, SmolLM, GPT-NeoX, GPT-2, Gemma 3) as GPTConfig
                    arguments and tensors, for GPT.from_pretrained
  aliases.py        the offline aliases smollm2 and gemma3: GGUF files that pip packages ship (Gemma 3's joined once)
  gguf_reader.py    llama.cpp's GGUF files: metadata, dequantised tensors, tokenizers
  config.py         the one config mechanism: a script's DEFAULTS, configs/*.py, then --key=value; ConfigError

Above model.py:
  device.py         where a model runs and at what precision (--device, --dtype), and one training step
  outputs.py        result files: JSON with its command and environment, tables, plots; reading them back, globs
  progress.py       progress lines of a long run, a block's time and peak memory (Meter), memory checks
  corpus.py         the corpora on disk (data/<name>/) and the slices of text drawn from them
  evaluation.py     the protocols' per-token losses (last-token, non-overlapping, sliding), attention variants,
                    ERF tools
  streaming.py      one long text through a bounded KV cache (extrapolate.py --protocol=stream)
  resume.py         --reuse: a long run goes on from its own JSON, a table grows by the runs trained here
  loading.py        what a --ckpt name is (train.py checkpoint, alias, GGUF, folder, hub name), decided once; tokenizers
  regular_tasks.py  the regular-language tasks of thesis ch. 6, in numpy
  ruler_tasks.py    RULER's synthetic tasks (Hsieh et al. 2024): inputs at a length in the model's tokens, metrics
  thesis_tables.py  the thesis' own numbers, with the table, page and row they come from
"""
