"""What every package of the exporter declares: its modules, and its tests."""

load("//tools/pytest:pytest_suite.bzl", "pytest_suite")
load("//tools/pytest:pytest_test.bzl", "pytest_test")

_EXPORTER_LIB = Label("//exporter:exporter_lib")

def package_srcs(name = "srcs"):
    """Declares `name`, a filegroup of the package's modules (its tests, *_test.py, stay out).

    Args:
      name: the filegroup's name; //exporter:exporter_srcs names each package's "srcs".
    """
    native.filegroup(
        name = name,
        srcs = native.glob(
            ["*.py"],
            exclude = ["*_test.py"],
        ),
    )

def module_test(name, deps = None, src = None, **kwargs):
    """Declares the pytest_test `name` of <name>.py, a module's tests beside it.

    Args:
      name: the test and its file's name, e.g. "shape_spec_test".
      deps: its libraries; default the exporter (//exporter:exporter_lib).
      src: its file, when it is not <name>.py: a second target of a test file, such as its
        nightly cases' (args = ["-k", ...]).
      **kwargs: passed to pytest_test (data, size, timeout, ...).
    """
    pytest_test(
        name = name,
        srcs = [src or name + ".py"],
        deps = deps if deps != None else [_EXPORTER_LIB],
        **kwargs
    )

def package_tests(name, modules, separate = [], timeout = None, subfolders = [], **kwargs):
    """Declares the pytest_test `name` of the package's *_test.py files, in one process.

    A pytest_suite (tools/pytest/pytest_suite.bzl) whose modules must be the package's test files:
    one process pays for `import torch, executorch` once for the package, and each module keeps
    a test of its own under its name, tagged "manual": it runs when named (`bazel test
    //exporter/checks:configs_test`), not in `//...`, which runs `name`.

    Args:
      name: the package's test, e.g. "tests".
      modules: {module's test name ("lower_test" for lower_test.py): its attributes}: every
        *_test.py of the package but those in separate (it fails otherwise). The attributes are
        module_test's: deps (default //exporter:exporter_lib), data, size (default "medium") and
        timeout (default the size's).
      separate: test names of modules left out of `name`, whose targets the BUILD file declares
        itself (not manual: //... runs them as before). For a module whose targets take args, which
        apply to a whole process: one that selects its every-build cases with `-k` and has a
        nightly twin over the same file (args = ["-k", "nightly"]).
      timeout: the package's test's; default the largest of the modules'. The modules now run
        one after the other: a package whose modules run long needs more than any one had.
      subfolders: folders of the package without a BUILD file of their own whose *_test.py the
        package's test runs too (a module's test name is its file's name, wherever it is).
      **kwargs: passed to every test (tags, ...).
    """
    paths = native.glob(["*_test.py"] + [folder + "/*_test.py" for folder in subfolders])
    where = {path.split("/")[-1]: path for path in paths}
    files = sorted(where.keys())
    if [m for m in separate if m in modules]:
        fail("package_tests: a module is in both modules and separate: {}".format(
            sorted([m for m in separate if m in modules]),
        ))
    if sorted([m + ".py" for m in list(modules) + separate]) != sorted(files):
        fail("package_tests: modules and separate must name every *_test.py of the package, each once: {} vs {}".format(
            sorted(list(modules) + separate),
            files,
        ))
    suite = {}
    for module, attrs in modules.items():
        # A string, as BUILD files write it, so that the suite's union keeps it once.
        suite[module] = dict(attrs, deps = attrs.get("deps", ["//exporter:exporter_lib"]), srcs = [where[module + ".py"]])
    pytest_suite(name = name, tests = suite, timeout = timeout, **kwargs)
