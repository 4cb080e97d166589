"""Builds the user's nn.Module from a torch_model's entry, init_args and checkpoint."""

import importlib
import os
import sys

import torch

from exporter.core import phases, undeclared
from exporter.core.errors import UserError
from exporter.core.export_errors import user_frame
from exporter.core.determinism import seed_everything


def undeclared_input(error, owner):
    """The one-line UserError for a failed import or read of a file that exists in the workspace
    but is not among owner's declared files (in every mode such a file is missing: see
    core/undeclared.py); None for any other error."""
    who = f"{owner.kind} {owner.label}"
    srcs = tuple(getattr(owner, "srcs", ()))
    if isinstance(error, ModuleNotFoundError) and error.name:
        found = undeclared.module_file(error.name, srcs, owner.import_roots)
        if found:
            return UserError(
                f"{who} imports {error.name!r}, which is {found}, but that file is not in its srcs "
                f"or deps; add \"{os.path.basename(found)}\" to the `srcs` of {owner.label} (or the "
                f"target that has it to `deps`)"
            )
    if isinstance(error, FileNotFoundError):
        checkpoint_files = tuple(getattr(owner, "checkpoint_files", ()))
        found = undeclared.data_file(error.filename, srcs + checkpoint_files)
        if found and checkpoint_files and os.path.dirname(found) == getattr(owner, "checkpoint_dir", None):
            return UserError(
                f"{who} reads {found}, which is in its checkpoint folder but not in `checkpoint_dir`; "
                f"add it to the glob of `checkpoint_dir` of {owner.label}"
            )
        if found:
            return UserError(
                f"{who} reads {found}, which is not an input of this action; declare it "
                f"(`checkpoint` or `checkpoint_dir` of {owner.label}) or stop reading it"
            )
    return None


def _import_module(module_name, owner):
    """owner: the target whose entry names the module (label, entry, rule kind)."""
    who = f"{owner.kind} {owner.label}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        undeclared_error = undeclared_input(e, owner)
        if undeclared_error:
            raise undeclared_error from None
        if e.name and module_name.startswith(e.name):
            raise UserError(
                f"{who}: entry {owner.entry!r} names module "
                f"{module_name!r}, which is neither in its srcs/deps nor installed; add the "
                f"file (e.g. {module_name.replace('.', '/')}.py) to `srcs`, or fix `entry`"
            ) from None
        raise UserError(
            f"{who}: importing {module_name!r} failed: {e}"
            f"{user_frame(e)}; add the module that provides {e.name!r} to `deps`"
        ) from None
    except Exception as e:
        raise UserError(
            f"{who}: importing {module_name!r} raised "
            f"{type(e).__name__}: {e}{user_frame(e)}"
        ) from None


def _resolve(module, qualname, owner):
    obj = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n)))
            raise UserError(
                f"{owner.kind} {owner.label}: entry {owner.entry!r}: module "
                f"{module.__name__!r} has no {qualname!r}; set `entry` to one of its callables: "
                f"{', '.join(public[:12]) or '(none)'}"
            )
        obj = getattr(obj, part)
    return obj


def add_import_roots(roots):
    """Puts the model's source roots (execroot-relative) first on sys.path."""
    for root in reversed(roots):
        path = os.path.abspath(root)
        if path not in sys.path:
            sys.path.insert(0, path)


def resolve_entry(owner, import_roots):
    """The object an entry ('package.module:callable') names, imported from import_roots.

    owner has the label, entry and kind ("torch_model", "calibration_data") of the target.
    """
    module_name, sep, qualname = owner.entry.partition(":")
    if not sep or not module_name or not qualname:
        raise UserError(
            f"{owner.kind} {owner.label}: entry {owner.entry!r} must look like "
            f"'package.module:callable'; fix `entry`"
        )
    add_import_roots(import_roots)
    cwd = os.getcwd()
    try:
        module = _import_module(module_name, owner)
    finally:
        os.chdir(cwd)  # a module may change folders as it loads; the action's relative paths may not
    return _resolve(module, qualname, owner)


def load_model(model):
    """Returns the model in eval mode. `model` is a registry.ModelConfig."""
    with phases.running(phases.MODEL, code=f"{model.kind} {model.label}"):
        return _build(model)


def _build(model):
    # Seeded before the entry's module is imported too: a model built at import time (a module
    # instance) must not draw what a warm worker's warm-up left in torch's generator.
    seed_everything()
    factory = resolve_entry(model, model.import_roots)
    if isinstance(factory, torch.nn.Module):
        # An instance, such as a torch._export.db.examples case's `model`: use it as it is.
        if model.init_args:
            raise UserError(
                f"torch_model {model.label}: entry {model.entry!r} is a module instance, "
                f"which takes no init_args; drop init_args or point `entry` at its class"
            )
        return _finish(factory, model)
    if not callable(factory):
        raise UserError(
            f"torch_model {model.label}: entry {model.entry!r} is a "
            f"{type(factory).__name__}, not a callable; point `entry` at a function or class"
        )
    seed_everything()
    cwd = os.getcwd()
    arguments = dict(model.init_args, **({"checkpoint_dir": model.checkpoint_dir} if model.checkpoint_dir else {}))
    try:
        module = factory(**arguments)
    except UserError as e:  # an exporter-provided entry (hf_model's) says what to change
        raise UserError(f"{model.kind} {model.label}: {e}") from None
    except TypeError as e:
        raise UserError(
            f"torch_model {model.label}: calling {model.entry!r} with init_args "
            f"{model.init_args} failed: {e}; fix `init_args`"
        ) from None
    except Exception as e:
        raise undeclared_input(e, model) or UserError(
            f"torch_model {model.label}: calling {model.entry!r} raised "
            f"{type(e).__name__}: {e}{user_frame(e)}"
        ) from None
    finally:
        os.chdir(cwd)  # model code may change folders; the action's relative paths may not
    if not isinstance(module, torch.nn.Module) and hasattr(module, "get_eager_model"):
        # executorch.examples.models wrap their nn.Module in an EagerModelBase.
        module = module.get_eager_model()
    if not isinstance(module, torch.nn.Module):
        raise UserError(
            f"torch_model {model.label}: entry {model.entry!r} returned a "
            f"{type(module).__name__}, not a torch.nn.Module; point `entry` at a function or "
            f"class that returns the model"
        )
    return _finish(module, model)


def _finish(module, model):
    if model.checkpoint:
        _load_checkpoint(module, model)
    if model.lora:  # a lora_model: its base, then the adapter's factors
        from exporter.core import lora

        lora.apply(module, model.lora)
    return module.eval()


def _load_checkpoint(module, model):
    path = model.checkpoint
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UserError(
            f"torch_model {model.label}: checkpoint {os.path.basename(path)!r} is not a "
            f"state_dict that torch.load(weights_only=True) reads: {str(e).splitlines()[0]}; "
            f"save it with torch.save(model.state_dict(), path)"
        ) from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    try:
        module.load_state_dict(state)
    except Exception as e:
        first = str(e).strip().splitlines()
        raise UserError(
            f"torch_model {model.label}: checkpoint {os.path.basename(path)!r} does not fit "
            f"the model: {' '.join(first[:3])}; regenerate the checkpoint or fix `init_args`"
        ) from None
