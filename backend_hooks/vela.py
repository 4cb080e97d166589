"""Vela's figures of an Ethos-U program (docs/backends.md, "Arm"), read from Vela's own CSV files.

ExecuTorch's EthosUBackend compiles each delegate's TOSA graph with Vela in a temporary folder
that it deletes. While a lowering runs, capture() hands that call a folder of its own and adds
`--verbose-performance`, which makes Vela write its per-layer table beside its summary (neither
changes the command stream: the .pte keeps its bytes). Then it reads:

- `out_summary_<system config>.csv`: memory used per area (KiB), MACs, cycles, the clock;
- `out_per-layer.csv`: one row per operator, its Target NPU or CPU.

capture() also keeps the TOSA graph each compile was given, keyed by the sha256 of the delegate
blob Vela's output became: graphs_text() writes them for the lowering's `<name>.vela_tosa.json`,
which numerics_test's tosa_reference runtime runs in place of the command stream
(backend_hooks/checks/tosa_reference.py). The files are Vela's output, not ours: they are parsed
strictly, and anything unexpected fails the lowering in one line (BadFile). The record holds no
path and no time, so it is the same on every run. It goes in the manifest ("vela") and, the
same, in `<name>.vela.json` (summary_record()).
"""

import base64
import contextlib
import csv
import dataclasses
import hashlib
import io
import json
import math
import os
import tempfile

from exporter.core import patches
from exporter.core.errors import BadFile

MAX_CSV_BYTES = 1 << 20  # a summary is ~1.5 KB; a per-layer table ~100 bytes per operator
MEMORY_AREAS = ("sram", "dram", "on_chip_flash", "off_chip_flash")
_TEXT_COLUMNS = ("accelerator_configuration", "system_config", "memory_mode")
_INT_COLUMNS = ("nn_macs", "cycles_total", "cycles_npu", "passes_before_fusing")
# The program's totals: bytes, operators, MACs and cycles add up over its Ethos-U delegates
# (SRAM too: an upper bound, whether or not the delegates share their scratch).
_SUMMED = ("sram_bytes", "dram_bytes", "flash_bytes", "npu_operators", "cpu_operators", "macs", "cycles")


