"""torch.compile captures a training step whole (#60): no graph break in the training forward (the loss, with
targets) of a 2-layer GPT, for the encodings the thesis trains. A break splits the step into small graphs with eager
Python between them: on an H100 the compiled step ran slower than the eager one. torch._dynamo.explain only traces,
so no kernel is built here."""
import pytest
import torch

from lexgpt import routes
from model import GPT, GPTConfig

# the route each training forward takes on a CPU (on a GPU kerple_log and t5 take dense too, the others flex)
TRAINED = dict(none='causal', rope='causal', alibi='folded', kerple_log='dense', t5='dense', sandwich='dense')


@pytest.mark.parametrize('pe', list(TRAINED))
def test_training_forward_has_no_graph_break(pe):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=2, n_embd=32, pe=pe)).train()
    idx = torch.randint(64, (2, 16))
    with routes.recording() as taken:
        model(idx, targets=idx)[1].backward()
    assert taken == [TRAINED[pe]] * 2, taken
    torch._dynamo.reset()
    seen = torch._dynamo.explain(model)(idx, idx)
    reasons = [str(b.reason).splitlines()[0] for b in seen.break_reasons]
    assert seen.graph_break_count == 0 and seen.graph_count == 1, reasons
