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
#
# Not "exclusive": an inner build keeps about 1.4 of the 2 cores busy (its server's start,
# loading and analysis are mostly serial), so running these tests one at a time after the rest
# idled the machine for about a third of their 15 minutes (docs/performance.md).
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
      timeout: "eternal" by default: beside the outer build's actions an inner build can take
        twice as long as alone.
      **kwargs: passed to pytest_test (data, args, ...).
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
