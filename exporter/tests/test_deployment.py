"""Kernel lists, selected-operators files and ETRecords (docs/deployment.md), on the tiny
programs that Bazel built: what the lowering checks and writes, and the errors for bad kernel
lists."""

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from types import SimpleNamespace

import pytest
import yaml
from runfiles import Runfiles

from exporter.actions import etrecord, selected_ops
from exporter.core import kernels, operators
from exporter.core.errors import UserError

RUNFILES = Runfiles.Create()
TESTS = "rules_torch_export/exporter/tests/"


def _path(name):
    return RUNFILES.Rlocation(TESTS + name)


def _program(name):
    """What kernels.check takes, from a built .pte: its bytes and ExecuTorch's Program."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    with open(_path(name), "rb") as f:
        buffer = f.read()
    return SimpleNamespace(buffer=buffer, executorch_program=deserialize_pte_binary(buffer).program)


def _used(name):
    with open(_path(name + ".pte.json"), encoding="utf-8") as f:
        methods = json.load(f)["methods"]
    return {operators.kernel_name(op) for m in methods.values() for op in m["operators"]}


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


@pytest.mark.parametrize("program", ["tiny_portable_pte", "tiny_xnnpack_pte"])
def test_selected_operators_are_the_programs(program):
    with open(_path(program + ".selected_operators.yaml"), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert {operators.kernel_name(op) for op in data["operators"]} == _used(program)
    assert all(op["debug_info"] == [f"//exporter/tests:{program}"] for op in data["operators"].values())
    assert set(data["et_kernel_metadata"]) == set(data["operators"])
    assert all(key.startswith("v1/") for keys in data["et_kernel_metadata"].values() for key in keys)


def test_merged_lists_hold_every_program():
    merged = selected_ops.merge([_path(p + ".selected_operators.yaml") for p in ("tiny_portable_pte", "tiny_xnnpack_pte")])
    assert {operators.kernel_name(op) for op in merged["operators"]} == _used("tiny_portable_pte") | _used("tiny_xnnpack_pte")
    shared = merged["operators"]["aten::add.out"]["debug_info"]
    assert shared == ["//exporter/tests:tiny_portable_pte", "//exporter/tests:tiny_xnnpack_pte"]


def test_the_etrecord_is_exectorchs_and_normalised():
    from executorch.devtools.etrecord import parse_etrecord

    path = _path("tiny_portable_pte.etrecord")
    record = parse_etrecord(path)
    assert record.exported_program is not None and record._debug_handle_map["forward"]
    ids, export_graph_id = etrecord.graph_ids(path)
    assert ids == set(range(1, len(ids) + 1)) and 0 < export_graph_id <= len(ids) + 1
    with zipfile.ZipFile(path) as z:
        assert {info.date_time for info in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}


_AGAIN = """
import sys
from exporter.actions import etrecord, lower
from exporter.formats import pt2
import json
with open(sys.argv[2]) as f:
    constants = json.load(f)["constant_methods"]
program, _ = lower.lower({"forward": pt2.load(sys.argv[1])}, [], constants, False, generate_etrecord=True)
etrecord.write(program, sys.argv[3])
"""


def test_the_etrecord_is_the_same_in_another_process_folder_and_hash_seed(tmp_path):
    out = tmp_path / "again.etrecord"
    env = dict(os.environ, PYTHONHASHSEED="5", PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", _AGAIN, _path("tiny_ep.pt2"), _path("tiny_portable_pte.pte.json"),
                           str(out)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(_path("tiny_portable_pte.etrecord"), "rb") as built, open(out, "rb") as again:
        assert built.read() == again.read()
