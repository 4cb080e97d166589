"""pytest_suite: a package's pytest_tests in one process, each still runnable alone."""

load(":pytest_test.bzl", "pytest_test")

# py_test's sizes and their default timeouts, smallest first.
_SIZES = ["small", "medium", "large", "enormous"]
_TIMEOUTS = ["short", "moderate", "long", "eternal"]

# What a test of the suite may set on its own; anything else (tags, args, env, ...) would change
# what the merged test runs, so such a test stays a pytest_test of its own.
_TEST_ATTRS = ["srcs", "deps", "data", "size", "timeout"]

def _largest(order, values):
    return order[max([order.index(v) for v in values])]

def _union(lists):
    """The lists' items in order, each once (labels are compared as written)."""
    found = []
    for items in lists:
        for item in items:
            if item not in found:
                found.append(item)
    return found

def pytest_suite(name, tests, timeout = None, **kwargs):
    """Declares the pytest_test `name` that runs the files of `tests` in one process.

    A pytest_test that imports torch and ExecuTorch pays about 10 s of CPU for it; the suite pays
    it once for all its tests. It gets the union of their srcs, deps and data and the largest of
    their sizes, and runs their files in the order of their names. Each test also keeps a
    pytest_test of its own under its name, tagged "manual": it runs when named
    (`bazel test //tests/hostile:crafted_test`), not in `//...`, which runs `name`.

    Only tests with the same tags and no args belong in a suite: a test with its own tags (e.g.
    NIGHTLY, "exclusive") or args (e.g. `-k` selections) stays a pytest_test.

    Args:
      name: the suite's test, e.g. "tests".
      tests: {test name: its pytest_test attributes}: srcs (default [<name>.py]), deps, data,
        size (default "medium") and timeout (default the size's).
      timeout: the suite's; default the largest of the tests'. The tests now run one after the
        other: a suite of long tests needs more than any one had.
      **kwargs: passed to every test (tags, ...).
    """
    tags = kwargs.pop("tags", [])
    srcs, deps, data, sizes, timeouts = [], [], [], [], []
    for test in sorted(tests):
        attrs = dict(tests[test])
        for key in attrs:
            if key not in _TEST_ATTRS:
                fail("pytest_suite: {}'s {} is not one of {}; leave it out of the suite".format(test, key, _TEST_ATTRS))
        attrs.setdefault("srcs", [test + ".py"])
        attrs.setdefault("size", "medium")
        srcs.append(attrs["srcs"])
        deps.append(attrs.get("deps", []))
        data.append(attrs.get("data", []))
        sizes.append(attrs["size"])
        timeouts.append(attrs.get("timeout", _TIMEOUTS[_SIZES.index(attrs["size"])]))
        pytest_test(name = test, tags = tags + ["manual"], **dict(attrs, **kwargs))
    pytest_test(
        name = name,
        srcs = _union(srcs),
        deps = _union(deps),
        data = _union(data),
        size = _largest(_SIZES, sizes),
        timeout = timeout or _largest(_TIMEOUTS, timeouts),
        tags = tags,
        **kwargs
    )
