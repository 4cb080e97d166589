"""What the rules tell the exporter about a model or an exported program, written once.

Actions (exporter/actions/registry.py) and the test runners read the same entries: a model's entry point
and import roots, an exported program's label, .pt2 and shape spec. Actions get execroot paths
(File.path); tests read their runfiles tree, so `runfiles = True` gives short paths instead.
"""

load(":entry_points.bzl", "import_roots")

def _path(f, runfiles):
    return f.short_path if runfiles else f.path

def model_config(model, runfiles = False):
    """The "model" entry of a config, and the files the exporter reads for it.

    Args:
      model: a TorchModelInfo.
      runfiles: False for an action's config, True for a test's.

    Returns:
      (dict, depset of Files): the label, entry point, init_args, checkpoint and import roots
      (an action's also lists the sources), and a lora_model's adapter; and the checkpoints
      (if any) and the sources.
    """
    config = {
        "label": str(model.label),
        "entry": model.entry,
        "init_args": model.init_args,
        "checkpoint": _path(model.checkpoint, runfiles) if model.checkpoint else None,
    }
    if model.checkpoint_files:  # only then, so that other models' configs keep their bytes
        config["checkpoint_dir"] = _path(model.checkpoint_files[0], runfiles).rpartition("/")[0]
        config["checkpoint_files"] = [_path(f, runfiles) for f in model.checkpoint_files]
    if runfiles:
        config["import_roots"] = import_roots(model.srcs.to_list(), runfiles = True)
    else:
        config["srcs"] = [f.path for f in model.srcs.to_list()]
        config["import_roots"] = model.import_roots.to_list()
    files = ([model.checkpoint] if model.checkpoint else []) + model.checkpoint_files
    if model.lora:  # only then, so that other models' configs keep their bytes
        config["lora"], lora_files = _lora_config(model, runfiles)
        files += lora_files
    return config, depset(files, transitive = [model.srcs])

def runner_program_config(label, program, tokenizer):
    """A generation test's entries for its program and tokenizer, and the files they name.

    Args:
      label: the test's label, as a string.
      program: the ExecuTorchProgramInfo the runner loads.
      tokenizer: the TokenizerInfo it loads beside it.

    Returns:
      (dict, list of Files): label, program, pte, ptd, manifest and tokenizer entries (runfiles
      paths); the .pte, its manifest, the tokenizer's file and manifest, and the .ptd if any.
    """
    config = {
        "label": label,
        "program": str(program.label),
        "pte": program.pte.short_path,
        "ptd": program.ptd.short_path if program.ptd else None,
        "manifest": program.manifest.short_path,
        "tokenizer": {
            "label": str(tokenizer.label),
            "file": tokenizer.file.short_path,
            "manifest": tokenizer.manifest.short_path,
            "format": tokenizer.format,
        },
    }
    files = [program.pte, program.manifest, tokenizer.file, tokenizer.manifest] + ([program.ptd] if program.ptd else [])
    return config, files

def _lora_config(model, runfiles):
    """A lora_model's "lora" entry (exporter/actions/registry.py's LoraConfig), and its files."""
    lora = model.lora
    files = ([lora["checkpoint"]] if lora["checkpoint"] else []) + lora["checkpoint_files"]
    config = {
        "label": str(model.label),
        "rank": lora["rank"],
        "alpha": lora["alpha"],
        "target_modules": lora["target_modules"],
        "checkpoint": _path(lora["checkpoint"], runfiles) if lora["checkpoint"] else None,
    }
    if lora["checkpoint_files"]:
        config["checkpoint_dir"] = _path(lora["checkpoint_files"][0], runfiles).rpartition("/")[0]
        config["checkpoint_files"] = [_path(f, runfiles) for f in lora["checkpoint_files"]]
    return config, files

def exported_config(exported, runfiles = False, spec_label = False):
    """The entry of a config that names one exported program.

    Args:
      exported: an ExportedProgramInfo.
      runfiles: False for an action's config, True for a test's.
      spec_label: also give the shape_spec's label (the actions name it in messages).

    Returns:
      {"exported_label", "pt2", "spec"[, "spec_label"]}; callers add what else they need.
    """
    config = {
        "exported_label": str(exported.label),
        "pt2": _path(exported.pt2, runfiles),
        "spec": exported.spec.spec,
    }
    if spec_label:
        config["spec_label"] = str(exported.spec.label)
    return config
