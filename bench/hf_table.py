"""docs/huggingface.md's table of architectures: per row of tests/huggingface/architectures.bzl,
its task, whether its tests passed, its .pte's size and the largest difference from eager that
its numerics tests measured (the worst over cases, methods and runtimes).

    ./bazelw test //tests/huggingface/...
    ./bazelw run //bench:hf_table

It reads the numerics tests' numerics_differences.json (bench/arm64_table.py's summaries), the
tests' test.xml and the programs' .pte.json manifests.
"""

import json
import os
import re
import sys

from bench.arm64_table import summaries

PACKAGE = "tests/huggingface"
COLUMNS = ("architecture", "task", "status", ".pte", "worst error vs eager")


def _architecture(test_name):
    return test_name.split("_", 1)[0]


def _worst(found):
    """{architecture: the largest difference over its tests' runtimes and cases}."""
    worst = {}
    for summary in found:
        name = _architecture(summary["test"].rpartition(":")[2])
        for runtime, cases in summary["largest_difference"].items():
            if runtime == "arm64 vs native":
                continue
            for value in cases.values():
                now = worst.get(name, 0.0)
                worst[name] = None if value is None or now is None else max(now, value)
    return worst


def _statuses(testlogs):
    """{architecture: "passes" or "fails"} from its tests' test.xml."""
    found = {}
    folder = os.path.join(testlogs, PACKAGE)
    for test in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        xml = os.path.join(folder, test, "test.xml")
        if os.path.exists(xml):
            with open(xml, encoding="utf-8") as f:
                failed = re.search(r'(failures|errors)="[1-9]', f.read())
            name = _architecture(test)
            found[name] = "fails" if failed or found.get(name) == "fails" else "passes"
    return found


def _programs(bin_dir):
    """{architecture: (task, .pte bytes)} from the programs' manifests."""
    found = {}
    folder = os.path.join(bin_dir, PACKAGE)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith((".pte.json",)) and not name.endswith(".tokenizer.json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                manifest = json.load(f)
            found[_architecture(name)] = manifest["pte"]["size"]
    return found


def table(found, statuses, sizes, tasks):
    """The Markdown table, one row per architecture (tasks: {architecture: task})."""
    worst = _worst(found)
    rows = []
    for name in sorted(tasks):
        error = worst.get(name, "-")
        error = "n/c" if error is None else (error if error == "-" else f"{error:.1e}")
        size = f"{sizes[name] / 1000:.0f} KB" if name in sizes else "-"
        rows.append(f"| {name} | {tasks[name]} | {statuses.get(name, 'not run')} | {size} | {error} |")
    return "\n".join(["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)] + rows)


def _tasks(workspace):
    """{architecture: task} from architectures.bzl's rows (the generative ones: their tasks) and
    decoders.bzl's (text-generation)."""
    with open(os.path.join(workspace, PACKAGE, "architectures.bzl"), encoding="utf-8") as f:
        text = f.read()
    tasks = dict(re.findall(r'^    "(\w+)": \(\s*"([\w-]+)"', text, re.M))  # a row may wrap (DETR's)
    with open(os.path.join(workspace, PACKAGE, "decoders.bzl"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("DECODERS = {")
    decoders = text[start:text.index("\n}\n", start)]
    tasks.update(dict.fromkeys(re.findall(r'^    "(\w+)":', decoders, re.M), "text-generation"))
    return tasks


def main(argv):
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY", ".")
    testlogs = os.path.join(workspace, "bazel-testlogs")
    found = summaries(os.path.join(testlogs, PACKAGE))
    if not found:
        return f"hf_table: no numerics outputs under {testlogs}/{PACKAGE}; run `bazel test //{PACKAGE}/...` first"
    print(table(found, _statuses(testlogs), _programs(os.path.join(workspace, "bazel-bin")), _tasks(workspace)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