def _read_csv(path):
    """The rows of a CSV file Vela wrote, or BadFile."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise BadFile(f"Vela wrote no {name}; this Vela's output is not what the exporter reads "
                      f"(ethos-u-vela 5.2.0 writes it)")
    if os.path.getsize(path) > MAX_CSV_BYTES:
        raise BadFile(f"Vela's {name}: over {MAX_CSV_BYTES:,} bytes, not a summary")
    try:
        with open(path, encoding="ascii", newline="") as f:
            return list(csv.reader(io.StringIO(f.read(), newline=""), strict=True))
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadFile(f"Vela's {name}: not an ASCII CSV file: {e}") from None


def _number(name, column, text, kind):
    """A finite number >= 0 from Vela's column, as kind (int or float), or BadFile."""
    try:
        value = kind(text)
    except ValueError:
        raise BadFile(f"Vela's {name}: {column} = {text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if not math.isfinite(value) or value < 0:
        raise BadFile(f"Vela's {name}: {column} = {text!r} is not a finite number >= 0")
    return value


def _kib_to_bytes(name, column, text):
    """Vela writes memory as bytes / 1024.0; a value that is no whole number of bytes is refused."""
    kib = _number(name, column, text, float)
    if not (kib * 1024).is_integer():
        raise BadFile(f"Vela's {name}: {column} = {text!r} KiB is not a whole number of bytes")
    return int(kib * 1024)


def read_summary(path):
    """{column: text} of Vela's summary CSV: a header and one row, with the columns read here."""
    name = os.path.basename(path)
    rows = _read_csv(path)
    if len(rows) != 2 or len(rows[0]) != len(rows[1]) or len(set(rows[0])) != len(rows[0]):
        raise BadFile(f"Vela's {name}: expected a header and one row of as many unique columns, "
                      f"found {len(rows)} row(s)")
    found = dict(zip(rows[0], rows[1]))
    wanted = _TEXT_COLUMNS + _INT_COLUMNS + ("core_clock",) + tuple(f"{a}_memory_used" for a in MEMORY_AREAS)
    missing = [c for c in wanted if c not in found]
    if missing:
        raise BadFile(f"Vela's {name}: no column {missing[0]}")
    return found


def read_targets(path):
    """(NPU operators, CPU operators) of Vela's per-layer CSV: its rows' Target column."""
    name = os.path.basename(path)
    rows = _read_csv(path)
    if not rows or "Target" not in rows[0]:
        raise BadFile(f"Vela's {name}: no header with a Target column")
    column = rows[0].index("Target")
    counts = {"NPU": 0, "CPU": 0}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(rows[0]) or row[column] not in counts:
            raise BadFile(f"Vela's {name}: line {number} is not an operator row with Target NPU or CPU")
        counts[row[column]] += 1
    return counts["NPU"], counts["CPU"]


def compile_record(folder):
    """The record of one Vela compile whose output folder is `folder`."""
    summaries = sorted(f for f in os.listdir(folder) if f.startswith("out_summary_") and f.endswith(".csv"))
    if len(summaries) != 1:
        raise BadFile(f"Vela wrote {len(summaries)} summary CSV files, not one: {summaries}")
    name = summaries[0]
    found = read_summary(os.path.join(folder, name))
    npu, cpu = read_targets(os.path.join(folder, "out_per-layer.csv"))
    # A pass holds one operator or more (measured: the zoo's transformer on an Ethos-U55, 183
    # operators in 175 passes; equal for convolutions), so the table never lists fewer.
    if npu + cpu < _number(name, "passes_before_fusing", found["passes_before_fusing"], int):
        raise BadFile(f"Vela's per-layer table lists {npu + cpu} operators, fewer than its summary's "
                      f"{found['passes_before_fusing']} passes: the two files disagree")
    clock = _number(name, "core_clock", found["core_clock"], float)
    if clock <= 0 or not clock.is_integer():
        raise BadFile(f"Vela's {name}: core_clock = {found['core_clock']!r} is not a clock in Hz")
    memory = {a: _kib_to_bytes(name, f"{a}_memory_used", found[f"{a}_memory_used"]) for a in MEMORY_AREAS}
    cycles = _number(name, "cycles_total", found["cycles_total"], int)
    return {
        "accelerator": found["accelerator_configuration"],
        "system_config": found["system_config"],
        "memory_mode": found["memory_mode"],
        "clock_hz": int(clock),
        "sram_bytes": memory["sram"],
        "dram_bytes": memory["dram"],
        "flash_bytes": memory["on_chip_flash"] + memory["off_chip_flash"],
        "npu_operators": npu,
        "cpu_operators": cpu,
        "macs": _number(name, "nn_macs", found["nn_macs"], int),
        "cycles": cycles,
        "npu_cycles": _number(name, "cycles_npu", found["cycles_npu"], int),
        "estimated_ms": round(cycles * 1000 / clock, 6),
    }


def manifest_record(compiles):
    """The manifest's "vela" entry: each compile's record, in the lowering's order, and the
    program's totals; {} for a program Vela compiled nothing of, whose manifest keeps its bytes."""
    if not compiles:
        return {}
    total = {key: sum(c[key] for c in compiles) for key in _SUMMED}
    operators = total["npu_operators"] + total["cpu_operators"]
    total["npu_fraction"] = round(total["npu_operators"] / operators, 6) if operators else 0.0
    total["estimated_ms"] = round(sum(c["estimated_ms"] for c in compiles), 6)
    return {"vela": dict(total, compiles=list(compiles))}


SUMMARY_FORMAT = "rules_torch_export/vela-summary/1"


def summary_record(label, compiles):
    """The `<name>.vela.json` record: the manifest's "vela" entry (None when Vela compiled nothing)
    under the program's label, for a team that wants Vela's figures without the manifest."""
    return {"format": SUMMARY_FORMAT, "label": label, "vela": manifest_record(compiles).get("vela")}


GRAPHS_FORMAT = "rules_torch_export/vela-tosa/1"


@dataclasses.dataclass
class Captured:
    """What capture() saw: each compile's record, and {blob sha256: the TOSA graph Vela compiled}."""

    compiles: list = dataclasses.field(default_factory=list)
    graphs: dict = dataclasses.field(default_factory=dict)


def graphs_text(graphs):
    """The `<name>.vela_tosa.json` text of Captured.graphs (base64, each graph with its sha256)."""
    entries = {blob: {"tosa_sha256": hashlib.sha256(tosa).hexdigest(), "tosa_base64": base64.b64encode(tosa).decode()}
               for blob, tosa in graphs.items()}
    return json.dumps({"format": GRAPHS_FORMAT, "graphs": entries}, sort_keys=True, indent=1) + "\n"


@contextlib.contextmanager
def capture(enabled=True):
    """While the block lowers: every Vela compile's record and TOSA graph, in the Captured it yields."""
    captured = Captured()
    if not enabled:
        yield captured
        return
    from executorch.backends.arm.ethosu import backend

    original = backend.vela_compile

    def compile_and_read(tosa, args, *rest, **kwargs):
        with tempfile.TemporaryDirectory(prefix="vela-") as folder:
            kwargs["intermediate_path"] = folder
            result = original(tosa, list(args) + ["--verbose-performance"], *rest, **kwargs)
            captured.compiles.append(compile_record(os.path.join(folder, "output")))
        captured.graphs[hashlib.sha256(result.processed_bytes).hexdigest()] = bytes(tosa)
        return result

    with patches.replaced(backend, "vela_compile", compile_and_read):
        yield captured
