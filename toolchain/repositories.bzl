"""WORKSPACE macro that declares the toolchain's venv repository."""

load("//exporter:lock_facts.bzl", "ARM64_BINDING_LOCKS", "BACKEND_LOCKS", "PER_MACHINE_LOCKS", "RELEASE_LOCKS", "RUNTIME_LOCKS")
load("//tools/explorer:repositories.bzl", "model_explorer_repository")
load(":argument_keys.bzl", "unknown_keys_error")
load(":executorch_aarch64.bzl", "executorch_aarch64_repository")
load(":graphviz_repository.bzl", "graphviz_repository")
load(":layered_locks.bzl", "layered_lock_repositories")
load(":libtorch_aarch64.bzl", "libtorch_aarch64_repository")
load(":refused_repository.bzl", "refused_repository")
load(":release_repository.bzl", "executorch_release_repository")
load(":runtime_venv_repository.bzl", "runtime_venv_repository")
load(":valgrind_repository.bzl", "valgrind_repository")
load(":venv_repository.bzl", "torch_venv_repository")

def _aarch64_runtime(lock):
    """The repository of the aarch64 binding of a release's lock, or "" when it has none."""
    return "@torch_export_{}_aarch64".format(lock) if lock in ARM64_BINDING_LOCKS else ""

def _release_repository(name, **kwargs):
    """executorch_release_repository, with the aarch64 runtime of the releases whose runner builds for arm64."""
    executorch_release_repository(name = name, aarch64_runtime = _aarch64_runtime(name[len("torch_export_"):]), **kwargs)

def torch_export_toolchain_repositories(
        name = "torch_export_venv",
        lock = None,
        aarch64_pin = None,
        backend_locks = {},
        release_locks = {},
        release_runtime_locks = {},
        release_aarch64_pins = {}):
    """Declares the venv repository that the registered toolchain uses.

    Also declares `graphviz`, Debian's `dot` as a declared tool of the program reports
    (graphviz_repository.bzl), and `valgrind`, Debian's valgrind, whose callgrind counts the
    instructions of program_budget_test's max_instructions (valgrind_repository.bzl), each unless
    the WORKSPACE declared it first, and `<name>_aarch64`, the aarch64 runtime that `@<name>//executorch` links when
    C++ is built for //platforms:linux_aarch64; it is fetched only then (docs/native.md, "arm64"). And
    `<name>_llm_ops_aarch64`, the aarch64 libtorch and libpython that `@<name>//executorch:llm_ops` links
    for aarch64, and `torch_export_executorch_1_4_aarch64`, 1.4.1's aarch64 binding with them, from
    toolchain/libtorch_aarch64.lock (2.5 GB), and `torch_export_executorch_1_3_runtime_aarch64`, 1.3.1's
    with torch 2.12 in place of the lock's torch: fetched only by aarch64 builds of
    //native:et_runner_llm_ops, //native:et_runner_1_4 and //native:et_runner_1_3 (docs/native.md,
    "arm64 with libtorch").
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
      release_locks: {release: label of a lock} to replace an ExecuTorch release's own lock, e.g.
        {"1.4": "//:executorch_1_4.lock"} for a team's own build of that release. Each release's
        repository (`torch_export_executorch_<major>_<minor>`) is fetched only when a target names
        the release, and installs the lock's pins ahead of `lock`'s (docs/compatibility.md).
        The runtimes that the release's lock does not hold are not taken from PyPI's build of
        the release in its place: those below must come from the team's build too, or their
        fetch fails in one line naming the argument to add.
      release_runtime_locks: {release: label of a lock} for a release of `release_locks` whose
        runtimes have a venv of their own (1.3), in the form of
        toolchain/releases/executorch_1_3_runtime.lock: its Python runtime and native runner.
      release_aarch64_pins: {release: label of a pin file} for a release of `release_locks` whose
        runner builds for arm64 (1.3, 1.4), in the form of toolchain/releases/<lock>_aarch64.lock,
        e.g. {"1.4": "//:executorch_1_4_aarch64.lock"}: the aarch64 binding its arm64 runner links.
    """
    _check_keys({
        "backend_locks": (backend_locks, BACKEND_LOCKS.keys()),
        "release_locks": (release_locks, RELEASE_LOCKS.values()),
        "release_runtime_locks": (release_runtime_locks, RUNTIME_LOCKS.values()),
        "release_aarch64_pins": (release_aarch64_pins, ARM64_BINDING_LOCKS.values()),
    })
    lock = lock or Label("//toolchain:requirements.lock")
    torch_venv_repository(
        name = name,
        lock = lock,
        aarch64_runtime = "@{}_aarch64".format(name),
        aarch64_llm_ops = "@{}_llm_ops_aarch64".format(name),
    )
    executorch_aarch64_repository(
        name = name + "_aarch64",
        lock = lock,
        pin = aarch64_pin or Label("//toolchain:executorch_aarch64.lock"),
        python = "@{}//:python.sh".format(name),
    )

    # The aarch64 libtorch and libpython that ExecuTorch's LLM operators' kernels load on arm64,
    # about 2.5 GB: fetched only when an aarch64 target links @<name>//executorch:llm_ops.
    libtorch_aarch64_repository(
        name = name + "_llm_ops_aarch64",
        lock = Label("//toolchain:libtorch_aarch64.lock"),
        executorch_pin = aarch64_pin or Label("//toolchain:executorch_aarch64.lock"),
        python = "@{}//:python.sh".format(name),
    )

    # The backends whose packages have a lock of their own (their records' `lock`, generated into
    # lock_facts.bzl): toolchain/backends/<lock>.lock, in torch_export_backend_<lock>.
    layered_lock_repositories(
        prefix = "torch_export_backend",
        kind = "backend",
        locks = {lock: Label("//toolchain/backends:{}.lock".format(lock)) for lock in BACKEND_LOCKS},
        overrides = backend_locks,
        venv = name,
        per_machine = PER_MACHINE_LOCKS,
    )

    # The ExecuTorch releases beside the toolchain's own (their records' `lock`, generated into
    # lock_facts.bzl): toolchain/releases/<lock>.lock, in torch_export_<lock>.
    layered_lock_repositories(
        prefix = "torch_export",
        kind = "release",
        locks = {lock: Label("//toolchain/releases:{}.lock".format(lock)) for lock in RELEASE_LOCKS},
        overrides = {lock: release_locks[release] for lock, release in RELEASE_LOCKS.items() if release in release_locks},
        venv = name,
        repository_rule = _release_repository,
    )

    _release_runtime_repositories(name, release_locks, release_runtime_locks, release_aarch64_pins)
    if not native.existing_rule("graphviz"):
        graphviz_repository(name = "graphviz")
    if not native.existing_rule("valgrind"):
        valgrind_repository(name = "valgrind")
    if not native.existing_rule("model_explorer"):
        model_explorer_repository(name = "model_explorer", lock = Label("//tools/explorer:requirements.lock"))

