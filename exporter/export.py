"""The TorchExport action: model + shape spec -> normalised .pt2 and its manifest."""

import os

import torch

from exporter import manifest, spec as spec_lib
from exporter.errors import UserError
from exporter.model_loader import load_model


def strip_stack_traces(ep):
    """Drops node stack traces: they hold absolute (sandbox) paths, which differ per action."""
    for gm in ep.graph_module.modules():
        if isinstance(gm, torch.fx.GraphModule):
            for node in gm.graph.nodes:
                node.meta.pop("stack_trace", None)


def dim_report(ep, spec, input_order):
    """Maps each named dim to its exported range, and lists dims that specialised to a constant.

    input_order names the inputs in the order torch.export made their placeholders.
    """
    shapes = {e["name"]: e["value"]["tensor"]["shape"] for e in spec["inputs"]}
    placeholders = [
        n for n in ep.graph.nodes
        if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs
    ]
    ranges, specialised = {}, {}
    for node, input_name in zip(placeholders, input_order):
        for axis, size in enumerate(shapes[input_name]):
            if not isinstance(size, str):
                continue
            actual = node.meta["val"].shape[axis]
            if isinstance(actual, torch.SymInt):
                vr = ep.range_constraints.get(actual.node.expr)
                if vr is not None:
                    ranges[size] = {"min": _bound(vr.lower), "max": _bound(vr.upper)}
            else:
                specialised.setdefault(size, (input_name, axis, int(actual)))
    return ranges, specialised


def _bound(value):
    return int(value) if value.is_finite else None


def _signature_record(ep):
    def spec_entry(s):
        return {"kind": s.kind.name, "name": getattr(s.arg, "name", str(s.arg)), "target": s.target}

    return (
        [spec_entry(s) for s in ep.graph_signature.input_specs],
        [spec_entry(s) for s in ep.graph_signature.output_specs],
    )


def _export(module, args, kwargs, dynamic_shapes, config):
    try:
        return torch.export.export(
            module, args, kwargs, dynamic_shapes=dynamic_shapes, strict=config.get("strict", False)
        )
    except UserError:
        raise
    except Exception as e:
        key = next((l for l in str(e).splitlines() if l.strip()), type(e).__name__)
        raise UserError(
            f"torch.export failed for model {config['model']['label']} with shape_spec "
            f"{config['spec_label']}: {type(e).__name__}: {key.strip()}; see the torch.export "
            f"tutorial's fixes (strict = False, torch.cond, torch._check) or adjust the shape_spec"
        ) from e


def run(config):
    module = load_model(config["model"])
    spec = config["spec"]
    args, kwargs, dynamic_shapes = spec_lib.build_inputs(spec, module.forward, config["spec_label"])
    ep = _export(module, args, kwargs, dynamic_shapes, config)
    input_order = spec_lib.positional_names(module.forward, len(args)) + list(kwargs)
    ranges, specialised = dim_report(ep, spec, input_order)
    if specialised:
        name, (input_name, axis, value) = next(iter(sorted(specialised.items())))
        raise UserError(
            f"dim {name!r} of shape_spec {config['spec_label']} was requested dynamic but the "
            f"model specialised it to {value} (input {input_name!r}, axis {axis}); make it "
            f"static in the spec (write {value} instead of {name!r}), or change the model"
        )
    strip_stack_traces(ep)
    pt2, manifest_path = config["outputs"]["pt2"], config["outputs"]["manifest"]
    tmp = pt2 + ".tmp"
    torch.export.save(ep, tmp)
    os.replace(tmp, pt2)
    input_specs, output_specs = _signature_record(ep)
    manifest.write_json(manifest_path, {
        "format": "rules_torch_export/pt2-manifest/1",
        "label": config["label"],
        "model": {k: config["model"][k] for k in ("label", "entry")},
        "shape_spec": {"label": config["spec_label"], "spec": spec},
        "pt2": manifest.file_record(pt2),
        "inputs": manifest.inputs_record(config),
        "input_specs": input_specs,
        "output_specs": output_specs,
        "range_constraints": ranges,
        "operators": manifest.operator_histogram(
            m for m in ep.graph_module.modules() if isinstance(m, torch.fx.GraphModule)
        ),
        "toolchain": manifest.toolchain_record(config["identity"]),
    })
