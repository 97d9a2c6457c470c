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
}
