"""Process set-up that keeps an exporter run hermetic and its outputs deterministic."""

import os
import random
import shutil
import sys
import tempfile

# Where torch, Inductor, Triton and the libraries ExecuTorch imports would otherwise keep
# caches shared between runs: under /tmp or $HOME. A cache shared between actions is state one
# action can leave for the next, so each run gets its own and deletes it.
_CACHE_VARIABLES = (
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TRITON_HOME",
    "TORCH_HOME",
    "TORCH_EXTENSIONS_DIR",
    "PYTORCH_KERNEL_CACHE_PATH",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "HF_HOME",
    "CUDA_CACHE_PATH",
    "MPLCONFIGDIR",
    "NUMBA_CACHE_DIR",
    # Last: anything that still writes under `~` writes here.
    "HOME",
)


def private_cache_dir():
    """Points every cache variable, TMPDIR and HOME at a fresh folder private to this run.

    Call it before torch is imported. The caller removes the folder with remove_dir(). Bytecode
    writing is switched off too: in unsandboxed runs the model's sources are the user's own
    files, and __pycache__ beside them would be a write outside the action's outputs.
    """
    root = tempfile.mkdtemp(prefix="rules_torch_export_")
    for name in _CACHE_VARIABLES:
        path = os.path.join(root, name.lower())
        os.makedirs(path, exist_ok=True)
        os.environ[name] = path
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root
    sys.dont_write_bytecode = True
    return root


def remove_dir(path):
    shutil.rmtree(path, ignore_errors=True)


def seed_everything(seed=0):
    """Seeds every generator that a model's construction may draw from."""
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
