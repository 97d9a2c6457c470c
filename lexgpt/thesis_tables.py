"""
The thesis' own numbers (T.-C. Chi, "Toward Length-Extrapolatable Transformers", PhD thesis, CMU-LTI-24-005, 2024)
that analysis/thesis.py sets beside ours, copied as printed with their marks, each with the table, page and rows it
stands in (pages as the thesis' list of tables gives them); the sentences its verdicts test, by section, page and
paragraph; and what each of thesis.py's sections holds.
"""
L_EX = (512, 1024, 2048, 4096, 8192)  # the thesis' rows at 1-16 times its L_tr = 512


def cite(table, *rows):
    """Where numbers of `table` stand: its number, page, block and the L_ex of the rows given by index (all: none)."""
    at = ', '.join(str(table['rows'][i]) for i in rows) if rows else f"{table['rows'][0]}-{table['rows'][-1]}"
    return f"Table {table['table']} (p. {table['page']}), {table['block']}, L_ex {at}"


# The thesis' numbers on GitHub (code: the nearest of its corpora to ours) at L_ex = 512 ... 8192, as printed with
# their marks. Table 3.3: † log better.
T33 = dict(table='3.3', page=29, block='GitHub', rows=L_EX, cols=dict(
    kerple_log=['3.40 ± 0.20', '3.04 ± 0.14', '2.86 ± 0.10', '2.74 ± 0.05', '2.71 ± 0.05'],
    kerple_power=['3.42 ± 0.20', '3.07 ± 0.16', '2.90 ± 0.08 †', '2.79 ± 0.06', '2.76 ± 0.05'],
    alibi=['3.42 ± 0.21', '3.15 ± 0.17 †', '3.13 ± 0.10 †', '3.04 ± 0.08 †', '3.04 ± 0.03 †'],
    t5=['3.38 ± 0.21', '3.02 ± 0.14', '2.84 ± 0.09', '2.78 ± 0.04 †', '2.95 ± 0.13 †'],
    rope=['3.44 ± 0.20 †', '3.86 ± 0.25 †', '5.94 ± 0.64 †', '11.1 ± 1.55 †', '20.2 ± 2.75 †'],
    sinusoidal=['4 ± 0.2 †', '105 ± 39 †', '1380 ± 404 †', '5217 ± 1118 †', '10081 ± 3583 †']))
# Table 4.3: † Sandwich significantly better, * significantly worse
T43 = dict(table='4.3', page=60, block='GitHub', rows=L_EX, cols=dict(
    sandwich=['2.88 ± 0.12', '2.71 ± 0.09', '2.69 ± 0.11', '2.73 ± 0.12', '2.79 ± 0.15'],
    sandwich_smoothed=['2.88 ± 0.17', '2.70 ± 0.07', '2.74 ± 0.08', '2.78 ± 0.08', '2.83 ± 0.08'],
    alibi=['2.83 ± 0.11 †', '2.97 ± 0.11 †', '3.01 ± 0.10 †', '3.01 ± 0.10 †', '3.01 ± 0.10 †'],
    sinusoidal=['4 †', '8342 †', '9179 †', '11017 †', '11270 †'],
    rope=['2.82 ± 0.11', '3.86 ± 0.25 †', '5.94 ± 0.64 †', '11.1 ± 1.55 †', '20.2 ± 2.75 †'],
    kerple_log=['2.81 ± 0.14 *', '2.67 ± 0.10 *', '2.65 ± 0.10 *', '2.70 ± 0.09', '2.75 ± 0.08'],
    t5=['2.76 ± 0.14 *', '2.61 ± 0.08 *', '2.65 ± 0.05', '2.91 ± 0.12', '3.68 ± 0.50 †']))
# Table 4.5: windowed inference, w = 2048 = 4 L_tr, at L_ex = 4096, 8192, 16384 (8, 16, 32 L_tr); ours w = 4 x 256
W45 = 1024
T45 = dict(table='4.5', page=64, block='GitHub', rows=(4096, 8192, 16384),
           cols=dict(sandwich=[2.79, 2.81, 2.81], alibi=[3.01, 3.01, 3.01]))
