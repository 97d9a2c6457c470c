"""
The mutation run's survivors that a test kills (tools/mutation.py, #75) in the recall probe (analysis/recall*.py),
RULER's command (analysis/ruler.py) and the thesis page (analysis/thesis.py), as tools/mutation_killed_since.py holds
those of model.py and lexgpt/ and tools/mutation_killed_since_chapters.py those of the other analyses: (file, the
line before, the line after) -> the test, each run on its own mutant by `python -m tools.mutation --annotate=True`.
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
     "ax.set(ylim=(-3, 103), title=panel, ylabel='score' if panel == next(iter(panels)) else '')",
     "ax.set(title=panel, ylabel='score' if panel == next(iter(panels)) else '')"):
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
