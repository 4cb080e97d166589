"""e2e_test: a pytest_test that runs the real Bazel in temporary workspaces (tests/e2e/harness.py).

It lives in tools/, which the harness copies into every test workspace, because some of those
workspaces load a BUILD file that declares an e2e_test (tests/remote_e2e/BUILD, for its
execution platform) without the rest of tests/.
"""

load(":pytest_test.bzl", "pytest_test")

# Tags for every test that runs Bazel inside Bazel:
#   "e2e"        `--test_tag_filters=-e2e` runs the fast tests alone;
#   "local"      no sandbox: the inner Bazel runs its own sandbox, server and output base;
#   "external"   never reuse a cached pass: the harness copies the live source tree, most of
#                whose files (.bzl files, BUILD files) Bazel cannot list as this test's inputs.
# Not "exclusive": an end-to-end test keeps about 1.3 of the 2 cores busy (its inner Bazel starts,
# analyses, waits on servers; one pip install runs on one core), so run alone they left a third
# of the machine idle for about 21 minutes of CI. Beside other actions they take longer, hence
# the "eternal" timeout (docs/performance.md, "The first build and CI").
E2E_TAGS = [
    "e2e",
    "external",
    "local",
]

_HARNESS = Label("//tests/e2e:harness")

def e2e_test(name, srcs, deps = [], tags = [], size = "large", timeout = "eternal", **kwargs):
    """Declares a pytest_test with E2E_TAGS that imports tests.e2e.harness.

    Args:
      name: the test's name.
      srcs: the test files.
      deps: more libraries (the harness is always there).
      tags: tags besides E2E_TAGS, e.g. ["remote"].
      size: the test's size; they run Bazel several times: "large".
      timeout: "eternal": they share the cores with the rest of `bazel test //...`.
      **kwargs: passed to pytest_test (data, args, timeout, ...).
    """
    pytest_test(
        name = name,
        srcs = srcs,
        deps = [_HARNESS] + deps,
        tags = E2E_TAGS + [t for t in tags if t not in E2E_TAGS],
        size = size,
        timeout = timeout,
        **kwargs
    )
