"""formats/pt2.py: what a written .pt2 leaves out, the repair a loaded one needs, and what it
refuses to load."""

import contextlib
import json
import os
import subprocess
import sys
import zipfile

import pytest
import torch

from exporter.actions import lower
from exporter.formats import pt2


class Named(torch.nn.Module):
    """The torch.export tutorial's model: y has twice x's rows."""

    def forward(self, x, y):
        return torch.cat([x, x], 0).sum(1) + y.sum(1)


def _named_program():
    dx = torch.export.Dim("dx", min=4, max=256)
    dh = torch.export.Dim("dh", max=512)
    return torch.export.export(Named(), (torch.randn(4, 3), torch.randn(8, 5)),
                               dynamic_shapes=({0: dx}, {0: 2 * dx, 1: dh}))


def test_a_loaded_program_with_a_derived_dim_lowers(tmp_path):
    path = str(tmp_path / "named.pt2")
    pt2.save(_named_program(), path)
    ep = pt2.load(path)
    assert "2*s" in " ".join(str(k) for k in ep.range_constraints)  # the .pt2 keeps the derived range
    program, _ = lower.lower(ep, [])
    assert program.buffer[4:8] == b"ET12"


def test_torch_alone_still_fails_on_the_round_trip(tmp_path):
    """The bug pt2.load repairs. If torch fixes it, this fails: then drop the repair."""
    path = str(tmp_path / "named.pt2")
    pt2.save(_named_program(), path)
    with pytest.raises(AssertionError, match="expected sympy.Symbol"):
        lower.lower(torch.export.load(path), [])


# Both programs carry process-specific ids in memory: decompositions record provenance
# ("from_node", with graph ids), strict export keys nn_module_stack by id(module).
_WRITE = """
import sys, torch
from exporter.formats import pt2
for path, kind in zip(sys.argv[1::2], sys.argv[2::2]):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU())
    if kind == "decomposed":
        ep = torch.export.export(model, (torch.randn(2, 4),)).run_decompositions({})
        assert any("from_node" in n.meta for n in ep.graph.nodes)
    elif kind == "strict":
        ep = torch.export.export(model, (torch.randn(2, 4),), strict=True)
        assert any(k.isdigit() for n in ep.graph.nodes for k in n.meta.get("nn_module_stack", {}))
    else:  # a module called twice: its second call's key is "<id>@1"
        class Twice(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(4, 4)

            def forward(self, x):
                return self.linear(self.linear(x))

        ep = torch.export.export(Twice(), (torch.randn(2, 4),), strict=True)
        assert any("@" in k for n in ep.graph.nodes for k in n.meta.get("nn_module_stack", {}))
    pt2.save(ep, path)
"""

# The entry of a module keyed by its path, as each kind writes it.
_PATH_KEY = {"decomposed": b"L__self__0", "strict": b"L__self__0", "strict_twice": b"L__self__linear@1"}


_TWO_PROCESSES = "test_the_same_program_gives_the_same_bytes_in_two_processes"


@pytest.fixture(scope="module")
def two_processes(request, tmp_path_factory):
    """{kind: [its .pt2 from process a, from process b]} for every kind of this run's cases of
    _TWO_PROCESSES: two processes (one import of torch each), each writes every kind."""
    kinds = sorted({item.callspec.params["kind"] for item in request.session.items
                    if getattr(item, "originalname", None) == _TWO_PROCESSES})
    folder = tmp_path_factory.mktemp("two_processes")
    # The file's name is in its bytes: both processes write program.pt2, in folders of their own.
    paths = {kind: [str(folder / kind / run / "program.pt2") for run in ("a", "b")] for kind in kinds}
    for run in (0, 1):
        arguments = []
        for kind in kinds:
            os.makedirs(os.path.dirname(paths[kind][run]))
            arguments += [paths[kind][run], kind]
        subprocess.run([sys.executable, "-c", _WRITE, *arguments], check=True)
    return paths


