"""//models/transformer:transformer_ethos_u55 names what Arm's partitioner left on the CPU, with
the partitioner's own reasons, in its manifest ("cpu_fallback") and its report, and the
manifest's operators outside the delegate are those (docs/backends.md, "Arm")."""

import json

from runfiles import Runfiles

RUNFILES = Runfiles.Create()


def _path(name):
    return RUNFILES.Rlocation(f"rules_torch_export/models/transformer/{name}")


def _manifest():
    with open(_path("transformer_ethos_u55.pte.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_manifest_names_each_refused_operator_with_the_partitioner_s_reason():
    found = {entry["operator"]: entry["reason"] for entry in _manifest()["cpu_fallback"]}
    assert found["aten.index_select.default"] == "Op is not supported on U55."  # the token embedding's gather
    assert "torch.bool input attention_mask" in found["aten.bitwise_not.default"]  # the padding mask
    assert "int64 input input_ids" in found["dim_order_ops._to_dim_order_copy.default"]
    assert all(reason.strip() for reason in found.values())


def test_vela_puts_every_operator_it_was_given_on_the_npu():
    vela = _manifest()["vela"]
    assert vela["cpu_operators"] == 0 and vela["npu_fraction"] == 1.0


def test_the_report_shows_the_reasons():
    with open(_path("transformer_ethos_u55.report.html"), encoding="utf-8") as f:
        page = f.read()
    assert "Left on the CPU" in page and "Op is not supported on U55." in page
