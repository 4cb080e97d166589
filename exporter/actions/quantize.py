"""The TorchQuantize action: .pt2 + calibration batches -> quantized .pt2, by PyTorch 2 Export
(PT2E) quantization. It never reads the model's sources.

    ep.module() -> prepare_pt2e(quantizer) -> calibration -> convert_pt2e -> torch.export again

The re-export uses the program's own shape spec, so the quantized program keeps its dynamic
dims and ranges, and every consumer of a torch_export (executorch_program, the tests, the
bundle) takes it unchanged.
"""

import contextlib

import torch

from exporter.actions import calibrate, delegates, export, registry
from exporter.core import backend_site, backends, buffers, float64_math, manifest, phases, ranges, shape_spec
from exporter.core.errors import UserError
from exporter.formats import pt2

# scheme -> (its settings, which each backend's quantizer hook reads (they are the arguments of
# XNNPACK's get_symmetric_quantization_config), needs calibration).
# Static schemes fix activation scales from the calibration batches; dynamic ones compute them
# at run time from each input, so they need none (and quantize only linear and conv layers).
SCHEMES: dict[str, tuple[dict, bool]] = {
    "int8_static_per_channel": ({"is_per_channel": True, "is_dynamic": False}, True),
    "int8_static_per_tensor": ({"is_per_channel": False, "is_dynamic": False}, True),
    "int8_dynamic_per_channel": ({"is_per_channel": True, "is_dynamic": True}, False),
    # int4 weights (the range -8..7) in int8 storage, one scale per channel, dynamic activations:
    # the 4-bit scheme a PT2E quantizer can apply to a .pt2 alone (for groups, torch_export's quantize).
    "int4_dynamic_per_channel": ({"is_per_channel": True, "is_dynamic": True, "weight_qmin": -8, "weight_qmax": 7}, False),
}


def quantizer(name, scheme):
    """Backend `name`'s own PT2E quantizer for `scheme`, from its hooks module (backend_hooks/<name>.py)."""
    return delegates.hooks(name).quantizer(SCHEMES[scheme][0])


def _observers(graph_module):
    return [n for n in graph_module.graph.nodes
            if n.op == "call_module" and n.target.startswith("activation_post_process")]


def _nothing_to_quantize(ep, config):
    """The message for a program in which the quantizer annotated no operator."""
    ops = manifest.operator_histogram(pt2.graph_modules(ep))
    ops = [op for op in ops if not op.startswith(("_operator.", "aten.sym_size"))]
    return (
        f"torch_quantize {config.label}: the {config.quantizer} quantizer found nothing to "
        f"quantize in {config.exported_label}: it annotates convolutions, linear layers and the "
        f"operators around them, and the program has {', '.join(ops[:12]) or 'no operators'}; "
        f"drop the torch_quantize (lower the float program), or quantize a model with conv or "
        f"linear layers"
    )


def _prepare(ep, config):
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    # Without check_guards, ep.module() has no `_guards_fn` call, which passes that stop at any
    # call_module node need (the record's quantizer says which quantizers run such passes).
    module = ep.module(check_guards=backends.record(config.quantizer).quantizer.check_guards)
    prepared = prepare_pt2e(module, quantizer(config.quantizer, config.scheme))
    if not _observers(prepared):
        raise UserError(_nothing_to_quantize(ep, config))
    return prepared


def _calibrate(prepared, ep, config, batches, precision):
    """Runs the batches through the observers, in float64 or as the model's own float32."""
    if not batches:
        # A dynamic scheme observes only the weights; one pass on the spec's example does it.
        example = shape_spec.build_inputs(config.spec, prepared.forward, config.spec_label)
        batches = [None]
    arithmetic = float64_math.float64() if precision == "float64" else contextlib.nullcontext()
    with torch.no_grad(), arithmetic:
        for batch in batches:
            args, kwargs = ((example.args, example.kwargs) if batch is None
                            else shape_spec.call_arguments(ep, batch, prepared))
            prepared(*args, **kwargs)


def quantize(ep, config, batches):
    """(the converted (quantized) GraphModule of ep, the precision calibration ran in).

    Calibration runs in float64 (core/float64_math.py says why: the same scales on every
    CPU). A model that cannot run in float64 (an operator with float32 kernels only) is
    calibrated in float32 instead; its scales may then differ between CPUs, and the manifest
    and the log say so.
    """
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    prepared, precision = _prepare(ep, config), "float64"
    # Calibration runs the model, which writes the buffers it mutates (a KV cache); the
    # quantized program must start from the state the float one starts from.
    state = {name: prepared.get_buffer(name).clone() for name in buffers.mutations(ep)}
    try:
        _calibrate(prepared, ep, config, batches, precision)
    except Exception as e:  # the model's own code may raise anything in float64
        print(f"torch_quantize {config.label}: calibration in float64 failed ({type(e).__name__}: "
              f"{str(e).splitlines()[0] if str(e) else ''}); calibrating in float32, so the scales "
              f"may differ between CPUs")
        prepared, precision = _prepare(ep, config), "float32"
        _calibrate(prepared, ep, config, batches, precision)
    with torch.no_grad():
        converted = convert_pt2e(prepared, fold_quantize=backends.record(config.quantizer).quantizer.fold_weights)
        for name, value in state.items():
            converted.get_buffer(name).copy_(value)
    return converted, precision


def _reexport(module, config):
    inputs = shape_spec.build_inputs(config.spec, module.forward, config.spec_label)
    try:
        with torch.no_grad(), phases.running(phases.EXPORT, code=f"the quantized model of {config.label}"):
            ep = torch.export.export(module, inputs.args, inputs.kwargs,
                                     dynamic_shapes=inputs.dynamic_shapes, strict=False)
    except Exception as e:
        raise UserError(
            f"torch_quantize {config.label}: re-exporting the quantized program failed: "
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}; try another scheme, "
            f"or report the model to rules_torch_export"
        ) from e
    return ep, inputs


def warm_up():
    """A persistent worker's warm-up, after the export's (quantize runs in the export worker):
    the quantizer, which imports torchao's PT2E."""
    defaults = registry.QuantizeConfig.__dataclass_fields__
    quantizer(defaults["quantizer"].default, defaults["scheme"].default)


def run(config):
    """Runs the action for a QuantizeConfig."""
    backend_site.activate(config.backend_packages)  # the packages of a backend's own quantizer
    ep = pt2.load(config.pt2)
    batches = []
    if config.calibration:
        batches = calibrate.check_batches(
            calibrate.load(config.calibration.batches), config.spec,
            f"torch_quantize {config.label}: calibration {config.calibration.label}",
            config.spec_label,
        )
    converted, precision = quantize(ep, config, batches)
    quantized, inputs = _reexport(converted, config)
    calibration = None
    if config.calibration:
        calibration = {
            "label": config.calibration.label,
            "batches": dict(manifest.file_record(config.calibration.batches), count=len(batches)),
        }
    export.write_pt2(quantized, config, ranges.report(quantized, inputs, config.spec), {
        "quantized_from": config.exported_label,
        "quantization": {"quantizer": config.quantizer, "scheme": config.scheme, "calibration": calibration,
                         "precision": precision},
    })
