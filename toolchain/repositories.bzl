"""WORKSPACE macro that declares the toolchain's venv repository."""

load("//tools/explorer:repositories.bzl", "model_explorer_repository")
load(":backend_packages.bzl", "backend_packages_repository")
load(":executorch_aarch64.bzl", "executorch_aarch64_repository")
load(":graphviz_repository.bzl", "graphviz_repository")
load(":valgrind_repository.bzl", "valgrind_repository")
load(":venv_repository.bzl", "torch_venv_repository")

# The backends whose packages have a lock of their own (toolchain/backends/), by the repository
# that holds them (`torch_export_backend_<key>`; tosa and ethos_u share "arm");
# rules/private/backends.bzl names the same repositories.
_BACKEND_LOCKS = {
    "arm": "//toolchain/backends:arm.lock",
    "openvino": "//toolchain/backends:openvino.lock",
}

def torch_export_toolchain_repositories(name = "torch_export_venv", lock = None, aarch64_pin = None, backend_locks = {}):
    """Declares the venv repository that the registered toolchain uses.

    Also declares `graphviz`, Debian's `dot` as a declared tool of the program reports
    (graphviz_repository.bzl), and `valgrind`, Debian's valgrind, whose callgrind counts the
    instructions of program_budget_test's max_instructions (valgrind_repository.bzl), each unless
    the WORKSPACE declared it first, and `<name>_aarch64`, the aarch64 runtime that `@<name>//executorch` links when
    C++ is built for //platforms:linux_aarch64; it is fetched only then (docs/native.md, "arm64").
    And `model_explorer`, Google's Model Explorer for `bazel run <program>.explore`, from its own
    lock (tools/explorer/requirements.lock), unless the WORKSPACE declared it first; it is
    fetched only when an .explore target is built (docs/report.md, "Model Explorer").

    Args:
      name: the repository name. //toolchain:all expects the default.
      lock: a fully pinned requirements file; defaults to this project's requirements.lock.
      aarch64_pin: the file that pins the aarch64 wheel of the lock's executorch version
        (`executorch==VERSION --hash=sha256:DIGEST`); defaults to this project's
        executorch_aarch64.lock, which toolchain/update_lock.sh keeps current.
      backend_locks: {backend: label of a lock} to replace a backend's own lock, e.g.
        {"openvino": "//:openvino.lock"}, or {"arm": ...} for tosa and ethos_u, which share one.
        Each backend's repository (`torch_export_backend_<backend>`, `torch_export_backend_arm`
        for the Arm backends) is fetched only when a target names the backend, and
        installs none of the lock's pins that `lock` already has (docs/backends.md).
    """
    lock = lock or Label("//toolchain:requirements.lock")
    torch_venv_repository(
        name = name,
        lock = lock,
        aarch64_runtime = "@{}_aarch64".format(name),
    )
    executorch_aarch64_repository(
        name = name + "_aarch64",
        lock = lock,
        pin = aarch64_pin or Label("//toolchain:executorch_aarch64.lock"),
        python = "@{}//:python.sh".format(name),
    )
    for backend, backend_lock in _BACKEND_LOCKS.items():
        if not native.existing_rule("torch_export_backend_" + backend):
            backend_packages_repository(
                name = "torch_export_backend_" + backend,
                backend = backend,
                lock = backend_locks.get(backend) or Label(backend_lock),
                python = "@{}//:python.sh".format(name),
                toolchain_identity = "@{}//:identity.txt".format(name),
            )
    if not native.existing_rule("graphviz"):
        graphviz_repository(name = "graphviz")
    if not native.existing_rule("valgrind"):
        valgrind_repository(name = "valgrind")
    if not native.existing_rule("model_explorer"):
        model_explorer_repository(name = "model_explorer", lock = Label("//tools/explorer:requirements.lock"))
