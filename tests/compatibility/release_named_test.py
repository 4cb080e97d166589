"""The report, the dashboard and pte_inspect name the ExecuTorch release that lowered each program
and the oldest runtime measured to load it: a program lowered for 1.4, whose manifest records its
release, and the default program beside it, whose manifest records none (it keeps its bytes)."""

import json

from exporter.formats import pte_inspect

RELEASE_1_4 = "1.4 (1.4.1); the oldest runtime measured to load it: 1.3"
TOOLCHAIN_S = "1.5 (the toolchain's, 1.5.1); the oldest runtime measured to load it: 1.3"


def _text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_pte_inspect_names_each_program_s_release(capsys):
    for pte, release in (("tests/compatibility/xnnpack_f32_1_4.pte", RELEASE_1_4),
                         ("tests/backends/conv_linear_xnnpack.pte", TOOLCHAIN_S)):
        assert pte_inspect.main([pte, pte + ".json"]) == 0  # the files the pte_inspect rule passes
        assert capsys.readouterr().out.splitlines()[1] == f"ExecuTorch release: {release}"


def test_the_report_names_the_release_of_a_1_4_program():
    summary = json.loads(_text("tests/compatibility/xnnpack_f32_1_4.report.json"))
    assert summary["executorch_release"] == {"name": "1.4", "version": "1.4.1", "toolchain's": False,
                                             "oldest_runtime_measured": "1.3"}
    facts = _text("tests/compatibility/xnnpack_f32_1_4.report.html").split('id="facts"')[1]
    assert f"<tr><td>ExecuTorch release</td><td>{RELEASE_1_4}</td></tr>" in facts


def test_the_dashboard_names_each_program_s_release():
    rows = _text("tests/compatibility/releases_dashboard.html").split("<tbody>")[1].split("</tbody>")[0].split("<tr>")
    found = {row.split("<code>")[1].split("</code>")[0]: row.split("</td><td>")[1] for row in rows if "<code>" in row}
    assert found == {"//tests/compatibility:xnnpack_f32_1_4": RELEASE_1_4,
                     "//tests/backends:conv_linear_xnnpack": TOOLCHAIN_S.replace("'", "&#x27;")}
