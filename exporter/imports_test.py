"""The exporter's layers, as the code has them: which package may import which (each package's
__init__ says it), no import cycle between modules (lazy in-function imports included), no check
and no part of the reports' renderer imported by the toolchain's sources, and
docs/architecture.md's diagram equal to the graph."""

import ast
import os
import re

from runfiles import Runfiles

RUNFILES = Runfiles.Create()
ROOT = os.path.dirname(RUNFILES.Rlocation("rules_torch_export/exporter/main.py"))

# package -> the packages its modules may import besides their own ("" is exporter/ itself:
# main.py and __init__.py). tests holds fixtures, which may use anything.
MAY_IMPORT = {
    "": {"driver", "actions", "core"},
    "driver": {"actions", "core", "formats"},
    "actions": {"core", "formats"},
    "checks": {"actions", "core", "formats", "reports"},
    "reports": {"core", "formats"},
    "formats": {"core"},
    "core": set(),
}
# The packages in the toolchain's sources (//exporter:exporter_srcs): all but checks and reports.
TOOLCHAIN = ("", "actions", "core", "driver", "formats")
# The reports' renderer (//exporter:report_srcs): a tool of the actions that draw a report only.
REPORTS = ("reports",)
# The backends' hooks (backend_hooks/ beside exporter/), which the exporter imports only by the module
# names of the records in core/backends.py, and the test runners' hooks in its checks/ folder.
HOOKS = "backend_hooks"
HOOKS_MAY_IMPORT = {"core", "formats"}

# Modules of exporter/ that are tools, not part of the toolchain's sources: facts.py writes
# exporter_facts.bzl from every layer (the modules the test rules run included), so it may
# import any package.
TOOLS = ("facts",)


def modules():
    """{"core.shape_spec": path, "main": path, ...}: every module of the exporter but tests."""
    found = {}
    for package in MAY_IMPORT:
        folder = os.path.join(ROOT, package)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py") and not name.endswith("_test.py"):
                module = name[:-3] if name != "__init__.py" else ""
                found[".".join(p for p in (package, module) if p) or "__init__"] = os.path.join(folder, name)
    return found


def package_of(module):
    return module.split(".")[0] if "." in module or module in MAY_IMPORT else ""


