"""Writes or checks docs/rules.md: the reference of every public rule, macro, provider and attr.

    python rules_md.py --root DIR --check   fails (exit 1) when docs/rules.md is stale or a doc
                                            is missing; prints the fix
    python rules_md.py --root DIR --write   rewrites docs/rules.md

Examples come from real BUILD files of this repository (EXAMPLE_SOURCES), so each one is
code that the build runs; the WORKSPACE example is README.md's "Use it in your repo" block,
which tests/consumer_e2e checks against examples/consumer/WORKSPACE.
"""

import argparse
import ast
import difflib
import os
import re
import sys

if __package__ in (None, ""):  # run as a script (py_binary main): import the sibling module
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bzl_docs  # noqa: E402
else:
    from tools.docgen import bzl_docs  # noqa: E402

OUTPUT = "docs/rules.md"
UPDATE_COMMAND = "bazel run //tools/docgen:update_rules_md"

# The modules whose own public rules and macros a user calls besides defs.bzl's, with a heading.
EXTRA_MODULES = [
    ("WORKSPACE macros", "third_party/repositories.bzl", "@rules_torch_export//third_party:repositories.bzl"),
    ("WORKSPACE macros", "toolchain/repositories.bzl", "@rules_torch_export//toolchain:repositories.bzl"),
    ("Toolchain", "toolchain/toolchain.bzl", "@rules_torch_export//toolchain:toolchain.bzl"),
]

# Searched in this order for the first use of each public name.
EXAMPLE_SOURCES = [
    "models/mobilenet/BUILD",
    "models/specs/BUILD",
    "models/bundle/BUILD",
    "models/llm/BUILD",
    "toolchain/BUILD",
    "models/BUILD",  # the bundled ResNet, the one bundled_program of the zoo; benchmarks
    "models/volumetric/BUILD",  # EXECUTORCH_COPTS: the app's own kernel in C++
    "BUILD",  # //:update_goldens, the graph_snapshot_updates over every zoo package's
    "native/arm64/BUILD",  # arm64_binary and app_archive: the runner for arm64
    "models/kws/BUILD",  # ethos_u(...) and tosa(...): Arm's backends
    "tests/huggingface/BUILD",  # seq2seq_generation_test: the architectures table's T5 and Whisper
    "tests/backends/BUILD",  # openvino(...) and coreml(...): the backends beside XNNPACK
    "models/vlm/BUILD",  # multimodal_program and its generation test
]

README = "README.md"
README_SECTION = "## Use it in your repo"


def _find_example(root, name):
    """(path, source text) of the first top-level statement that uses `name`, or None."""
    for path in EXAMPLE_SOURCES:
        full = os.path.join(root, path)
        if not os.path.exists(full):
            raise bzl_docs.DocError(f"{path}, an example source of tools/docgen/rules_md.py, is missing")
        with open(full, encoding="utf-8") as f:
            text = f.read()
        for statement in ast.parse(text, filename=path).body:
            if not any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
                       for node in ast.walk(statement)):
                continue
            # Cut the text only for a statement that uses the name: each cut splits the whole file.
            segment = ast.get_source_segment(text, statement) or ""
            if "NIGHTLY" not in segment:  # this repository's CI tier (tools/ci/tiers.bzl), not what a user writes
                return path, segment
    return None


def readme_workspace_block(root):
    """The WORKSPACE code block of README.md's "Use it in your repo" section."""
    with open(os.path.join(root, README), encoding="utf-8") as f:
        text = f.read()
    start = text.find(README_SECTION + "\n")
    if start < 0:
        raise bzl_docs.DocError(f"{README} has no '{README_SECTION}' section")
    for block in re.findall(r"```python\n(.*?)```", text[start:], flags=re.S):
        if "local_repository(" in block:
            return block
    raise bzl_docs.DocError(f"{README}: '{README_SECTION}' has no WORKSPACE block (```python with local_repository)")


def _cell(text):
    return " ".join(text.split()).replace("|", "\\|")


def _signature(entry):
    names = [p.name for p in entry.params]
    if entry.kind in ("rule", "repository_rule"):
        names = ["name"] + names
    return f"{entry.name}({', '.join(names)})"


def _params_table(entry):
    if entry.kind == "provider":
        rows = ["| Field | Description |", "|---|---|"]
        rows += [f"| `{p.name}` | {_cell(p.doc)} |" for p in entry.params]
        return rows
    heading = "Attribute" if entry.kind == "rule" else "Parameter"
    rows = [f"| {heading} | Type | Default | Description |", "|---|---|---|---|"]
    if entry.kind == "rule":
        rows.append(f"| `name` | name | required | {bzl_docs.NAME_DOC} |")
    for p in entry.params:
        default = p.default if p.default in ("", "required") else f"`{_cell(p.default)}`"
        rows.append(f"| `{p.name}` | {_cell(p.type)} | {default} | {_cell(p.doc)} |")
    return rows