# Table 3.4 (s/step), and the percentages the text draws from it (KERPLE-log faster by ...; negative: slower), each
# with the key of its sentence in SAID
T34 = dict(table='3.4', page=29, block='GitHub', rows=('sec/step',),
           sec=dict(kerple_log=0.307, kerple_power=0.321, alibi=0.302, t5=0.340, rope=0.332, sinusoidal=0.298),
           said=dict(kerple_power=(4.4, 'log_power'), t5=(9.7, 'log_t5'), alibi=(-1.6, 'log_prior'),
                     rope=(7.5, 'log_prior'), sinusoidal=(-3.0, 'log_prior')))
# Table 6.1, Max / Avg over 3 seeds: the task's row as printed, RNN, Transformer, RegularGPT C=2
T61 = dict(table='6.1', page=97, rows={t: (row, *cells.split(', ')) for t, row, cells in (
    ('even_pairs', 'Even Pairs', '100.0 / 100.0, 99.7 / 73.2, 100.0 / 89.3'),
    ('modular_arithmetic', 'Modular Arithmetic', '100.0 / 100.0, 21.9 / 20.3, 96.4 / 82.6'),
    ('parity_check', 'Parity Check', '100.0 / 98.9, 52.3 / 50.1, 100.0 / 100.0'),
    ('cycle_navigation', 'Cycle Navigation', '100.0 / 100.0, 21.7 / 20.6, 100.0 / 100.0'),
    ('D_2', 'D_2', '100.0 / 100.0, 100.0 / 80.1, 100.0 / 100.0'),
    ('D_3', 'D_3', '100.0 / 100.0, 100.0 / 77.8, 100.0 / 99.7'),
    ('D_4', 'D_4', '100.0 / 100.0, 100.0 / 82.6, 100.0 / 98.7'),
    ('D_12', 'D_{12}', '100.0 / 100.0, 100.0 / 80.3, 100.0 / 99.8'),
    ('tomita_3', 'Tomita 3', '100.0 / 100.0, 100.0 / 94.4, 100.0 / 99.7'),
    ('tomita_4', 'Tomita 4', '100.0 / 100.0, 100.0 / 70.0, 100.0 / 99.8'),
    ('tomita_5', 'Tomita 5', '100.0 / 100.0, 74.5 / 74.5, 100.0 / 99.8'),
    ('tomita_6', 'Tomita 6', '100.0 / 100.0, 50.0 / 50.0, 100.0 / 98.5'))})
# Table 6.4 (GitHub; last tokens of 1000 chunks, 3 seeds): KERPLE, T5, ALiBi and RegularGPT C/K = 128/6 and 64/6
# under the names of our runs with the same C / L_tr (ours: 64/2 and 32/2 at L_tr = 256); 128/12 and 256/6 beside them
T64 = dict(table='6.4', page=100, block='GitHub', rows=L_EX, cols=dict(
    kerple_log=[2.66, 2.61, 2.61, 2.67, 2.70], t5=[2.59, 2.53, 2.55, 2.78, 3.29], alibi=[2.68, 2.88, 2.94, 2.94, 2.94],
    regular64=[3.63, 3.49, 3.50, 3.50, 3.50], regular32=[3.80, 3.76, 3.78, 3.79, 4.14]),
    also={'128/12': [3.22, 3.24, 3.25, 3.26, 3.25], '256/6': [3.17, 3.38, 3.37, 3.38, 3.37],
          '32/6': [3.96, 3.87, 4.37, 4.33, 4.28]})

# The sentences the verdicts test: the section, its first page, and the paragraph that says it
SAID = dict(
    log_power=('3.5.2', 28, "'Logarithmic Variant vs. Power Variant'"),
    log_t5=('3.5.2', 28, "'Logarithmic Variant vs. T5'"),
    log_prior=('3.5.2', 28, "'Logarithmic Variant vs. ALiBi, Rotary, and Sinusoidal'"),
    sandwich_left=('4.6.2', 58, "the paragraph on Table 4.3's left section"),
    sandwich_distant=('4.6.2', 58, "the paragraph on Sandwich's use of distant tokens"),
    regular=('6.4.2', 98, "the paragraph on Table 6.1"),
)


