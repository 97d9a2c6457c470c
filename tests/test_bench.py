import pytest
import torch

import bench


@pytest.mark.parametrize('impl', ['sdpa_mask', 'flex_eager', 'blocked'])
def test_attention_candidates_equal_the_plain_reference(impl):
    g = torch.Generator().manual_seed(0)
    q, k, v = [torch.randn(2, 4, 70, 16, generator=g) for _ in range(3)]
    assert torch.allclose(bench.attention_impl(impl, q, k, v), bench.attention_impl('plain', q, k, v), atol=1e-5)
