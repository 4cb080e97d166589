"""bundled_program_test's runner (bundled_cases.py) on a bundle whose program keeps its weights
in a .ptd: ExecuTorch's runtime loads the bundle with the .ptd, and the cases are judged on
what it computes, so other weights fail them."""

from exporter.checks import bundled_cases, contract

BUNDLE = "exporter/tests/conv_net_external_bundle"
PTD = "exporter/tests/conv_net_external_pte.ptd"


def _config(ptd):
    return contract.BundledCasesConfig.from_json({
        "label": "//pkg:bundle_test", "bundle": "//pkg:bundle", "bpte": BUNDLE + ".bpte",
        "manifest": BUNDLE + ".bpte.json", "backends": ["xnnpack"], "ptd": ptd,
    })


def test_cases_pass_with_the_programs_weights():
    ok, report = bundled_cases.run(_config(PTD))
    assert ok, report
    assert "weights from conv_net_external_pte.ptd" in report
    assert "forward case 0 (batch=2): ok" in report


def test_cases_fail_with_other_weights(tmp_path):
    with open(PTD, "rb") as f:
        data = bytearray(f.read())
    # The weights are the file's tail (its header and names come first): scale their last bytes.
    for i in range(len(data) - 4096, len(data), 4):
        data[i + 3] ^= 0x01  # each float32's sign-and-exponent byte: every value changes
    altered = tmp_path / "altered.ptd"
    altered.write_bytes(bytes(data))
    ok, report = bundled_cases.run(_config(str(altered)))
    assert not ok, report
    assert "forward case 0 (batch=2): FAIL, an output is outside the tolerances" in report
