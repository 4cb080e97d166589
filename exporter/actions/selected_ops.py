"""Selective build: the operators (with dtypes and dim orders) that a program calls outside its
delegates, as the selected_operators.yaml that ExecuTorch's selective build takes.

`write` runs ExecuTorch's own gen_oplist on a .pte (in the lowering action); `run` is the
ExecuTorchSelectedOps action, which merges several programs' lists the way ExecuTorch's
gen_all_oplist does (torchgen's combine_selective_builders). Each operator's debug_info names
the programs that use it by label, never by path, so the files do not depend on the checkout.
"""

from exporter.core import atomic, manifest
from exporter.core.errors import UserError


def _dump(data, path):
    import yaml

    atomic.write_bytes(path, yaml.safe_dump(data, default_flow_style=False).encode("utf-8"))


def write(pte, label, path):
    """Writes the selected-operators YAML of the .pte at `pte` to `path`."""
    import contextlib
    import io

    import yaml
    from executorch.codegen.tools import gen_oplist

    raw = atomic.temp_beside(path)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints every operator it reads
            gen_oplist.gen_oplist(output_path=raw, model_file_path=pte)
        with open(raw, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    finally:
        atomic.remove_temp(raw)
    for operator in data["operators"].values():
        operator["debug_info"] = [label]
    _dump(data, path)


def merge(paths):
    """The union of selected-operators files, as ExecuTorch's gen_all_oplist combines them."""
    from functools import reduce

    import yaml
    from torchgen.selective_build.selector import SelectiveBuilder, combine_selective_builders

    builders = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            builders.append(SelectiveBuilder.from_yaml_dict(yaml.safe_load(f) or {}))
    merged = reduce(combine_selective_builders, builders, SelectiveBuilder.from_yaml_dict({}))
    data = merged.to_dict()
    for operator in data.get("operators", {}).values():  # each program once, in label order
        operator["debug_info"] = sorted(set(operator.get("debug_info") or []))
    return data


def run(config):
    """The ExecuTorchSelectedOps action: outputs["selected_ops"] from config.lists."""
    lists = config.lists
    if not lists:
        raise UserError("programs is empty; list the executorch_program targets whose operators "
                        "the app's runtime must hold, e.g. programs = [\":model_pte\"]")
    data = merge([entry["file"] for entry in lists])
    _dump(data, config.outputs["selected_ops"])
    manifest.write_json(config.outputs["manifest"], {
        "format": "rules_torch_export/selected-ops/1",
        "label": config.label,
        "programs": sorted(entry["label"] for entry in lists),
        "operators": sorted(data.get("operators", {})),
        "toolchain": manifest.toolchain_record(config.identity),
    })
