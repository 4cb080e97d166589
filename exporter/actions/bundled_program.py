"""The BundledProgram action: a .pte plus test inputs and expected outputs -> a .bpte.

A .bpte is ExecuTorch's BundledProgram (executorch.devtools.bundled_program): the program's
bytes, and per method a suite of test cases, each the inputs to feed and the outputs to expect.
A device farm loads it with the bundled-program runtime API and checks the device's answers
against the host's. The expected outputs come from the eager model (or each method's exported
program), run on the same seeded inputs a numerics_test builds. The bytes are deterministic:
ExecuTorch serialises the suites sorted by method, the inputs are seeded, and the reference
runs on one thread (the thread count changes the order of float sums in some kernels).

BundledProgram wraps the .pte read from disk (its pte_file_path), so the program in the .bpte
is byte for byte the one executorch_program built. That path skips ExecuTorch's own check of
inputs against the program, so run() checks input and output types against the manifest.
"""

import json
import os

from exporter.core import atomic, case_inputs, determinism, float64_math, manifest
from exporter.core.errors import UserError
from exporter.formats import pt2

FORMAT = "rules_torch_export/bpte-manifest/1"

# What ExecuTorch's BundledProgram can hold (its schema's Value union, less None).
_INPUT_TYPES = ("tensor", "int", "float", "bool")


def _dtype(t):
    return str(t.dtype).replace("torch.", "")


def _shape_text(t):
    return f"{_dtype(t)}[{', '.join(map(str, t.shape))}]"


def _check_types(config, method, record):
    where = f"method {method!r} of {config.program_label}"
    for i, value in enumerate(record["inputs"]):
        if value["type"] not in _INPUT_TYPES:
            raise UserError(f"{where} takes a {value['type']} as input {i}; ExecuTorch's BundledProgram "
                            f"holds only tensor, int, float and bool inputs; bundle a method whose inputs are those")
    for i, value in enumerate(record["outputs"]):
        if value["type"] != "tensor":
            raise UserError(f"{where} returns a {value['type']} as output {i}; ExecuTorch's BundledProgram "
                            f"expects tensor outputs only; bundle a method that returns tensors")


def _references(config, modules):
    """{method: (callable, description)} that compute each method's expected outputs; modules
    are the methods' exported programs' module()s."""
    if config.reference == "eager":
        from exporter.core.model_loader import load_model

        model = load_model(config.model)
        return dict.fromkeys(config.methods, (model, f"the eager model {config.model.label}"))
    return {name: (modules[name], f"the exported program {m.exported_label}")
            for name, m in config.methods.items()}


def _in_float64(references):
    """The references computing in float64 (core/float64_math.py): the expected outputs,
    rounded once to the program's dtypes, are then the same bits on every CPU. One widened copy
    per model, so that a stateful model's calls still see each other's state."""
    copies = {}
    for reference, _ in references.values():
        copies.setdefault(id(reference), float64_math.widened(reference))
    # The default binds each reference's copy as the lambda is made (B008 wants it made later).
    return {name: (lambda *a, wide=copies[id(ref)], **k: float64_math.call(wide, a, k), description)  # noqa: B008
            for name, (ref, description) in references.items()}


