"""The exporter's modules import one another without a cycle, lazy (in-function) imports
included: each module has one job, and the graph says which builds on which."""

import ast
import os

from runfiles import Runfiles

PACKAGE = os.path.dirname(Runfiles.Create().Rlocation("rules_torch_export/exporter/main.py"))


def _imports(path):
    """The exporter modules that the file at path imports, anywhere in it."""
    found = set()
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "exporter":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("exporter."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("exporter."))
    return found


def import_graph():
    modules = {name[:-3] for name in os.listdir(PACKAGE) if name.endswith(".py")}
    return {m: sorted(_imports(os.path.join(PACKAGE, m + ".py")) & modules) for m in sorted(modules)}


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


def test_the_exporter_has_no_import_cycle():
    graph = import_graph()
    assert "request" in graph["cli"] and "request" in graph["worker_child"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_find_cycle_finds_one():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b"], "b": []}) is None
