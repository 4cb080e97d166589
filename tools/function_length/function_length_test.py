"""No function of the project's own code is longer than MAX_LINES lines (tests and the model zoo
aside): a long function is a sign that checks and building, or computing and rendering, are
mixed (docs/architecture.md, "Small functions").

A function's length runs from its `def` to its last line, docstring included, as Python's ast
measures it; .bzl files are measured the same way (Starlark's syntax is a subset of Python's).
A C++ function (native/) runs from the line that names it to the `}` that closes it at the
line's start, as this repository writes them. The test reads the source tree itself, through
the WORKSPACE runfile's symlink.
"""

import ast
import os
import re
import textwrap

import pytest

MAX_LINES = 60

# The folders held to MAX_LINES, and the kinds of file measured in them.
FOLDERS = ("exporter", "backend_hooks", "rules", "bench", "native", "tools")
SUFFIXES = (".py", ".bzl", ".cc", ".h")

# Tests and their fixtures: a test reads best as one story, and may run long.
_TEST_FOLDERS = ("tests",)


def _root():
    return os.path.dirname(os.path.realpath("WORKSPACE"))


def _is_test(path):
    parts = path.split(os.sep)
    return os.path.basename(path).endswith("_test.py") or any(p in _TEST_FOLDERS for p in parts[:-1])


def sources(root, folders=FOLDERS):
    """Workspace-relative paths of the measured files under `folders`."""
    found = []
    for folder in folders:
        for directory, subdirs, files in os.walk(os.path.join(root, folder)):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "bazel-")))
            for name in sorted(files):
                path = os.path.relpath(os.path.join(directory, name), root)
                if name.endswith(SUFFIXES) and not _is_test(path):
                    found.append(path)
    return found


# A C++ function's first line: at the line's start, a name followed by "(" (not a declaration,
# a type or a statement).
_CPP_FUNCTION = re.compile(r"^(?!namespace|struct|class|using|return|static_assert|#|//)[A-Za-z_][^;=]*?\b(\w+)\s*\(")


def cpp_lengths(text):
    """[(lines, name, first line)] of the C++ functions defined at the start of a line."""
    lines, found, i = text.splitlines(), [], 0
    while i < len(lines):
        match = _CPP_FUNCTION.match(lines[i])
        opening = next((j for j in range(i, min(i + 8, len(lines))) if "{" in lines[j] or ";" in lines[j]), None)
        if not match or opening is None or "{" not in lines[opening]:
            i += 1
            continue
        end = opening
        if lines[opening].count("{") != lines[opening].count("}"):
            end = next((k for k in range(opening + 1, len(lines))
                        if lines[k].startswith("}") and not lines[k].startswith("} catch")), len(lines) - 1)
        found.append((end - i + 1, match.group(1), i + 1))
        i = end + 1
    return found


def lengths(text, path="<text>"):
    """[(lines, name, first line)] of every function in the source text, nested ones included."""
    if path.endswith((".cc", ".h")):
        return cpp_lengths(text)
    tree = ast.parse(text, filename=path)
    return [((node.end_lineno or node.lineno) - node.lineno + 1, node.name, node.lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def too_long(root, paths):
    """["path:line name: N lines", ...] of the functions longer than MAX_LINES."""
    found = []
    for path in paths:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        found += [f"{path}:{line} {name}: {count} lines" for count, name, line in lengths(text, path) if count > MAX_LINES]
    return found


def test_no_function_is_longer_than_the_limit():
    over = too_long(_root(), sources(_root()))
    assert over == [], f"functions longer than {MAX_LINES} lines; split them:\n" + "\n".join(over)


def test_every_folder_is_measured():
    paths = sources(_root())
    for folder in FOLDERS:
        assert [p for p in paths if p.startswith(folder + os.sep)], f"no source found under {folder}/"
    assert "rules/private/lib/lowering.bzl" in paths and "exporter/core/shape_spec.py" in paths
    assert "native/et_runner.cc" in paths
    assert not [p for p in paths if p.endswith("_test.py") or p.startswith("exporter/tests/")]


@pytest.mark.parametrize("body, expected", [(59, 61), (58, 60)])
def test_the_measure_counts_from_def_to_the_last_line(body, expected):
    # def line + docstring line + body lines; a .bzl function reads the same.
    text = "def f(ctx):\n    \"\"\"Doc.\"\"\"\n" + "".join(f"    x{i} = {i}\n" for i in range(body))
    assert lengths(text) == [(expected, "f", 1)]


def test_a_long_function_is_reported(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "long.bzl").write_text("def _impl(ctx):\n" + "    pass\n" * MAX_LINES + textwrap.dedent("""
        def short(ctx):
            return ctx
        """))
    assert too_long(str(tmp_path), sources(str(tmp_path), ("rules",))) == [
        f"rules/long.bzl:1 _impl: {MAX_LINES + 1} lines"]


def test_cpp_functions_are_measured_to_their_closing_brace():
    text = textwrap.dedent("""\
        // a comment (f)
        struct Options {
          int x = 0;
        };
        int one_line(int a) { return a; }
        int runner_main(int argc, char** argv) try {
          if (argc) {
            return 1;
          }
          return 0;
        } catch (const std::exception& e) {
          return 2;
        }
        std::vector<int> declared(int a);
        """)
    assert cpp_lengths(text) == [(1, "one_line", 5), (8, "runner_main", 6)]
