"""backend_hooks/vela.py on files shaped as Vela 5.2.0 writes them (a summary and a per-layer CSV),
and on files that are not: each refused in one line."""

import pytest

from backend_hooks import vela
from exporter.core.errors import BadFile

# The columns read, with a conv + linear model's values (Ethos-U55-128, ExecuTorch's defaults).
SUMMARY = {
    "experiment": "default", "network": "out", "accelerator_configuration": "Ethos_U55_128",
    "system_config": "Ethos_U55_High_End_Embedded", "memory_mode": "Shared_Sram", "core_clock": "500000000.0",
    "inference_time": "4.0064e-05", "passes_before_fusing": "3", "sram_memory_used": "4.0",
    "dram_memory_used": "0.0", "on_chip_flash_memory_used": "0.0", "off_chip_flash_memory_used": "12.828125",
    "nn_macs": "75776", "cycles_npu": "9315", "cycles_total": "20032",
}
LAYERS = "Original Operator,NNG Operator,Target,Name\nTranspose,Transpose,NPU,#81\nConv2D,Conv2D,NPU,a\n" \
         "Tanh,Passthrough,CPU,b\n"


def _folder(tmp_path, summary=None, layers=LAYERS):
    given = dict(SUMMARY, **(summary or {}))
    (tmp_path / "out_summary_Ethos_U55_High_End_Embedded.csv").write_text(
        ",".join(given) + "\n" + ",".join(given.values()) + "\n")
    (tmp_path / "out_per-layer.csv").write_text(layers)
    return str(tmp_path)


def test_a_compile_s_record_holds_bytes_operators_and_the_time_at_the_clock(tmp_path):
    record = vela.compile_record(_folder(tmp_path))
    assert record == {
        "accelerator": "Ethos_U55_128", "system_config": "Ethos_U55_High_End_Embedded", "memory_mode": "Shared_Sram",
        "clock_hz": 500_000_000, "sram_bytes": 4096, "dram_bytes": 0, "flash_bytes": 13136,
        "npu_operators": 2, "cpu_operators": 1, "macs": 75776, "cycles": 20032, "npu_cycles": 9315,
        "estimated_ms": 0.040064,
    }


def test_the_manifest_record_adds_up_the_compiles(tmp_path):
    one = vela.compile_record(_folder(tmp_path))
    record = vela.manifest_record([one, one])["vela"]
    assert record["sram_bytes"] == 8192 and record["npu_operators"] == 4 and record["cpu_operators"] == 2
    assert record["npu_fraction"] == round(4 / 6, 6) and record["estimated_ms"] == 0.080128
    assert record["compiles"] == [one, one]
    assert vela.manifest_record([]) == {}  # a program Vela compiled nothing of keeps its manifest


def test_the_summary_file_is_the_manifest_s_entry_under_the_program_s_label(tmp_path):
    one = vela.compile_record(_folder(tmp_path))
    assert vela.summary_record("//pkg:net", [one]) == {
        "format": "rules_torch_export/vela-summary/1", "label": "//pkg:net", "vela": vela.manifest_record([one])["vela"]}
    assert vela.summary_record("//pkg:net", [])["vela"] is None  # still written: it is a declared output


@pytest.mark.parametrize("summary, layers, needle", [
    ({"sram_memory_used": "4.0001"}, LAYERS, "sram_memory_used = '4.0001' KiB is not a whole number of bytes"),
    ({"nn_macs": "-1"}, LAYERS, "nn_macs = '-1' is not a finite number >= 0"),
    ({"cycles_total": "nan"}, LAYERS, "cycles_total = 'nan' is not an integer"),
    ({"core_clock": "0"}, LAYERS, "core_clock = '0' is not a clock in Hz"),
    ({"passes_before_fusing": "4"}, LAYERS, "per-layer table lists 3 operators, fewer than its summary's 4 passes"),
    (None, "Original Operator,Target\nConv2D,GPU\n", "line 2 is not an operator row with Target NPU or CPU"),
    (None, "Original Operator,Kind\n", "no header with a Target column"),
    (None, "Target\nNPU\n\x00\xff\n", "not an ASCII CSV file"),
])
def test_a_file_that_is_not_what_vela_writes_fails_in_one_line(tmp_path, summary, layers, needle):
    with pytest.raises(BadFile) as caught:
        vela.compile_record(_folder(tmp_path, summary, layers))
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_column_or_file_fails_in_one_line(tmp_path):
    folder = _folder(tmp_path)
    (tmp_path / "out_summary_Ethos_U55_High_End_Embedded.csv").write_text("network,nn_macs\nout,1\n")
    with pytest.raises(BadFile, match="no column accelerator_configuration"):
        vela.compile_record(folder)
    (tmp_path / "out_summary_Ethos_U55_High_End_Embedded.csv").unlink()
    with pytest.raises(BadFile, match="Vela wrote 0 summary CSV files, not one"):
        vela.compile_record(folder)
