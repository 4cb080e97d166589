"""The quantized zoo's promise, read from the .pte manifests: each int8 program is at least
3.5 times smaller than its float32 program, and XNNPACK runs all of its arithmetic.

ExecuTorch keeps two bookkeeping instructions outside the delegate when a dynamic batch is
flattened (aten::sym_size.int reads the batch, et_view reshapes in place); neither is a kernel
that computes, so they are the only operators allowed outside.
"""

import json

import pytest

PAIRS = [  # (float program, quantized program)
    ("models/resnet_pte", "models/resnet_q8_pte"),
    ("models/mobilenet/mobilenet_wide_pte", "models/mobilenet/mobilenet_q8_pte"),
]
BOOKKEEPING = {"aten::sym_size.int", "executorch_prim::et_view.default"}


def _manifest(path):
    with open(path + ".pte.json", encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("float_program, quantized_program", PAIRS)
def test_the_quantized_program_is_at_least_3_5_times_smaller(float_program, quantized_program):
    float_size = _manifest(float_program)["pte"]["size"]
    quantized_size = _manifest(quantized_program)["pte"]["size"]
    print(f"{quantized_program}: {quantized_size} bytes, {float_size / quantized_size:.2f} x smaller than float32")
    assert float_size >= 3.5 * quantized_size


@pytest.mark.parametrize("quantized_program", [q for _, q in PAIRS])
def test_xnnpack_runs_every_kernel_of_the_quantized_program(quantized_program):
    method = _manifest(quantized_program)["methods"]["forward"]
    outside = set(method["operators"]) - BOOKKEEPING
    assert not outside, f"{quantized_program} leaves {sorted(outside)} outside the XNNPACK delegate"
    assert method["delegates"]["XnnpackBackend"]["count"] >= 1
