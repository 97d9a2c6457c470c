"""
ArXiv subset of the Pile (LaTeX sources of arXiv papers), GPT-2 BPE tokens.
Needs internet, for the hub and for tiktoken's one-time download of the gpt2 BPE files.

$ python data/arxiv/prepare.py                   # hub download, gpt2 tokens
$ python data/arxiv/prepare.py --max_docs=2000   # a quick small version
$ python data/arxiv/prepare.py --text_file=my.jsonl --tokenizer=bytes   # offline, from a local file
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # data/, for dataprep
from dataprep import prepare_hf

# The Pile's original host is gone. suolyer/pile_arxiv is a community mirror holding this subset's documents
# from the Pile's validation and test files (it has no train split). We could not load it from our offline
# machines, so the name is unverified: if it has moved, pass --dataset=<another mirror>. Its splits are pooled
# and re-split 90/5/5 by a hash of each document.
prepare_hf('arxiv', dataset='suolyer/pile_arxiv', text_field='text', description='ArXiv subset of the Pile')
