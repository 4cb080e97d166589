"""pte_inspect against the ExecuTorch runtime's own MethodMeta and ExecuTorch's deserializer."""

import json

import pytest
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.runtime import Runtime

from exporter.actions import lower
from exporter.core import dtypes
from exporter.formats import pte_inspect

PROGRAMS = [
    "exporter/tests/tiny_portable_pte.pte",
    "exporter/tests/tiny_xnnpack_pte.pte",
    "exporter/tests/conv_net_pte.pte",
]


def _runtime_dtype_name(code):
    """The runtime reports ScalarType codes; name them through the schema, as the inspector does."""
    enum = pte_inspect._load_schema().enums["ScalarType"][1]
    return dtypes.torch_name(enum[code])


def _tensor_infos(meta, count, getter):
    infos = []
    for i in range(count):
        info = getter(i)
        infos.append({"dtype": _runtime_dtype_name(info.dtype()), "sizes": list(info.sizes()),
                      "nbytes": info.nbytes()})
    return infos


@pytest.mark.parametrize("path", PROGRAMS)
def test_methods_match_runtime_method_meta(path):
    summary = pte_inspect.summarize(path)
    program = Runtime.get().load_program(path)
    assert set(summary["methods"]) == set(program.method_names)
    for name, method in summary["methods"].items():
        if name in summary["constant_methods"]:  # no tensors; the runtime returns the value
            assert program.load_method(name).execute([]) == [summary["constant_methods"][name]]
            continue
        meta = program.metadata(name)
        assert meta.name() == name
        for kind, count, getter in (
            ("inputs", meta.num_inputs(), meta.input_tensor_meta),
            ("outputs", meta.num_outputs(), meta.output_tensor_meta),
        ):
            ours = [{k: v[k] for k in ("dtype", "sizes", "nbytes")} for v in method[kind]]
            assert ours == _tensor_infos(meta, count, getter), (path, name, kind)


@pytest.mark.parametrize("path", PROGRAMS)
def test_plan_matches_executorch_deserializer(path):
    with open(path, "rb") as f:
        buf = f.read()
    summary = pte_inspect.summarize_bytes(buf)
    program = deserialize_pte_binary(buf).program
    # lower.methods_record walks ExecuTorch's own dataclasses: same operators and delegates.
    theirs = lower.methods_record(program)
    for plan in program.execution_plan:
        ours = summary["methods"][plan.name]
        assert ours["operators"] == theirs[plan.name]["operators"]
        assert ours["delegates"] == theirs[plan.name]["delegates"]
        assert ours["inputs"] == theirs[plan.name]["inputs"]
        assert ours["planned_memory"] == theirs[plan.name]["planned_memory"]
        assert ours["planned_memory"]["buffers"] == list(plan.non_const_buffer_sizes)[1:]
        assert ours["instructions"] == sum(len(c.instructions) for c in plan.chains)
    # The deserializer folds segments back into the program; check ours against the file instead.
    end = summary["flatbuffer_bytes"]
    for segment in summary["segments"]:
        assert segment["offset"] >= end and segment["offset"] + segment["bytes"] <= len(buf)
        end = segment["offset"] + segment["bytes"]


def test_expected_content_of_the_tiny_programs():
    portable = pte_inspect.summarize(PROGRAMS[0])["methods"]["forward"]
    xnnpack = pte_inspect.summarize(PROGRAMS[1])["methods"]["forward"]
    # float32[batch, 4] and int64[batch] in; batch's max (8) is what memory is planned for.
    assert [(v["dtype"], v["sizes"]) for v in portable["inputs"]] == [("float32", [8, 4]), ("int64", [8])]
    assert [(v["dtype"], v["sizes"]) for v in portable["outputs"]] == [("float32", [8, 3]), ("int64", [8])]
    assert portable["delegates"] == {}
    assert "aten::addmm.out" in portable["operators"]
    assert xnnpack["delegates"]["XnnpackBackend"]["count"] >= 1
    assert xnnpack["delegates"]["XnnpackBackend"]["bytes"] > 0
    assert "aten::addmm.out" not in xnnpack["operators"]  # the linear went to XNNPACK
    assert portable["planned_memory"]["bytes"] > 0


@pytest.mark.parametrize("name", ["tiny_portable_pte", "tiny_xnnpack_pte"])
def test_executorch_program_summary_output_equals_the_inspector(name):
    with open(f"exporter/tests/{name}.summary.json", encoding="utf-8") as f:
        written = json.load(f)
    assert written == pte_inspect.summarize(f"exporter/tests/{name}.pte")


def test_cli_text_and_json(capsys):
    assert pte_inspect.main([PROGRAMS[1], "ignored.pte.json"]) == 0
    text = capsys.readouterr().out
    assert "method forward" in text and "XnnpackBackend" in text and "planned memory" in text
    assert "tensor int64[8]" in text
    assert pte_inspect.main([PROGRAMS[1], "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == pte_inspect.summarize(PROGRAMS[1])


def test_cli_rejects_what_is_not_a_pte(tmp_path, capsys):
    bogus = tmp_path / "bogus.pte"
    bogus.write_bytes(b"\x10\x00\x00\x00NOPE" + bytes(64))
    assert pte_inspect.main([str(bogus)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("pte_inspect: cannot read") and "not a Program flatbuffer" in err
    assert len(err.splitlines()) == 1
    assert pte_inspect.main(["model.pt2"]) == 2


def test_the_text_names_the_release_from_the_manifest_beside_the_pte(capsys):
    # A program of the default release: its manifest records no release (it keeps its bytes), so
    # pte_inspect names the toolchain's, and the oldest runtime measured to load that release.
    assert pte_inspect.main([PROGRAMS[1]]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("ExecuTorch release: 1.5 (the toolchain's, 1.5.1); the oldest runtime measured to load "
                        "it: 1.3")
    assert pte_inspect.release_of(PROGRAMS[1]) == {
        "name": "1.5", "version": "1.5.1", "toolchain's": True, "oldest_runtime_measured": "1.3"}


def test_a_pte_without_its_manifest_says_what_to_give(tmp_path, capsys):
    alone = tmp_path / "alone.pte"
    alone.write_bytes(pte_inspect.read_file(PROGRAMS[1]))
    assert pte_inspect.main([str(alone)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "ExecuTorch release: not recorded in a .pte; give its manifest (--manifest <name>.pte.json)")
    assert pte_inspect.main([str(alone), "--manifest", PROGRAMS[1] + ".json"]) == 0
    assert "ExecuTorch release: 1.5 (the toolchain's, 1.5.1)" in capsys.readouterr().out


def test_a_manifest_of_another_program_fails_in_one_line(tmp_path, capsys):
    assert pte_inspect.main([PROGRAMS[1], "--manifest", PROGRAMS[0] + ".json"]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith(f"pte_inspect: cannot read {PROGRAMS[0]}.json is not the manifest of {PROGRAMS[1]}: "
                          f"it records a .pte of sha256 ") and "give the .pte.json its executorch_program" in err
    assert len(err.splitlines()) == 1 and captured.out == ""
    not_json = tmp_path / "m.json"
    not_json.write_text("[]")
    assert pte_inspect.main([PROGRAMS[1], "--manifest", str(not_json)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"pte_inspect: cannot read {not_json}: not a program manifest (rules_torch_export/pte-manifest/1)")