# Every build writes a decomposed program (its "from_node" provenance) and the strict export of a
# module called twice (module ids as keys, and a call's "@<n>"); the strict row is the same
# repair without "@<n>", so it is //exporter/formats:pt2_nightly_test's (tools/ci/tiers.bzl),
# as is every row whose id starts with "nightly-".
@pytest.mark.parametrize("kind", [
    "decomposed",
    pytest.param("strict", id="nightly-strict"),
    "strict_twice",
])
def test_the_same_program_gives_the_same_bytes_in_two_processes(two_processes, kind):
    paths = two_processes[kind]
    contents = [open(p, "rb").read() for p in paths]
    assert contents[0] == contents[1]
    with zipfile.ZipFile(paths[0]) as archive:
        model_json = next(archive.read(n) for n in archive.namelist() if n.endswith("models/model.json"))
    for key in (b"from_node", b"graph_id", b"stack_trace"):
        assert key not in model_json
    assert _PATH_KEY[kind] in model_json  # the Linear's entry, keyed by its path


_WRITE_CUSTOM_OP = """
import sys, torch
torch.library.define("pt2_test::double", "(Tensor x) -> Tensor")
torch.library.impl("pt2_test::double", "CompositeExplicitAutograd")(lambda x: x * 2)
torch.library.register_fake("pt2_test::double")(lambda x: torch.empty_like(x))
class M(torch.nn.Module):
    def forward(self, x):
        return torch.ops.pt2_test.double(x) + 1
torch.export.save(torch.export.export(M(), (torch.randn(3),)), sys.argv[1])
"""


def test_unresolved_operators_names_custom_ops_this_process_lacks(tmp_path):
    path = str(tmp_path / "op.pt2")
    subprocess.run([sys.executable, "-c", _WRITE_CUSTOM_OP, path], check=True)
    assert pt2.unresolved_operators(path) == ["pt2_test.double.default"]
    with pytest.raises(RuntimeError):
        pt2.load(path)


def test_unresolved_operators_is_empty_for_aten_programs(tmp_path):
    path = str(tmp_path / "named.pt2")
    pt2.save(_named_program(), path)
    assert pt2.unresolved_operators(path) == []


