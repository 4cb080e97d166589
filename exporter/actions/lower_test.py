"""The ExecuTorchLower action in-process: its errors name the exports they are about."""

import pytest
import torch

from exporter.actions import lower, registry
from exporter.core.errors import UserError
from exporter.formats import pt2
from exporter.tests import another_process


@torch.library.custom_op("lower_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class CallsTwice(torch.nn.Module):
    def forward(self, x):
        return torch.ops.lower_test.twice(x) + 1


def _pt2(tmp_path, name):
    path = str(tmp_path / f"{name}.pt2")
    pt2.save(torch.export.export(CallsTwice(), (torch.randn(2, 3),)), path)
    return path


def _method(tmp_path, name):
    return {"exported_label": f"//t:{name}_ep", "pt2": _pt2(tmp_path, name), "spec_label": None, "spec": None}


def test_a_failed_program_of_several_methods_names_every_export(tmp_path):
    (tmp_path / "identity.txt").write_text("python 3\n")
    config = registry.LowerConfig.from_json({
        "label": "//t:program", "identity": str(tmp_path / "identity.txt"), "backends": [],
        "methods": {"forward": _method(tmp_path, "a"), "other": _method(tmp_path, "b")},
        "outputs": {"pte": str(tmp_path / "p.pte"), "manifest": str(tmp_path / "p.pte.json")},
    })
    with pytest.raises(UserError) as error:
        lower.lowered(config)
    message = str(error.value)
    assert "no kernel for lower_test.twice" in message, message
    assert "ExecuTorch lowering of //t:a_ep, //t:b_ep for portable failed" in message, message


@pytest.mark.parametrize("content", [b"not a zip", b""], ids=["foreign", "empty"])
def test_a_corrupt_pt2_fails_in_one_line_naming_it(tmp_path, content):
    """A .pt2 from a cache may be anything: the lowering says which file and what is wrong."""
    (tmp_path / "identity.txt").write_text("python 3\n")
    bad = tmp_path / "a.pt2"
    bad.write_bytes(content)
    config = registry.LowerConfig.from_json({
        "label": "//t:program", "identity": str(tmp_path / "identity.txt"), "backends": [],
        "methods": {"forward": {"exported_label": "//t:a_ep", "pt2": str(bad), "spec_label": None, "spec": None}},
        "outputs": {"pte": str(tmp_path / "p.pte"), "manifest": str(tmp_path / "p.pte.json")},
    })
    with pytest.raises(UserError) as error:
        lower.lowered(config)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{bad}: not a zip archive (a .pt2 is one)"), message



class Doubles(torch.nn.Module):
    def forward(self, x):
        return x * 2


@pytest.mark.parametrize("backend, options, quantizer", [
    ("ethos_u", {"ethos_u": {"target": "ethos-u55-128", "system_config": "default", "memory_mode": "default"}}, "ethos_u"),
    ("tosa", {"tosa": {"profile": "INT"}}, "tosa"),
])
def test_a_float_program_for_an_integer_backend_fails_in_one_line(tmp_path, backend, options, quantizer):
    """Ethos-U (and TOSA's INT profile) run integer operators only; Ethos-U's partitioner would
    leave a float model on the CPU and say nothing. Checked before Arm's packages are imported."""
    (tmp_path / "identity.txt").write_text("python 3\n")
    path = str(tmp_path / "a.pt2")
    pt2.save(torch.export.export(Doubles(), (torch.randn(2, 3),)), path)
    config = registry.LowerConfig.from_json({
        "label": "//t:program", "identity": str(tmp_path / "identity.txt"), "backends": [backend],
        "backend_options": options,
        "methods": {"forward": {"exported_label": "//t:a_ep", "pt2": path, "spec_label": None, "spec": None}},
        "outputs": {"pte": str(tmp_path / "p.pte"), "manifest": str(tmp_path / "p.pte.json")},
    })
    with pytest.raises(UserError) as error:
        lower.lowered(config)
    message = str(error.value)
    assert message == (f"executorch_program //t:program: method forward's export //t:a_ep is not quantized, and "
                       f"{backend} runs integer operators only; quantize it with "
                       f"torch_quantize(quantizer = \"{quantizer}\") and lower that"), message


# Lowers a small conv + linear model for Core ML and prints the .pte's sha256 (run in-process
# and in a child).
_COREML_LOWERING = """
import hashlib, torch
from exporter.actions import lower
from exporter.core.backends import BackendOptions, CoremlOptions
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 4)).eval()
ep = torch.export.export(model, (torch.randn(1, 3, 8, 8),))
program, _ = lower.lower(ep, ["coreml"], backend_options=BackendOptions(coreml=CoremlOptions(precision="fp32")))
print(hashlib.sha256(program.buffer).hexdigest())
"""
another_process.register("coreml", _COREML_LOWERING)


@pytest.fixture(scope="module")
def coreml_program():
    """(ExecuTorch's program, its sha256) of _COREML_LOWERING, run in this process."""
    namespace: dict = {}
    exec(_COREML_LOWERING.replace("print(", "digest = ("), namespace)
    return namespace["program"], namespace["digest"]


def test_a_coreml_program_has_the_same_bytes_in_two_processes(coreml_program):
    """Core ML's uuid4 names, protobuf map order and conversion date (backend_hooks/coreml_package.py)
    would make them differ: this process and a child with another hash seed, on one machine
    (another_process's child, shared with the other tests' jobs there)."""
    import os

    assert another_process.SEED != os.environ.get("PYTHONHASHSEED")
    assert another_process.result("coreml")["printed"].split()[-1] == coreml_program[1]


def test_a_coreml_delegate_is_a_model_package_with_the_model_inputs_and_outputs(coreml_program, tmp_path):
    """What can be checked off Apple hardware: ExecuTorch's unflattening of the delegate gives a
    model package that coremltools loads, with the exported model's input and output shapes."""
    import coremltools as ct
    from executorch.backends.apple.coreml import executorchcoreml

    delegates = coreml_program[0].executorch_program.backend_delegate_data
    assert len(delegates) == 1, delegates
    assert executorchcoreml.unflatten_directory_contents(bytes(delegates[0].data), str(tmp_path))
    spec = ct.utils.load_spec(str(tmp_path / "lowered_module" / "model.mlpackage"))
    shapes = [[list(f.type.multiArrayType.shape) for f in fields]
              for fields in (spec.description.input, spec.description.output)]
    assert shapes == [[[1, 3, 8, 8]], [[1, 4]]]
