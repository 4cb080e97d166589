"""The ExecuTorchLower action: .pt2 -> .pte and its manifest. It never re-exports."""

import os

import torch

from exporter import lower_errors, manifest, program_summary as program_summary_lib, pt2 as pt2_lib
from exporter.errors import UserError

BACKENDS = ("xnnpack",)


def _partitioners(backends):
    partitioners = []
    for backend in backends:
        if backend == "xnnpack":
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            partitioners.append(XnnpackPartitioner())
        else:  # The rule checks backends at analysis time; this guards direct CLI use.
            raise UserError(f"unknown backend {backend!r}; `backends` takes {list(BACKENDS)} or []")
    return partitioners


def lower(ep, backends):
    """Lowers an ExportedProgram; returns executorch's ExecutorchProgramManager."""
    from executorch.exir import to_edge_transform_and_lower

    # Re-tracing a loaded program runs torch's fake convolution, which picks an ATen CPU
    # backend by the traced batch size and so narrows the batch range (NNPACK: batch < 16,
    # oneDNN: batch > 1). ExecuTorch never uses those backends; without them the dims keep the
    # ranges that torch.export recorded. Seen with torch 2.13 + ExecuTorch 1.4.1.
    with torch.backends.mkldnn.flags(enabled=False), torch.backends.nnpack.flags(enabled=False):
        edge = to_edge_transform_and_lower(ep, partitioner=_partitioners(backends))
        return edge.to_executorch()


def program_summary(program):
    """Per method: its operators (outside delegates) and delegates with their payload sizes.

    program is ExecuTorch's own Program (to_executorch's, or deserialize_pte_binary's).
    """
    return {
        name: {"operators": record["operators"], "delegates": record["delegates"]}
        for name, record in program_summary_lib.methods(program).items()
    }


def run(config):
    """Runs the action for a LowerConfig."""
    context = lower_errors.Context(config.label, config.exported_label, config.backends,
                                   config.export, config.spec_label)
    try:
        ep = pt2_lib.load(config.pt2)
    except Exception as e:
        unresolved = pt2_lib.unresolved_operators(config.pt2)
        if unresolved:
            raise UserError(lower_errors.unresolved_message(unresolved, context)) from e
        raise UserError(f"cannot load {os.path.basename(config.pt2)}: {e}") from e
    unbounded = lower_errors.unbounded_sizes(ep, config.spec)
    if unbounded:
        raise UserError(lower_errors.unbounded_message(unbounded, context))
    try:
        et_program = lower(ep, list(config.backends))
    except UserError:
        raise
    except Exception as e:
        raise UserError(lower_errors.explain(e, context)) from e
    pte, manifest_path = config.outputs["pte"], config.outputs["manifest"]
    tmp = pte + ".tmp"
    with open(tmp, "wb") as f:
        f.write(et_program.buffer)
    os.replace(tmp, pte)
    manifest.write_json(manifest_path, {
        "format": "rules_torch_export/pte-manifest/1",
        "label": config.label,
        "exported": {"label": config.exported_label, "pt2_sha256": manifest.sha256_file(config.pt2)},
        "backends": list(config.backends),
        "pte": manifest.file_record(pte),
        "inputs": manifest.inputs_record(config.raw),
        "methods": program_summary(et_program.executorch_program),
        "toolchain": manifest.toolchain_record(config.identity),
    })
    if "summary" in config.outputs:
        from exporter import pte_inspect

        manifest.write_json(config.outputs["summary"], pte_inspect.summarize(pte))