def _provider_example(entry):
    fields = ", ".join(f"info.{p.name}" for p in entry.params)
    return [
        "```python",
        f'load("@rules_torch_export//rules:defs.bzl", "{entry.name}")',
        "",
        "def _impl(ctx):",
        f"    info = ctx.attr.dep[{entry.name}]",
        f"    # {fields}",
        "```",
        "",
        "`examples/consumer/keywords/program_info.bzl` is a complete rule that reads "
        "`ExecuTorchProgramInfo` and, through its `exported` field, `ExportedProgramInfo`, "
        "`TorchModelInfo` and `ShapeSpecInfo`.",
    ]


def _entry_section(root, entry, load_from, workspace_block):
    kind = {"rule": "rule", "repository_rule": "repository rule", "macro": "macro",
            "provider": "provider", "constant": "constant"}[entry.kind]
    lines = ["", f"### `{entry.name}`", "", f"*{kind}*, defined in `{entry.source}`; load it from `{load_from}`.", ""]
    if entry.kind == "constant":
        lines += [f"`{entry.name} = {entry.value}`", "", entry.doc]
    else:
        lines += [entry.doc, ""]
        if entry.kind != "provider":
            lines += ["```python", _signature(entry), "```", ""]
        lines += _params_table(entry)
    if entry.kind == "constant":
        return lines  # its comment shows the use
    lines += ["", "Example:", ""]
    if entry.kind == "provider":
        return lines + _provider_example(entry)
    if load_from.endswith("repositories.bzl"):
        return lines + ["```python", workspace_block.rstrip("\n"), "```", "", f"(from `{README}`, \"Use it in your repo\")"]
    found = _find_example(root, entry.name)
    if found is None:
        raise bzl_docs.DocError(
            f"no example of {entry.name}: use it in one of {', '.join(EXAMPLE_SOURCES)} "
            f"(tools/docgen/rules_md.py EXAMPLE_SOURCES)"
        )
    path, source = found
    return lines + ["```python", source, "```", "", f"(from `{path}`)"]


def render(root):
    """The text of docs/rules.md, and the list of missing docs (empty when complete)."""
    defs_module, entries = bzl_docs.public_api(root)
    extra = [(heading, e, load) for heading, path, load in EXTRA_MODULES for e in bzl_docs.module_api(root, path)]
    problems = bzl_docs.missing_docs(entries + [e for _, e, _ in extra])
    workspace_block = readme_workspace_block(root)
    defs_doc = ast.get_docstring(defs_module.tree) or ""

    groups = [
        ("Rules and macros", [e for e in entries if e.kind in ("rule", "macro")], "@rules_torch_export//rules:defs.bzl"),
        ("Constants", [e for e in entries if e.kind == "constant"], "@rules_torch_export//rules:defs.bzl"),
        ("Providers", [e for e in entries if e.kind == "provider"], "@rules_torch_export//rules:defs.bzl"),
    ]
    for heading, entry, load in extra:
        if groups[-1][0] != heading:
            groups.append((heading, [], load))
        groups[-1][1].append((entry, load))

    out = [
        "# Rules reference",
        "",
        f"<!-- Generated by tools/docgen from the docstrings of the .bzl files; do not edit. "
        f"Update with `{UPDATE_COMMAND}`; //tests/docs:rules_md_test fails when this file is stale. -->",
        "",
        defs_doc.splitlines()[0] if defs_doc else "",
        "",
        "Inside this repository load `//rules:defs.bzl`; from another repository, load it through the",
        "name you gave this one in your WORKSPACE (see README.md, \"Use it in your repo\").",
        "",
    ]
    for heading, items, _ in groups:
        names = [i[0].name if isinstance(i, tuple) else i.name for i in items]
        out.append(f"- {heading}: " + ", ".join(f"[`{n}`](#{n.lower()})" for n in names))
    for heading, items, load in groups:
        out += ["", f"## {heading}"]
        for item in items:
            entry, load_from = item if isinstance(item, tuple) else (item, load)
            out += _entry_section(root, entry, load_from, workspace_block)
    return "\n".join(out).rstrip() + "\n", problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.environ.get("BUILD_WORKSPACE_DIRECTORY", "."))
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    try:
        text, problems = render(args.root)
    except bzl_docs.DocError as e:
        print(f"rules_md: {e}", file=sys.stderr)
        return 1
    if problems:
        print("rules_md: public API without docs; add them to the docstrings or attrs:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    path = os.path.join(args.root, OUTPUT)
    if args.write:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {OUTPUT}")
        return 0
    current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if current != text:
        diff = difflib.unified_diff(current.splitlines(), text.splitlines(), OUTPUT + " (checked in)",
                                    OUTPUT + " (generated)", lineterm="")
        print("\n".join(list(diff)[:80]), file=sys.stderr)
        print(f"rules_md: {OUTPUT} is stale; run: {UPDATE_COMMAND}", file=sys.stderr)
        return 1
    print(f"{OUTPUT} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
