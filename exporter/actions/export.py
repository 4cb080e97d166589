"""The TorchExport action: model + shape spec -> normalised .pt2 and its manifest."""

import torch

from exporter.core import export_errors, manifest, output_tree, phases, ranges, shape_spec
from exporter.formats import pt2
from exporter.core.errors import Context, UserError, fix
from exporter.core.model_loader import load_model


def resolve_op(name, attr, label):
    """torch.ops.<namespace>.<op>[.<overload>] named by a torch_export decompose/keep entry."""
    parts = name.split(".")
    obj = torch.ops
    for part in parts:
        try:
            obj = getattr(obj, part)
        except (AttributeError, RuntimeError):
            raise UserError(
                f"torch_export {label}: {attr} names {name!r}, which is not a registered operator; "
                f"write it as namespace.op.overload (e.g. \"aten.gelu.default\"), and add the "
                f"py_library that registers a custom op to the model's deps"
            ) from None
    if isinstance(obj, torch._ops.OpOverloadPacket):
        return [getattr(obj, o) for o in obj.overloads()]
    return [obj]


def _decomposition(op):
    """torch's decomposition of op, or None."""
    from torch._decomp import core_aten_decompositions, decomposition_table

    for table in (decomposition_table, core_aten_decompositions()):
        if op in table:
            return table[op]
    if torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
        return op.decompose
    return None


def apply_ir(ep, options, label):
    """Runs the decompositions that torch_export's ir, decompose and keep (options) ask for."""
    if options.ir == "training":
        return ep
    table = torch.export.default_decompositions() if options.ir == "core_aten" else {}
    for name in options.keep:
        for op in resolve_op(name, "keep", label):
            table.pop(op, None)
    for name in options.decompose:
        found = {op: _decomposition(op) for op in resolve_op(name, "decompose", label)}
        found = {op: fn for op, fn in found.items() if fn is not None}
        if not found:
            raise UserError(
                f"torch_export {label}: decompose names {name!r}, for which torch has no "
                f"decomposition; remove it from decompose"
            )
        table.update(found)
    with phases.running(phases.EXPORT, code=f"the decompositions of {label}"):
        return ep.run_decompositions(table)


def signature_record(ep):
    def spec_entry(s):
        return {"kind": s.kind.name, "name": getattr(s.arg, "name", str(s.arg)), "target": s.target}

    return (
        [spec_entry(s) for s in ep.graph_signature.input_specs],
        [spec_entry(s) for s in ep.graph_signature.output_specs],
    )


def _export(module, inputs, config):
    try:
        # No autograd state: an export is for inference, and a model that writes its buffers
        # in place (a KV cache) must not record those writes for a backward pass.
        with torch.no_grad(), phases.running(phases.EXPORT, code=f"{config.model.kind} {config.model.label}"):
            return torch.export.export(
                module,
                inputs.args,
                inputs.kwargs,
                dynamic_shapes=inputs.dynamic_shapes,
                strict=config.options.strict,
            )
    except UserError:
        raise
    except Exception as e:
        context = Context(config.label, model=config.model.label, spec_label=config.spec_label, spec=config.spec,
                          export=config.options)
        raise UserError(export_errors.explain(e, context)) from e


def _check_specialised(specialised, config):
    """A named dim, a derived size or a DYNAMIC hint that export made constant is an error."""
    for record in specialised:
        if record["requested"] == "AUTO":
            continue
        where = f"{record['input']} axis {record['axis']}"
        raise UserError(
            f"shape_spec {config.spec_label} asks for {where} to be dynamic "
            f"({record['requested']}), but model {config.model.label} specialised it to "
            f"{record['specialised']}; "
            + fix("static_size", f"write {record['specialised']} there instead (or use AUTO, which lets "
                                 f"export specialise it)")
            + ", or change the model"
        )


def _warm_program():
    """A small dynamic-batch ExportedProgram with the ops most models use."""

    class Warm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.linear(torch.relu(self.conv(x)).mean((2, 3)))

    batch = torch.export.Dim("batch", min=1, max=4)
    return torch.export.export(Warm(), (torch.randn(2, 3, 8, 8),), dynamic_shapes=({0: batch},))


def warm_up(then=None):
    """A persistent worker's warm-up: a tiny export written as a .pt2; then(the program loaded
    back) warms up what a later action does with it (lower.warm_up, quantize.warm_up)."""
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "warm.pt2")
        pt2.save(_warm_program(), path)
        if then is not None:
            then(pt2.load(path))


