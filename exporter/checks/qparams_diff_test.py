"""qparams_diff: a snapshot that differs only in quantization parameters says so, naming the
first layer whose parameters moved and by how much."""

from exporter.checks import qparams_diff

GOLDEN = """# header
%x = placeholder
%quantize_per_tensor = quantized_decomposed.quantize_per_tensor.default(%x, 0.5, 0, -128, 127, torch.int8) -> int8[2]
%conv2d = aten.conv2d.default(%quantize_per_tensor) -> float32[2]
%quantize_per_tensor_1 = quantized_decomposed.quantize_per_tensor.default(%conv2d, 0.04029493033885956, -3, -128, 127, torch.int8) -> int8[2]
%dequantize_per_tensor_1 = quantized_decomposed.dequantize_per_tensor.default(%quantize_per_tensor_1, 0.04029493033885956, -3, -128, 127, torch.int8) -> float32[2]
"""


def _moved(text):
    return text.replace("0.04029493033885956, -3", "0.04032101854681969, -2")


def test_only_moved_scales_are_named_with_the_first_layer_and_the_change():
    note = qparams_diff.explain(GOLDEN, _moved(GOLDEN))
    assert note.startswith("Only quantization parameters differ: 2 of 3 quantize/dequantize nodes moved.")
    assert "%quantize_per_tensor_1, on the output of %conv2d" in note
    assert "scale 0.04029493033885956 -> 0.04032101854681969 (+6.47e-04 relative)" in note
    assert "zero point -3 -> -2" in note


def test_any_other_change_gets_no_such_note():
    other = _moved(GOLDEN).replace("aten.conv2d.default", "aten.conv1d.default")
    assert qparams_diff.explain(GOLDEN, other) is None
    unsigned = GOLDEN.replace("torch.int8) -> int8[2]\n%conv2d", "torch.uint8) -> int8[2]\n%conv2d")
    assert qparams_diff.explain(GOLDEN, unsigned) is None
    assert qparams_diff.explain(GOLDEN, GOLDEN + "%extra = placeholder\n") is None
    assert qparams_diff.explain(GOLDEN, GOLDEN) is None
