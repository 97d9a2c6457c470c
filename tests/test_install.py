"""The installs are pinned: requirements.lock (pip-compile's output) holds an exact version for every package that
requirements*.txt names, and torch's pin there is the one .ci/run and demo.sh install first (#71: an unpinned
pytest 9.2 turned a fresh clone's CI red without a line of ours changing)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def canonical(name):
    """PEP 503's normalized name: pip treats Foo_Bar, foo-bar and foo.bar as one package."""
    return re.sub(r'[-_.]+', '-', name).lower()


def required(path):
    """The package names a requirements file asks for (comments, versions and markers dropped)."""
    names = []
    for line in (ROOT / path).read_text().splitlines():
        line = line.split('#', 1)[0].strip()
        if line and not line.startswith('-'):
            names.append(canonical(re.match(r'[A-Za-z0-9][A-Za-z0-9._-]*', line).group(0)))
    return names


def locked():
    """name -> version of every `name==version` line of requirements.lock."""
    pins = {}
    for line in (ROOT / 'requirements.lock').read_text().splitlines():
        m = re.match(r'([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)', line)
        if m:
            pins[canonical(m.group(1))] = m.group(2)
    return pins


def torch_pins(script):
    """The torch versions a shell script installs with pip."""
    return re.findall(r'pip install[^\n]*\btorch==([0-9][^\s]*)', (ROOT / script).read_text())


def test_the_lock_pins_every_package_the_requirements_name():
    pins = locked()
    names = required('requirements.txt') + required('requirements-test.txt')
    assert len(names) >= 15 and 'torch' in names and 'pytest' in names
    missing = [n for n in names if n not in pins]
    assert not missing, f"requirements.lock has no pin for {missing}: refresh it (its header holds the command)"


def test_the_lock_pins_dependencies_of_dependencies_too():
    """pip-compile's lock, not a copy of the requirements: packages nobody names directly are pinned as well."""
    pins = locked()
    named = set(required('requirements.txt') + required('requirements-test.txt'))
    assert {'filelock', 'sympy', 'jinja2', 'iniconfig', 'pluggy'} <= set(pins) - named


def test_torch_is_pinned_to_the_build_that_ci_and_the_demo_install_first():
    lock = locked()['torch'].split('+')[0]  # 2.13.0+cpu: the local label names the CPU build of 2.13.0
    for script in ('.ci/run', 'demo.sh'):
        pins = torch_pins(script)
        assert pins and set(pins) == {lock}, f"{script} installs torch {pins}, requirements.lock pins {lock}"


def test_ci_and_the_demo_install_from_the_lock():
    for script in ('.ci/run', 'demo.sh'):
        text = (ROOT / script).read_text()
        assert '-r requirements.lock' in text, f"{script} does not install requirements.lock"
    ci = (ROOT / '.ci/run').read_text()
    # the unpinned way (LEXGPT_UNPINNED=1) is the only path that installs from the open ranges
    assert ci.count('-r requirements.txt') == 1 and 'LEXGPT_UNPINNED' in ci
