"""The analyses: each a script, run from the repository's top as `python -m analysis.<name> --key=value`.
Each writes out/<name>/ unless given --out_dir (results.sh names results/...).

  kernels.py          thesis ch. 3: each head's learned bias (the KERPLE kernel) against distance; effective length
  receptive_field.py  thesis ch. 4: cumulative normalised gradient, the empirical receptive field
  temperature.py      thesis ch. 5: dispersed attention, Algorithm 1's temperature, Propositions 5.1/5.2
  nope.py             thesis ch. 2: NoPE's attention-output variance (Lemma 2.3) and the position probe
  passkey.py          passkey retrieval by length and needle depth
  recall.py           recall at distance: what an earlier copy of a span, d tokens back, saves on its repeat
  recall_page.py      recall's page: horizons beside the ERF and perplexity, chapter 4's claim put to the test
  ruler.py            RULER's synthetic tasks (Hsieh et al. 2024) by length, greedy decoding, RULER's jsonl both ways
  ruler_page.py       RULER's page: each method against the plain model on the same samples, beside its perplexity
  thesis.py           the thesis' tables beside ours, each under its own protocol, with paired t-tests
"""
