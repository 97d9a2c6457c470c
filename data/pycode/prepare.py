"""
The offline default corpus: the .py sources of the Python standard library on this machine,
byte-level tokens (vocab 256), one document per file, files joined by a 0 byte.
Needs no network and no tokenizer download; runs in seconds.

$ python data/pycode/prepare.py                     # -> data/pycode/{train,val,test}.bin, *_docs.npy, meta.json
$ python data/pycode/prepare.py --src_dir=some/dir  # any tree of .py files instead (the tests use this)

The corpus depends on the Python version it is built with (meta.json's source says which).
"""
import os
import sys
import time
import argparse
import sysconfig

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # data/, for dataprep
from dataprep import get_tokenizer, hash_split, write_corpus, print_summary

# site-packages is whatever happens to be installed here, not the stdlib; __pycache__ holds no .py anyway.
# The stdlib's own test directories stay in: with them CPython 3.11 gives ~1,800 files / ~31 MB, without them
# ~12 MB; 31 MB is still small, and real test code is code too.
SKIP_DIRS = {'site-packages', 'dist-packages', '__pycache__'}

p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
p.add_argument('--src_dir', default=sysconfig.get_paths()['stdlib'], help='tree of .py files (default: the stdlib)')
p.add_argument('--out_dir', default=os.path.dirname(os.path.abspath(__file__)))
p.add_argument('--max_files', type=int, default=None, help='keep only the first N usable files (sorted by path)')
args = p.parse_args()
t0 = time.time()

# sorted walk, links not followed: the same tree gives the same corpus, byte for byte
paths = []
for dirpath, dirnames, filenames in os.walk(args.src_dir):
    dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
    paths += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith('.py')]
paths.sort(key=lambda path: os.path.relpath(path, args.src_dir).replace(os.sep, '/'))

files, dropped = [], 0
for path in paths:
    with open(path, 'rb') as f:
        raw = f.read()
    try:
        text = raw.decode('utf-8')  # strict: the bytes tokenizer re-encodes it to exactly these bytes
    except UnicodeDecodeError:
        text = None
    if text is None or '\0' in text or not text:  # 0 is our document separator; an empty file is no document
        dropped += 1
        continue
    files.append((os.path.relpath(path, args.src_dir).replace(os.sep, '/'), text))
    if args.max_files is not None and len(files) == args.max_files:
        break
if not files:
    sys.exit(f"error: no usable .py files under {args.src_dir}")

# split by file, keyed on the relative path: a file stays in its split as the stdlib changes around it
docs = ((hash_split(rel), text) for rel, text in files)
src = os.path.abspath(args.src_dir)
source = (f"Python {sys.version.split()[0]} stdlib .py files ({src})" if src == os.path.abspath(sysconfig.get_paths()['stdlib'])
          else f".py files under {src}")
meta = write_corpus(args.out_dir, docs, get_tokenizer('bytes'), source + ", one file per document, split by path hash")

print(f"{len(files)} files kept, {dropped} dropped (not UTF-8, contains a 0 byte, or empty) from {src}")
print_summary(meta)
print(f"wrote {args.out_dir} in {time.time() - t0:.1f}s")
