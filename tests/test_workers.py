"""How .ci/run shares the tests between its two processes (tests/conftest.py): the tests of each SHARED fixture go
to one process, which builds the fixture once."""
import pytest

from conftest import SHARED, shared_group


def test_the_tests_of_a_shared_fixture_are_one_work_unit(request):
    """xdist's loadgroup scheduler hands a process one work unit at a time, the unit read from the end of each test's
    id: every test of one SHARED fixture must carry that fixture's group there. pytest 9.2 with xdist 3.8 lost it
    (pytest-xdist#1386), and both processes loaded Gemma 3 270M and ran the lease's dry run."""
    if not getattr(request.config.option, 'loadgroup', False):
        pytest.skip('only a run with -n N --dist loadgroup (.ci/run) hands out work units')
    from xdist.scheduler.loadgroup import LoadGroupScheduling
    units = {}
    for item in request.session.items:
        units.setdefault(shared_group(item), set()).add(LoadGroupScheduling._split_scope(None, item.nodeid))
    units.pop(None, None)
    assert set(units) <= set(SHARED.values())
    assert units == {group: {group} for group in units}
