"""
The thesis' own numbers (Chi 2024, ../shared/papers/000_29a755e9c96e9e9d.txt) that thesis.py sets beside ours,
copied as printed with their marks and the lines they stand on, and what each of thesis.py's sections holds.
"""

# The thesis' numbers on GitHub (code: the nearest of its corpora to ours) at L_ex = 512 ... 8192, as printed with
# their marks; lines of ../shared/papers/000_29a755e9c96e9e9d.txt. Table 3.3 (columns on line 759): † log better.
T33 = dict(lines=(761, 765), cols=dict(
    kerple_log=['3.40 ± 0.20', '3.04 ± 0.14', '2.86 ± 0.10', '2.74 ± 0.05', '2.71 ± 0.05'],
    kerple_power=['3.42 ± 0.20', '3.07 ± 0.16', '2.90 ± 0.08 †', '2.79 ± 0.06', '2.76 ± 0.05'],
    alibi=['3.42 ± 0.21', '3.15 ± 0.17 †', '3.13 ± 0.10 †', '3.04 ± 0.08 †', '3.04 ± 0.03 †'],
    t5=['3.38 ± 0.21', '3.02 ± 0.14', '2.84 ± 0.09', '2.78 ± 0.04 †', '2.95 ± 0.13 †'],
    rope=['3.44 ± 0.20 †', '3.86 ± 0.25 †', '5.94 ± 0.64 †', '11.1 ± 1.55 †', '20.2 ± 2.75 †'],
    sinusoidal=['4 ± 0.2 †', '105 ± 39 †', '1380 ± 404 †', '5217 ± 1118 †', '10081 ± 3583 †']))
# Table 4.3 (columns on line 1400): † Sandwich significantly better, * significantly worse
T43 = dict(lines=(1401, 1405), cols=dict(
    sandwich=['2.88 ± 0.12', '2.71 ± 0.09', '2.69 ± 0.11', '2.73 ± 0.12', '2.79 ± 0.15'],
    sandwich_smoothed=['2.88 ± 0.17', '2.70 ± 0.07', '2.74 ± 0.08', '2.78 ± 0.08', '2.83 ± 0.08'],
    alibi=['2.83 ± 0.11 †', '2.97 ± 0.11 †', '3.01 ± 0.10 †', '3.01 ± 0.10 †', '3.01 ± 0.10 †'],
    sinusoidal=['4 †', '8342 †', '9179 †', '11017 †', '11270 †'],
    rope=['2.82 ± 0.11', '3.86 ± 0.25 †', '5.94 ± 0.64 †', '11.1 ± 1.55 †', '20.2 ± 2.75 †'],
    kerple_log=['2.81 ± 0.14 *', '2.67 ± 0.10 *', '2.65 ± 0.10 *', '2.70 ± 0.09', '2.75 ± 0.08'],
    t5=['2.76 ± 0.14 *', '2.61 ± 0.08 *', '2.65 ± 0.05', '2.91 ± 0.12', '3.68 ± 0.50 †']))
# Table 4.5: windowed inference, w = 2048 = 4 L_tr, at L_ex = 4096, 8192, 16384 (8, 16, 32 L_tr); ours w = 4 x 256
W45 = 1024
T45 = dict(lines=(1458, 1460), cols=dict(sandwich=[2.79, 2.81, 2.81], alibi=[3.01, 3.01, 3.01]))
# Table 3.4 (s/step), and the percentages the text draws from it (KERPLE-log faster by ...; negative: slower)
T34 = dict(line=781, sec=dict(kerple_log=0.307, kerple_power=0.321, alibi=0.302, t5=0.340, rope=0.332,
                             sinusoidal=0.298),
           said=dict(kerple_power=(4.4, 739), t5=(9.7, 741), alibi=(-1.6, 743), rope=(7.5, 743),
                     sinusoidal=(-3.0, 743)))
