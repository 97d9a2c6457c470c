"""
Optional offline English prose corpus: the King James Version of the Bible (1611), one book per document,
byte-level tokens (vocab 256), books joined by a 0 byte. ~4 MB of text in 66 books.

The text comes from Debian's bible-kjv-text package, read through the `bible` program of bible-kjv
(its data file is compressed in a format of its own). Not a dependency of the project:
$ apt-get install bible-kjv
$ python data/kjv/prepare.py       # -> data/kjv/{train,val,test}.bin, *_docs.npy, meta.json

Licence: Debian ships it in main; its copyright file says the KJV text's copyright has expired (it is in
the public domain in most countries; in the UK the Crown still holds printing rights by letters patent).
"""
import os
import re
import sys
import time
import shutil
import argparse
import subprocess

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # data/, for dataprep
from dataprep import get_tokenizer, hash_split, write_corpus, print_summary


def parse_books(dump):
    """`bible` output -> [(book, text)]. The dump is a 'Book N' heading per chapter, then one
    '  V verse' line per verse. Verse numbers are dropped (noise for a prose model), chapter headings kept."""
    books = []
    for line in dump.splitlines():
        head = re.fullmatch(r'(\S.*) (\d+)', line)
        verse = re.fullmatch(r'\s+\d+ (.*)', line)
        if head:
            book = head.group(1)
            if not books or books[-1][0] != book:
                books.append((book, []))
            books[-1][1].append(('\n' if books[-1][1] else '') + line + '\n')
        elif verse:
            books[-1][1].append(verse.group(1).strip() + '\n')
    return [(book, ''.join(parts)) for book, parts in books]


if __name__ == '__main__':
    p = argparse.ArgumentParser(description='prepare data/kjv: King James Bible, one book per document')
    p.add_argument('--bible', default='bible', help='the bible program (Debian package bible-kjv)')
    p.add_argument('--out_dir', default=os.path.dirname(os.path.abspath(__file__)))
    args = p.parse_args()
    t0 = time.time()
    if shutil.which(args.bible) is None:
        sys.exit(f"error: {args.bible!r} not found; install it with: apt-get install bible-kjv")
    # a huge line width so that no verse is wrapped across lines
    dump = subprocess.run([args.bible, '-l1000000', 'gen1:1-rev22:21'], capture_output=True, text=True,
                          check=True).stdout
    books = parse_books(dump)
    if len(books) != 66:
        sys.exit(f"error: expected the 66 books of the KJV, parsed {len(books)}; has `bible`'s output changed?")
    # split by book name: with 66 documents this gives 3 to 4 books each to val and test
    docs = ((hash_split(book), text) for book, text in books)
    meta = write_corpus(args.out_dir, docs, get_tokenizer('bytes'),
                        'King James Bible (Debian bible-kjv-text), one book per document, split by book-name hash')
    print(f"{len(books)} books")
    print_summary(meta)
    print(f"wrote {args.out_dir} in {time.time() - t0:.1f}s")
