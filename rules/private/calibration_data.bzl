"""calibration_data: the sample inputs a quantizer observes, checked against a shape spec."""

load("//rules:providers.bzl", "CalibrationDataInfo", "ShapeSpecInfo", "TorchModelInfo", "calibration_data_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:entry_points.bzl", "check_entry", "import_roots")
load("//rules/private/lib:exporter_action.bzl", "DEADLINE_ATTRS", "run_exporter")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

_BATCH_FILES = [".pt", ".npz"]

def _calibration_data_impl(ctx):
    spec = ctx.attr.shapes[ShapeSpecInfo]
    where = message_prefix("calibration_data", ctx.label)
    code = [f for f in ctx.files.srcs if f.extension == "py"]
    files = [f for f in ctx.files.srcs if f.extension != "py"]
    if ctx.attr.entry:
        check_entry(where, ctx.attr.entry, "models.common.calibration:images")
        if files:
            fail(where + "with an entry, srcs holds its Python files; move {} to `data` (the entry reads it) or drop the entry".format(files[0].basename))
    else:
        if code or ctx.attr.deps or ctx.attr.data or ctx.attr.init_args_json != "{}":
            fail(where + "srcs holds .py files, deps, data or init_args but there is no entry; set entry = 'package.module:callable', or list only .pt/.npz batch files in srcs")
        if not files:
            fail(where + "give the batches: srcs = [\"calib.pt\"] (a list of {input name: tensor} dicts saved with torch.save), or an entry that returns them")
    dep_srcs = [d[TorchModelInfo].srcs if TorchModelInfo in d else d[PyInfo].transitive_sources for d in ctx.attr.deps]
    srcs = depset(code, transitive = dep_srcs)
    batches = ctx.actions.declare_file(ctx.label.name + ".calib.pt")
    manifest = ctx.actions.declare_file(ctx.label.name + ".calib.json")
    log = run_exporter(
        ctx,
        command = "calibrate",
        progress_message = "Making calibration batches {}".format(ctx.label),
        config = {
            "spec_label": str(spec.label),
            "spec": spec.spec,
            "files": [f.path for f in files],
            "entry": ctx.attr.entry,
            "init_args": json.decode(ctx.attr.init_args_json),
            "import_roots": import_roots(srcs.to_list()),
            "srcs": [f.path for f in srcs.to_list() + ctx.files.data],
        },
        inputs = depset(files + ctx.files.data, transitive = [srcs]),
        outputs = {"batches": batches, "manifest": manifest},
    )
    return [
        calibration_data_info(label = ctx.label, spec = spec, batches = batches, manifest = manifest),
        DefaultInfo(files = depset([batches, manifest])),
        OutputGroupInfo(logs = depset([log])),
    ]

calibration_data_rule = rule(
    implementation = _calibration_data_impl,
    doc = "Calibration batches for torch_quantize. Outputs <name>.calib.pt and <name>.calib.json.",
    attrs = dict(DEADLINE_ATTRS, **{
        "shapes": attr.label(
            mandatory = True,
            providers = [ShapeSpecInfo],
            doc = "The shape_spec every batch must fit (names, dtypes, dims in range).",
        ),
        "srcs": attr.label_list(
            allow_files = _BATCH_FILES + [".py"],
            doc = "Without entry: .pt files (a list of {input name: tensor} dicts, or one; read " +
                  "with torch.load(weights_only=True)) and .npz files (one batch, an array per " +
                  "input). With entry: the entry's Python files.",
        ),
        "entry": attr.string(
            doc = "'package.module:callable' that returns or yields the batches. The exporter " +
                  "seeds torch, random and numpy before calling it, calls it twice, and fails " +
                  "if the two calls differ.",
        ),
        "init_args_json": attr.string(default = "{}", doc = "The entry's keyword arguments as JSON (set by the macro)."),
        "deps": attr.label_list(
            providers = [[TorchModelInfo], [PyInfo]],
            doc = "torch_model or py_library targets whose code the entry imports.",
        ),
        "data": attr.label_list(allow_files = True, doc = "Files the entry reads (paths relative to the execroot)."),
    }),
    provides = [CalibrationDataInfo],
    toolchains = [TORCH_EXPORT_TOOLCHAIN_TYPE],
)

def calibration_data(name, init_args = {}, **kwargs):
    """Declares calibration batches. init_args holds the entry's keyword arguments (JSON values)."""
    calibration_data_rule(name = name, init_args_json = json.encode(init_args), **kwargs)
