"""What a numerics_test compares, as entries of its configs and as a build action.

The test's config (runfiles paths) and the config of its NumericsValues action (execroot paths)
share the entries below: the program, the method's export, the reference, the cases. The action
(exporter/actions/numerics_values.py) runs in the export's warm worker and writes the cases'
inputs, the reference's outputs and the Python runtime's outputs, so that the test itself
compares files with numpy and runs the native runners, without importing torch or ExecuTorch.
"""

load("//rules:providers.bzl", "ExportedProgramInfo", "TorchModelInfo")
load("//rules/private:backends.bzl", "package_identities", "per_machine")
load("//rules/private/lib:config_entries.bzl", "exported_config", "model_config")
load("//rules/private/lib:exporter_action.bzl", "run_exporter")

def _path(f, runfiles):
    return f.short_path if runfiles else f.path

def _references(ctx, exported, runfiles):
    """(the "model" and "reference_program" entries, and the Files they need)."""
    model_entry, model_files, reference_program, files = None, depset(), None, []
    if ctx.attr.reference == "eager":
        model = ctx.attr.model[TorchModelInfo] if ctx.attr.model else exported.model
        model_entry, model_files = model_config(model, runfiles = runfiles)
    if ctx.attr.reference_program:
        other = ctx.attr.reference_program[ExportedProgramInfo]
        files.append(other.pt2)
        reference_program = {"label": str(other.label), "pt2": _path(other.pt2, runfiles)}
    return {"model": model_entry, "reference_program": reference_program}, files, model_files

def numerics_entries(ctx, program, method, steps, runfiles):
    """The entries a numerics_test's config and its values action's config share.

    Args:
      ctx: the numerics_test rule's context.
      program: the ExecuTorchProgramInfo under test.
      method: the method under test.
      steps: the test's steps (a list of dicts), or [].
      runfiles: True for the test's config (short paths), False for the action's.

    Returns:
      (dict of entries, list of the Files they name, depset of the eager model's Files).
    """
    exported = program.methods[method]
    config, files, model_files = _references(ctx, exported, runfiles)
    files += [program.pte, exported.pt2, exported.manifest] + ([program.ptd] if program.ptd else [])
    calibration = exported.calibration
    if calibration:
        files.append(calibration.batches)
    config.update(exported_config(exported, runfiles = runfiles))
    config.update(
        pte = _path(program.pte, runfiles),
        ptd = _path(program.ptd, runfiles) if program.ptd else None,
        pt2_manifest = _path(exported.manifest, runfiles),
        method = method,
        reference = ctx.attr.reference,
        calibration = {"label": str(calibration.label), "batches": _path(calibration.batches, runfiles)} if calibration else None,
        inputs = json.decode(ctx.attr.inputs_json),
        arm64_inputs = json.decode(ctx.attr.arm64_inputs_json),
        runtimes = ctx.attr.runtimes,
    )
    if steps:
        files += [program.methods[step["method"]].pt2 for step in steps]
        config.update(steps = steps, method_programs = {
            step["method"]: exported_config(program.methods[step["method"]], runfiles = runfiles)
            for step in steps
        })
    return config, files, model_files

def numerics_values(ctx, program, method, steps, release = None):
    """Declares the test's NumericsValues action.

    Args:
      ctx: the numerics_test rule's context (its rule has the exporter's toolchain).
      program: the ExecuTorchProgramInfo under test.
      method: the method under test.
      steps: the test's steps, or [].
      release: the ExecuTorchReleaseInfo whose Python runtime runs the program, or None for the
        toolchain's own.

    Returns:
      {"values": <name>.values.json, "values_data": <name>.values.etvals}: the test config's
      entries, as Files.
    """
    config, files, model_files = numerics_entries(ctx, program, method, steps, runfiles = False)
    if program.backend_packages:  # e.g. a backend's runtime library, for the Python runtime
        config["backend_packages"] = [f.path for f in package_identities(program.backend_packages)]
        files = files + program.backend_packages
    if release and release.runtime_python:  # its Python runtime runs in a venv of its own
        config["runtime_python"] = release.runtime_python.path
        files = files + [release.runtime_python, release.runtime_identity]
    values = ctx.actions.declare_file(ctx.label.name + ".values.json")
    data = ctx.actions.declare_file(ctx.label.name + ".values.etvals")
    run_exporter(
        ctx,
        command = "numerics_values",
        progress_message = "Computing what {} compares ({} against {})".format(
            ctx.attr.test_label,
            program.label,
            "its reference" if ctx.attr.reference != "eager" else "the eager model",
        ),
        config = config,
        inputs = depset(files, transitive = [model_files]),
        outputs = {"values": values, "data": data},
        per_machine = per_machine(program.backends),
        release = release,
    )
    return {"values": values, "values_data": data}
