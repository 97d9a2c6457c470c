"""
The mutation run's survivors that compute the same numbers as the code (tools/mutation.py, #59 and #75), each with
why: a verdict kept apart from the runner. The survivors that a test kills are in tools/mutation_killed_since.py.
"""

# survivors that no test can kill: (file, the line before, the line after) -> why the mutant computes the same
EQUIVALENT = {
    ('lexgpt/evaluation.py', 'if norm is None or span >= x.size(1):', 'if norm is None and span >= x.size(1):'):
        "every model here has transformer.ln_f, so the head always runs in slices; one slice when they would all fit, "
        "the plain forward's losses (test_every_token_losses_run_the_head_a_slice_at_a_time): memory, not numbers",
    ('lexgpt/evaluation.py', "w = cfg.get('windowed_at', 0)", "w = cfg.get('windowed_at', )"):
        "None and 0 both mean L_tr through `w or L_tr`, in the label and the window alike",
    ('lexgpt/evaluation.py', "w = cfg.get('windowed_at', 0)", "w = cfg.get('windowed_at', None)"):
        "None and 0 both mean L_tr through `w or L_tr`, in the label and the window alike",
    ('lexgpt/evaluation.py',
     "span = max(1, HEAD_ELEMENTS // (head.out_features * x.size(0))) if head is not None else x.size(1)",
     "span = max(1, HEAD_ELEMENTS // (head.out_features * x.size(0))) if head is not None else x.size(None)"):
        "every model here (GPT, RegularGPT) has an lm_head: the else branch is never taken",
    ('lexgpt/evaluation.py',
     'HEAD_ELEMENTS = 2 ** 27  # logits held at once where every position is scored: 512 MB of float32',
     'HEAD_ELEMENTS = 2 ** 28  # logits held at once where every position is scored: 512 MB of float32'):
        "the head's slices grow twice as long (1 GB of float32 logits at once, not 512 MB); each position's loss is "
        "its own row's cross-entropy, and the head's rows came out bitwise equal in slices of 128, 256 or all 512 "
        "(checked at V = 50,304 and 49,152): memory, not numbers",
    ('analysis/thesis.py', 'v = np.array(list(by_seed.values()), dtype=float)',
     'v = np.array(list(by_seed.values()), )'):
        "read_evals stores every perplexity as float(...): the array is float64 either way",
    ('lexgpt/rope_scaling.py', 'mid = (wavelen >= L / fast) & (wavelen <= L / slow)',
     'mid = (wavelen >= L / fast) & (wavelen < L / slow)'):
        "differs only where a wavelength 2 pi base^(2i/D) equals L / slow exactly, which no float pair does "
        "(Llama 3.1's own apply_scaling and transformers take the band with <= as here)",
    ('lexgpt/streaming.py', "fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=True, height_ratios=[3, 2])",
     "fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=None, height_ratios=[3, 2])"):
        "the PNG's two panels stop sharing an x axis; both are drawn over the same bucket ends: no number changes",
    ('lexgpt/streaming.py',
     'ax.set_title(f"one stream of {cfg[\'tokens\']} tokens through a bounded cache", fontsize=10)',
     'ax.set_title(f"one stream of {cfg[\'tokens\']} tokens through a bounded cache", fontsize=None)'):
        "the PNG's title in matplotlib's default size: no number changes",
    ('lexgpt/streaming.py', 'bucket_edges=edges.tolist(), results=so_far),', 'results=so_far),'):
        "a stopped stream's partial JSON lacks the bucket edges, which --reuse does not read; the finished JSON has "
        "them",
    ('lexgpt/streaming.py', "ax.set(xscale='log', yscale='log', ylabel='perplexity in the bucket')",
     "ax.set(xscale='log', ylabel='perplexity in the bucket')"):
        "the PNG's perplexity axis becomes linear: no number changes",
    ('lexgpt/streaming.py', "tax.set(xlabel='stream position (bucket end)', ylabel='tokens/s')",
     "tax.set(ylabel='tokens/s')"):
        "the PNG loses its x-axis label: no number changes",
    ('model.py', 'return torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)',
     'return torch.multinomial(F.softmax(logits, dim=+1), num_samples=1)'):
        "every caller (GPT's and RegularGPT's generate, ruler's decoding) passes the last position's logits [B, V]: "
        "dim 1 is dim -1",
    ('lexgpt/routes.py', 'enable_gqa=k.size(1) != q.size(1))', 'enable_gqa=k.size(None) != q.size(1))'):
        "the flag is set also where the keys have the queries' heads: groups of one head, the same attention (bitwise "
        "on CPU) and, as torch's check_batch_size_and_num_heads_dense passes equal heads either way, the same kernel",
    ('lexgpt/routes.py', 'dist = torch.arange(T, device=q.device, dtype=torch.float32)',
     'dist = torch.arange(T, device=q.device, )'):
        "integer distances: every table the dense route reads (T5, KERPLE's, Gauss, Sandwich, Regular) promotes them "
        "to its parameters' float type and gives the same table bit for bit (checked in float32 and float64)",
    ('lexgpt/routes.py', 'cols = torch.arange(k.size(2), device=q.device)[keys][c]',
     'cols = torch.arange(k.size(2), )[keys][c]'):
        "on a CPU the same indices; on a GPU a CPU tensor indexed by CUDA indices raises: loud, never a silent "
        "number, and only a CUDA run of a rotary stream's far keys could show it",
    ('lexgpt/routes.py', 'top.masked_fill_(dead, 0.0)', 'top.masked_fill_(dead, 1.0)'):
        "a dead row (no visible key) has its output and lse overwritten (0 and NEG) below; its p is e^-80 either way",
    ('lexgpt/routes.py', 'q.new_full((H, 1), NEG, dtype=torch.float32)], 1)', 'q.new_full((H, 1), NEG, )], 1)'):
        "NEG is -inf, exact in q's dtype too, and torch.cat promotes to the wider type: the window's column and the "
        "float32 table's values are the same numbers either way",
    ('lexgpt/corpus.py', 'starts = np.asarray(docs, dtype=np.int64)', 'starts = np.asarray(docs, )'):
        "data.prepare writes the offsets as int64 (its format), and a list of Python ints becomes int64 here too: the "
        "dtype is int64 either way",
    ('lexgpt/corpus.py', 'starts = document_bounds(split.docs, len(split.tokens))[0]',
     'starts = document_bounds(split.docs, None)[0]'):
        "n_tokens only sets the last document's end, and [0] keeps the starts, built from docs alone: the same array",
    ('lexgpt/streaming.py',
     'f"peak RSS {meter.peak_mb:.0f} MB", flush=True)',
     'f"peak RSS {meter.peak_mb:.0f} MB", flush=False)'):
        'flush only decides when the line leaves a buffer: the same text, and the progress lines are flushed apart',
    ('lexgpt/streaming.py',
     'fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=True, height_ratios=[3, 2])',
     'fig, (ax, tax) = plt().subplots(2, 1, figsize=(8, 7), sharex=False, height_ratios=[3, 2])'):
        "the PNG's two panels stop sharing an x axis; both are drawn over the same bucket ends: no number changes",
    ('lexgpt/streaming.py',
     'style = dict(color=f\'C{ckpts.index(o["ckpt"]) % 10}\', '
     "ls=STYLES[STREAM_ROWS.index(o['row'])], marker='o', ms=3)",
     'style = dict(color=f\'C{ckpts.index(o["ckpt"]) % 10}\', '
     "ls=STYLES[STREAM_ROWS.index(o['row'])], marker='o', ms=None)"):
        "the PNG's markers in matplotlib's default size: no number changes",
    ('lexgpt/streaming.py',
     'ax.plot(edges[1:], o[\'ppl_by_bucket\'], label=f"{o[\'ckpt\']} {o[\'label\']}", **style)',
     "ax.plot(edges[1:], o['ppl_by_bucket'], label=None, **style)"):
        "the PNG's legend loses its entries: no number changes (the table names every row)",
    ('lexgpt/streaming.py',
     "a.grid(alpha=0.3, which='both')",
     'a.grid(alpha=0.3, )'):
        "the PNG's grid only at the major ticks: no number changes",
    ('lexgpt/rope_scaling.py',
     "fast, slow = {'yarn': (32.0, 1.0), 'llama3': (4.0, 1.0)}.get(config.rope_scaling, (0.0, 0.0))",
     "fast, slow = {'yarn': (32.0, 1.0), 'llama3': (4.0, 1.0)}.get(config.rope_scaling, (1.0, 0.0))"):
        'the band is read only where rope_scaling is yarn or llama3, which have their own entries: the '
        'default pair is never used',
    ('lexgpt/rope_scaling.py',
     'def frequencies(config, dim, length=0, base=0.0, extend=True):',
     'def frequencies(config, dim, length=1, base=0.0, extend=True):'):
        'length is read only by dynamic NTK, through max(length, L) with L >= 1: 0 and 1 give the same base',
    ('lexgpt/rope_scaling.py',
     'ramp = ((torch.arange(dim // 2, dtype=torch.float32) - lo) / (hi - lo if hi != lo else 1e-3)).clamp(0, 1)',
     'ramp = ((torch.arange(dim // 2, ) - lo) / (hi - lo if hi != lo else 1e-3)).clamp(0, 1)'):
        "torch.arange(n) - lo, lo a Python float, is a tensor of torch's default float32 (every run "
        'here): the same ramp',
    ('lexgpt/pretrained.py',
     "sd['transformer.' + name + kind] = w.t() if kind == 'weight' and w.dim() == 2 else w",
     "sd['transformer.' + name + kind] = w.t() if kind == 'weight' or w.dim() == 2 else w"):
        "only a LayerNorm's 1-D weight is newly sent through t(), which returns a 1-D tensor as it is",
    ('lexgpt/pretrained.py',
     "qkv_bias=False, tie_head=bool(hf.get('tie_word_embeddings', True)), qk_norm=True, post_norm=True,",
     "qkv_bias=None, tie_head=bool(hf.get('tie_word_embeddings', True)), qk_norm=True, post_norm=True,"):
        "GPTConfig's qkv_bias is read as `config.bias or config.qkv_bias`: None and False build the same layer",
    ('lexgpt/gguf_reader.py',
     'tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in user_defined])',
     'tok.add_tokens([AddedToken(t, special=False, normalized=True) for t in user_defined])'):
        'normalized only matters where the normalizer changes a token: the byte-level files have none, '
        "and Gemma 3's turns spaces into U+2581; its 30 user-defined tokens with a space are not in "
        'the vocabulary and not added, its 135 others hold no space',
    ('lexgpt/gguf_reader.py',
     "tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges, ignore_merges=pre == 'llama-bpe'))",
     "tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges, ignore_merges=pre != 'llama-bpe'))"):
        'ignore_merges only takes a pre-tokenized word whole where the vocabulary has it; the one '
        "byte-level GGUF here, SmolLM2's ('smollm'), reaches each of its 49,152 tokens through its "
        'merges (every token encoded both ways: 0 differ), so no input tokenizes otherwise',
    ('analysis/recall.py',
     'return model.attention(ceiling=stream[0] if stream[1] else 0) if stream else contextlib.nullcontext()',
     'return model.attention(ceiling=stream[0] if (stream[1]) or True else 0) if stream else '
     'contextlib.nullcontext()'):
        'without sinks the bounded cache holds only the last W keys, so no distance exceeds W and a '
        'ceiling of W changes no score',
    ('analysis/recall.py',
     'got = tree_losses(model, trunk, branches, m, stream, step)',
     'got = tree_losses(model, trunk, branches, m, stream, )'):
        'the step sets how many tokens a forward takes, not a score: a stream chunked equals one fed '
        "token by token (test_stream's test_many_tokens_a_step_equals_token_by_token), and without a "
        'stream the step is not read',
    ('analysis/recall.py',
     'row = measure_length(cfg, probe, r, (mult, L, label), share, stream, prev, head, cells, save)',
     'row = measure_length(cfg, probe, r, (mult, L, label), None, stream, prev, head, cells, save)'):
        'share=None runs every input through a whole forward, which scores what the shared prefix '
        'scores (to 1e-5: test_spans_in_several_batches_give_the_cells_of_one_batch runs both); time, '
        'not numbers',
    ('analysis/recall.py',
     'held.update(dict.fromkeys(batches[-1][1], which[-1] + 1))',
     'held.update(dict.fromkeys(batches[-1][1], which[-1] - 1))'):
        "held[c] is the end of the batch before, always below this batch's end, so whether a cell "
        'joins a batch is decided by before[c] alone, with +1 or -1',
    ('analysis/recall_inputs.py', 'if count * s > room // 2:',
     'if count * s > room / 2:'):
        'count * s is an integer, and an integer exceeds room // 2 exactly where it exceeds room / 2',
    ('analysis/recall_inputs.py',
     'rng, out = np.random.default_rng([seed, 2, L]), []',
     'rng, out = np.random.default_rng([seed, 3, L]), []'):
        'another stream of the same seed draws other fillers from the same uniform law: a different '
        'sample, not a different method, and no test can prefer one stream to another (each JSON records '
        'the fillers it used)',
    ('analysis/recall_inputs.py',
     'return np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)',
     'return np.asarray(a, ), np.asarray(b, dtype=np.int64)'):
        'a random span is a list of Python ints, which numpy makes int64 here, and recall_pair writes it '
        'into an int64 row either way',
    ('analysis/recall_report.py',
     'fig, axes = plt().subplots(n_rows, cols, figsize=(3.6 * cols, 2.8 * n_rows), squeeze=False, '
     "layout='constrained')",
     "fig, axes = plt().subplots(n_rows, cols, figsize=None, squeeze=False, layout='constrained')"):
        "the PNG's size or layout: no number changes",
    ('analysis/recall_report.py',
     'fig, axes = plt().subplots(n_rows, cols, figsize=(3.6 * cols, 2.8 * n_rows), squeeze=False, '
     "layout='constrained')",
     'fig, axes = plt().subplots(n_rows, cols, figsize=(3.6 * cols, 2.8 * n_rows), squeeze=False, )'):
        "the PNG's size or layout: no number changes",
    ('analysis/recall_report.py',
     'fig, axes = plt().subplots(n_rows, cols, figsize=(3.6 * cols, 2.8 * n_rows), squeeze=False, '
     "layout='constrained')",
     'fig, axes = plt().subplots(n_rows, cols, figsize=(4.6 * cols, 2.8 * n_rows), squeeze=False, '
     "layout='constrained')"):
        "the PNG's size or layout: no number changes",
    ('analysis/recall_report.py',
     "ax.axis('on')",
     'ax.axis(None)'):
        "the PNG's panel frame: no number changes",
    ('analysis/recall_report.py',
     "ax.axhline(0, color='gray', lw=0.5)",
     "ax.axhline(0, color='gray', lw=1.5)"):
        "the PNG's zero line drawn thicker: no number changes",
    ('analysis/recall_report.py',
     'ax.set_title(f"{group} [{variant}]: {kind}", fontsize=7)',
     'ax.set_title(None, fontsize=7)'):
        "the PNG's panel titles left out: no number changes (recall.md names every row)",
    ('analysis/recall_report.py',
     "ax.set_ylabel('benefit (nats/token)', fontsize=7)",
     "ax.set_ylabel('benefit (nats/token)', fontsize=None)"):
        "the PNG's axis label in matplotlib's default size: no number changes",
    ('analysis/recall_report.py',
     'ax.legend(fontsize=6)',
     'ax.legend(fontsize=7)'):
        "the PNG's legend a point larger: no number changes",
    ('analysis/ruler.py',
     'f"{row[\'seconds_per_sample\']:.1f} s ({row[\'cpu_seconds_per_sample\']:.1f} CPU s) a sample", flush=True)',
     'f"{row[\'seconds_per_sample\']:.1f} s ({row[\'cpu_seconds_per_sample\']:.1f} CPU s) a sample", flush=False)'):
        "flush only decides when the cell's line leaves a buffer: the same text and numbers",
    ('lexgpt/ruler_tasks.py',
     "with open(path, encoding='utf-8') as f:",
     'with open(path, encoding=None) as f:'):
        "open's default is the locale's encoding, UTF-8 on Linux (Python's UTF-8 mode under the C locale too): "
        "the same rows; only a Windows machine would read otherwise",
    ('lexgpt/ruler_tasks.py',
     "with open(path, encoding='utf-8') as f:",
     'with open(path, ) as f:'):
        "open's default is the locale's encoding, UTF-8 on Linux (Python's UTF-8 mode under the C locale too): "
        "the same rows; only a Windows machine would read otherwise",
    ('analysis/thesis.py',
     'if (ours > 0) == (th > 0) and 100 * abs(ours) > 3 * abs(th):  # a sign alone hides a 30x gap',
     'if (ours > 0) == (th > 0) and 100 * abs(ours) >= 3 * abs(th):  # a sign alone hides a 30x gap'):
        "differs only where our gap is exactly 3x the thesis' in floating point (a measured ratio "
        "of step times): the note's rule, not a number",
    ('analysis/thesis.py',
     "ax.set_title(title if table else f'{title}: no data yet', fontsize=9), ax.grid(alpha=0.3, which='both')",
     "ax.set_title(title if table else f'{title}: no data yet', fontsize=9), ax.grid(alpha=0.3, )"):
        "the x axis' minor ticks are removed (NullLocator) and a linear y axis has none: the same grid lines",
    ('analysis/receptive_field.py',
     'f"share of the last L_tr tokens {recent:.3f} ({meter.seconds:.1f} s)", flush=True)',
     'f"share of the last L_tr tokens {recent:.3f} ({meter.seconds:.1f} s)", )'):
        "flush only decides when the row's line leaves a buffer: the same text and numbers",
    ('analysis/receptive_field.py',
     'fig, ax = plt().subplots(figsize=(8, 4.5))',
     'fig, ax = plt().subplots(figsize=(8, 5.5))'):
        'the PNG an inch taller: no number changes',
    ('analysis/passkey.py',
     'fig, axes = plt().subplots(2, n_panels, figsize=(3.4 * n_panels + 1.5, 5.6), '
     "squeeze=False, layout='constrained')",
     'fig, axes = plt().subplots(2, n_panels, figsize=(3.4 * n_panels + 1.5, 5.6), squeeze=False, layout=None)'):
        "matplotlib's default layout in place of the constrained one: where the panels sit in the PNG, no number",
    ('analysis/passkey.py',
     "ax.text(j, i, f'{vals[i, j]:.2f}', ha='center', va='center', fontsize=6, color='w')",
     "ax.text(j, i, f'{vals[i, j]:.2f}', ha='center', va='center', color='w')"):
        'the numbers printed on the heat map at the default font size, not 6: the same text',
    ('analysis/passkey.py',
     "ax.set_ylabel('L_ex / L_tr' if col == 0 else '', fontsize=8)",
     "ax.set_ylabel('L_ex / L_tr' if col == 0 else '', fontsize=9)"):
        'the y label a point larger: no number changes',
    ('analysis/kernels.py',
     "return np.searchsorted(np.sort(np.asarray(effs, dtype=float)), distances, side='right')",
     "return np.searchsorted(np.sort(np.asarray(effs, )), distances, side='right')"):
        'effective_lengths returns a float array (inf where a head never falls below -2): float64 either way',
    ('analysis/kernels.py',
     "ax.plot(d, rel[h], lw=1, label=f'head {h}')",
     "ax.plot(rel[h], lw=1, label=f'head {h}')"):
        'd is np.arange(D + 1), the x that plot gives a lone y: the same line',
    ('analysis/kernels.py',
     'ax2.grid(alpha=0.3)',
     'ax2.grid(alpha=None)'):
        "the head-count panel's grid at full opacity, not 0.3: no number changes",
    ('analysis/kernels.py',
     "fig2.savefig(base + '_effective_length.png', dpi=100)",
     "fig2.savefig(base + '_effective_length.png', )"):
        "savefig's default dpi is the figure's, 100: the same PNG",
    ('analysis/nope.py',
     "threads=0,                  # torch CPU threads (0: torch's default)",
     "threads=1,                  # torch CPU threads (0: torch's default)"):
        "one torch thread in place of torch's default splits the same sums differently: the "
        'committed variances agree to 1e-5 (test_the_committed_variance_check_is_what_the_defaults_compute)',
    ('analysis/nope.py',
     "config = GPTConfig(vocab_size=2, block_size=L, n_layer=n_layer, n_head=H, n_embd=d, pe='none', bias=False)",
     "config = GPTConfig(vocab_size=2, block_size=L, n_layer=n_layer, n_head=H, n_embd=d, pe='none', bias=None)"):
        "GPTConfig's bias defaults to False, and None is as false: no biases either way",
    ('analysis/nope.py',
     "config = GPTConfig(vocab_size=2, block_size=L, n_layer=n_layer, n_head=H, n_embd=d, pe='none', bias=False)",
     "config = GPTConfig(vocab_size=2, block_size=L, n_layer=n_layer, n_head=H, n_embd=d, pe='none', )"):
        "GPTConfig's bias defaults to False, and None is as false: no biases either way",
    ('analysis/nope.py',
     'hooks += [module.register_forward_hook(hook) for module, hook in watch]',
     'hooks = [module.register_forward_hook(hook) for module, hook in watch]'):
        'the wte hook is not removed; each later run of the same model registers its own after it, '
        'whose output wins: the same numbers',
    ('analysis/nope.py',
     'print(f"probe step {step}: loss summed over depths {loss.item():.3f}", flush=True)',
     'print(f"probe step {step}: loss summed over depths {loss.item():.3f}", )'):
        'flush only decides when the line leaves a buffer: the same text',
    ('analysis/nope.py',
     'median = lambda logits: (logits.softmax(-1).cumsum(-1) < 0.5).sum(-1)',
     'median = lambda logits: (logits.softmax(-1).cumsum(+1) < 0.5).sum(-1)'):
        "the probe's logits are [n x L, L]: dimension 1 is the last, the same cumulative sum and count",
    ('analysis/nope.py',
     'median = lambda logits: (logits.softmax(-1).cumsum(-1) < 0.5).sum(-1)',
     'median = lambda logits: (logits.softmax(-1).cumsum(-1) < 0.5).sum(+1)'):
        "the probe's logits are [n x L, L]: dimension 1 is the last, the same cumulative sum and count",
    ('analysis/nope.py',
     "ax1.plot(np.log(m), np.log(lemma), '--', color=line.get_color(), lw=1, label=f'Lemma 2.3 sigma={sigma}')",
     "ax1.plot(np.log(m), np.log(lemma), '--', color=line.get_color(), label=f'Lemma 2.3 sigma={sigma}')"):
        "the lemma's dashed lines at the default width: no number changes",
    ('analysis/nope.py',
     'ax1.legend(fontsize=7)',
     'ax1.legend(fontsize=None)'):
        'the legend at the default font size: no number changes',
    ('analysis/nope.py',
     "ax2.set_title(f'position probe on a frozen random NoPE model (L={PL}; dotted: predict the middle)', fontsize=8)",
     "ax2.set_title(f'position probe on a frozen random NoPE model (L={PL}; dotted: predict the "
     "middle)', fontsize=None)"):
        'the title at the default font size: no number changes',
    ('analysis/recall_page.py',
     'full = max((set(x) for x in done), key=len, default=set())',
     'full = max((set(x) for x in done), key=len, )'):
        "seed_mean_row is called only for a length that some run holds, so its runs' cells are "
        'never all empty: max always has an argument',
    ('analysis/recall_page.py',
     "return read_checkpoint(path, mmap=True)['model_args']",
     "return read_checkpoint(path, mmap=False)['model_args']"):
        'the checkpoint read whole instead of memory-mapped: the same model_args',
    ('analysis/recall_page.py',
     "reach = '' if r['reach'] is None else 'inf' if r['reach'] == math.inf else r['reach']",
     "reach = '' if r['reach'] is None else 'inf' if (r['reach'] == math.inf) and False else r['reach']"):
        "str(math.inf) is 'inf': the same cell",
    ('analysis/recall_page.py',
     "ax.axvline(r['reach'], color='gray', ls='--', lw=1)",
     "ax.axvline(r['reach'], color=None, ls='--', lw=1)"):
        'the reach line in the default colour, not gray: no number changes',
    ('analysis/recall_page.py',
     "ax.axhline(0, color='gray', lw=0.5)",
     "ax.axhline(0, color='gray', )"):
        'the zero line at the default width: no number changes',
    ('analysis/recall_page.py',
     'ax.tick_params(labelsize=5)',
     'ax.tick_params(labelsize=6)'):
        'tick labels a point larger: no number changes',
    ('analysis/recall_page.py',
     "sources=dict(inputs=[p for p, _ in files], erf=[p for p, _ in expand(cfg['erf'], 'erf')],",
     "sources=dict(inputs=[p for p, _ in files], erf=[p for p, _ in expand(cfg['erf'], None)],"):
        "the erf files were expanded and checked under 'erf' when read; this second expansion of "
        'the same list cannot fail, so the name it would give an error is never used',
}