# Table 6.1, Max / Avg over 3 seeds: line, RNN, Transformer, RegularGPT C=2
T61 = dict(rows={t: (line, *cells.split(', ')) for t, line, cells in (
    ('even_pairs', 2101, '100.0 / 100.0, 99.7 / 73.2, 100.0 / 89.3'),
    ('modular_arithmetic', 2102, '100.0 / 100.0, 21.9 / 20.3, 96.4 / 82.6'),
    ('parity_check', 2103, '100.0 / 98.9, 52.3 / 50.1, 100.0 / 100.0'),
    ('cycle_navigation', 2104, '100.0 / 100.0, 21.7 / 20.6, 100.0 / 100.0'),
    ('D_2', 2106, '100.0 / 100.0, 100.0 / 80.1, 100.0 / 100.0'),
    ('D_3', 2107, '100.0 / 100.0, 100.0 / 77.8, 100.0 / 99.7'),
    ('D_4', 2108, '100.0 / 100.0, 100.0 / 82.6, 100.0 / 98.7'),
    ('D_12', 2109, '100.0 / 100.0, 100.0 / 80.3, 100.0 / 99.8'),
    ('tomita_3', 2110, '100.0 / 100.0, 100.0 / 94.4, 100.0 / 99.7'),
    ('tomita_4', 2111, '100.0 / 100.0, 100.0 / 70.0, 100.0 / 99.8'),
    ('tomita_5', 2112, '100.0 / 100.0, 74.5 / 74.5, 100.0 / 99.8'),
    ('tomita_6', 2113, '100.0 / 100.0, 50.0 / 50.0, 100.0 / 98.5'))})
# Table 6.4 (GitHub; last tokens of 1000 chunks, 3 seeds; columns on line 2175): KERPLE, T5, ALiBi and RegularGPT
# C/K = 128/6 and 64/6 under the names of our runs with the same C / L_tr (ours: 64/2 and 32/2 at L_tr = 256); 128/12
# and 256/6 beside them
T64 = dict(lines=(2176, 2180), cols=dict(
    kerple_log=[2.66, 2.61, 2.61, 2.67, 2.70], t5=[2.59, 2.53, 2.55, 2.78, 3.29], alibi=[2.68, 2.88, 2.94, 2.94, 2.94],
    regular64=[3.63, 3.49, 3.50, 3.50, 3.50], regular32=[3.80, 3.76, 3.78, 3.79, 4.14]),
    also={'128/12': [3.22, 3.24, 3.25, 3.26, 3.25], '256/6': [3.17, 3.38, 3.37, 3.38, 3.37],
          '32/6': [3.96, 3.87, 4.37, 4.33, 4.28]})

# thesis.py's sections: each one's title, and its protocol in a sentence with the thesis' lines
INTRO = {  # each section's title and protocol in a sentence
    't3_3': ("Table 3.3: KERPLE, non-overlapping evaluation", "The test split's first tokens, the same at every "
             "length, cut into non-overlapping segments of L_ex, every token scored (line 737)."),
    't4_3': ("Table 4.3: Sandwich, last-token evaluation", "N segments of L_ex tokens, only the last token of each "
             "scored, after the L_ex - 1 before it: the same tokens at every length (4.3.4, lines 1227-1231)."),
    't4_5': ("Table 4.5: windowed inference", f"The last-token protocol's tokens, each token seeing the last {W45} "
             f"= 4 L_tr only, as a KV cache that drops what leaves the window does (4.9.2; the thesis' 2048 at its "
             f"L_tr = 512), at 8 and 16 L_tr. Thesis, lines 1458-1460, at 8, 16, 32 L_tr: Sandwich 2.79, 2.81, "
             f"2.81; ALiBi 3.01, 3.01, 3.01."),
    'speed': ("Table 3.4: training seconds per step", "The median step time in each finished run's log, mean over "
              "seeds (two runs share 2 CPU cores beside other work: noisy; quiet-machine figures in "
              "results/bench/train.md), beside the thesis' GPU seconds (line 781)."),
    't6_1': ("Table 6.1: regular languages", "Final-answer accuracy at lengths 41-500 (Deletang) and 51-100 "
             "(Bhattamishra), Max / Avg (seeds), from results/regular/table.json. Ours: RegularGPT C=2, a RoPE "
             "Transformer, an LSTM; the thesis' Transformer has Transformer-XL positions."),
    't6_3': ("Tables 6.3/6.4: RegularGPT on natural language", "The last-token protocol of Table 4.3 (the thesis' "
             "own for 6.3/6.4, lines 2172-2173), RegularGPT with K = 2 shared blocks (configs/sweep_lm_regular.py) "
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
