"""`bazel run //models/gru:gru_pte.profile -- --report=FILE`: the native runner runs the GRU with
an ETDump, and the program's report is written with those runs' times: the Native time section
names who ran each event (an XNNPACK partition, or the portable kernel and its node), and each
timed node's details carry its time."""

import json
import os
import re
import subprocess

PROFILE = "models/gru/gru_pte.profile"


def test_the_profile_writes_the_report_with_native_times():
    out = os.path.join(os.environ["TEST_UNDECLARED_OUTPUTS_DIR"], "gru_pte.profiled.report.html")
    result = subprocess.run([PROFILE, "--report=" + out], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"wrote {out}" in result.stdout
    page = open(out, encoding="utf-8").read()
    profile = page[page.index('<section id="profile">'):page.index('<section id="numerics">')]
    assert re.search(r"Method::execute took \d+\.\d{3} ms per run on average, p50 \d+\.\d{3} ms over 10 runs", profile)
    assert re.search(r"<td>XnnpackBackend #\d+</td>", profile)  # a delegate's events, by partition
    assert re.search(r"<td>portable</td><td><code>native_call_", profile)  # a kernel outside delegates
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page).group(1))
    timed = [d for d in data["nodes"]["forward"].values() if d.get("time")]
    assert timed and all(re.match(r"\d+\.\d{3} ms per run \(\d+\.\d% of Method::execute\)", d["time"]) for d in timed)


def test_an_unreadable_report_path_fails_in_one_line(tmp_path):
    result = subprocess.run([PROFILE, f"--report={tmp_path}/no/such/folder/r.html"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("profile: no report: ")
