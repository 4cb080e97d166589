"""llm_ops: ExecuTorch's custom SDPA and KV cache in a transformers language model give its
outputs, up to the cache's last position; and the one-line refusals."""

import pytest
import torch

from exporter.core import hf_models, llm_ops
from exporter.core.errors import UserError

CONFIG = {"model_type": "llama", "vocab_size": 96, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
          "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "bos_token_id": 0,
          "eos_token_id": 1}
CACHE = 16


def _runner_model(ops=()):
    torch.manual_seed(0)
    model = hf_models.build("text-generation", CONFIG, max_cache_len=CACHE)
    if ops:
        llm_ops.apply(model, ops, "//pkg:lm_ep")
    return model


def _calls(model):
    """The logits of a prompt, then of one token at each position up to the cache's last."""
    with torch.no_grad():
        outputs = [model(torch.tensor([[3, 5, 7, 9]]), torch.arange(4))]
        outputs += [model(torch.tensor([[position]]), torch.tensor([position])) for position in range(4, CACHE)]
    return outputs


@pytest.mark.parametrize("ops", [("sdpa",), ("sdpa", "kv_cache")])
def test_the_operators_give_the_models_logits(ops):
    expected, swapped = _calls(_runner_model()), _calls(_runner_model(ops))
    # the last row: what the runner reads, and all a model with the operators returns
    assert max(float((a[:, -1] - b[:, -1]).abs().max()) for a, b in zip(expected, swapped)) < 1e-5


def test_the_operators_return_the_last_positions_logits_only():
    prompt = _calls(_runner_model(("sdpa", "kv_cache")))[0]
    assert prompt.shape == (1, 1, CONFIG["vocab_size"])  # export_llm's Llama's; the LM head runs once


def test_the_cache_takes_executorchs_layout_with_kv_cache():
    model = _runner_model(("sdpa", "kv_cache"))
    record = llm_ops.apply(_runner_model(), ("sdpa", "kv_cache"), "//pkg:lm_ep")
    assert record == {"ops": ["sdpa", "kv_cache"], "attention_layers": 1, "cache_layers": 1}
    assert model.exportable.key_cache_0.shape == (1, CACHE, 2, 8)  # [batch, position, head, dim]


def test_a_model_that_is_no_hf_language_model_fails_in_one_line():
    with pytest.raises(UserError) as e:
        llm_ops.apply(torch.nn.Linear(2, 2), ("sdpa",), "//pkg:lm_ep")
    assert str(e.value) == ("torch_export //pkg:lm_ep: llm_ops = ['sdpa'] needs an hf_model with task = "
                            "\"text-generation\" (a transformers language model over its static cache); this "
                            "model is Linear; set llm_ops = [] in its llm_program (or remove torch_export's llm_ops)")


def test_an_attention_argument_custom_sdpa_lacks_fails_in_one_line():
    attention = torch.nn.Identity()
    object.__setattr__(attention, "llm_ops_label", "//pkg:lm_ep")  # as apply() sets it
    with pytest.raises(UserError) as e:
        llm_ops.custom_sdpa(attention, None, None, None, None, softcap=50.0)
    assert str(e.value) == ("torch_export //pkg:lm_ep: llm_ops = sdpa: Identity passes softcap, which ExecuTorch's "
                            "custom_sdpa does not take; set llm_ops = [] in its llm_program (or remove "
                            "torch_export's llm_ops)")


@pytest.fixture(scope="module")
def kv_cache_program():
    return torch.export.export(_runner_model(("sdpa", "kv_cache")), (torch.tensor([[3, 5]]), torch.arange(2)),
                               strict=True)


def test_no_transpose_feeds_executorchs_operators_with_kv_cache(kv_cache_program):
    """A Llama keeps query, key and value as [batch, seq, head, dim], the operators' layout: no
    transposes (copies in the program) to transformers' [batch, head, seq, dim] and back."""
    operators = [n for n in kv_cache_program.graph.nodes if n.op == "call_function" and "llama." in str(n.target)]
    inputs = [arg.target for n in operators for arg in n.args if isinstance(arg, torch.fx.Node) and arg.op != "placeholder"]
    assert len(operators) == 3 and torch.ops.aten.transpose.int not in inputs, inputs


def test_the_norms_take_no_mean_with_kv_cache(kv_cache_program):
    """XNNPACK delegates no mean of a 3-D tensor: a norm's mean would split the delegate twice a layer."""
    targets = [n.target for n in kv_cache_program.graph.nodes if n.op == "call_function"]
    assert torch.ops.aten.mean.dim not in targets
    assert targets.count(torch.ops.aten.linear.default) == 7 + 1 + 3  # the layer's projections, the head, 3 norms
