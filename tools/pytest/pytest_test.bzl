"""pytest_test: a py_test that runs its srcs with pytest on the toolchain's venv."""

def pytest_test(name, srcs, deps = [], data = [], args = [], **kwargs):
    """Runs the test files in srcs with pytest. Extra pytest flags go in args."""
    main = Label("//tools/pytest:pytest_main.py")
    native.py_test(
        name = name,
        srcs = srcs + [main],
        main = main,
        deps = deps,
        data = data,
        args = args + ["$(rootpath {})".format(src) for src in srcs],
        python_version = "PY3",
        srcs_version = "PY3",
        **kwargs
    )