def _check_strict(config):
    """An hf_model module with a static KV cache exports only strictly (core/hf_models.py)."""
    from exporter.core import hf_models

    cached = config.model.kind == "hf_model" and hf_models.static_cache(config.model.init_args)
    if cached and not config.options.strict:
        raise UserError(f"hf_model {config.model.label}: {cached} keeps a static KV cache, which exports "
                        f"only with strict = True; set strict = True on the llm_program or torch_export "
                        f"that exports it ({config.label})")


def _transform_eager(module, options, label):
    """Swaps in ExecuTorch's LLM operators and quantizes the eager model's embeddings and linears in
    place, as set; the manifest's records of each (empty when none is set)."""
    from exporter.actions import eager_quantize

    extra = {}
    if options.llm_ops:
        from exporter.core import llm_ops

        extra["llm_ops"] = llm_ops.apply(module, options.llm_ops, label)
    if options.embedding_quantize:  # first, as ExecuTorch's export_llm: the tables are no linears
        extra["embedding_quantization"] = eager_quantize.quantize_embeddings(module, options.embedding_quantize, label)
    if options.quantize:
        extra["eager_quantization"] = eager_quantize.apply(module, options.quantize, options.group_size, label)
    return extra


def run(config):
    """Runs the action for an ExportConfig."""
    _check_strict(config)
    module = load_model(config.model)
    extra = _transform_eager(module, config.options, config.label)
    spec = config.spec
    inputs = shape_spec.build_inputs(spec, module.forward, config.spec_label)
    ep = _export(module, inputs, config)
    extra.update(_outputs_record(ep))
    dims, range_constraints, specialised = ranges.report(ep, inputs, spec)
    _check_specialised(specialised, config)
    ep = apply_ir(ep, config.options, config.label)
    write_pt2(ep, config, (dims, range_constraints, specialised), {
        "model": _model_record(config.model),
        "export": config.options.to_json(),
        **_generation_record(config.model, module),
        **extra,
    })


def _outputs_record(ep):
    """Makes ep's outputs loadable without the model's classes (core/output_tree.py) and returns the
    manifest's "outputs" record: their names and the containers rewritten as dicts. Empty for a
    program whose outputs have no names, so that its manifest keeps its bytes."""
    replaced = output_tree.make_plain(ep)
    names = output_tree.program_names(ep)
    if not names and not replaced:
        return {}
    record = {"names": names} if names else {}
    if replaced:
        record["containers"] = replaced
    return {"outputs": record}


def _model_record(model):
    """The manifest's "model": its label and entry, and a lora_model's adapter (only then, so
    that other manifests keep their bytes)."""
    record = {"label": model.label, "entry": model.entry}
    if model.lora:
        record["lora"] = {"rank": model.lora.rank, "alpha": model.lora.alpha,
                          "target_modules": list(model.lora.target_modules)}
    return record


def _generation_record(model, module):
    """The manifest's "generation": an hf_model language model's own bos and eos ids and the file
    they came from (core/hf_generation.py), which llm_program's lowering prefers to its
    tokenizer's; nothing for other models."""
    ids = getattr(module, "generation", None) if model.kind == "hf_model" else None
    return {"generation": ids} if ids else {}


def write_pt2(ep, config, report, extra):
    """Saves ep as outputs["pt2"] and writes its manifest: the records every .pt2 has (report is
    ranges.report's (dims, range_constraints, specialised)), plus `extra`."""
    pt2_path, manifest_path = config.outputs["pt2"], config.outputs["manifest"]
    pt2.save(ep, pt2_path)
    input_specs, output_specs = signature_record(ep)
    dims, range_constraints, specialised = report
    manifest.write_json(manifest_path, dict(extra, **{
        "format": "rules_torch_export/pt2-manifest/1",
        "label": config.label,
        "shape_spec": {"label": config.spec_label, "spec": config.spec},
        "pt2": manifest.file_record(pt2_path),
        "inputs": manifest.inputs_record(config.raw),
        "input_specs": input_specs,
        "output_specs": output_specs,
        "range_constraints": range_constraints,
        "dims": dims,
        "specialised": specialised,
        "operators": manifest.operator_histogram(pt2.graph_modules(ep)),
        "toolchain": manifest.toolchain_record(config.identity),
    }))
