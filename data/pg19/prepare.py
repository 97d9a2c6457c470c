"""
PG-19 (Project Gutenberg books published before 1919, one book per document), GPT-2 BPE tokens.
Needs internet, for the hub and for tiktoken's one-time download of the gpt2 BPE files.
The full corpus is ~11 GB of text (~3B tokens, ~6 GB of bins): --max_docs is your friend.

$ python data/pg19/prepare.py --max_docs=500      # 500 books from each of train/validation/test
$ python data/pg19/prepare.py --text_file=books.txt --tokenizer=bytes   # offline, from a local file
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # data/, for dataprep
from dataprep import prepare_hf

# PG-19 ships its own book-level splits; we keep them so numbers compare with the literature.
# deepmind/pg19 is a loading-script dataset, which recent `datasets` releases may refuse to run; we could not
# check this offline. If it fails, pass --dataset= with a parquet mirror of it (same 'text' field and splits).
prepare_hf('pg19', dataset='deepmind/pg19', text_field='text',
           split_map={'train': 'train', 'validation': 'val', 'test': 'test'},
           description='PG-19, Project Gutenberg books before 1919')
