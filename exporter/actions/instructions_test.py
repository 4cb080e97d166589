"""The InstructionCount action's counting (instructions.py) on the real runner under callgrind."""

import pytest

from exporter.actions import instructions
from exporter.core.errors import UserError

RUNNER = "native/et_runner"
CALLGRIND = "../valgrind/callgrind.sh"  # @valgrind//:callgrind.sh in the runfiles
# A network whose convolutions XNNPACK would share out between threads: without one thread, the
# main thread's count moves from run to run.
PTE = "exporter/tests/conv_net_pte.pte"


def test_a_count_is_exact_run_to_run_and_keeps_the_loading_apart():
    first, report = instructions.count(CALLGRIND, RUNNER, PTE, ["forward"], "//x:tiny")
    second, _ = instructions.count(CALLGRIND, RUNNER, PTE, ["forward"], "//x:tiny")
    assert first["methods"] == second["methods"]  # one thread: the same count every time
    assert first["load"] == second["load"]
    assert first["methods"]["forward"] > 1_000_000 and first["load"] > 1_000_000
    assert report["cpu"]["vendor"] and report["cpu"]["avx512f"] is False  # valgrind 3.19 presents no AVX-512


def test_a_runner_without_client_requests_fails_in_one_line_naming_the_fix(tmp_path):
    with pytest.raises(UserError) as failure:
        instructions.counts({1: [("end", 1000)]}, ["forward"], "//x:tiny")
    assert str(failure.value) == (
        "//x:tiny: the native runner marked no load for callgrind: it was built without valgrind's client "
        "requests (<valgrind/callgrind.h>); install Debian's valgrind (./bazelw does as root) and build again")
    with pytest.raises(UserError, match="marked no call of decode for callgrind"):
        instructions.counts({1: [("load", 9), ("call forward", 5)]}, ["forward", "decode"], "//x:tiny")


def test_a_program_the_runner_refuses_fails_in_its_line(tmp_path):
    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"not a program")
    with pytest.raises(UserError, match=r"^//x:bad: cannot count its instructions under callgrind: et_runner: "):
        instructions.count(CALLGRIND, RUNNER, str(bad), ["forward"], "//x:bad")


def test_other_threads_are_counted_apart():
    dumps = {1: [("load", 100), ("call forward", 40), ("end", 5)], 2: [("end", 7)], 3: [("end", 1)]}
    assert instructions.counts(dumps, ["forward"], "//x:y") == {"load": 100, "methods": {"forward": 40}, "other_threads": 8}