def said(key):
    section, page, where = SAID[key]
    return f"sec. {section} (p. {page}), {where}"


# thesis.py's sections: each one's title, and its protocol in a sentence with the section that defines it
INTRO = {  # each section's title and protocol in a sentence
    't3_3': ("Table 3.3: KERPLE, non-overlapping evaluation", "The test split's first tokens, the same at every "
             "length, cut into non-overlapping segments of L_ex, every token scored (sec. 3.5.2)."),
    't4_3': ("Table 4.3: Sandwich, last-token evaluation", "N segments of L_ex tokens, only the last token of each "
             "scored, after the L_ex - 1 before it: the same tokens at every length (sec. 4.3.4)."),
    't4_5': ("Table 4.5: windowed inference", f"The last-token protocol's tokens, each token seeing the last {W45} "
             f"= 4 L_tr only, as a KV cache that drops what leaves the window does (4.9.2; the thesis' 2048 at its "
             f"L_tr = 512), at 8 and 16 L_tr. Thesis, {cite(T45)}, at 8, 16, 32 L_tr: Sandwich 2.79, 2.81, "
             f"2.81; ALiBi 3.01, 3.01, 3.01."),
    'speed': ("Table 3.4: training seconds per step", "The median step time in each finished run's log, mean over "
              "seeds (two runs share 2 CPU cores beside other work: noisy; quiet-machine figures in "
              "results/bench/train.md), beside the thesis' GPU seconds (Table 3.4, p. 29)."),
    't6_1': ("Table 6.1: regular languages", "Final-answer accuracy at lengths 41-500 (Deletang) and 51-100 "
             "(Bhattamishra), Max / Avg (seeds), from results/regular/table.json. Ours: RegularGPT C=2, a RoPE "
             "Transformer, an LSTM; the thesis' Transformer has Transformer-XL positions."),
    't6_3': ("Tables 6.3/6.4: RegularGPT on natural language", "The last-token protocol of Table 4.3 (the thesis' "
             "own for 6.3/6.4, sec. 6.5), RegularGPT with K = 2 shared blocks (configs/sweep_lm_regular.py) "
             "beside the relative encodings' rows of 4.3. Its depth is K ceil(log_C L_ex): C = 64 keeps the 2 levels "
             "of L_tr to 16 L_tr, as the thesis' C = 128 from 512 to 8192; C = 32 gains a third at 8 L_tr, as the "
             "thesis' C = 64 at 16 L_tr. Thesis rows: GitHub, C/K = 128/6 beside our 64/2, 64/6 beside 32/2; its "
             "other columns: " + '; '.join(f"{k} {', '.join(map(str, v))}" for k, v in T64['also'].items()) + '.'),
}

# The rows of our tables: each encoding's name on the page, and the groups of each table in the thesis' order
NAMES = dict(kerple_log='KERPLE-log', kerple_power='KERPLE-power', alibi='ALiBi', t5='T5', rope='RoPE',
             sinusoidal='Sinusoidal', sandwich='Sandwich', sandwich_smoothed='Smoothed', none='NoPE',
             regular64='RegularGPT 64/2', regular32='RegularGPT 32/2')
# Sandwich is not in Table 3.3 (it came after KERPLE); results.sh scores it under both protocols, so its rows show ours
G33 = ['kerple_log', 'kerple_power', 'alibi', 't5', 'rope', 'sinusoidal', 'sandwich', 'sandwich_smoothed', 'none']
G43 = ['sandwich', 'sandwich_smoothed', 'alibi', 'sinusoidal', 'rope', 'kerple_log', 't5', 'kerple_power', 'none']
G63 = ['regular64', 'regular32', 'kerple_log', 't5', 'alibi']  # configs/sweep_lm_regular.py; the baselines of 4.3
LONG = ['alibi', 'kerple_log', 'sandwich', 't5']  # configs/sweep_lm_long.py
