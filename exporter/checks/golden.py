"""The runner behind graph_snapshot_test: compare with the golden, or rewrite it (`.update`).
It also rewrites program_budget_test goldens (budget.py checks those).

    golden CONFIG.json...            test: fail with a diff and the command that accepts it
    golden --update CONFIG.json...   `bazel run`: write the goldens into the source tree
    golden --update --list FILE      the same for the configs FILE lists, one per line

Each CONFIG is written by the graph_snapshot_test (or program_budget_test) rule; its paths are
runfiles-relative.
"""

import difflib
import json
import os
import sys

from exporter.checks import contract

MAX_DIFF_LINES = 400


def _load_config(path):
    with open(path, encoding="utf-8") as f:
        return contract.golden_config(json.load(f))


def render(config):
    """The golden text of a config: a budget's figures, or the snapshot of its .pt2 (and .pte),
    which the test's build action wrote (actions/snapshot_text.py): config.text. A config that
    names no text (a run outside Bazel) renders it here, importing torch."""
    if config.kind == "budget":  # program_budget_test; it checks the golden itself
        from exporter.checks import budget

        return budget.golden_text(config)
    if config.text:
        with open(config.text, encoding="utf-8") as f:
            return f.read()
    from exporter.checks import snapshot
    from exporter.formats import pt2

    ep = pt2.load(config.pt2)
    pte_bytes = None
    if config.pte:
        with open(config.pte, "rb") as f:
            pte_bytes = f.read()
    return snapshot.render(config.subject, ep, config.spec, pte_bytes)


def _version_note(golden_text):
    from exporter.checks import snapshot

    recorded, current = snapshot.parse_versions(golden_text), snapshot.versions()
    if recorded is None or recorded == current:
        return None
    fmt = lambda v: ", ".join(f"{k} {v.get(k, '?')}" for k in sorted(current))  # noqa: E731
    return (f"The golden was written with {fmt(recorded)}; this toolchain has {fmt(current)}. "
            f"Expect differences from the upgrade itself; review them below.")


def _diff(golden_text, actual_text, golden_name):
    lines = list(difflib.unified_diff(
        golden_text.splitlines(keepends=True), actual_text.splitlines(keepends=True),
        fromfile=f"{golden_name} (golden)", tofile=f"{golden_name} (actual)",
    ))
    if len(lines) > MAX_DIFF_LINES:
        rest = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"... {rest} more diff lines (full text in the test's outputs)\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _save_actual(config, text):
    """Leaves the new text in bazel-testlogs/.../test.outputs for a closer look."""
    out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if out_dir:
        with open(os.path.join(out_dir, os.path.basename(config.golden)), "w", encoding="utf-8") as f:
            f.write(text)


def outputs_path(label, name):
    """Where `bazel test` leaves a file that the test wrote to its undeclared outputs."""
    package, _, target = label.lstrip("@").partition("//")[2].partition(":")
    return f"bazel-testlogs/{package}/{target}/test.outputs/{name}"


def _save_visual_diff(config, expected, actual):
    """Writes the graphs side by side (checks/snapshot_diff.py) next to the actual text; returns
    the line that names it, or "" when the test has no outputs folder or no graphviz."""
    out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
    if not out_dir or not config.dot:
        return ""
    from exporter.checks import snapshot_diff

    name = os.path.basename(config.golden) + ".diff.html"
    try:
        with open(config.dot_version, encoding="utf-8") as f:
            graphviz = f.read().strip().splitlines()[0]
        text = snapshot_diff.render(expected, actual, config.label, config.golden, config.dot, graphviz)
    except (OSError, RuntimeError) as e:  # the text diff below still says what changed
        return f"No visual diff: {e}\n"
    with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
        f.write(text)
    return (f"The two graphs side by side, changes marked: {outputs_path(config.label, name)} "
            f"(in outputs.zip there unless --nozip_undeclared_test_outputs)\n")


def run(config):
    """(ok, message) of one snapshot test (a contract.SnapshotConfig)."""
    actual = render(config)
    command = f"bazel run {config.update_target}"
    golden = config.golden
    if not os.path.exists(golden):
        return False, (f"FAIL {config.label}: the golden {golden} does not exist. Create it with:\n"
                       f"  {command}\n")
    with open(golden, encoding="utf-8") as f:
        expected = f.read()
    if expected == actual:
        return True, f"ok {config.label}: {config.subject} matches {golden}\n"
    _save_actual(config, actual)
    from exporter.checks import qparams_diff

    notes = [n for n in (_version_note(expected), qparams_diff.explain(expected, actual)) if n]
    visual = _save_visual_diff(config, expected, actual)
    message = "".join(n + "\n" for n in notes) + (
        f"FAIL {config.label}: the graph of {config.subject} differs from {golden}:\n{visual}"
        f"{_diff(expected, actual, golden)}"
        f"If the change is intended, accept it with:\n  {command}\n")
    return False, message


def update(config, workspace):
    """Writes the golden into the source tree; returns a one-line report."""
    target = os.path.join(workspace, config.golden)
    text = render(config)
    if os.path.exists(target):
        with open(target, encoding="utf-8") as f:
            if f.read() == text:
                return f"unchanged {config.golden}"
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(target + ".tmp", target)
    return f"wrote {config.golden}"


def _config_paths(argv):
    """The config paths of argv: its own, and those the files after --list name."""
    paths, listing = [], False
    for arg in argv:
        if arg in ("--update", "--list"):
            listing = arg == "--list"
        elif listing:
            with open(arg, encoding="utf-8") as f:
                paths += [line.strip() for line in f if line.strip()]
        else:
            paths.append(arg)
    return paths


def main(argv):
    updating = "--update" in argv
    loaded = [_load_config(p) for p in _config_paths(argv)]
    if updating:
        workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
        if not workspace:
            print("golden: --update writes into the source tree; run it with `bazel run`", file=sys.stderr)
            return 2
        for config in loaded:
            print(update(config, workspace))
        return 0
    failed = 0
    for config in loaded:
        ok, message = run(config)
        (sys.stdout if ok else sys.stderr).write(message)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