def _expected(reference, description, args, kwargs, record, where, precision):
    """The reference's outputs as contiguous tensors, checked against the program's outputs."""
    import torch

    try:
        with torch.no_grad():
            result = reference(*args, **kwargs)
    except Exception as e:
        if precision == "float64":
            raise  # run() tries float32, which explains a model that fails in both
        raise UserError(f"{where}: {description} raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                        f"; fix the model, or choose inputs it accepts") from e
    outputs = [t for t in torch.utils._pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]
    wanted = record["outputs"]
    if len(outputs) != len(wanted):
        raise UserError(f"{where}: {description} returns {len(outputs)} tensors, the program {len(wanted)}; "
                        f"set reference = \"exported\" to take the expected outputs from the exported program")
    if precision == "float64":  # rounded once, to what the program returns
        outputs = [t.float() if t.dtype == torch.float64 and w["dtype"] == "float32" else t
                   for t, w in zip(outputs, wanted)]
    for i, (t, w) in enumerate(zip(outputs, wanted)):
        if _dtype(t) != w["dtype"]:
            raise UserError(f"{where}: output {i} of {description} is {_shape_text(t)}, the program's is "
                            f"{w['dtype']}; set reference = \"exported\"")
    return [t.detach().contiguous().clone() for t in outputs]


def _method_records(pte):
    """{method: program_summary record} (inputs and outputs with their types) of the .pte; the
    manifest has no outputs. pte_inspect's reader takes 0.15 s on ResNet-18's 47 MB."""
    from exporter.formats import program_summary, pte_inspect

    with open(pte, "rb") as f:
        return program_summary.methods(pte_inspect.read_program(f.read()))


def build_suites(config, precision="float64"):
    """(ExecuTorch MethodTestSuites, manifest records of their cases) for every method, with
    the expected outputs computed in precision ("float64" or "float32")."""
    import torch
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite

    from exporter.core import shape_spec

    eps = {name: pt2.load(method.pt2) for name, method in config.methods.items()}
    modules = {name: ep.module() for name, ep in eps.items()}
    references = _references(config, modules)
    if precision == "float64":
        references = _in_float64(references)
    method_records = _method_records(config.pte)
    suites, records = [], {}
    for name, method in sorted(config.methods.items()):
        record = method_records[name]
        _check_types(config, name, record)
        ep, module = eps[name], modules[name]
        reference, description = references[name]
        cases, case_records = [], []
        for sizes in method.cases:
            where = f"method {name!r} at {', '.join(f'{k}={v}' for k, v in sorted(sizes.items())) or 'its static shapes'}"
            args, kwargs = shape_spec.call_arguments(ep, case_inputs.make_inputs(method.spec, sizes), module)
            feed = case_inputs.runtime_inputs(args, kwargs, len(record["inputs"]))
            feed = [v.contiguous() if isinstance(v, torch.Tensor) else v for v in feed]
            expected = _expected(reference, description, args, kwargs, record, where, precision)
            cases.append(MethodTestCase(inputs=feed, expected_outputs=expected))
            case_records.append({
                "sizes": dict(sorted(sizes.items())),
                "inputs": [_shape_text(v) if isinstance(v, torch.Tensor) else repr(v) for v in feed],
                "outputs": [_shape_text(t) for t in expected],
            })
        suites.append(MethodTestSuite(method_name=name, test_cases=cases))
        records[name] = {"reference": description, "computed_in": precision, "cases": case_records}
    return suites, records


def run(config):
    """Runs the action for a BundledProgramConfig."""
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    with open(config.pte_manifest, encoding="utf-8") as f:
        program_manifest = json.load(f)
    digest = manifest.sha256_file(config.pte)
    if digest != program_manifest["pte"]["sha256"]:
        raise UserError(f"{os.path.basename(config.pte)} has sha256 {digest}, but its manifest records "
                        f"{program_manifest['pte']['sha256']}; rebuild {config.program_label}")
    with determinism.reproducible_math():  # as every action runs; also when called in-process
        try:
            suites, records = build_suites(config)
        except UserError:
            raise
        except Exception as e:  # the model's own code may fail in float64: float32 then
            print(f"bundled_program {config.label}: the reference failed in float64 ({type(e).__name__}: "
                  f"{str(e).splitlines()[0] if str(e) else ''}); expected outputs computed in float32, "
                  f"so their last bits may differ between CPUs")
            suites, records = build_suites(config, "float32")
    bundled = BundledProgram(None, suites, pte_file_path=config.pte)
    out = config.outputs["bpte"]
    atomic.write_bytes(out, serialize_from_bundled_program_to_flatbuffer(bundled))
    manifest.write_json(config.outputs["manifest"], {
        "format": FORMAT,
        "label": config.label,
        "program": {"label": config.program_label, "sha256": digest, "size": program_manifest["pte"]["size"]},
        "bpte": manifest.file_record(out),
        # The weights the program loads beside the .bpte (weights = "external").
        **({"ptd": program_manifest["ptd"]} if "ptd" in program_manifest else {}),
        "reference": config.reference,
        "methods": records,
        "inputs": manifest.inputs_record(config.raw),
        "toolchain": manifest.toolchain_record(config.identity),
    })
