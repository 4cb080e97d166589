"""Every package of the model zoo is checked by the zoo's rule (models/zoo.bzl).

A BUILD file under models/ that declares a torch_model or an executorch_program must end with
zoo_package(), whose zoo_test checks the rule there (every model snapshotted, every program
with a numerics test, a budget and a report), //:update_goldens must run that package's
update_goldens, and //models:report must show its dashboard. A package added later is not among this test's inputs, so the test reads the
live source tree (found through this file's runfiles link) and is tagged external: never cached.
"""

import ast
import os

# models/zoo_packages_test.py -> the repository's root.
ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

# The macros that declare a model or a program.
DECLARING = {"torch_model", "executorch_program", "executorch_programs"}


def _calls(tree):
    """The names of every function a BUILD file calls, at any depth (list comprehensions too)."""
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _last_call(tree):
    statements = [s for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)]
    return statements[-1].value.func.id if statements and isinstance(statements[-1].value.func, ast.Name) else None


def _listed(root, package, rule, name, attr):
    """The labels in `attr` of the target `name`, a call of `rule` in the package's BUILD file;
    absolute (//models:x) for labels of the package itself (:x)."""
    build = os.path.join(root, package, "BUILD")
    if not os.path.exists(build):
        return set()
    with open(build, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == rule:
            kw = {k.arg: k.value for k in node.keywords}
            if ast.literal_eval(kw["name"]) == name:
                labels = ast.literal_eval(kw.get(attr, ast.List(elts=[])))
                return {f"//{package}{label}" if label.startswith(":") else label for label in labels}
    return set()


def _root_updates(root):
    """The `updates` of //:update_goldens, as label strings."""
    return _listed(root, "", "graph_snapshot_updates", "update_goldens", "updates")


def _zoo_dashboards(root):
    """The `dashboards` of //models:report, as label strings."""
    return _listed(root, "models", "program_dashboard", "report", "dashboards")


def problems(root):
    """(zoo packages found, one sentence per package that escapes the zoo's rule)."""
    found, out = [], []
    updates, dashboards = _root_updates(root), _zoo_dashboards(root)
    for folder, dirs, files in sorted(os.walk(os.path.join(root, "models"))):
        dirs.sort()
        if "BUILD" not in files:
            continue
        package = os.path.relpath(folder, root).replace(os.sep, "/")
        with open(os.path.join(folder, "BUILD"), encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=f"{package}/BUILD")
        if not (_calls(tree) & DECLARING):
            continue
        found.append(package)
        if _last_call(tree) != "zoo_package":
            out.append(f"{package}/BUILD declares models or programs but does not end with zoo_package(); "
                       f'add load("//models:zoo.bzl", "zoo_package") and zoo_package() as its last line')
            continue
        if f"//{package}:update_goldens" not in updates:
            out.append(f"//:update_goldens does not run //{package}:update_goldens; add it to `updates` in BUILD")
        if f"//{package}:dashboard" not in dashboards:
            out.append(f"//models:report does not show //{package}:dashboard; add it to `dashboards` in models/BUILD")
    return found, out


def test_every_zoo_package_keeps_the_rule():
    found, out = problems(ROOT)
    assert out == []
    # The zoo as of this test's writing, so that a walk that finds nothing cannot pass.
    assert {"models", "models/gru", "models/llm", "models/mobilenet", "models/volumetric"} <= set(found)


def _tree(tmp_path, zoo_build, root_updates, dashboards=("//models/new:dashboard",)):
    (tmp_path / "models" / "new").mkdir(parents=True)
    (tmp_path / "models" / "BUILD").write_text(f'program_dashboard(name = "report", dashboards = {list(dashboards)!r})\n'
                                               'zoo_package()\n')
    (tmp_path / "models" / "new" / "BUILD").write_text(zoo_build)
    (tmp_path / "BUILD").write_text(f'graph_snapshot_updates(name = "update_goldens", updates = {root_updates!r})\n')
    return tmp_path


def test_a_package_without_zoo_package_is_named(tmp_path):
    root = _tree(tmp_path, '[executorch_program(name = n) for n in ["a", "b"]]\n', ["//models/new:update_goldens"])
    found, out = problems(str(root))
    assert found == ["models/new"]  # //models declares nothing here
    assert out == ["models/new/BUILD declares models or programs but does not end with zoo_package(); "
                   'add load("//models:zoo.bzl", "zoo_package") and zoo_package() as its last line']


def test_a_package_missing_from_update_goldens_is_named(tmp_path):
    root = _tree(tmp_path, 'torch_model(name = "m")\nzoo_package()\n', [])
    _, out = problems(str(root))
    assert out == ["//:update_goldens does not run //models/new:update_goldens; add it to `updates` in BUILD"]


def test_a_package_missing_from_the_zoo_dashboard_is_named(tmp_path):
    root = _tree(tmp_path, 'torch_model(name = "m")\nzoo_package()\n', ["//models/new:update_goldens"], dashboards=())
    _, out = problems(str(root))
    assert out == ["//models:report does not show //models/new:dashboard; add it to `dashboards` in models/BUILD"]