# A .pt2 from a shared cache is a file anyone who can write the cache wrote. torch.export.load
# unpickles some of its entries, and a pickle can call any function. pt2.load refuses them.
class _CreatesMarker:
    """Unpickled by anything but a weights-only unpickler, it creates the file `marker`."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _linear_pt2(path):
    torch.manual_seed(0)
    pt2.save(torch.export.export(torch.nn.Linear(4, 4), (torch.randn(2, 4),)), path)


def _rewritten(path, out, replace=None, add=None):
    """A copy of the .pt2 at path with entries (named by the part after the archive's folder)
    replaced by bytes, or by a function of their bytes, and entries added."""
    replace, add = replace or {}, add or {}
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        folder = src.namelist()[0].split("/", 1)[0]
        for info in src.infolist():
            name = info.filename.split("/", 1)[1]
            data = src.read(info)
            if name in replace:
                data = replace[name](data) if callable(replace[name]) else replace[name]
            dst.writestr(info.filename, data)
        for name, data in add.items():
            dst.writestr(f"{folder}/{name}", data)
    return out


def _pickled_weight(config):
    entries = __import__("json").loads(config)
    entries["config"]["weight"]["use_pickle"] = True
    return __import__("json").dumps(entries).encode()


def _opaque_constant(config):
    entries = __import__("json").loads(config)
    entries["config"]["evil"] = {"path_name": "opaque_obj_0", "is_param": False, "use_pickle": True,
                                 "tensor_meta": None}
    return __import__("json").dumps(entries).encode()


def _code_that_creates(marker):
    return f"__import__('pathlib').Path({str(marker)!r}).touch()"


def _in_program(change):
    """A replace= function of _rewritten: the program's JSON changed by change(program)."""
    def replace(data):
        program = json.loads(data)
        change(program)
        return json.dumps(program).encode()
    return replace


def _size_made_code(marker):
    """The program's first tensor's first size made an expression (torch sympifies it)."""
    def change(program):
        sizes = next(iter(program["graph_module"]["graph"]["tensor_values"].values()))["sizes"]
        sizes[0] = {"as_expr": {"expr_str": _code_that_creates(marker), "hint": sizes[0]}}
    return _in_program(change)


def _guard_made_code(marker):
    """A guard of the program (ExportedProgram.module() runs its guards with exec)."""
    return _in_program(lambda program: program.update(guards_code=[_code_that_creates(marker) + " is None"]))


def _poisoned(kind, tmp_path, marker):
    """A .pt2 whose entry of `kind` holds a pickle, an expression or a guard that creates `marker`."""
    import pickle

    clean, payload = str(tmp_path / "clean.pt2"), pickle.dumps(_CreatesMarker(str(marker)))
    _linear_pt2(clean)
    with zipfile.ZipFile(clean) as archive:
        config = next(n.split("/", 1)[1] for n in archive.namelist() if n.endswith("_weights_config.json"))
        weight = __import__("json").loads(archive.read(next(n for n in archive.namelist()
                                                               if n.endswith(config))))["config"]["weight"]
    out = str(tmp_path / f"{kind}.pt2")
    if kind in ("size expression", "guard"):
        made_code = _size_made_code if kind == "size expression" else _guard_made_code
        return _rewritten(clean, out, replace={"models/model.json": made_code(marker)})
    if kind == "sample inputs":
        return _rewritten(clean, out, replace={"data/sample_inputs/model.pt": payload})
    if kind == "pickled weight":
        return _rewritten(clean, out, replace={config: _pickled_weight, f"data/weights/{weight['path_name']}": payload})
    if kind == "opaque constant":
        return _rewritten(clean, out, replace={"data/constants/model_constants_config.json": _opaque_constant},
                          add={"data/constants/opaque_obj_0": payload})
    return _rewritten(clean, out, add={"data/aotinductor/model/model.so": b"\x7fELF"})


def test_torch_alone_runs_a_pickle_in_a_pt2(tmp_path):
    """Why pt2.load checks: torch.export.load falls back to full unpickling of the sample inputs
    when its weights-only unpickler refuses them. If torch stops doing that, this fails."""
    marker = tmp_path / "marker"
    with pytest.raises(Exception):  # noqa: B017 (whatever torch raises after running the pickle)
        torch.export.load(_poisoned("sample inputs", tmp_path, marker))
    assert marker.exists()


@pytest.mark.parametrize("kind", ["size expression", "guard"])
def test_torch_alone_runs_a_pt2_s_expressions(tmp_path, kind):
    """Why pt2.load checks them: torch.export.load gives every size expression to sympy.sympify,
    which evaluates Python, and ExportedProgram.module() runs the guards with exec. If torch
    stops doing that, this fails."""
    marker = tmp_path / "marker"
    path = _poisoned(kind, tmp_path, marker)
    with contextlib.suppress(Exception):  # whatever torch raises after running the code
        torch.export.load(path).module()(torch.randn(2, 4))
    assert marker.exists()


@pytest.mark.parametrize("kind", ["sample inputs", "pickled weight", "opaque constant", "aotinductor",
                                  "size expression", "guard"])
def test_a_pt2_that_could_run_code_is_refused_in_one_line(tmp_path, kind):
    marker = tmp_path / "marker"
    _assert_refused_in_one_line(_poisoned(kind, tmp_path, marker), marker, " entry ")


def _assert_refused_in_one_line(path, marker, saying):
    from exporter.core.errors import BadFile

    with pytest.raises(BadFile) as refused:
        pt2.load(path)
    assert not marker.exists()
    message = str(refused.value)
    assert "\n" not in message and message.startswith(path) and saying in message, message


class Moded(torch.nn.Module):
    """A parameter, a buffer, a string input and a keyword input: the names and strings torch
    writes into the Python code of a loaded program."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x, mode, *, bias):
        y = self.lin(x) * self.scale + bias
        return y * 2 if mode == "double" else y


MODED_INPUTS = ((torch.ones(2, 4), "double"), {"bias": torch.ones(4)})


def _code_without_dots(marker):
    """Python that creates marker, with no dot (torch splits a parameter's path at dots)."""
    return f"exec(bytes({list(_code_that_creates(marker).encode())}))"


def _renamed(old, new, only=None):
    """A replace= function of _rewritten: every JSON string (value or key) `old` made `new`;
    only: within program["graph_module"][only] alone."""
    def rename(value):
        if isinstance(value, dict):
            return {new if k == old else k: rename(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return new if value == old else value

    def replace(data):
        program = json.loads(data)
        if only:
            program["graph_module"][only] = rename(program["graph_module"][only])
            return json.dumps(program).encode()
        return json.dumps(rename(program)).encode()
    return replace


def _keyword_named(name):
    def change(program):
        signature = program["graph_module"]["module_call_graph"][0]["signature"]
        spec = json.loads(signature["in_spec"])
        spec[1]["children_spec"][1]["context"] = json.dumps([name])  # (args, {keywords})
        signature["in_spec"] = json.dumps(spec)
    return _in_program(change)


def _sample_inputs_keyed(key):
    def replace(data):
        import io

        args, kwargs = torch.load(io.BytesIO(data), weights_only=True)
        out = io.BytesIO()
        torch.save((args, {key: next(iter(kwargs.values()))}), out)  # the one keyword input, renamed
        return out.getvalue()
    return replace


def _name_changes(kind, code):
    """{entry: replace} that put code where torch writes a name or string of kind into Python."""
    model, weights = "models/model.json", "data/weights/model_weights_config.json"
    quoted = f'"+str({code})+"'
    return {
        "parameter path": {model: _renamed("lin.weight", f"lin.w{quoted}"), weights: _renamed("lin.weight", f"lin.w{quoted}")},
        "parameter path in the program": {model: _renamed("lin.weight", f"lin.w{quoted}")},
        "buffer path": {model: _renamed("scale", f"s{quoted}"), weights: _renamed("scale", f"s{quoted}")},
        "string input": {model: _renamed("double", f"double' if {code} else '")},
        "keyword name": {model: _keyword_named(f"b':{code},'bias")},
        "graph input name": {model: _renamed("bias", f"bias={code}", only="graph")},
        "constant input name": {model: _renamed("mode", f"mode={code}", only="signature")},
        "argument name": {model: _in_program(lambda p: p["graph_module"]["module_call_graph"][0]["signature"]
                                             ["forward_arg_names"].__setitem__(1, f"mode={code}"))},
        "input dict key": {"data/sample_inputs/model.pt": _sample_inputs_keyed(f'b"+str({code})+"')},
    }[kind]


def _named_wrong(kind, tmp_path, marker):
    clean = str(tmp_path / "moded.pt2")
    pt2.save(torch.export.export(Moded(), *MODED_INPUTS), clean)
    return _rewritten(clean, str(tmp_path / "named.pt2"), replace=_name_changes(kind, _code_without_dots(marker)))


# What runs the code each crafted name carries, with torch alone: torch.export.load (a graph
# input's name), the module's call (its parameters', buffers' paths and a string input's guard),
# its forward called directly (a keyword's name). The others only break the code torch writes
# (an argument's name, a string input's name: only the last input may have a default) or the load
# (a parameter's path that its weights config does not give); an input dict key's was not made
# to run code.
RUNS_CODE = ["parameter path", "buffer path", "string input", "keyword name", "graph input name"]
REFUSED = ["parameter path in the program", "constant input name", "argument name", "input dict key"]


@pytest.mark.parametrize("kind", RUNS_CODE)
def test_torch_alone_runs_code_in_a_pt2_s_names(tmp_path, kind):
    """Why pt2.load checks names: torch writes them into Python code it runs. If torch stops
    doing that (or escapes them), this fails."""
    marker = tmp_path / "marker"
    path = _named_wrong(kind, tmp_path, marker)
    with contextlib.suppress(Exception):  # whatever torch raises after running the code
        module = torch.export.load(path).module()
        with contextlib.suppress(Exception):
            module(*MODED_INPUTS[0], **MODED_INPUTS[1])
        module.forward(*MODED_INPUTS[0], *MODED_INPUTS[1].values())
    assert marker.exists()


@pytest.mark.parametrize("kind", RUNS_CODE + REFUSED)
def test_a_pt2_whose_names_could_run_code_is_refused_in_one_line(tmp_path, kind):
    marker = tmp_path / "marker"
    _assert_refused_in_one_line(_named_wrong(kind, tmp_path, marker), marker, "which torch does not write")
