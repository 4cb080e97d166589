"""//native/arm64:et_runner_arm64, the native runner built for aarch64 and run under qemu, computes
what the host's //native:et_runner computes, within numerics_test's tolerances, on zoo programs at
numerics_test's cases (every dim at its min, example and max). XNNPACK and the optimized kernels
take other code paths on arm64 (NEON microkernels, other accumulation orders), so the outputs may
differ in the last bits, not more."""

import json
import os
import shutil
import subprocess
import tarfile
import types

import pytest
import torch
from runfiles import Runfiles

from exporter.checks import native, numerics
from exporter.core import shape_spec
from exporter.core.case_inputs import make_inputs, runtime_inputs
from exporter.formats import pt2

RUNFILES = Runfiles.Create()
HOST_RUNNER = RUNFILES.Rlocation("rules_torch_export/native/et_runner")
ARM64_RUNNER = RUNFILES.Rlocation("rules_torch_export/native/arm64/et_runner_arm64")
# program -> the torch_export it was lowered from
PROGRAMS = {
    "models/gru/gru_pte": "models/gru/gru_ep",
    "models/mobilenet/mobilenet_pte": "models/mobilenet/mobilenet_ep",
}
# int8 programs: judged against the host runner by SQNR. The two run the same integer arithmetic
# (XNNPACK's NEON kernels here, its AVX ones there), so they must agree far closer than int8 does
# with float: numerics_test's floors for these are 12 to 20 dB against the float model.
QUANTIZED = {"models/mobilenet/mobilenet_q8_pte": "models/mobilenet/mobilenet_q8_ep"}
MIN_SQNR_VS_HOST_DB = 40


def _path(rel):
    return RUNFILES.Rlocation("rules_torch_export/" + rel)


def _json(rel):
    with open(_path(rel), encoding="utf-8") as f:
        return json.load(f)


def _calls(exported):
    """[(case name, inputs)] at numerics_test's cases, and the exported program's outputs."""
    ep = pt2.load(_path(exported + ".pt2"))
    manifest = _json(exported + ".pt2.json")
    spec = manifest["shape_spec"]["spec"]
    module = ep.module()
    calls = []
    for name, sizes in numerics.cases(spec, manifest.get("range_constraints", {}), []):
        args, kwargs = shape_spec.call_arguments(ep, make_inputs(spec, sizes), module)
        with torch.no_grad():
            expected = [t for t in torch.utils._pytree.tree_leaves(module(*args, **kwargs)) if isinstance(t, torch.Tensor)]
        calls.append((name, runtime_inputs(args, kwargs, len(ep.graph_signature.user_inputs)), expected))
    return calls


def _run(runner, program, calls):
    config = types.SimpleNamespace(native_runner=runner, pte=_path(program + ".pte"), ptd=None)
    return native.run_calls(config, [("forward", feed) for _, feed, _ in calls])


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_arm64_runner_matches_the_host_runner(program):
    calls = _calls(PROGRAMS[program])
    rtol, atol = numerics.default_tolerances(_json(program + ".pte.json")["backends"])
    host, arm64 = _run(HOST_RUNNER, program, calls), _run(ARM64_RUNNER, program, calls)
    failures = []
    for (name, _, expected), x86_outputs, arm_outputs in zip(calls, host, arm64):
        assert len(arm_outputs) == len(x86_outputs) == len(expected), name
        for index, (a, h, e) in enumerate(zip(arm_outputs, x86_outputs, expected)):
            for what, actual, reference in (("arm64 vs x86-64", a, h), ("arm64 vs exported", a, e), ("x86-64 vs exported", h, e)):
                ok, report = numerics.compare(actual, reference, rtol, atol)
                print(f"{program} {name} output {index}: {what}: {report}")
                if not ok:
                    failures.append(f"{name} output {index}: {what}: {report}")
    assert not failures, f"past rtol {rtol:g}, atol {atol:g}:\n" + "\n".join(failures)


def _machine(path):
    """The ELF header's e_machine: 183 for aarch64, 62 for x86-64."""
    with open(path, "rb") as f:
        header = f.read(20)
    assert header[:4] == b"\x7fELF", path
    return int.from_bytes(header[18:20], "little")


@pytest.mark.parametrize("program", sorted(QUANTIZED))
def test_arm64_runner_matches_the_host_runner_on_int8_programs(program):
    calls = _calls(QUANTIZED[program])
    host, arm64 = _run(HOST_RUNNER, program, calls), _run(ARM64_RUNNER, program, calls)
    for (name, _, _), x86_outputs, arm_outputs in zip(calls, host, arm64):
        for index, (a, h) in enumerate(zip(arm_outputs, x86_outputs)):
            sqnr = numerics.sqnr_db(a, h)
            worst = float((a - h).abs().max())
            print(f"{program} {name} output {index}: arm64 vs x86-64: SQNR {sqnr:.1f} dB, worst abs error {worst:.3g}")
            assert sqnr >= MIN_SQNR_VS_HOST_DB, f"{name} output {index}: SQNR {sqnr:.1f} dB"


