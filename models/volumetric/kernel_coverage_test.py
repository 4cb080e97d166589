"""//models/volumetric:volume_net_portable_pte fails its build: its lowering, run here as the
ExecuTorchLower action runs it, stops with one line that names the target, the operator that the
portable kernels lack and the fixes, and leaves no .pte behind. volume_net_pte, which declares
the app's own kernel in volume_ops.yaml, built."""

import json
import os

import pytest
import yaml
from runfiles import Runfiles

from exporter.core import kernels
from exporter.driver import request

RUNFILES = Runfiles.Create()
PACKAGE = "rules_torch_export/models/volumetric/"


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    out = tmp_path_factory.mktemp("lower")
    identity = out / "identity.txt"
    identity.write_text("test\n")
    config = {
        "label": "//models/volumetric:volume_net_portable_pte",
        "identity": str(identity),
        "outputs": {role: str(out / name) for role, name in (
            ("pte", "p.pte"), ("manifest", "p.pte.json"), ("selected_ops", "p.yaml"), ("log", "p.log"))},
        "exported_label": "//models/volumetric:volume_net_ep",
        "pt2": RUNFILES.Rlocation(PACKAGE + "volume_net_ep.pt2"),
        "backends": ["xnnpack"],
        "kernels": [{"name": "portable", "files": None}],  # the venv's own list, as the rule passes it
    }
    path = out / "config.json"
    path.write_text(json.dumps(config))
    code, message = request.run(["lower", str(path)])
    return code, message, out


def test_the_build_fails_in_one_line(failed):
    code, message, _ = failed
    assert code == 1
    first = message.splitlines()[0]
    assert first.startswith("ERROR: //models/volumetric:volume_net_portable_pte: no kernel for aten::avg_pool3d.out (method forward)"), first
    assert 'in kernels = "portable"' in first
    for fix in ("functions.yaml format", 'kernels = ["portable", ":my_ops.yaml"]'):
        assert fix in first, (fix, first)
    # Fixes that would not work for avg_pool3d are not offered: XNNPACK does not delegate it
    # (this program is lowered for XNNPACK already) and torch has no decomposition of it.
    for wrong in ("`backends`", "`decompose`"):
        assert wrong not in first, (wrong, first)
    assert message.splitlines()[1].startswith("(full output: ")


def test_no_program_is_left_behind(failed):
    _, _, out = failed
    assert not os.path.exists(out / "p.pte") and not os.path.exists(out / "p.yaml")


def test_the_app_kernel_list_covers_it():
    with open(RUNFILES.Rlocation(PACKAGE + "volume_net_pte.selected_operators.yaml"), encoding="utf-8") as f:
        used = set(yaml.safe_load(f)["operators"])
    assert "aten::avg_pool3d.out" in used
    library = kernels.load({"name": "volume_ops.yaml", "files": [RUNFILES.Rlocation(PACKAGE + "volume_ops.yaml")], "custom": True})
    assert library.covers("aten::avg_pool3d.out", {"Float"})
    assert not library.covers("aten::avg_pool3d.out", {"Half"})  # its type alias lists Float only


def test_the_native_runner_without_the_apps_kernel_names_it_and_the_library():
    """The same gap at run time: //native:et_runner links only the wheel's kernels, and refuses
    volume_net_pte in one line before any method loads (volume_runner, which links the app's
    kernel, runs it in volume_net_numerics_test)."""
    import subprocess

    runner = RUNFILES.Rlocation("rules_torch_export/native/et_runner")
    result = subprocess.run([runner, RUNFILES.Rlocation(PACKAGE + "volume_net_pte.pte"), "--call", "forward"],
                            capture_output=True, text=True)
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("et_runner:")]
    assert 'method "forward" needs operator aten::avg_pool3d.out, which no linked library registers' in line, line
    assert line.endswith("; link a kernel library that has it: kernels_optimized is linked and lacks it (a selective build?)"), line