def _check_keys(arguments):
    """Fails in one line when an argument's key names nothing it replaces (argument_keys.bzl)."""
    for argument, (given, known) in arguments.items():
        error = unknown_keys_error(argument, given, known)
        if error:
            fail(error)

def _team_or_rules(rule, name, of_release, release_locks, team, argument, what, lock_file, lock_attr, **kwargs):
    """Declares `name` with `rule` and `lock_attr` set to the team's file (`team`) or the rules' own.

    Where release_locks replaces the release's lock and `team` names nothing for it, the rules'
    file would be PyPI's build in place of the team's: a refused_repository, whose fetch fails in
    one line naming the argument to add, takes its place.
    """
    if native.existing_rule(name):
        return
    if of_release in release_locks and of_release not in team:
        refused_repository(name = name, message = (
            "rules_torch_export: release_locks replaces ExecuTorch {release}'s lock with {lock}, but {what} " +
            "would be PyPI's build of {release} (toolchain/releases/{file}): add {argument} = " +
            "{{\"{release}\": \"//:<your build's, in that file's form>\"}} to torch_export_toolchain_repositories"
        ).format(release = of_release, lock = release_locks[of_release], what = what, file = lock_file, argument = argument))
        return
    kwargs[lock_attr] = team.get(of_release) or Label("//toolchain/releases:" + lock_file)
    rule(name = name, **kwargs)

def _release_runtime_repositories(venv, release_locks, release_runtime_locks, release_aarch64_pins):
    """Declares the releases' runtimes that their lock does not hold: 1.3's venv, the aarch64 bindings."""

    # The runtimes of a release compiled against another torch than the toolchain's (1.3's): a
    # venv of their own, torch_export_<runtime_lock>, fetched only when a target runs them.
    for lock, release in RUNTIME_LOCKS.items():
        _team_or_rules(
            runtime_venv_repository,
            "torch_export_" + lock,
            release,
            release_locks,
            release_runtime_locks,
            "release_runtime_locks",
            "the venv of {}'s Python runtime and native runner".format(release),
            lock + ".lock",
            "lock",
            release = release,
            aarch64_runtime = _aarch64_runtime(lock),
        )

    # The aarch64 runtime of each release whose wheel has it only inside its Python binding and whose
    # arm64 runner is built (its record's arm64): the aarch64 wheel's binding with an aarch64
    # libtorch (toolchain/releases/<lock>_aarch64.lock pins the wheel, and a torch of its own where
    # the release's runtimes have one), torch_export_<lock>_aarch64, which executorch/:runtime of
    # torch_export_<lock> links for aarch64 targets; fetched only then.
    for lock, release in ARM64_BINDING_LOCKS.items():
        _team_or_rules(
            libtorch_aarch64_repository,
            "torch_export_{}_aarch64".format(lock),
            release,
            release_locks,
            release_aarch64_pins,
            "release_aarch64_pins",
            "the aarch64 binding of {}'s arm64 runner".format(release),
            lock + "_aarch64.lock",
            "executorch_pin",
            lock = Label("//toolchain:libtorch_aarch64.lock"),
            python = "@{}//:python.sh".format(venv),
            library = "_portable_lib.cpython-311-aarch64-linux-gnu.so",
            target = "runtime",
        )
