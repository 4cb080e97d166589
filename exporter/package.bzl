"""What every package of the exporter declares: its modules, and a test per module."""

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
