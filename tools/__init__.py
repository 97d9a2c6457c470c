"""Tools for measuring the code itself rather than the models, and for keeping account of long runs, run as
`python -m tools.<name>`.

  bench.py  speed and memory: training and long-input evaluation per encoding, attention routes, RegularGPT, pretrained
  cells.py  the cells of the results tables (a model x a method x a length), each with the n it reached, from the JSONs
  lease.py  `bash results.sh lease` (a lent GPU): its steps, each a command under a time budget, figures kept as JSON
  lease_figures.py  what a lease step measured, read from its script's output, and the issue's targets met or missed
  mutation.py  the mutation run: seeded samples of mutants of the code behind reported numbers, against their tests
  mutation_equivalent.py, mutation_killed_since.py, mutation_killed_since_analyses.py,
  mutation_killed_since_chapters.py  its survivors' verdicts: why one computes the same numbers, or the test that
                kills it (model.py and lexgpt/; the recall probe, RULER and the thesis page; the other analyses)
  planted.py  defects planted by hand in the recall probe and the RULER harness, each with the test that catches it
  results.py  what `bash results.sh PART` runs: the steps of a part in order, --list (done, partial, missing), --dry_run
  ruler_check.py  our RULER predictions rescored by a RULER checkout's own code (its clean-up and metrics)
  steps.py, steps_pretrained.py, steps_tasks.py  the step list: every command that makes a committed result, its JSON
                and its cost
"""
