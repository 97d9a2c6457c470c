import pytest
import torch


@pytest.fixture(autouse=True, scope='session')
def one_thread():
    """The test models are tiny: one thread is fastest, and two threads stall each other on a busy 2-core machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