def test_the_arm64_runner_is_an_aarch64_elf_beside_the_host_runner():
    launcher = open(ARM64_RUNNER, encoding="utf-8").read()
    assert launcher.startswith("#!/bin/sh") and 'qemu-aarch64-static -cpu "${QEMU_CPU:-max,sme=off}" -L' in launcher
    assert _machine(RUNFILES.Rlocation("rules_torch_export/native/et_runner.aarch64")) == 183
    assert _machine(HOST_RUNNER) == 62  # the same target, built for the host, in the same runfiles


def _without(tmp_path, tools):
    """A PATH with only `tools` (from /usr/bin or /bin) linked in."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in tools:
        source = next(p for p in (f"/usr/bin/{tool}", f"/bin/{tool}") if os.path.exists(p))
        os.symlink(source, folder / tool)
    return str(folder)


def test_without_qemu_the_launcher_fails_in_one_line_naming_the_package(tmp_path):
    result = subprocess.run([ARM64_RUNNER, "--help"], capture_output=True, text=True,
                            env={"PATH": _without(tmp_path, ["uname"])})
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("rules_torch_export: //native/arm64:et_runner_arm64 is an aarch64 binary") and \
        "apt-get install qemu-user-static" in line, line


def test_without_the_arm64_libraries_the_launcher_fails_in_one_line_naming_the_package(tmp_path):
    env = dict(os.environ, RULES_TORCH_EXPORT_AARCH64_SYSROOT=str(tmp_path))
    result = subprocess.run([ARM64_RUNNER, "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "apt-get install g++-aarch64-linux-gnu" in line, line


def test_without_the_cross_compiler_compiling_fails_in_one_line_naming_the_package(tmp_path):
    compiler = RUNFILES.Rlocation("rules_torch_export/toolchain/cc/aarch64-linux-gnu-gcc.sh")
    result = subprocess.run([compiler, "--version"], capture_output=True, text=True, env={"PATH": _without(tmp_path, [])})
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("rules_torch_export: C++ for //platforms:linux_aarch64 needs Debian's g++-aarch64-linux-gnu"), line
    # ...and with it, the wrapper is the cross gcc.
    result = subprocess.run([compiler, "-dumpmachine"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "aarch64-linux-gnu", result.stderr


def test_the_archive_runs_from_an_empty_folder(tmp_path):
    """et_runner_arm64_app.tar.gz, unpacked where nothing else is, runs the GRU's program under
    qemu: the ELF finds its shared libraries inside the archive, not in Bazel's output tree."""
    archive = RUNFILES.Rlocation("rules_torch_export/native/arm64/et_runner_arm64_app.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "app")
    assert "et_runner" in names
    libraries = sorted(os.path.basename(n) for n in names if n.endswith(".so"))
    assert libraries == sorted(f"lib{name}.so" for name in (
        "executorch", "executorch_backend_xnnpack", "executorch_etdump", "executorch_kernels_optimized",
        "executorch_kernels_quantized", "executorch_threadpool")), libraries
    program = tmp_path / "gru_pte.pte"
    shutil.copy(_path("models/gru/gru_pte.pte"), program)
    result = subprocess.run(["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", "./et_runner", str(program),
                             "--call", "forward"], cwd=tmp_path / "app", capture_output=True, text=True, env={})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["methods"]["forward"]["calls"] == 1


def test_the_arm64_benchmark_labels_its_figures_emulated_and_sets_no_python_runtime_beside_them(tmp_path):
    """executorch_benchmark with an arm64_binary runner: qemu's times are not a device's latency."""
    benchmark = RUNFILES.Rlocation("rules_torch_export/native/arm64/gru_pte_arm64.benchmark")
    report = tmp_path / "report.json"
    result = subprocess.run([benchmark, "--json", str(report)], capture_output=True, text=True, env=RUNFILES.EnvVars())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    label = [i for i, line in enumerate(lines) if line.startswith("EMULATED on qemu (")]
    table = [i for i, line in enumerate(lines) if "p50 ms" in line]
    assert len(label) == 2 and table and label[0] < table[0] < label[1], result.stdout  # above and below the table
    assert "not device latency" in lines[label[0]] and "CPU max,sme=off" in lines[label[0]]
    assert "arm64 runtime, under qemu" in result.stderr
    figures = json.loads(report.read_text())
    assert figures["emulated"] is True and figures["qemu_cpu"] == "max,sme=off"
    assert "python" not in figures and "x native p50" not in result.stdout
    assert figures["methods"]["forward"]["calls"] == 3