def _imported(path):
    """The exporter modules (as in modules()) that the file at path imports, anywhere in it."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "exporter":
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name.startswith("exporter."):
                found.add(name[len("exporter."):])
    return found


def import_graph():
    """{module: sorted modules it imports}; importing a package counts as importing its __init__."""
    known = modules()
    graph = {}
    for module, path in known.items():
        targets = set()
        for name in _imported(path):
            if name in known:
                targets.add(name)
        graph[module] = sorted(t for t in targets if t != module)
    return graph


def find_cycle(graph):
    """A list of modules that import one another in a circle, or None."""
    state, stack = {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for dep in graph[module]:
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        state[module] = "done"
        stack.pop()
        return None

    for module in graph:
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def package_graph(graph):
    """{package: {imported package: sorted importing modules}} between different packages."""
    found = {package: {} for package in MAY_IMPORT}
    for module, targets in graph.items():
        for target in targets:
            source, dest = package_of(module), package_of(target)
            if source != dest:
                found[source].setdefault(dest, set()).add(module.split(".")[-1])
    return {p: {d: sorted(m) for d, m in sorted(t.items())} for p, t in found.items()}


def test_no_import_cycle():
    graph = import_graph()
    assert "driver.worker_child" in graph["driver.cli"] and "driver.request" in graph["driver.worker_child"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_find_cycle_finds_one():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b"], "b": []}) is None


def layer_violations(graph):
    """["actions.x imports checks.y", ...]: imports that MAY_IMPORT does not allow."""
    return [f"{module} imports {target}" for module, targets in sorted(graph.items()) for target in targets
            if module not in TOOLS and package_of(target) != package_of(module)
            and package_of(target) not in MAY_IMPORT[package_of(module)]]


def test_every_package_imports_only_what_its_layer_may():
    assert layer_violations(import_graph()) == []


def test_nothing_outside_checks_imports_a_check():
    importers = [m for m, targets in import_graph().items()
                 if package_of(m) != "checks" and m not in TOOLS and any(package_of(t) == "checks" for t in targets)]
    assert importers == []


def test_the_layer_check_catches_upward_imports():
    graph = {"actions.lower": ["checks.numerics", "core.kernels"], "core.kernels": ["actions.registry"],
             "checks.numerics": ["actions.lower"], "main": ["driver.cli"], "driver.cli": []}
    assert layer_violations(graph) == ["actions.lower imports checks.numerics", "core.kernels imports actions.registry"]


def test_each_package_init_says_what_it_may_import():
    for package in MAY_IMPORT:
        if not package:
            continue
        with open(os.path.join(ROOT, package, "__init__.py"), encoding="utf-8") as f:
            doc = ast.get_docstring(ast.parse(f.read()))
        allowed = sorted(MAY_IMPORT[package])
        sentence = re.search(r"May import ([^;.]*)[;.]", doc or "")
        assert sentence, f"exporter/{package}/__init__.py: its docstring says nothing of what it may import"
        named = set(re.findall(r"\b(driver|actions|checks|reports|formats|core)\b", sentence.group(1)))
        assert named - {package} == set(allowed), (package, sentence.group(0))


def test_the_toolchain_sources_are_every_package_but_checks():
    from exporter.driver import worker

    assert worker.SOURCE_FOLDERS == TOOLCHAIN + ("../" + HOOKS,)
    with open(os.path.join(ROOT, "BUILD"), encoding="utf-8") as f:
        build = f.read()
    block = build[build.index('name = "exporter_srcs"'):build.index('name = "report_srcs"')]
    listed = set(re.findall(r'"//exporter/(\w+):srcs"', block))
    assert listed == {p for p in TOOLCHAIN if p}
    assert "checks" not in block and "exclude" not in block
    assert not [tool for tool in TOOLS if f'"{tool}.py"' in block]
    reports = build[build.index('name = "report_srcs"'):build.index("py_library(")]
    assert set(re.findall(r'"//exporter/(\w+):srcs"', reports)) == set(REPORTS)


def _imported_from(graph, start):
    """start and every module it imports, directly or not."""
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph[module]
    return seen


def test_every_action_and_what_it_imports_is_in_the_toolchain_sources():
    """An action's tools are the toolchain's sources, plus the reports' renderer for the actions
    that draw a report (their tool set: registry.Action.tools)."""
    from exporter.actions import registry

    graph = import_graph()
    for action in registry.ACTIONS.values():
        start = action.module[len("exporter."):]
        assert package_of(start) == ("reports" if action.tools == "reports" else "actions"), action
        allowed = TOOLCHAIN + (REPORTS if action.tools == "reports" else ())
        outside = sorted(m for m in _imported_from(graph, start) if package_of(m) not in allowed)
        assert not outside, f"{action.command} imports {outside}"


def test_no_export_or_lowering_imports_the_renderer():
    """Before: the renderer lived in actions/ and formats/, so editing a report's CSS re-ran every
    export and lowering of every model."""
    from exporter.actions import registry

    graph = import_graph()
    assert "reports.report_html" in _imported_from(graph, registry.ACTIONS["report"].module[len("exporter."):])
    for command in ("export", "lower", "quantize", "etrecord"):
        found = _imported_from(graph, registry.ACTIONS[command].module[len("exporter."):])
        assert not [m for m in found if package_of(m) in REPORTS], command


def test_nothing_in_the_toolchain_imports_a_report():
    importers = [m for m, targets in import_graph().items()
                 if package_of(m) in TOOLCHAIN and m not in TOOLS and any(package_of(t) in REPORTS for t in targets)]
    assert importers == []


def test_no_forced_import_aliases():
    aliased = []
    for module, path in modules().items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("exporter"):
                aliased += [f"{module}: {a.name} as {a.asname}" for a in node.names if a.asname]
    assert aliased == []


# The diagram in docs/architecture.md, between these lines.
BEGIN = "<!-- package graph: generated from the code, checked by //exporter:imports_test -->"
END = "<!-- end of package graph -->"


def diagram():
    """The Mermaid diagram of the packages, their modules and the imports between them."""
    graph = import_graph()
    by_package = {}
    for module in graph:
        by_package.setdefault(package_of(module), []).append(module.split(".")[-1])
    lines = ["```mermaid", "graph TD"]
    for package in MAY_IMPORT:
        if not package:
            continue
        names = ", ".join(m for m in by_package[package] if m != package)
        lines.append(f'  {package}["<b>{package}</b><br/>{names}"]')
    for package, targets in package_graph(graph).items():
        for target, importers in targets.items():
            if package and target:
                lines.append(f"  {package} -->|{', '.join(importers)}| {target}")
    lines.append("```")
    return "\n".join(lines)


def test_the_documented_diagram_is_the_code_s():
    with open(RUNFILES.Rlocation("rules_torch_export/docs/architecture.md"), encoding="utf-8") as f:
        text = f.read()
    assert BEGIN in text and END in text, f"docs/architecture.md lost its markers: {BEGIN} ... {END}"
    documented = text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()
    assert documented == diagram(), (
        "docs/architecture.md's package graph is not the code's; replace the block between its markers "
        "with:\n" + diagram())


def _hooks_files():
    """{"backend_hooks.vela": path, "backend_hooks.checks.tosa_reference": path, ...}: the hooks' modules."""
    folder = os.path.join(os.path.dirname(ROOT), HOOKS)
    found = {}
    for sub in ("", "checks"):
        for name in sorted(os.listdir(os.path.join(folder, sub))):
            if name.endswith(".py") and not name.endswith("_test.py"):
                found[".".join(p for p in (HOOKS, sub, name[:-3]) if p and p != "__init__")] = os.path.join(folder, sub, name)
    return found


def test_the_backends_hooks_import_only_core_and_formats_of_the_exporter():
    wrong = [f"{module} imports exporter.{target}" for module, path in _hooks_files().items()
             for target in sorted(_imported(path)) if package_of(target) not in HOOKS_MAY_IMPORT]
    assert wrong == []


def _imports_hooks(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    return [node for node in ast.walk(tree)
            if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == HOOKS)
            or (isinstance(node, ast.Import) and any(a.name.split(".")[0] == HOOKS for a in node.names))]


def test_the_exporter_reaches_a_backend_only_through_its_record():
    """No module of exporter/ imports a hooks module: it names none, and asks the records."""
    assert [m for m, path in modules().items() if _imports_hooks(path)] == []


def test_every_module_a_record_names_is_a_hooks_module_in_its_folder():
    """A record's hooks are toolchain sources (backend_hooks/); its reference runtimes' runners and its
    structure reader and precision check are the tests' (backend_hooks/checks/)."""
    from exporter.core import backends

    hooks = _hooks_files()
    for record in backends.BY_NAME.values():
        assert record.hooks in hooks and record.hooks.count(".") == 1, record.name
        checks = [record.structure_check, record.precision_check]
        for runner in [r.runner for r in record.reference_runtimes if r.runner] + checks:
            assert runner is None or (runner in hooks and runner.startswith(HOOKS + ".checks.")), record.name
