"""compatibility_matrix: one program per form, lowered for each release, run in each release's runtimes.

ExecuTorch promises only that a runtime loads the programs of its own release and older ones
(runtime/COMPATIBILITY.md). Each cell is a numerics_test of the form's program lowered for R, run
in the Python and native runtimes of R' (any_release_order: an older runtime for a newer program
runs too, where a plain test fails at analysis), so a cell with R' >= R holds the promise and a
cell with R' < R records what happens (docs/compatibility.md has the table). The Python runtime of
each release computes its cells' values in one warm process of its own (the release's worker),
not one per cell.
"""

load("//exporter:exporter_facts.bzl", "DEFAULT_RELEASE")
load("//rules:defs.bzl", "executorch_program", "numerics_test")
load("//tools/ci:tiers.bzl", "NIGHTLY")

def _suffix(release):
    return release.replace(".", "_")

def compatibility_matrix(name, nightly_suite, forms, releases, nightly_forms = [], nightly_releases = []):
    """Declares <form>_<R> per form and release, its cells <form>_<R>_in_<R'>, and two test_suites.

    Args:
      name: the test_suite of the every-build cells.
      nightly_suite: the test_suite of the nightly cells.
      forms: {form: {executorch_program's attributes, "numerics": numerics_test's, and
        "default_program": a program of the default release that a test already builds from the
        same attributes, which its cells run instead of lowering it again}}.
      releases: the releases, oldest first; each lowers every form and runs every program.
      nightly_forms: the forms whose targets are in the nightly tier only (CONTRIBUTING.md).
      nightly_releases: the releases whose programs and runtimes are in the nightly tier only
        (1.3: its runtimes' venv is gigabytes, which an every-build run must not download).
    """
    tests = {False: [], True: []}
    for form, attrs in forms.items():
        program_attrs = {k: v for k, v in attrs.items() if k not in ("numerics", "default_program")}
        for release in releases:
            nightly = form in nightly_forms or release in nightly_releases
            tags = NIGHTLY if nightly else []
            program = "{}_{}".format(form, _suffix(release))
            if release == DEFAULT_RELEASE and "default_program" in attrs:
                native.alias(name = program, actual = attrs["default_program"], tags = tags or ["manual"])
            else:
                executorch_program(name = program, release = release, tags = tags or ["manual"], **program_attrs)
            for runtime in releases:
                test = "{}_in_{}".format(program, _suffix(runtime))
                cell_nightly = nightly or runtime in nightly_releases
                numerics_test(
                    name = test,
                    program = ":" + program,
                    release = runtime,
                    any_release_order = True,
                    tags = NIGHTLY if cell_nightly else [],
                    **attrs.get("numerics", {})
                )
                tests[cell_nightly].append(":" + test)
    native.test_suite(name = name, tests = tests[False])
    native.test_suite(name = nightly_suite, tests = tests[True], tags = NIGHTLY)
