"""WORKSPACE macro that declares the toolchain's venv repository."""

load(":venv_repository.bzl", "torch_venv_repository")

def torch_export_toolchain_repositories(name = "torch_export_venv", lock = None):
    """Declares the venv repository that the registered toolchain uses.

    Args:
      name: the repository name. //toolchain:all expects the default.
      lock: a fully pinned requirements file; defaults to this project's requirements.lock.
    """
    torch_venv_repository(
        name = name,
        lock = lock or Label("//toolchain:requirements.lock"),
    )
