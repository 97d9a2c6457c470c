"""The library that model.py and the scripts import; nothing here is run on its own. Read model.py first.

  config.py         the one config mechanism: a script's DEFAULTS, configs/*.py, then --key=value
  common.py         device and precision, one training step, result files (with their command), time and memory
  corpus.py         the corpora on disk (data/<name>/) and the slices of text drawn from them
  evaluation.py     the protocols' per-token losses (last-token, non-overlapping, sliding), attention variants,
                    ERF tools
  streaming.py      one long text through a bounded KV cache (extrapolate.py --protocol=stream)
  resume.py         --reuse: a long run goes on from its own JSON, a table grows by the runs trained here
  loading.py        what a --ckpt name is (train.py checkpoint, alias, GGUF, folder, hub name), decided once; tokenizers
  pretrained.py     pretrained families (Llama, Mistral, Qwen2, SmolLM, GPT-NeoX, GPT-2, Gemma 3) into model.GPT
  aliases.py        the offline aliases smollm2 and gemma3: GGUF files that pip packages ship (Gemma 3's joined once)
  gguf_reader.py    llama.cpp's GGUF files: metadata, dequantised tensors, tokenizers
  rope_scaling.py   RoPE's extensions (PI, NTK, dynamic NTK, YaRN, Llama 3): the frequencies per layer
  kv_cache.py       the KV cache of decoding and streaming: the past keys and values each layer keeps
  routes.py         the fast attention routes, each equal to model.attention_reference, and the dispatcher
  flexattn.py       FlexAttention (routes.py's GPU route): its score and mask functions, compiled once per device
  regular_fast.py   RegularGPT's fast forwards (regular_impl gather and reduce), equal to its plain one
  regular_tasks.py  the regular-language tasks of thesis ch. 6, in numpy
  thesis_tables.py  the thesis' own numbers, with the lines they come from
"""
