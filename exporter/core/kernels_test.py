"""Kernel lists (docs/deployment.md), on the tiny programs that Bazel built: the coverage check
the lowering runs, dtypes, the built-in lists, and the errors for bad kernel lists."""

import textwrap
from types import SimpleNamespace

import pytest

from exporter.core import kernels
from exporter.core.errors import UserError
from exporter.tests.built_programs import path


def _program(name):
    """What kernels.check takes, from a built .pte: its bytes and ExecuTorch's Program."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    with open(path(name), "rb") as f:
        buffer = f.read()
    return SimpleNamespace(buffer=buffer, executorch_program=deserialize_pte_binary(buffer).program)


def _yaml(tmp_path, text, name="ops.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return {"name": "//app:" + name, "files": [str(path)], "custom": True}


def test_the_portable_list_covers_the_tiny_program():
    kernels.check([{"name": "portable"}], _program("tiny_portable_pte.pte"))


def test_an_app_list_alone_names_what_it_lacks(tmp_path):
    spec = _yaml(tmp_path, """\
        - op: addmm.out
          kernels:
            - arg_meta: null
              kernel_name: app::addmm_out
        """)
    with pytest.raises(UserError) as e:
        kernels.check([spec], _program("tiny_portable_pte.pte"))
    message = str(e.value)
    assert message.startswith("no kernel for aten::"), message
    assert "aten::addmm.out" not in message
    assert 'in kernels = "//app:ops.yaml"' in message
    assert 'use kernels = ["//app:ops.yaml", "portable"]' in message  # a built-in list that has them
    assert "\n" not in message


def test_dtypes_restrict_an_entry(tmp_path):
    spec = _yaml(tmp_path, """\
        - op: mul.out
          type_alias:
            T0: [Double]
          kernels:
            - arg_meta:
                self: [T0]
                other: [T0]
                out: [T0]
              kernel_name: app::mul_out
        """)
    library = kernels.load(spec)
    assert library.covers("aten::mul.out", {"Double"})
    assert not library.covers("aten::mul.out", {"Float"})
    text = kernels.message({"aten::mul.out": {"Float"}}, [library], {"aten::mul.out": ["forward"]})
    assert "aten::mul.out for Float (listed for Double only) (method forward)" in text


@pytest.mark.parametrize("text, needle", [
    ("- kernels: []\n", "an entry has neither `op` nor `func`"),
    ("op: add.out\n", "is not a list of entries"),
    ("- op: add.out\n  kernels: [{arg_meta: {self: [T9]}}]\n", "names type alias 'T9', which `type_alias` does not define"),
    ("- op: [add.out\n", "cannot read ops.yaml as YAML"),
])
def test_bad_kernel_lists_name_the_target_and_the_fix(tmp_path, text, needle):
    with pytest.raises(UserError) as e:
        kernels.load(_yaml(tmp_path, text))
    assert str(e.value).startswith("kernels //app:ops.yaml: "), str(e.value)
    assert needle in str(e.value)


def test_the_built_in_lists_come_from_the_installed_executorch():
    portable = kernels.load({"name": "portable"})
    assert "aten::add.out" in portable.kernels and "aten::avg_pool3d.out" not in portable.kernels
    quantized = kernels.load({"name": "quantized"})
    assert "quantized_decomposed::quantize_per_tensor.out" in quantized.kernels
    optimized = kernels.load({"name": "optimized"})  # the wheel ships no YAML: its runtime's kernels
    assert "aten::_fft_r2c.out" in optimized.kernels and "aten::_fft_r2c.out" not in portable.kernels
