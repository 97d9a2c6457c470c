"""Tools for measuring the code itself rather than the models, and for keeping account of long runs, run as
`python -m tools.<name>`.

  bench.py  speed and memory: training and long-input evaluation per encoding, attention routes, RegularGPT, pretrained
  cells.py  where long, resumable runs stand: each cell of their result JSONs with the n it reached
  lease.py  one step of `bash results.sh lease` (a lent GPU): a command under a time budget, its figures kept as JSON
"""
