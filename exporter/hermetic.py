"""Process set-up that keeps an exporter run hermetic and its outputs deterministic."""

import os
import random
import shutil
import tempfile

# Caches that torch, Inductor, Triton and friends would otherwise share under /tmp or $HOME.
_CACHE_VARIABLES = (
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TORCH_HOME",
    "TORCH_EXTENSIONS_DIR",
    "XDG_CACHE_HOME",
    "HF_HOME",
    "CUDA_CACHE_PATH",
)


def private_cache_dir():
    """Points every cache variable at a fresh folder private to this process; returns it.

    Call it before torch is imported. The caller removes the folder with remove_dir().
    """
    root = tempfile.mkdtemp(prefix="rules_torch_export_")
    for name in _CACHE_VARIABLES:
        path = os.path.join(root, name.lower())
        os.makedirs(path, exist_ok=True)
        os.environ[name] = path
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root
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
