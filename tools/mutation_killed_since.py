"""
The mutation run's survivors in model.py and lexgpt/ that a test kills (tools/mutation.py, #59 and #75): a test
outside the module's test files, or one added since the run; those of the analyses are in
tools/mutation_killed_since_analyses.py and tools/mutation_killed_since_chapters.py. `python -m tools.mutation
--annotate=True` runs each on its own mutant, and the note stands only where the test fails. The equivalent survivors
are in tools/mutation_equivalent.py.
"""

# survivors of a committed run with the test that kills it: outside the run's test files, or added since (each
# checked by check_killers: the mutant put back in a copy of the tree, the test run, it fails): (file, before, after)
# -> the test
KILLED_SINCE = {
    ('lexgpt/streaming.py', 'raise ConfigError(f"reuse: {cfg[\'reuse\']} is not a stream JSON of extrapolate.py '
     '(protocol=stream, rows with "\n                          f"ckpt, row, iters)")', 'raise ConfigError(None)'):
        'tests/test_stream.py::test_extrapolate_stream_bad_settings_are_one_line',
    ('lexgpt/streaming.py', 'raise ConfigError(f"stream_rows={\',\'.join(cfg[\'stream_rows\'])}; allowed: '
     '{\', \'.join(STREAM_ROWS)}")', 'raise ConfigError(f"stream_rows={\',\'.join(cfg[\'stream_rows\'])}; '
     'allowed: {\', \'.join(None)}")'):
        'tests/test_stream.py::test_extrapolate_stream_bad_settings_are_one_line',
    ('lexgpt/streaming.py', "settings = dict(split=cfg['split'], tokens=cfg['tokens'], n_starting=cfg['n_starting'],",
     "settings = dict(split=None, tokens=cfg['tokens'], n_starting=cfg['n_starting'],"):
        'tests/test_stream.py::test_extrapolate_stream_rows_equal_full_forwards_per_bucket',
    ('lexgpt/streaming.py', "ends = [f'{e / 1e6:g}M' if e >= 10 ** 6 else f'{e // 1000}k' if e >= 1000 else str(e) "
     "for e in edges[1:]]", "ends = [f'{e / 1e6:g}M' if e >= 10 ** 6 else f'{e // 1000}k' if e >= 1000 else str(e) "
     "for e in edges[2:]]"):
        'tests/test_stream.py::test_extrapolate_stream_rows_equal_full_forwards_per_bucket',
    ('model.py', 'r = self.r[layer % self.config.thickness][:, i.clamp(max=C - 1)]',
     'r = self.r[layer % self.config.thickness][:, i.clamp(max=C - 2)]'):
        'tests/test_regular.py::test_bias_is_eq_6_1',
    ('model.py', 'self.k_norm = norm(config, self.hd) if config.qk_norm else None',
     'self.k_norm = norm(config, self.hd) if (config.qk_norm) and False else None'):
        'tests/test_gemma3.py::test_logits_equal_transformers',
    ('model.py', 'q, k = self.q_norm(q), self.k_norm(k)', 'q, k = self.q_norm(None), self.k_norm(k)'):
        'tests/test_gemma3.py::test_logits_equal_transformers',
    ('model.py', 'q, k, v = self.project(x, pe, layer, pos, rotate_keys=cache is None or not cache.relative)',
     'q, k, v = self.project(x, pe, layer, pos, )'):
        'tests/test_stream.py::test_stream_equals_full_forward_under_lambda_mask',
    ('model.py', 'hidden = config.mlp_hidden or 4 * config.n_embd', 'hidden = config.mlp_hidden and 4 * config.n_embd'):
        'tests/test_model.py::test_the_mlp_is_4_n_embd_wide_unless_mlp_hidden_says_otherwise',
    ('model.py', 'while C ** L < T:  # integer arithmetic: math.log would misround exact powers such as log_3(243)',
     'while C ** L <= T:  # integer arithmetic: math.log would misround exact powers such as log_3(243)'):
        'tests/test_regular.py::test_n_levels_is_ceil_log',
    ('model.py', "super().__init__(GPTConfig(**{**vars(config), 'n_layer': config.thickness}))",
     "super().__init__(GPTConfig(**{**vars(None), 'n_layer': config.thickness}))"):
        'tests/test_regular.py::test_construction_and_errors',
    ('model.py', 'return self.config.thickness * n_levels(T, self.config.chunk_size)',
     'return self.config.thickness * n_levels(self.config.chunk_size)'):
        'tests/test_regular.py::test_depth_adapts_with_length_and_weights_are_shared',
    ('model.py', "if impl != 'plain' and (o.key_window or o.ceiling or o.topk):",
     "if impl != 'plain' or (o.key_window or o.ceiling or o.topk):"):
        'tests/test_regular.py::test_three_implementations_agree',
    ('lexgpt/routes.py', 'enable_gqa=k.size(1) != q.size(1))', 'enable_gqa=k.size(2) != q.size(1))'):
        'tests/test_routes.py::test_grouped_keys_and_values_in_every_route',  # its T = H = 4 case, added for it
    ('lexgpt/routes.py', "tables = ('bias' in pe.kinds and slope is None) or 'weight' in pe.kinds",
     "tables = ('bias' in pe.kinds and slope is not None) or 'weight' in pe.kinds"):
        'tests/test_routes.py::test_flex_route_decoding_equals_the_reference_on_unit_scale_inputs',  # its kerple_log
    ('lexgpt/routes.py', 'and q.size(0) * q.size(1) * q.size(2) * k.size(2) > 16 * o.block_elems)',
     'and q.size(0) / q.size(1) * q.size(2) * k.size(2) > 16 * o.block_elems)'):
        'tests/test_receptive_field.py::test_the_explicit_route_reruns_its_query_blocks_u'
        'nder_a_gradient_past_16_blocks',
    ('lexgpt/routes.py', 'return torch.cat([checkpoint(one, rows, keys, q, k, v, use_reentrant=False) if rerun else '
     'one(rows, keys, q, k, v)', 'return torch.cat([checkpoint(one, rows, keys, k, v, use_reentrant=False) if rerun '
     'else one(rows, keys, q, k, v)'):
        'tests/test_receptive_field.py::test_the_explicit_route_reruns_its_query_blocks_u'
        'nder_a_gradient_past_16_blocks',
    ('lexgpt/evaluation.py', "return getattr(model, 'pretrained_info', {}).get('bos') if on else None",
     "return getattr(model, 'pretrained_info', {}).get(None) if on else None"):
        'tests/test_gemma3.py::test_a_tiny_gemma3_folder_is_scored_with_its_tokenizers_bos_as_transformers_scores_it',
    ('lexgpt/evaluation.py', "if 'split' in cfg:", "if 'split' not in cfg:"):
        'tests/test_bad_inputs.py::test_a_bad_split_is_refused_before_any_model_loads',
    ('lexgpt/evaluation.py', "+ ('1,2,4' if key == 'lengths' else '4'))",
     "+ ('1,2,4' if (key == 'lengths') and False else '4'))"):
        'tests/test_bad_inputs.py::test_check_settings_names_the_bad_value_and_the_allowed_ones',
    ('lexgpt/evaluation.py', "if cfg.get('rope_scaling', '') not in SCALINGS or cfg.get('rope_scale', 1.0) < 1:",
     "if cfg.get('rope_scaling', '') not in SCALINGS or cfg.get(None, 1.0) < 1:"):
        'tests/test_bad_inputs.py::test_check_settings_names_the_bad_value_and_the_allowed_ones',
    ('lexgpt/evaluation.py', "if 'attn_temperature' in cfg:", "if 'attn_temperature' not in cfg:"):
        'tests/test_bad_inputs.py::test_check_settings_names_the_bad_value_and_the_allowed_ones',
    ('lexgpt/corpus.py', "return data_dir or os.path.join(ROOT, 'data', dataset)",
     "return data_dir or os.path.join(ROOT, None, dataset)"):
        'tests/test_data.py::test_a_dataset_is_read_from_data_slash_its_name_unless_data_dir_says',
    ('lexgpt/corpus.py', "expected = load_meta(folder).get('tokens', {}).get(split)",
     "expected = load_meta(folder).get('tokens', ).get(split)"):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', 'if expected is not None and expected != n:',
     'if expected is None and expected != n:'):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', "tokens = np.memmap(path, dtype=meta.get('dtype', 'uint16'), mode='r')",
     "tokens = np.memmap(path, dtype=meta.get(None, 'uint16'), mode='r')"):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', "n_docs = meta.get('docs', {}).get(split)",
     'n_docs = None'):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', "n_docs = meta.get('docs', {}).get(split)",
     'n_docs = meta.get(None, {}).get(split)'):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', 'if starts is not None and'
     ' (len(starts) == 0 or starts[0] != 0 or (np.diff(starts) <= 0).any()',
     'if starts is not None and'
     ' (len(starts) == 0 or starts[0] != 0 and (np.diff(starts) <= 0).any()'):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', 'if starts is not None and'
     ' (len(starts) == 0 or starts[0] != 0 or (np.diff(starts) <= 0).any()',
     'if starts is not None and'
     ' (len(starts) == 0 and starts[0] != 0 or (np.diff(starts) <= 0).any()'):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', 'or starts[-1] >= len(tokens) or n_docs not in (None, len(starts))):',
     'or starts[-1] > len(tokens) or n_docs not in (None, len(starts))):'):
        'tests/test_data.py::test_a_split_is_read_as_its_meta_says_and_refused_where_they_disagree',
    ('lexgpt/corpus.py', 'starts = np.asarray(docs, dtype=np.int64)', 'starts = np.asarray(None, dtype=np.int64)'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'return starts, np.append(starts[1:] - 1, n_tokens)',
     'return starts, np.append(starts[1:] + 1, n_tokens)'):
        'tests/test_data.py::test_document_bounds_exclude_the_eot_that_ends_each_document',
    ('lexgpt/corpus.py', 'starts, ends = document_bounds(split.docs, len(split.tokens))', 'starts, ends = None'):
        'tests/test_data.py::test_document_bounds_exclude_the_eot_that_ends_each_document',
    ('lexgpt/corpus.py', 'starts, ends = document_bounds(split.docs, len(split.tokens))',
     'starts, ends = document_bounds(None, len(split.tokens))'):
        'tests/test_data.py::test_document_bounds_exclude_the_eot_that_ends_each_document',
    ('lexgpt/corpus.py', 'return np.clip(ends - starts - context, 0, None)  # valid e: start + context .. end - 1',
     'return np.clip(ends - starts - context, 1, None)  # valid e: start + context .. end - 1'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'most = int(end_room(split, context).sum())', 'most = int(None)'):
        'tests/test_extrapolate.py::test_n_equal_to_the_most_the_split_holds_is_scored_and_one_more_refused[argv0-292]',
    ('lexgpt/corpus.py', 'if total == 0:', 'if total != 0:'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'take = min(n, total)', 'take = min(n, )'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'pick = np.sort(np.random.default_rng(seed).choice(total, size=take, replace=False))',
     'pick = np.sort(np.random.default_rng(seed).choice(None, size=take, replace=False))'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'cum = np.cumsum(room)', 'cum = None'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', "doc = np.searchsorted(cum, pick, side='right')", "doc = np.searchsorted(cum, side='right')"):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'starts = document_bounds(split.docs, len(split.tokens))[0]',
     'starts = document_bounds(split.docs, len(split.tokens))[1]'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'docs_long_enough=int((room > 0).sum()), docs_too_short=int((room == 0).sum()),'
     ' positions=total)',
     'docs_long_enough=int((room > 0).sum()), docs_too_shortXX=int((room == 0).sum()), positions=total)'):
        'tests/test_extrapolate.py::test_draw_ends_keeps_every_context_inside_one_document',
    ('lexgpt/corpus.py', 'info = dict(context=int(context), n_requested=int(n), n_drawn=int(take),'
     ' docs_used=int(len(np.unique(doc))),',
     'info = dict(context=int(context), n_requested=None, n_drawn=int(take), docs_used=int(len(np.unique(doc))),'):
        'tests/test_data.py::test_draw_ends_reports_what_was_asked_and_what_was_drawn',
    ('lexgpt/corpus.py', 'docs_long_enough=int((room > 0).sum()), '
     'docs_too_short=int((room == 0).sum()), positions=total)',
     'docs_long_enough=int((room > 0).sum()), docs_too_short=None, positions=total)'):
        'tests/test_data.py::test_draw_ends_reports_what_was_asked_and_what_was_drawn',
    ('lexgpt/corpus.py', 'docs_long_enough=int((room > 0).sum()), '
     'docs_too_short=int((room == 0).sum()), positions=total)',
     'docs_long_enough=int(None), docs_too_short=int((room == 0).sum()), positions=total)'):
        'tests/test_data.py::test_draw_ends_reports_what_was_asked_and_what_was_drawn',
    ('lexgpt/corpus.py', 'docs_long_enough=int((room > 0).sum()), '
     'docs_too_short=int((room == 0).sum()), positions=total)',
     'docs_long_enough=int((room > 0).sum()), docs_too_short=int((room == 1).sum()), positions=total)'):
        'tests/test_data.py::test_draw_ends_reports_what_was_asked_and_what_was_drawn',
    ('lexgpt/corpus.py', 'info = dict(context=int(context), n_requested=int(n), n_drawn=int(take), '
     'docs_used=int(len(np.unique(doc))),',
     'info = dict(context=int(context), n_requested=int(n), docs_used=int(len(np.unique(doc))),'):
        'tests/test_data.py::test_draw_ends_reports_what_was_asked_and_what_was_drawn',
    ('lexgpt/corpus.py', 'info = dict(context=int(context), n_requested=int(n), n_drawn=int(take), '
     'docs_used=int(len(np.unique(doc))),',
     'info = dict(context=int(context), n_requested=int(None), n_drawn=int(take), '
     'docs_used=int(len(np.unique(doc))),'):
        'tests/test_data.py::test_draw_ends_reports_what_was_asked_and_what_was_drawn',
    ('lexgpt/corpus.py', 'ix = np.asarray(starts)[:, None] + np.arange(L + 1)',
     'ix = np.asarray(starts)[:, None] + np.arange(L + 2)'):
        'tests/test_data.py::test_slices_are_inputs_and_their_next_tokens',
    ('lexgpt/resume.py', 'raise ConfigError(f"reuse={path!r} does not exist: give a JSON that this script wrote")',
     'raise ConfigError(None)'):
        'tests/test_resume.py::test_previous_names_a_missing_file_and_takes_rows_of_the_same_iteration',
    ('lexgpt/resume.py', 'made = self.settings(defaults)',
     'made = self.settings(None)'):
        'tests/test_resume.py::test_previous_names_a_missing_file_and_takes_rows_of_the_same_iteration',
    ('lexgpt/resume.py', "if row is None or (isinstance(row, dict) and row.get('iters', iters) != iters):",
     "if row is None or (isinstance(row, dict) and row.get('iters', None) != iters):"):
        'tests/test_resume.py::test_previous_names_a_missing_file_and_takes_rows_of_the_same_iteration',
    ('lexgpt/resume.py', "if row is None or (isinstance(row, dict) and row.get('iters', iters) != iters):",
     "if row is None or (isinstance(row, dict) and row.get('iters', ) != iters):"):
        'tests/test_resume.py::test_previous_names_a_missing_file_and_takes_rows_of_the_same_iteration',
    ('lexgpt/resume.py', 'print(f"{what}: taken from {self.path}")',
     'print(None)'):
        'tests/test_resume.py::test_previous_names_a_missing_file_and_takes_rows_of_the_same_iteration',
    ('lexgpt/resume.py', 'if not names or ckpt_kind(p) in PRETRAINED:',
     'if not names and ckpt_kind(p) in PRETRAINED:'):
        'tests/test_resume.py::test_absent_runs_strip_the_extension_label_and_always_load_a_pretrained_model',
    ('lexgpt/resume.py', 'run = lambda n: n[:len(n) - len(label)] if label else n',
     'run = lambda n: n[:len(n) + len(label)] if label else n'):
        'tests/test_resume.py::test_absent_runs_strip_the_extension_label_and_always_load_a_pretrained_model',
    ('lexgpt/resume.py',
     'print(f"note: {os.path.join(parent, run(n))} is not here: its rows are kept from {self.path}")',
     'print(f"note: {os.path.join(parent, )} is not here: its rows are kept from {self.path}")'):
        'tests/test_resume.py::test_absent_runs_strip_the_extension_label_and_always_load_a_pretrained_model',
    ('lexgpt/resume.py', 'if time.perf_counter() - last[0] >= seconds:',
     'if time.perf_counter() + last[0] >= seconds:'):
        'tests/test_resume.py::test_throttled_saves_once_its_seconds_have_passed_since_the_last_save',
    ('lexgpt/resume.py', 'if time.perf_counter() - last[0] >= seconds:',
     'if time.perf_counter() - last[0] > seconds:'):
        'tests/test_resume.py::test_throttled_saves_once_its_seconds_have_passed_since_the_last_save',
    ('lexgpt/corpus.py', 'block = torch.from_numpy(np.asarray(tokens[ix], dtype=np.int64))',
     'block = torch.from_numpy(np.asarray(tokens[ix], ))'):
        'tests/test_data.py::test_slices_are_inputs_and_their_next_tokens',
    ('lexgpt/corpus.py', 'return with_bos(block[:, :-1], bos), block[:, 1:]',
     'return with_bos(block[:, :-1], None), block[:, 1:]'):
        'tests/test_data.py::test_slices_are_inputs_and_their_next_tokens',
    ('lexgpt/corpus.py', 'return with_bos(block[:, :-1], bos), block[:, 1:]',
     'return with_bos(block[:, :-1], ), block[:, 1:]'):
        'tests/test_data.py::test_slices_are_inputs_and_their_next_tokens',
    ('lexgpt/streaming.py',
     "W=cache_window, stream_step=cfg['stream_step'], n_tokens=at, loss=mean, ppl=math.exp(mean),",
     "W=cache_window, stream_stepXX=cfg['stream_step'], n_tokens=at, loss=mean, ppl=math.exp(mean),"):
        'tests/test_stream.py::test_a_stream_row_records_its_settings_and_speed_and_says_its_perplexity',
    ('lexgpt/streaming.py',
     'out = dict(ckpt=r.name, group=r.group, pe=r.pe, L_tr=r.L_tr, iters=r.iters, row=row, label=label, S=S,',
     'out = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, iters=r.iters, row=row, label=label, S=S,'):
        'tests/test_stream.py::test_a_stream_row_records_its_settings_and_speed_and_says_its_perplexity',
    ('lexgpt/streaming.py',
     'ppl_by_bucket=np.exp(loss / n).tolist(), tokens_per_s=at / meter.seconds, tokens_per_cpu_s=at / cpu,',
     'ppl_by_bucket=np.exp(loss / n).tolist(), tokens_per_s=at * meter.seconds, tokens_per_cpu_s=at / cpu,'):
        'tests/test_stream.py::test_a_stream_row_records_its_settings_and_speed_and_says_its_perplexity',
    ('lexgpt/streaming.py',
     'print(f"{r.name:>18} {label:>28}: ppl {fmt_ppl(out[\'ppl\']):>8} over {at} tokens, last bucket "\n'
     '          f"{fmt_ppl(out[\'ppl_by_bucket\'][-1])}, {out[\'tokens_per_s\']:,.0f} tokens/s '
     '({at / cpu:,.0f} per CPU s), "\n'
     '          f"peak RSS {meter.peak_mb:.0f} MB", flush=True)',
     'print(flush=True)'):
        'tests/test_stream.py::test_a_stream_row_records_its_settings_and_speed_and_says_its_perplexity',
    ('lexgpt/streaming.py',
     "isinstance(o, dict) and {'ckpt', 'row', 'iters'} <= set(o) for o in data.get('results', [None])):",
     "isinstance(o, dict) and {'ckpt', 'row', 'iters'} < set(o) for o in data.get('results', [None])):"):
        'tests/test_stream.py::test_a_stream_file_older_than_its_settings_is_read_as_it_meant',
    ('lexgpt/streaming.py',
     "bos = runs_bos(runs, cfg['bos']) if runs else prev.settings().get('bos')",
     "bos = runs_bos(runs, ) if runs else prev.settings().get('bos')"):
        'tests/test_stream.py::test_a_stream_row_records_its_settings_and_speed_and_says_its_perplexity',
    ('lexgpt/streaming.py',
     "prev.check_settings(settings, dict(made, cache_window=made['cache_window'] or None))",
     'prev.check_settings(settings, None)'):
        'tests/test_stream.py::test_a_stream_file_older_than_its_settings_is_read_as_it_meant',
    ('lexgpt/streaming.py',
     "prev.check_settings(settings, dict(made, cache_window=made['cache_window'] or None))",
     "prev.check_settings(settings, dict(cache_window=made['cache_window'] or None))"):
        'tests/test_stream.py::test_a_stream_file_older_than_its_settings_is_read_as_it_meant',
    ('lexgpt/rope_scaling.py',
     'f"{\', \'.join(map(repr, SCALINGS))} with rope_scale >= 1")',
     'f"{\', \'.join(map(repr, ))} with rope_scale >= 1")'):
        'tests/test_rope_scaling.py::test_bad_rope_settings_are_one_line_errors_naming_the_values',
    ('lexgpt/rope_scaling.py',
     'if (min(config.rope_beta_fast, config.rope_beta_slow, config.rope_attn_factor, config.rope_original_len) < 0',
     'if (min(config.rope_beta_fast, config.rope_beta_slow, config.rope_attn_factor, ) < 0'):
        'tests/test_rope_scaling.py::test_bad_rope_settings_are_one_line_errors_naming_the_values',
    ('lexgpt/rope_scaling.py',
     'lo, hi = max(lo, 0), min(hi, dim - 1)',
     'lo, hi = max(lo, 0), min(hi, dim + 1)'):
        'tests/test_rope_scaling.py::test_yarn_caps_its_band_at_the_last_pair_as_transformers_does',
    ('lexgpt/pretrained.py',
     "full = p.get('full_attention') or {**(hf.get('rope_scaling') or {}), 'rope_theta': "
     "hf.get('rope_theta', 1e6)}",
     "full = p.get('full_attention') or {**(hf.get('rope_scaling') or {}), 'rope_theta': "
     "hf.get('rope_theta', 1000001.0)}"):
        'tests/test_gemma3.py::test_config_reading',
    ('lexgpt/pretrained.py',
     "return dict(vocab_size=hf['vocab_size'], n_layer=n, n_head=H, n_kv_head=hf.get('num_key_value_heads') or H,",
     "return dict(vocab_size=hf['vocab_size'], n_layer=n, n_kv_head=hf.get('num_key_value_heads') or H,"):
        'tests/test_gemma3.py::test_logits_equal_transformers[two-heads-one-kv-head-untied-window-3]',
    ('lexgpt/pretrained.py',
     'refuse(f"per-layer RoPE settings ({\', \'.join(p)})", \'supported: one RoPE for all layers\')',
     'refuse(f"per-layer RoPE settings ({\', \'.join(p)})", )'):
        'tests/test_pretrained.py::test_unsupported_features_are_refused_in_one_line',
    ('lexgpt/pretrained.py',
     't.pop(name, None)',
     't.pop(None, None)'):
        'tests/test_pretrained.py::test_a_tied_checkpoint_that_also_saves_its_head_loads_as_tied',
    ('lexgpt/pretrained.py',
     "qkv_bias=False, tie_head=bool(hf.get('tie_word_embeddings', True)), qk_norm=True, post_norm=True,",
     'qkv_bias=False, tie_head=bool(hf.get(None, True)), qk_norm=True, post_norm=True,'):
        'tests/test_gemma3.py::test_logits_equal_transformers[two-heads-one-kv-head-untied-window-3]',
    ('lexgpt/corpus.py',
     'if bos is None:',
     'if bos is not None:'):
        'tests/test_data.py::test_slices_are_inputs_and_their_next_tokens',
    ('lexgpt/gguf_reader.py',
     "tie_word_embeddings='output.weight' not in shapes, bos_token_id=meta.get('tokenizer.ggml.bos_token_id'),",
     "tie_word_embeddings='output.weight' not in shapes, bos_token_id=None,"):
        'tests/test_pretrained.py::test_gguf_metadata_becomes_the_config_llama_cpp_reads',
    ('lexgpt/gguf_reader.py',
     "eos_token_id=meta.get('tokenizer.ggml.eos_token_id'), tokenizer_bos=gguf_bos(meta))",
     'eos_token_id=None, tokenizer_bos=gguf_bos(meta))'):
        'tests/test_pretrained.py::test_gguf_metadata_becomes_the_config_llama_cpp_reads',
    ('lexgpt/gguf_reader.py',
     "rope_theta=g('rope.freq_base', 10000.0), head_dim=g('attention.key_length') or g('embedding_length') // H,",
     "rope_theta=g('rope.freq_base', ), head_dim=g('attention.key_length') or g('embedding_length') // H,"):
        'tests/test_pretrained.py::test_gguf_metadata_becomes_the_config_llama_cpp_reads',
    ('lexgpt/gguf_reader.py',
     "eos_token_id=meta.get('tokenizer.ggml.eos_token_id'), tokenizer_bos=gguf_bos(meta))",
     'eos_token_id=meta.get(None), tokenizer_bos=gguf_bos(meta))'):
        'tests/test_pretrained.py::test_gguf_metadata_becomes_the_config_llama_cpp_reads',
    ('lexgpt/gguf_reader.py',
     "if (hf['num_hidden_layers'], hf['hidden_size']) == (62, 5376):",
     "if (hf['num_hidden_layers'], hf['hidden_size']) == (63, 5376):"):
        'tests/test_pretrained.py::test_gguf_metadata_becomes_the_config_llama_cpp_reads',
    ('lexgpt/gguf_reader.py',
     "query_pre_attn_scalar=hf['head_dim'], hidden_activation='gelu_pytorch_tanh')",
     "hidden_activation='gelu_pytorch_tanh')"):
        'tests/test_pretrained.py::test_gguf_metadata_becomes_the_config_llama_cpp_reads',
    ('lexgpt/gguf_reader.py',
     "tok = gemma_tokenizer(tokens, tokens[meta.get('tokenizer.ggml.unknown_token_id', 3)])",
     'tok = gemma_tokenizer(tokens, )'):
        'tests/test_gemma3.py::test_gemma3_tokenizer_equals_transformers',
    ('lexgpt/gguf_reader.py',
     'refuse(f"GGUF pre-tokenizer {pre!r}", f"supported: {\', \'.join(GPT2_SPLIT + DIGITS_SPLIT + '
     'tuple(REGEX_SPLIT))}")',
     'refuse(f"GGUF pre-tokenizer {pre!r}", None)'):
        'tests/test_pretrained.py::test_gguf_features_we_lack_are_refused_in_one_line',
    ('lexgpt/gguf_reader.py',
     "tokens = ['\\u2581' * len(t) if ' ' in t and not t.strip() else t for t in tokens]",
     "tokens = ['\\u2581' * len(t) if ' ' in t and t.strip() else t for t in tokens]"):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     'vocab = {t: i for i, t in enumerate(tokens)}',
     'vocab = {t: i for i, t in enumerate(None)}'):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     'merges += [(a, b, rank) for a, b in sorted(pairs, key=lambda p: (vocab[p[0]], vocab[p[1]]))]',
     'merges = [(a, b, rank) for a, b in sorted(pairs, key=lambda p: (vocab[p[0]], vocab[p[1]]))]'):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     'merges += [(a, b, rank) for a, b in sorted(pairs, key=lambda p: (vocab[p[0]], vocab[p[1]]))]',
     'merges += [(a, b, rank) for a, b in sorted(pairs, key=lambda p: (vocab[p[0]], vocab[p[2]]))]'):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     'merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)',
     'merges.sort(key=lambda m: None, reverse=True)'):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     'tok = Tokenizer(models.BPE(vocab, [(a, b) for a, b, _ in merges], fuse_unk=True, '
     'unk_token=unk, byte_fallback=True))',
     'tok = Tokenizer(models.BPE([(a, b) for a, b, _ in merges], fuse_unk=True, unk_token=unk, '
     'byte_fallback=True))'):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     "tok.normalizer = normalizers.Replace(' ', '\\u2581')",
     "tok.normalizer = normalizers.Replace(None, '\\u2581')"):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     "tok.normalizer = normalizers.Replace(' ', '\\u2581')",
     "tok.normalizer = normalizers.Replace(' ', )"):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/gguf_reader.py',
     "tok.decoder = decoders.Sequence([decoders.Replace('\\u2581', ' '), decoders.ByteFallback(), "
     'decoders.Fuse()])',
     "tok.decoder = decoders.Sequence([decoders.Replace(None, ' '), decoders.ByteFallback(), decoders.Fuse()])"):
        'tests/test_pretrained.py::test_gemma_tokenizer_on_a_hand_made_vocabulary',
    ('lexgpt/ruler_tasks.py',
     "'niah_multikey_3': ('niah', dict(NIAH, type_haystack='needle', type_needle_k='uuids', type_needle_v='uuids')),",
     "'niah_multikey_3': ('niah', dict(NIAH, type_haystack=None, type_needle_k='uuids', type_needle_v='uuids')),"):
        'tests/test_ruler.py::test_the_tasks_budgets_and_metrics_are_rulers',
    ('lexgpt/ruler_tasks.py',
     "'cwe': ('common_words_extraction', dict(freq_cw=30, freq_ucw=3, num_cw=10)),",
     "'cwe': ('common_words_extraction', dict(freq_cw=31, freq_ucw=3, num_cw=10)),"):
        'tests/test_ruler.py::test_the_tasks_budgets_and_metrics_are_rulers',
    ('lexgpt/ruler_tasks.py',
     "'niah': dict(tokens_to_generate=128, metric='all', template=(",
     "'niah': dict(tokens_to_generate=129, metric='all', template=("):
        'tests/test_ruler.py::test_the_tasks_budgets_and_metrics_are_rulers',
    ('lexgpt/ruler_tasks.py',
     "'qa': dict(tokens_to_generate=32, metric='part'),",
     "'qa': dict(tokens_to_generate=33, metric='part'),"):
        'tests/test_ruler.py::test_the_tasks_budgets_and_metrics_are_rulers',
    ('lexgpt/ruler_tasks.py',
     "keys = [draw(a['type_needle_k'], rng) for _ in range(k)]",
     'keys = [draw(None, rng) for _ in range(k)]'):
        'tests/test_ruler.py::test_needles_and_distractors_have_the_key_and_value_types_of_their_task',
    ('lexgpt/ruler_tasks.py',
     "units = [NOISE] * n if a['type_haystack'] == 'noise' else [NEEDLE.format(",
     "units = [NOISE] * n if (a['type_haystack'] == 'noise') or True else [NEEDLE.format("):
        'tests/test_ruler.py::test_needles_and_distractors_have_the_key_and_value_types_of_their_task',
    ('lexgpt/ruler_tasks.py',
     "type_needle_v=tv, key=draw(a['type_needle_k'], hay), value=draw(tv, hay)) for _ in range(n)]",
     "type_needle_v=tv, key=draw(a['type_needle_k'], hay), value=draw(None, hay)) for _ in range(n)]"):
        'tests/test_ruler.py::test_needles_and_distractors_have_the_key_and_value_types_of_their_task',
    ('lexgpt/ruler_tasks.py',
     'tv = tv[:-1]',
     'tv = tv[:+1]'):
        'tests/test_ruler.py::test_one_needle_one_answer_words_the_question_in_the_singular',
    ('lexgpt/ruler_tasks.py',
     "spec['answer_prefix'].format(num_v=hops + 1, query=value), depths)",
     "spec['answer_prefix'].format(num_v=hops + 1, query=None), depths)"):
        'tests/test_ruler.py::test_variable_tracking_asks_for_its_value_after_an_example_of_three_letter_names',
    ('lexgpt/ruler_tasks.py',
     "icl_names, icl_value, icl_lines = chain(rand('icl'), hops, 3)",
     "icl_names, icl_value, icl_lines = chain(rand('icl'), hops, 4)"):
        'tests/test_ruler.py::test_variable_tracking_asks_for_its_value_after_an_example_of_three_letter_names',
    ('lexgpt/ruler_tasks.py',
     "shot_args, repeats = ((20, 3, 1), (6, 1)) if target < 4096 else ((40, 10, 3), (a['freq_cw'], a['freq_ucw']))",
     "shot_args, repeats = ((20, 3, 1), (6, 1)) if (target < 4096) or True else ((40, 10, 3), "
     "(a['freq_cw'], a['freq_ucw']))"):
        'tests/test_ruler.py::test_common_words_repeat_as_ruler_repeats_them_below_and_from_4096_tokens',
    ('lexgpt/ruler_tasks.py',
     'if size < 4:',
     'if size < 5:'):
        'tests/test_ruler.py::test_frequent_words_need_a_vocabulary_of_four',
    ('lexgpt/ruler_tasks.py',
     'continue',
     'break'):
        'tests/test_ruler.py::test_a_ruler_jsonl_round_trips_and_bad_lines_are_one_line',
    ('lexgpt/ruler_tasks.py',
     'raise ConfigError(f"{path} line {i} is not JSON ({e})") from None',
     'raise ConfigError(None) from None'):
        'tests/test_ruler.py::test_a_ruler_jsonl_round_trips_and_bad_lines_are_one_line',
}
