"""pytest_main joins `bazel test --test_filter` to a target's own `-k` selection."""

from tools.pytest.pytest_main import with_filter


def test_a_filter_alone_becomes_the_selection():
    assert with_filter(["a_test.py"], "fast") == ["-k", "fast", "a_test.py"]


def test_a_filter_narrows_the_target_s_own_selection():
    # reproducibility_test's every-build target: its cases but the nightly matrix's.
    argv = ["-k", "not every_export_option", "reproducibility_test.py"]
    assert with_filter(argv, "corrupted") == ["-k", "(not every_export_option) and (corrupted)",
                                              "reproducibility_test.py"]
