"""Ethos-U's hooks (backend_hooks/__init__.py): ExecuTorch's EthosUPartitioner and EthosUQuantizer for
the NPU the options name; Vela's figures and the TOSA graphs it compiled, read while the lowering
runs (vela.py), for the manifest and the record's outputs; and why the partitioner left operators
on the CPU (arm.py)."""

import contextlib

from backend_hooks import arm, vela
from exporter.core import atomic, manifest

# recording()'s key for Vela's capture (vela.Captured).
VELA = "vela"


def compile_spec(options):
    """ExecuTorch's EthosUCompileSpec of the options; "default" leaves the choice to it."""
    from executorch.backends.arm.ethosu import EthosUCompileSpec

    return EthosUCompileSpec(
        options.target,
        system_config=None if options.system_config == "default" else options.system_config,
        memory_mode=None if options.memory_mode == "default" else options.memory_mode,
    )


def partitioner(options):
    from executorch.backends.arm.ethosu import EthosUPartitioner

    arm.quantized_out_variants()
    return EthosUPartitioner(compile_spec(options))


def quantizer(settings):
    """For the default NPU, the Ethos-U55-128: the U55s and U85s take the same int8 operators."""
    from executorch.backends.arm.quantizer import EthosUQuantizer

    from exporter.core.backends import EthosUOptions

    return EthosUQuantizer(compile_spec(EthosUOptions())).set_global(arm.quantization_config(settings))


@contextlib.contextmanager
def recording(found):
    with vela.capture() as captured, arm.fallback_recording(found):
        found[VELA] = captured
        yield


def manifest_record(found):
    """Vela's figures ("vela") and the partitioner's rejections ("cpu_fallback")."""
    return dict(vela.manifest_record(found[VELA].compiles), **arm.fallback_record(found))


def write_outputs(found, outputs, label):
    """The TOSA graphs Vela compiled, for numerics_test's tosa_reference, and Vela's figures in a
    file of their own, for a team that wants them without the manifest."""
    captured = found[VELA]
    if "vela_tosa" in outputs:
        atomic.write_bytes(outputs["vela_tosa"], vela.graphs_text(captured.graphs).encode())
    if "vela" in outputs:
        manifest.write_json(outputs["vela"], vela.summary_record(label, captured.compiles))
