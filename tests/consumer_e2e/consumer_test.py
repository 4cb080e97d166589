"""examples/consumer builds and passes its tests with the rules loaded as an external repository."""

import ast
import glob
import json
import os
import re
import textwrap

import pytest

from tests.e2e import harness

CONSUMER = "examples/consumer"
TESTS = [
    "//keywords:keyword_net_graph_test",
    "//keywords:keyword_net_numerics_test",
    "//keywords:keyword_net_q8_numerics_test",
    "//keywords:keyword_net_runtime_test",
    "//keywords:keyword_spotter_arm64_app_test",
    "//keywords:keyword_spotter_test",
]


@pytest.fixture(scope="module")
def consumer():
    """A copy of the rules plus examples/consumer; Bazel runs in the consumer's folder."""
    with harness.Workspace.example(CONSUMER) as ws:
        yield ws


def test_consumer_builds_and_tests(consumer):
    result = consumer.bazel("test", "//...")
    assert result.code == 0, result.stderr[-6000:]
    for label in TESTS:
        assert any(line.startswith(label) and "PASSED" in line for line in result.stdout.splitlines() + result.stderr.splitlines()), (
            f"{label} did not pass:\n{result.stderr[-3000:]}"
        )
    # The consumer's own targets ran through the rules' actions.
    assert result.labels("TorchExport") == ["//keywords:keyword_net_ep"]
    assert result.labels("TorchQuantize") == ["//keywords:keyword_net_q8_ep"]
    assert result.labels("ExecuTorchLower") == ["//keywords:keyword_net_pte", "//keywords:keyword_net_q8_pte"]
    # The exporter ran from the external repository, not from a copy in the consumer: for the
    # host, and again for keyword_spotter_arm64's data in the arm64 configuration (its own
    # output folder, so its own actions).
    exports = result.executed("TorchExport")
    assert len(exports) == 2
    for export in exports:
        assert "external/rules_torch_export/exporter/main.py" in export["commandArgs"]


def test_the_app_builds_for_arm64_with_platforms(consumer):
    """--platforms alone builds the consumer's C++ for arm64: the rules register the cross toolchain,
    and @torch_export_venv//executorch gives the aarch64 runtime."""
    result = consumer.bazel("build", "--platforms=@rules_torch_export//platforms:linux_aarch64", "//keywords:keyword_spotter")
    assert result.code == 0, result.stderr[-3000:]
    header = consumer.read("bazel-bin/keywords/keyword_spotter", mode="rb")[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183  # EM_AARCH64
    assert result.executed("ExecuTorchLower") == []  # the program does not depend on the target platform
    # ...nor did the copy built in arm64_binary's configuration.
    (arm64_copy,) = glob.glob(os.path.join(consumer.path, "bazel-out/*-ST-*/bin/keywords/keyword_net_pte.pte"))
    assert consumer.sha256(arm64_copy) == consumer.sha256("bazel-bin/keywords/keyword_net_pte.pte")


def test_manifests_name_the_consumer_targets(consumer):
    pte = json.loads(consumer.read("bazel-bin/keywords/keyword_net_pte.pte.json"))
    assert pte["label"] == "//keywords:keyword_net_pte"
    assert pte["exported"]["label"] == "//keywords:keyword_net_ep"
    assert pte["pte"]["sha256"] == consumer.sha256("bazel-bin/keywords/keyword_net_pte.pte")
    info = json.loads(consumer.read("bazel-bin/keywords/keyword_net_info.json"))
    assert info["shape_spec"] == "//keywords:mfcc_clips"


def test_a_bad_entry_names_the_consumer_target_and_the_fix(consumer):
    build = consumer.read("keywords/BUILD")
    broken = build.replace('entry = "keywords.keyword_net:keyword_net"', 'entry = "keywords.keyword_net:keyword_nett"')
    assert broken != build
    consumer.write("keywords/BUILD", broken)
    try:
        result = consumer.bazel("build", "//keywords:keyword_net_ep")
    finally:
        consumer.write("keywords/BUILD", build)
    assert result.code != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR: //keywords:keyword_net_ep")]
    assert errors, result.stderr[-3000:]
    assert "'keyword_nett'" in errors[0] and "set `entry` to one of its callables: KeywordNet" in errors[0], errors[0]
    assert "Traceback" not in result.stderr


def _code_lines(text):
    """Lines that are neither blank nor comments, stripped of the docs' list indent."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


# docs/setup.md walks through this workspace; README.md's "Use it in your repo" is its short version.
SETUP_PAGE = "docs/setup.md"
README_PAGE = "README.md"
README_SECTION = "## Use it in your repo\n"


def _blocks(path, kind, heading=None):
    """The ```kind code blocks of `path` under `heading`, or before its first section without one."""
    text = open(os.path.join(harness.source_root(), path), encoding="utf-8").read()
    start = text.index(heading) if heading else 0
    end = text.find("\n## ", start + 1)
    return re.findall(r"```" + kind + r"\n(.*?)```", text[start:end if end >= 0 else len(text)], flags=re.S)


def _consumer_file(rel):
    return open(os.path.join(harness.source_root(), CONSUMER, rel), encoding="utf-8").read()


def test_setup_page_is_what_the_consumer_does():
    """docs/setup.md's steps show this workspace's WORKSPACE, .bazelrc and BUILD."""
    python_blocks = _blocks(SETUP_PAGE, "python")
    (workspace,) = [b for b in python_blocks if "local_repository(" in b]
    assert _code_lines(workspace) == _code_lines(_consumer_file("WORKSPACE"))
    (bazelrc,) = _blocks(SETUP_PAGE, "text")
    assert _code_lines(bazelrc) == _code_lines(_consumer_file(".bazelrc"))

    # Every statement of the page's BUILD block is in keywords/BUILD, word for word (its load
    # names a subset of what keywords/BUILD loads).
    (build,) = [b for b in python_blocks if "torch_model(" in b]
    consumer_build = _consumer_file("keywords/BUILD")
    consumer_statements = [ast.get_source_segment(consumer_build, s) for s in ast.parse(consumer_build).body]
    loaded = set(ast.literal_eval(a) for s in ast.parse(consumer_build).body
                 if isinstance(s, ast.Expr) and getattr(s.value.func, "id", "") == "load" for a in s.value.args)
    page_build = textwrap.dedent(build)
    for statement in ast.parse(page_build).body:
        source = ast.get_source_segment(page_build, statement)
        if isinstance(statement, ast.Expr) and statement.value.func.id == "load":
            names = {ast.literal_eval(a) for a in statement.value.args}
            assert names <= loaded, f"{SETUP_PAGE} loads {sorted(names - loaded)}, which keywords/BUILD does not"
        else:
            assert source in consumer_statements, f"{SETUP_PAGE}'s BUILD block has a statement keywords/BUILD lacks:\n{source}"


def test_readme_section_is_what_the_consumer_does():
    """README.md's "Use it in your repo" shows this workspace's WORKSPACE, and flags of its .bazelrc
    (the ones the rules need; docs/setup.md has them all)."""
    (workspace,) = [b for b in _blocks(README_PAGE, "python", README_SECTION) if "local_repository(" in b]
    assert _code_lines(workspace) == _code_lines(_consumer_file("WORKSPACE"))
    (bazelrc,) = _blocks(README_PAGE, "text", README_SECTION)
    flags = _code_lines(bazelrc)
    assert flags and set(flags) <= set(_code_lines(_consumer_file(".bazelrc"))), flags
