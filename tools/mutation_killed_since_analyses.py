"""
The mutation run's survivors in analysis/ that a test kills (tools/mutation.py, #75), as
tools/mutation_killed_since.py holds those of model.py and lexgpt/: (file, the line before, the line after) -> the
test, each run on its own mutant by `python -m tools.mutation --annotate=True`.
"""

KILLED_SINCE = {
    ('analysis/recall.py',
     "data_dir='',                # default: data/<the first checkpoint's dataset>",
     "data_dirXX='',                # default: data/<the first checkpoint's dataset>"):
        'tests/test_recall.py::test_main_writes_what_an_independent_scorer_rebuilds',
    ('analysis/recall.py',
     'min_benefit=0.001,          # nats/token: recall counts where the 95% CI lies above it (0: above 0)',
     'min_benefit=1.001,          # nats/token: recall counts where the 95% CI lies above it (0: above 0)'):
        'tests/test_recall.py::test_main_writes_what_an_independent_scorer_rebuilds',
    ('analysis/recall.py',
     'x = torch.from_numpy(probe.inputs(kind, L, d, which))',
     'x = torch.from_numpy(probe.inputs(kind, L, d, None))'):
        'tests/test_recall.py::test_spans_in_several_batches_give_the_cells_of_one_batch',
    ('analysis/recall.py',
     "self.fillers[L] = draw_fillers(self.split, L, self.spans.get('text'), self.cfg['n'], self.s,",
     "self.fillers[L] = draw_fillers(self.split, L, self.spans.get(None), self.cfg['n'], self.s,"):
        'tests/test_recall.py::test_the_fillers_keep_clear_of_each_spans_copies',
    ('analysis/recall.py',
     'print(f"{r.name:>18} {label:>16} L_ex={L} {kind:>6}: benefit by d "\n'
     '                  + \' \'.join(f"{c[\'d\']}:{c[\'benefit\']:.3f}" for c in row if c[\'kind\'] == kind)\n'
     '                  + f"; horizon {v[\'horizon\']}", flush=True)',
     'print(flush=True)'):
        'tests/test_recall.py::test_main_writes_what_an_independent_scorer_rebuilds',
    ('analysis/recall.py',
     "rest.setdefault((row['ckpt'], row['variant']), dict(row, cells=[]))['cells'].append(cell)",
     "rest.setdefault((row['ckpt'], row['variant']), dict(row, ))['cells'].append(cell)"):
        'tests/test_recall.py::test_so_far_carries_each_reused_cell_once_and_leaves_the_file_alone',
    ('analysis/recall.py',
     "if cfg['n'] < 2:",
     "if cfg['n'] <= 2:"):
        'tests/test_recall.py::test_a_models_bos_is_kept_out_of_the_random_spans_and_recorded',
    ('analysis/recall.py',
     "bos = runs_bos(runs, cfg['bos'])",
     'bos = runs_bos(runs, None)'):
        'tests/test_recall.py::test_a_models_bos_is_kept_out_of_the_random_spans_and_recorded',
    ('analysis/recall.py',
     'probe = Probe(cfg, split, split_vocab(split, bos), bos)',
     'probe = Probe(cfg, split, split_vocab(split, None), bos)'):
        'tests/test_recall.py::test_a_models_bos_is_kept_out_of_the_random_spans_and_recorded',
    ('analysis/recall.py',
     "seed=cfg['seed'], bos=bos, min_benefit=cfg['min_benefit'])",
     "seed=None, bos=bos, min_benefit=cfg['min_benefit'])"):
        'tests/test_recall.py::test_main_writes_what_an_independent_scorer_rebuilds',
    ('analysis/recall.py',
     "verdicts = [v for v in (row_verdict([c for c in cells if c['kind'] == k and c['mult'] == mult], r.L_tr)",
     "verdicts = [v for v in (row_verdict([c for c in cells if c['kind'] == k and c['mult'] != mult], r.L_tr)"):
        'tests/test_recall.py::test_main_writes_what_an_independent_scorer_rebuilds',
    ('analysis/recall.py',
     'run(main, DEFAULTS, __doc__)',
     'run(main, __doc__)'):
        'tests/test_recall.py::test_the_command_line_names_a_bad_value_in_one_line',
    ('analysis/recall_inputs.py',
     'raise ValueError(f"S has {s} tokens, S\' {len(S2)}: they must be as long")',
     'raise ValueError(None)'):
        'tests/test_recall.py::test_recall_pair_by_hand',
    ('analysis/recall_inputs.py',
     'raise ValueError(f"d={d} is outside {s}..{L - s - lo}: the copies of {s} tokens must not overlap and must "',
     'raise ValueError(f"d={d} is outside {s}..{L + s - lo}: the copies of {s} tokens must not overlap and must "'):
        'tests/test_recall.py::test_recall_pair_by_hand',
    ('analysis/recall_inputs.py', 'if count * s > room // 2:',
     'if count / s > room // 2:'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_inputs.py',
     'raise ConfigError(f"{split.name} holds fewer than {count} disjoint spans of {s} tokens inside its '
     'documents; "\n                          f"use a smaller n or span")',
     'raise ConfigError(None)'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_inputs.py',
     'if top < 1:',
     'if top <= 1:'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_inputs.py',
     'f = int(rng.integers(0, top))',
     'f = int(rng.integers(1, top))'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_inputs.py',
     'if all(f + L <= a or a + s <= f for a in avoid):',
     'if all(f + L < a or a + s <= f for a in avoid):'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_inputs.py',
     'if all(f + L <= a or a + s <= f for a in avoid):',
     'if all(f + L <= a or a + s < f for a in avoid):'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_inputs.py',
     'raise ConfigError(f"L_ex={L}: found no filler in {split.name} clear of span {i}; use shorter lengths")',
     'raise ConfigError(None)'):
        'tests/test_recall.py::test_too_many_spans_for_the_split_are_refused_by_name',
    ('analysis/recall_report.py',
     "return dict(kind=cells[0]['kind'], mult=cells[0]['mult'], L_ex=cells[0]['L_ex'], horizon=max(sig, "
     'default=0),',
     "return dict(kind=cells[0]['kind'], mult=cells[1]['mult'], L_ex=cells[0]['L_ex'], horizon=max(sig, "
     'default=0),'):
        'tests/test_recall.py::test_the_probe_table_by_hand',
    ('analysis/recall_report.py',
     "if not row or any(c.get('benefit') is None for c in row.values()):",
     "if not row or any(c.get('benefit') is not None for c in row.values()):"):
        'tests/test_recall.py::test_the_probe_table_by_hand',
    ('analysis/recall_report.py',
     'share = \'—\' if v[\'share_beyond_L_tr\'] is None else f"{v[\'share_beyond_L_tr\']:.2f}"',
     'share = None'):
        'tests/test_recall.py::test_the_probe_table_by_hand',
    ('analysis/recall_report.py',
     'lines.append([f"{o[\'ckpt\']} [{o[\'variant\']}]", f\'{mult:g}\'] + [fmt(row[d]) if d in row else \'\'',
     'lines.append([f"{o[\'ckpt\']} [{o[\'variant\']}]", f\'{mult:g}\'] + [fmt(row[d]) if (d in row) '
     "and False else ''"):
        'tests/test_recall.py::test_the_probe_table_by_hand',
    ('analysis/recall_report.py',
     "by_run = [{c['d']: c for c in o['cells'] if c['kind'] == kind and c['mult'] == mult",
     "by_run = [{c['d']: c for c in o['cells'] if c['kind'] == kind or c['mult'] == mult"):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     'if not ds:',
     'if ds:'):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     "sd = np.array([np.std([b[d]['benefit'] for b in by_run], ddof=1) for d in ds])",
     "sd = np.array([np.std([b[d]['benefit'] for b in by_run], ddof=2) for d in ds])"):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     'lo, hi = mean - sd, mean + sd',
     'lo, hi = mean + sd, mean + sd'):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     "ax.plot(ds, mean, 'o-', ms=3, color=color, label=f'{mult:g}x L_tr' + (f' ({len(by_run)} seeds)'",
     "ax.plot(mean, 'o-', ms=3, color=color, label=f'{mult:g}x L_tr' + (f' ({len(by_run)} seeds)'"):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     "ax.plot(ds, mean, 'o-', ms=3, color=color, label=f'{mult:g}x L_tr' + (f' ({len(by_run)} seeds)'",
     "ax.plot(ds, mean, 'o-', ms=3, label=f'{mult:g}x L_tr' + (f' ({len(by_run)} seeds)'"):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     "if len(by_run) > 1 else ''))",
     "if (len(by_run) > 1) and False else ''))"):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     "if len(by_run) > 1 else ''))",
     "if len(by_run) > 2 else ''))"):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     'ax.fill_between(ds, lo, hi, color=color, alpha=0.2)',
     'ax.fill_between(lo, hi, color=color, alpha=0.2)'):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/recall_report.py',
     'ax.fill_between(ds, lo, hi, color=color, alpha=0.2)',
     'ax.fill_between(ds, hi, color=color, alpha=0.2)'):
        'tests/test_recall.py::test_the_figure_plots_each_lengths_own_cells',
    ('analysis/ruler.py',
     "found = next((t['template'] for t in found if t.get('name') == 'default'), None)",
     'found = None'):
        'tests/test_ruler.py::test_a_folder_with_named_chat_templates_gives_its_default_one',
    ('analysis/ruler.py',
     "found = next((t['template'] for t in found if t.get('name') == 'default'), None)",
     "found = next((t['template'] for t in found if t.get(None) == 'default'), None)"):
        'tests/test_ruler.py::test_a_folder_with_named_chat_templates_gives_its_default_one',
    ('analysis/ruler.py',
     "cpu_seconds_per_sample=mean('cpu_seconds'), samples=samples)",
     'cpu_seconds_per_sample=mean(None), samples=samples)'):
        'tests/test_ruler.py::test_a_tiny_llama_runs_the_whole_command_and_resumes',
    ('analysis/ruler.py',
     'with heartbeat(lambda: f"{what}: sample {len(done) + 1} of {len(samples)}"):',
     'with heartbeat(lambda: f"{what}: sample {len(done) + 2} of {len(samples)}"):'):
        'tests/test_ruler.py::test_rulers_own_data_is_scored_as_it_stands',
    ('analysis/ruler.py',
     'save(cell_row(dict(head, partial=True), done + [kept], metric))',
     'save(cell_row(dict(head, partial=False), done + [kept], metric))'):
        'tests/test_ruler.py::test_a_tiny_llama_runs_the_whole_command_and_resumes',
    ('analysis/ruler.py',
     "if not row.get('partial') and row['score'] is not None:",
     "if row.get('partial') and row['score'] is not None:"):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     'effective = [dict(ckpt=k[0], variant=k[1], effective_length=v, share=EFFECTIVE_SHARE)',
     'effective = [dict(ckpt=k[0], variant=k[1], effective_length=v, share=None)'):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     'averages=avgs, effective=effective, **(dict(partial=True) if partial else {}))',
     'averages=avgs, **(dict(partial=True) if partial else {}))'):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     "fig, axes = plt().subplots(1, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False, layout='constrained')",
     "fig, axes = plt().subplots(2, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False, layout='constrained')"):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     'f"{r[\'score\']:.1f} [{r[\'ci95\'][0]:.1f}, {r[\'ci95\'][1]:.1f}] ({r[\'n\']})"',
     'f"{r[\'score\']:.1f} [{r[\'ci95\'][1]:.1f}, {r[\'ci95\'][1]:.1f}] ({r[\'n\']})"'):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     'md += f"### {ckpt} [{variant}], template {mine[0][\'template\']}\\n\\n" + md_table(',
     'md = f"### {ckpt} [{variant}], template {mine[0][\'template\']}\\n\\n" + md_table('):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     "ax.set(xscale='log', xlabel='length / L_tr', ylim=(-3, 103), title=panel)",
     "ax.set(xscale='log', xlabel='length / L_tr', title=panel)"):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     "print('\\n' + md)",
     'print(None)'):
        'tests/test_ruler.py::test_the_report_shows_each_cell_its_averages_and_effective_length',
    ('analysis/ruler.py',
     "bos = runs_bos(runs, cfg['bos'])",
     'bos = runs_bos(runs, )'):
        'tests/test_ruler.py::test_bos_false_sends_the_prompt_without_the_tokenizers_bos',
    ('analysis/ruler.py',
     "prev = Previous(cfg['reuse'], key=cell_key, check=problem)",
     "prev = Previous(cfg['reuse'], key=cell_key, )"):
        'tests/test_ruler.py::test_bad_settings_are_one_line_errors',
    ('analysis/ruler.py',
     'run(main, DEFAULTS, __doc__)',
     'run(main, DEFAULTS, )'):
        'tests/test_config.py::test_every_scripts_help_starts_with_its_docstring',
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
    ('analysis/thesis.py',
     'thesis=f"{th[0].split()[0]} → {th[i].split()[0]} ({cite(T43, 0, i)})",',
     'thesis=f"{th[0].split()[1]} → {th[i].split()[0]} ({cite(T43, 0, i)})",'):
        'tests/test_thesis.py::test_table_43s_claims_name_their_side_and_need_both_cells',
    ('analysis/thesis.py',
     'verdict=verdict(t is not None and b < a, t, alpha)))',
     'verdict=verdict(t is not None and b <= a, t, alpha)))'):
        'tests/test_thesis.py::test_table_43s_claims_name_their_side_and_need_both_cells',
    ('analysis/thesis.py',
     'out.append(dict(claim=f"{NAMES[g]} {\'beats\' if mark == STAR else \'loses to\'} Sandwich at {m:g}x",',
     'out.append(dict(claim=f"{NAMES[g]} {\'beats\' if (mark == STAR) and False else \'loses to\'} '
     'Sandwich at {m:g}x",'):
        'tests/test_thesis.py::test_table_43s_claims_name_their_side_and_need_both_cells',
    ('analysis/thesis.py',
     'verdict=verdict(ok, c if s else None, alpha),',
     'verdict=verdict(ok, c if (s) or True else None, alpha),'):
        'tests/test_thesis.py::test_table_43s_claims_name_their_side_and_need_both_cells',
    ('analysis/thesis.py',
     "ok = all(abs(d) < 0.01 for d, _ in tests) if g == 'alibi' else all(d > 0 for d, _ in tests)",
     "ok = all(abs(d) < 0.01 for d, _ in tests) if (g == 'alibi') and False else all(d > 0 for d, _ in tests)"):
        'tests/test_thesis.py::test_table_45s_alibi_claim_is_within_one_percent_either_way',
    ('analysis/thesis.py',
     "rows = read_json(log_path, 'lm_dir')",
     'rows = read_json(log_path, None)'):
        'tests/test_thesis.py::test_a_log_that_is_not_json_names_lm_dir',
    ('analysis/thesis.py',
     'verdict=verdict((ours > 0) == (th > 0), paired(log, other, alpha), alpha))',
     'verdict=verdict((ours >= 0) == (th > 0), paired(log, other, alpha), alpha))'):
        'tests/test_thesis.py::test_speed_verdict_names_a_gap_far_from_the_thesis',
    ('analysis/thesis.py',
     "both = lambda avg: [t for t, a in avg.items() if {'regulargpt_c2', other} <= set(a)]",
     "both = lambda avg: [t for t, a in avg.items() if {'regulargpt_c2', other} < set(a)]"):
        'tests/test_thesis.py::test_table_61s_verdicts_count_the_tasks_that_have_both_models',
    ('analysis/thesis.py',
     "word = 'holds as often' if n and len(us) / n >= len(th) / 12 else 'holds less often'",
     "word = 'holds as often' if n and len(us) / n > len(th) / 12 else 'holds less often'"):
        'tests/test_thesis.py::test_table_61s_verdicts_count_the_tasks_that_have_both_models',
    ('analysis/thesis.py',
     'thesis=dict(t3_3=T33, t4_3=T43, t4_5=T45, t3_4=T34, t6_1=T61, t6_4=T64))',
     'thesisXX=dict(t3_3=T33, t4_3=T43, t4_5=T45, t3_4=T34, t6_1=T61, t6_4=T64))'):
        'tests/test_thesis.py::test_tables_from_synthetic_jsons',
    ('analysis/thesis.py',
     'thesis=dict(t3_3=T33, t4_3=T43, t4_5=T45, t3_4=T34, t6_1=T61, t6_4=T64))',
     'thesis=dict(t3_3=T33, t4_5=T45, t3_4=T34, t6_1=T61, t6_4=T64))'):
        'tests/test_thesis.py::test_tables_from_synthetic_jsons',
    ('analysis/receptive_field.py',
     "ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')",
     "ckptXX=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')"):
        'tests/test_receptive_field.py::test_main_with_the_windowed_variant_and_a_regular_gpt',
    ('analysis/receptive_field.py',
     "out_dir='out/erf',",
     ''):
        'tests/test_receptive_field.py::test_main_with_the_windowed_variant_and_a_regular_gpt',
    ('analysis/receptive_field.py',
     's=s.round(7).tolist(), c=c.round(6).tolist(), **meter.record(),',
     's=s.round(7).tolist(), **meter.record(),'):
        'tests/test_receptive_field.py::test_main_with_the_windowed_variant_and_a_regular_gpt',
    ('analysis/receptive_field.py',
     "ax.plot(np.arange(1, row['L_ex'] + 1), c, ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}',",
     "ax.plot(c, ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}',"):
        'tests/test_receptive_field.py::test_the_figure_draws_c_from_position_1_a_colour_per_checkp'
        'oint_a_style_per_variant',
    ('analysis/receptive_field.py',
     "ax.plot(np.arange(1, row['L_ex'] + 1), c, ['-', '--', ':', '-.'][vi % 4], color=f'C{ci % 10}',\n"
     '                lw=1.2, label=f"{row[\'ckpt\']} {row[\'variant\']} (ERF {row[\'erf\']})")',
     "ax.plot(np.arange(1, row['L_ex'] + 1), c, ['-', '--', ':', '-.'][vi % 4], lw=1.2, "
     'label=f"{row[\'ckpt\']} {row[\'variant\']} (ERF {row[\'erf\']})")'):
        'tests/test_receptive_field.py::test_the_figure_draws_c_from_position_1_a_colour_per_checkp'
        'oint_a_style_per_variant',
    ('analysis/receptive_field.py',
     "ax.axvline(L_start, color='gray', lw=0.8, ls=':')",
     "ax.axvline(L_start, color='gray', lw=0.8, )"):
        'tests/test_receptive_field.py::test_the_figure_draws_c_from_position_1_a_colour_per_checkp'
        'oint_a_style_per_variant',
    ('analysis/receptive_field.py',
     "if cfg['n'] < 1 or cfg['batch_tokens'] < 1:",
     "if cfg['n'] <= 1 or cfg['batch_tokens'] < 1:"):
        'tests/test_receptive_field.py::test_n_of_one_is_enough_and_an_extension_reaches_the_model',
    ('analysis/receptive_field.py',
     "dtype=cfg['dtype'], **extend)",
     "dtype=cfg['dtype'], )"):
        'tests/test_receptive_field.py::test_n_of_one_is_enough_and_an_extension_reaches_the_model',
    ('analysis/receptive_field.py',
     "settings = dict(bos=bos, n=cfg['n'], seed=cfg['seed'], split=split.name, length=cfg['length'])",
     "settings = dict(bos=bos, n=cfg['n'], seedXX=cfg['seed'], split=split.name, length=cfg['length'])"):
        'tests/test_receptive_field.py::test_a_stopped_run_goes_on_with_reuse_to_the_same_gradient',
    ('analysis/receptive_field.py',
     "settings = dict(bos=bos, n=cfg['n'], seed=cfg['seed'], split=split.name, length=cfg['length'])",
     "settings = dict(bos=bos, n=cfg['n'], seed=None, split=split.name, length=cfg['length'])"):
        'tests/test_receptive_field.py::test_a_stopped_run_goes_on_with_reuse_to_the_same_gradient',
    ('analysis/receptive_field.py',
     "write_outputs(cfg['out_dir'], cfg['name'], dict(partial=True, split=split.name, settings=settings,",
     "write_outputs(cfg['out_dir'], cfg['name'], dict(partial=True, split=None, settings=settings,"):
        'tests/test_receptive_field.py::test_a_stopped_run_goes_on_with_reuse_to_the_same_gradient',
    ('analysis/receptive_field.py',
     "write_outputs(cfg['out_dir'], cfg['name'], dict(split=split.name, settings=settings, results=out), md, fig)",
     "write_outputs(cfg['out_dir'], cfg['name'], dict(split=None, settings=settings, results=out), md, fig)"):
        'tests/test_receptive_field.py::test_a_stopped_run_goes_on_with_reuse_to_the_same_gradient',
    ('analysis/receptive_field.py',
     'run(main, DEFAULTS, __doc__)',
     'run(main, DEFAULTS, )'):
        'tests/test_config.py::test_every_scripts_help_starts_with_its_docstring',
    ('tools/cells.py',
     "rows = data['results'] or [dict(ckpt='', variant='vanilla', cells=[])]",
     "rows = data['results'] or [dict(ckpt='', variant='vanilla', cells=None)]"):
        'tests/test_cells.py::test_a_passkey_file_before_its_first_row_lists_every_depth_not_run',
    ('tools/cells.py',
     "table.append((os.path.basename(path), run_name, label, f'{m:g} L_tr' if m else '',",
     "table.append((os.path.basename(path), run_name, label, f'{m:g} L_tr' if (m) or True else '',"):
        'tests/test_cells.py::test_a_stream_lists_its_commands_rows',
    ('analysis/passkey.py',
     "ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')",
     "ckptXX=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')"):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     "rope_scaling='',            # evaluate with a RoPE extension: pi | ntk | dynamic | yarn | llama3\n"
     '                                # (runs named +<scaling><s>)',
     ''):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     "digit_acc=float(np.mean([x['digit_acc'] for x in res])),",
     ''):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     "mean_rank=float(np.mean([x['rank'] for x in res])), prompt_tokens=len(made[0][0]),",
     'prompt_tokens=len(made[0][0]),'):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     'prev.check_settings(dict(bos=bos), dict(bos=None))',
     'prev.check_settings(dict(bos=None), dict(bos=None))'):
        'tests/test_pretrained_scripts.py::test_passkey_scores_equal_transformers',
    ('analysis/passkey.py',
     "return dict(style=cfg['style'], keys=keys, depths=cfg['depths'], lengths=cfg['lengths'], settings=dict(bos=bos),",
     "return dict(style=cfg['style'], keys=keys, depths=cfg['depths'], lengths=None, settings=dict(bos=bos),"):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     "[[f'{m:g}' + (f' (L_ex={seen[m]})' if seen[m] > round(m * o['L_tr']) else '')]",
     "[[f'{m:g}' + (f' (L_ex={seen[m]})' if seen[m] > round(m / o['L_tr']) else '')]"):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     'fig.colorbar(ims[row], ax=axes[row].tolist(), shrink=0.8, label=what)',
     'fig.colorbar(None, ax=axes[row].tolist(), shrink=0.8, label=what)'):
        'tests/test_passkey.py::test_a_cell_holds_the_means_over_its_keys_and_the_json_its_grid',
    ('analysis/passkey.py',
     'raise ConfigError(f"n={cfg[\'n\']}, digits={cfg[\'digits\']} and batch_tokens={cfg[\'batch_tokens\']} must be "\n'
     '                          f"positive")',
     'raise ConfigError(None)'):
        'tests/test_passkey.py::test_main_scores_every_cell_and_refuses_bad_settings',
    ('analysis/passkey.py',
     "tok = get_tokenizer((load_meta(cfg['data_dir']) if cfg['data_dir'] else runs[0].meta).get('tokenizer', 'bytes'))",
     "tok = get_tokenizer((load_meta(cfg['data_dir']) if (cfg['data_dir']) or True else "
     "runs[0].meta).get('tokenizer', 'bytes'))"):
        'tests/test_pretrained_scripts.py::test_passkey_scores_equal_transformers',
    ('analysis/kernels.py',
     "ckpt=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')",
     "ckptXX=[],                    # checkpoint files, out/<run> folders or globs ('out/lm/*-s0')"):
        'tests/test_kernels.py::test_a_kernel_shared_by_all_layers_counts_once_per_head',
    ('analysis/kernels.py',
     'match = next((t for t in out if same(t[1], b) and same(t[2], w)), None)',
     'match = next((t for t in out if same(t[1], b) and same(None, w)), None)'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     'match = next((t for t in out if same(t[1], b) and same(t[2], w)), None)',
     'match = next((t for t in out if same(t[1], b) and same(t[2], None)), None)'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     "what = 'depth' if masked else 'layer'",
     "what = 'depth' if (masked) and False else 'layer'"):
        'tests/test_kernels.py::test_regular_gpt_shows_its_bias_at_every_depth_by_eq_6_1',
    ('analysis/kernels.py',
     "ax.plot(d, rel[h], lw=1, label=f'head {h}')",
     "ax.plot(d, lw=1, label=f'head {h}')"):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     "ax.plot(d, rel[h], lw=1, label=f'head {h}')",
     'ax.plot(d, rel[h], lw=1, )'):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     'wax.plot(d, w[h], lw=1)',
     'wax.plot(None, w[h], lw=1)'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     "wax.axvline(L_tr, color='gray', lw=0.8, ls=':')",
     "wax.axvline(L_tr, color='gray', lw=0.8, )"):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     "via = ('rotations of q and k' if 'rotary' in kinds else 'the embeddings' if 'absolute' in kinds",
     "via = ('rotations of q and k' if 'rotary' not in kinds else 'the embeddings' if 'absolute' in kinds"):
        'tests/test_kernels.py::test_encodings_without_a_kernel_are_explained',
    ('analysis/kernels.py',
     'check_memory(128 * r.model.n_layers(D + 1) * r.model.config.n_head * (D + 1),',
     'check_memory(128 * r.model.n_layers(D - 1) * r.model.config.n_head * (D + 1),'):
        'tests/test_kernels.py::test_the_memory_check_asks_for_128_bytes_a_layer_head_and_distance',
    ('analysis/kernels.py',
     'f"length={length:g} ({D + 1:,} distances of {r.name})")',
     'f"length={length:g} ({D + 2:,} distances of {r.name})")'):
        'tests/test_kernels.py::test_the_memory_check_asks_for_128_bytes_a_layer_head_and_distance',
    ('analysis/kernels.py',
     "[('d=1', 1), ('L_tr', r.L_tr), ('4L_tr', 4 * r.L_tr), ('16L_tr', 16 * r.L_tr)]},",
     "[('d=1', 1), ('L_tr', r.L_tr), ('4L_tr', 4 * r.L_tr), ('16L_tr', 17 * r.L_tr)]},"):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     'entry.update(weight_at={k: w[:, min(x, D)].round(4).tolist() for k, x in',
     'entry.update(weight_at={k: w[:, min(x, D)].round(None).tolist() for k, x in'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     "[('d=1', 1), ('L_tr', r.L_tr), ('4L_tr', 4 * r.L_tr)]})",
     "[('d=1', 2), ('L_tr', r.L_tr), ('4L_tr', 4 * r.L_tr)]})"):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     'res = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, max_distance=D, tables=entries)',
     'res = dict(ckpt=None, pe=r.pe, L_tr=r.L_tr, max_distance=D, tables=entries)'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     'res = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, max_distance=D, tables=entries)',
     'res = dict(ckpt=r.name, pe=r.pe, L_tr=r.L_tr, tables=entries)'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/kernels.py',
     'return res, dict(d=d, masked=masked, tables=tables, n_layers=n_layers, effs=np.array(effs))',
     'return res, dict(d=d, masked=None, tables=tables, n_layers=n_layers, effs=np.array(effs))'):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     "draw(axes[r0, j], axes[r0 + 1, j] if w is not None else None, m['d'], b, w, m['masked'],",
     "draw(axes[r0, j], axes[r0 + 1, j] if w is not None else None, m['d'], None, w, m['masked'],"):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     "ax2.step(m['d'], head_counts(m['effs'], m['d']), where='post', label=res['ckpt'])",
     "ax2.step(m['d'], head_counts(m['effs'], m['d']), where='post', )"):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     'if not ax.has_data():  # runs with fewer distinct tables than the widest one',
     'if ax.has_data():  # runs with fewer distinct tables than the widest one'):
        'tests/test_kernels.py::test_the_figures_draw_each_head_its_threshold_and_the_head_counts',
    ('analysis/kernels.py',
     "print(f'wrote {base}_effective_length.png')",
     'print(None)'):
        'tests/test_kernels.py::test_the_json_holds_each_kernel_at_its_named_distances',
    ('analysis/temperature.py',
     'rows, total = np.maximum(self.rows, 1), max(self.rows.sum(), 1)',
     'rows, total = np.maximum(self.rows, 1), max(self.rows.sum(), 2)'):
        'tests/test_temperature.py::test_attention_stats_on_a_hand_distribution',
    ('analysis/temperature.py',
     "grid, progress = {}, Progress(f'{r.name} L_ex={L}', len(TAU_GRID), 'temperatures')",
     "grid, progress = {}, Progress(f'{r.name} L_ex={L}', None, 'temperatures')"):
        'tests/test_temperature.py::test_a_model_that_does_not_change_with_length_gets_tau_1',
    ('analysis/temperature.py',
     'for k in range(int(4 * math.log2(max(Ls) / L_tr)) + 1):',
     'for k in range(int(4 * math.log2(max(Ls) / L_tr)) + 2):'):
        'tests/test_temperature.py::test_a_model_that_does_not_change_with_length_gets_tau_1',
    ('analysis/temperature.py',
     's_ex, _ = layer0_closed_form_inputs(model, split.tokens, ends, L, bos)',
     's_ex, _ = layer0_closed_form_inputs(model, split.tokens, ends, L, None)'):
        'tests/test_pretrained_scripts.py::test_temperature_with_grouped_query_attention',
    ('analysis/temperature.py',
     "ax.plot([p['L_ex'] for p in per_len], [p['tau_pmax'] for p in per_len], 'o', color='C0', label='Alg. 1 P_max')",
     "ax.plot([p['L_ex'] for p in per_len], [p['tau_pmax'] for p in per_len], color='C0', label='Alg. 1 P_max')"):
        'tests/test_temperature.py::test_the_figure_draws_the_closed_forms_as_lines_and_algorithm_1_as_marks',
    ('analysis/temperature.py',
     "ax.set(xlabel='L_ex', ylabel='temperature tau', ylim=(0.4, 1.6))  # closed forms outside: assumptions fail",
     "ax.set(xlabel='L_ex', ylabel=None, ylim=(0.4, 1.6))  # closed forms outside: assumptions fail"):
        'tests/test_temperature.py::test_the_figure_draws_the_closed_forms_as_lines_and_algorithm_1_as_marks',
    ('analysis/temperature.py',
     "write_outputs(cfg['out_dir'], cfg['name'], dict(split=split.name, tau_grid=TAU_GRID, rows=cfg['rows'],",
     "write_outputs(cfg['out_dir'], cfg['name'], dict(split=None, tau_grid=TAU_GRID, rows=cfg['rows'],"):
        'tests/test_temperature.py::test_a_model_that_does_not_change_with_length_gets_tau_1',
    ('analysis/temperature.py',
     "write_outputs(cfg['out_dir'], cfg['name'], dict(split=split.name, tau_grid=TAU_GRID, rows=cfg['rows'],",
     "write_outputs(cfg['out_dir'], cfg['name'], dict(tau_grid=TAU_GRID, rows=cfg['rows'],"):
        'tests/test_temperature.py::test_a_model_that_does_not_change_with_length_gets_tau_1',
    ('analysis/nope.py',
     'sigmas=[0.2, 0.02, 0.002],  # weight scales of the variance check (Lemma 2.3 needs d^2 sigma^4 / H << 1)',
     'sigmasXX=[0.2, 0.02, 0.002],  # weight scales of the variance check (Lemma 2.3 needs d^2 sigma^4 / H << 1)'):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     'seed=1337,',
     'seed=1338,'):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     'def nope_probe(d=64, H=4, L=64, sigma=0.02, n_layer=4, steps=1000, n_train=512, '
     'batch_tokens=2048, lr=1e-3, seed=0,',
     'def nope_probe(d=64, H=4, L=64, sigma=0.02, n_layer=4, steps=1000, n_train=512, '
     'batch_tokens=2049, lr=1e-3, seed=0,'):
        'tests/test_nope.py::test_the_probe_trains_as_the_thesis_does_32_sequences_a_step_at_lr_1e_3',
    ('analysis/nope.py',
     "cfg['probe_steps'], cfg['probe_train'], seed=cfg['seed'])",
     "cfg['probe_steps'], seed=cfg['seed'])"):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     "steps=cfg['probe_steps'], mae=mae.round(3).tolist(), mae_mean=mae.mean(1).tolist(),",
     "stepsXX=cfg['probe_steps'], mae=mae.round(3).tolist(), mae_mean=mae.mean(1).tolist(),"):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     "res['probe'] = dict(d=cfg['probe_d'], heads=cfg['probe_heads'], L=cfg['probe_L'], sigma=cfg['probe_sigma'],",
     "res['probe'] = dict(d=cfg['probe_d'], heads=cfg['probe_heads'], L=cfg['probe_L'], sigma=None,"):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     "res['probe'] = dict(d=cfg['probe_d'], heads=cfg['probe_heads'], L=cfg['probe_L'], sigma=cfg['probe_sigma'],",
     "res['probe'] = dict(heads=cfg['probe_heads'], L=cfg['probe_L'], sigma=cfg['probe_sigma'],"):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     "steps=cfg['probe_steps'], mae=mae.round(3).tolist(), mae_mean=mae.mean(1).tolist(),\n"
     '                        **meter.record())',
     "steps=cfg['probe_steps'], mae=mae.round(3).tolist(), **meter.record())"):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     'md_rows.append([sigma, f"{d ** 2 * sigma ** 4 / cfg[\'heads\']:.2e}", f\'{np.median(ratio):.3f}\',',
     'md_rows.append([sigma, f"{d ** 2 / sigma ** 4 / cfg[\'heads\']:.2e}", f\'{np.median(ratio):.3f}\','):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     "ax2.axhline(PL / 4, color='gray', ls=':', lw=0.8)",
     "ax2.axhline(PL / 5, color='gray', ls=':', lw=0.8)"):
        'tests/test_nope.py::test_the_figure_draws_the_lemma_beside_the_simulation_and_the_middle_baseline',
    ('analysis/nope.py',
     "if cfg['threads'] > 0:",
     "if cfg['threads'] > 1:"):
        'tests/test_nope.py::test_main_writes_its_outputs_and_refuses_bad_shapes',
    ('analysis/nope.py',
     'run(main, DEFAULTS, __doc__)',
     'run(main, __doc__)'):
        'tests/test_config.py::test_every_scripts_help_starts_with_its_docstring',
    ('analysis/recall_page.py',
     "erf=[],                     # analysis.receptive_field JSONs (the same checkpoints' ERF; [] : none)",
     "erfXX=[],                     # analysis.receptive_field JSONs (the same checkpoints' ERF; [] : none)"):
        'tests/test_recall_page.py::test_the_tables_cells_by_hand',
    ('analysis/recall_page.py',
     "seeds=len(used), runs=[o['ckpt'] for o in used],\n"
     "                                   seed_horizons=[x['horizon'] for x in own], far=far[-1] if far else None,",
     "seeds=len(used), seed_horizons=[x['horizon'] for x in own], far=far[-1] if far else None,"):
        'tests/test_recall_page.py::test_the_json_and_figure',
    ('analysis/recall_page.py',
     'mine = {k: r for k, r in ppl.items() if k[0] in ckpts and k[1] == variant}',
     'mine = {k: r for k, r in ppl.items() if k[0] in ckpts or k[1] == variant}'):
        'tests/test_recall_page.py::test_the_json_and_figure',
    ('analysis/recall_page.py',
     "out.append(dict(group=e['group'], variant=e['variant'], iters=e['iters'], L_tr=e['L_tr'], runs=ckpts,",
     "out.append(dict(group=e['group'], variant=e['variant'], iters=None, L_tr=e['L_tr'], runs=ckpts,"):
        'tests/test_recall_page.py::test_the_json_and_figure',
    ('analysis/recall_page.py',
     "L_tr = next(r['L_tr'] for k, r in ppl.items() if k[0] == ckpts[0])",
     'L_tr = None'):
        'tests/test_recall_page.py::test_the_json_and_figure',
    ('analysis/recall_page.py',
     "ax.plot(ds, [c['benefit'] for c in v['cells']], style, marker='o', ms=2.5, color=color,",
     "ax.plot([c['benefit'] for c in v['cells']], style, marker='o', ms=2.5, color=color,"):
        'tests/test_recall_page.py::test_the_json_and_figure',
    ('analysis/recall_page.py',
     "ax.set_xlabel('L_ex / L_tr', fontsize=6)",
     'ax.set_xlabel(None, fontsize=6)'):
        'tests/test_recall_page.py::test_the_json_and_figure',
    ('analysis/recall_page.py',
     'rule=dict(flat=f\'ppl({cfg["ppl_at"]:g} L_tr) / ppl(L_tr) <= {PPL_FLAT:g}\', recall=\'horizon > L_tr at the \'',
     'rule=dict(flatXX=f\'ppl({cfg["ppl_at"]:g} L_tr) / ppl(L_tr) <= {PPL_FLAT:g}\', '
     "recall='horizon > L_tr at the '"):
        'tests/test_recall_page.py::test_the_json_and_figure',
}
