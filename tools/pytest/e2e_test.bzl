"""e2e_test: a pytest_test that runs the real Bazel in temporary workspaces (tests/e2e/harness.py).

It lives in tools/, which the harness copies into every test workspace, because some of those
workspaces load a BUILD file that declares an e2e_test (tests/remote_e2e/BUILD, for its
execution platform) without the rest of tests/.
"""

load(":pytest_test.bzl", "pytest_test")

# Tags for every test that runs Bazel inside Bazel:
#   "e2e"        `--test_tag_filters=-e2e` runs the fast tests alone;
#   "local"      no sandbox: the inner Bazel runs its own sandbox, server and output base;
#   "exclusive"  it needs both cores to itself;
#   "external"   never reuse a cached pass: the harness copies the live source tree, most of
#                whose files (.bzl files, BUILD files) Bazel cannot list as this test's inputs.
E2E_TAGS = [
    "e2e",
    "exclusive",
    "external",
    "local",
]

_HARNESS = Label("//tests/e2e:harness")

def e2e_test(name, srcs, deps = [], tags = [], size = "large", alone = True, **kwargs):
    """Declares a pytest_test with E2E_TAGS that imports tests.e2e.harness.

    Args:
      name: the test's name.
      srcs: the test files.
      deps: more libraries (the harness is always there).
      tags: tags besides E2E_TAGS, e.g. ["remote"].
      size: the test's size; they run Bazel several times: "large".
      alone: whether it runs with no other action ("exclusive"). False for a test of one or two
        short inner builds: it then runs beside the outer build's other actions, not in the
        end-to-end phase that runs one test at a time after them.
      **kwargs: passed to pytest_test (data, args, timeout, ...).
    """
    own_tags = E2E_TAGS if alone else [t for t in E2E_TAGS if t != "exclusive"]
    pytest_test(
        name = name,
        srcs = srcs,
        deps = [_HARNESS] + deps,
        tags = own_tags + [t for t in tags if t not in E2E_TAGS],
        size = size,
        **kwargs
    )
