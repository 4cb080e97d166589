"""compatibility_matrix: one program per form, lowered for each release, run in each release's runtimes.

ExecuTorch promises only that a runtime loads the programs of its own release and older ones
(runtime/COMPATIBILITY.md). Each cell is a test of the form's program lowered for R, run in the
runtimes of R' (any_release_order: an older runtime for a newer program runs too, where a plain
test fails at analysis), so a cell with R' >= R holds the promise and a cell with R' < R records
what happens (docs/compatibility.md has the table). A cell is the form's test: numerics_test by
default (the Python runtime of each release computes its cells' values in one warm process of its
own, the release's worker, not one per cell), or llm_generation_test for a language model.
"""

load("//exporter:exporter_facts.bzl", "DEFAULT_RELEASE")
load("//rules:defs.bzl", "executorch_program", "foundation_weights", "llm_program", "numerics_test")
load("//tools/ci:tiers.bzl", "NIGHTLY")

# The keys of a form that are not its lowering's attributes.
_FORM_KEYS = ("lower", "test", "test_attrs", "default_program", "every_build", "runtime_releases")

def _suffix(release):
    return release.replace(".", "_")

def adapter_over_foundation(name, base, release, tags, **kwargs):
    """A LoRA adapter's llm_program `name` over the .ptd of its foundation's, both lowered for `release`.

    Declares <name>_base (the foundation's program: `base` with its weights in a .ptd) and
    <name>_foundation (its foundation_weights), which the adapter's program shares, as
    //models/llm:tiny_lm_poet_llm shares tiny_lm_foundation: a foundation serves the programs of
    its own release or newer ones, so each release has its own.

    Args:
      name: the adapter's program.
      base: the foundation's torch_model (the adapter's base).
      release: the release both are lowered for.
      tags: their tags.
      **kwargs: llm_program's attributes of both (model: the lora_model, tokenizer, max_seq_len).
    """
    llm_program(
        name = name + "_base",
        release = release,
        tags = tags,
        weights = "external",
        **dict(kwargs, model = base)
    )
    foundation_weights(name = name + "_foundation", program = ":" + name + "_base", tags = tags)
    llm_program(name = name, foundation = ":" + name + "_foundation", release = release, tags = tags, **kwargs)

def _program(form, attrs, release, tags):
    """Declares the form's program for `release` (or aliases the default's); returns its name."""
    program = "{}_{}".format(form, _suffix(release))
    if release == DEFAULT_RELEASE and "default_program" in attrs:
        native.alias(name = program, actual = attrs["default_program"], tags = tags or ["manual"])
    else:
        lower = attrs.get("lower", executorch_program)
        lower(name = program, release = release, tags = tags or ["manual"], **{k: v for k, v in attrs.items() if k not in _FORM_KEYS})
    return program

def compatibility_matrix(name, nightly_suite, forms, releases, nightly_forms = [], nightly_releases = []):
    """Declares <form>_<R> per form and release, its cells <form>_<R>_in_<R'>, and the test_suites.

    The suites: `name` and `nightly_suite` (the tiers), and <form> (the form's every cell, run
    by hand: `bazel test //tests/compatibility:llm`).

    Args:
      name: the test_suite of the every-build cells.
      nightly_suite: the test_suite of the nightly cells.
      forms: {form: {the lowering's attributes, and:
        "lower": the macro that lowers it (default executorch_program; llm_program, or
          adapter_over_foundation for a LoRA adapter), called with name, release and tags;
        "test": the macro of its cells (default numerics_test; llm_generation_test), called
          with name, program, release, any_release_order and tags, and "test_attrs": its other
          attributes;
        "default_program": a program of the default release that a test already builds from the
          same attributes, which its cells run instead of lowering it again;
        "every_build": for a form of nightly_forms, the cells [(R, R')] in every build;
        "runtime_releases": the releases whose runtimes run its programs (default `releases`)}}.
      releases: the releases, oldest first; each lowers every form and runs every program.
      nightly_forms: the forms whose targets are in the nightly tier only (CONTRIBUTING.md), but
        for their every_build cells.
      nightly_releases: the releases whose programs and runtimes are in the nightly tier only
        (1.3: its runtimes' venv is gigabytes, which an every-build run must not download).
    """
    tests = {False: [], True: []}
    for form, attrs in forms.items():
        cells = []
        every_build = attrs.get("every_build", [])
        for release in releases:
            form_nightly = form in nightly_forms or release in nightly_releases
            lowered_nightly = form_nightly and not [cell for cell in every_build if cell[0] == release]
            program = _program(form, attrs, release, NIGHTLY if lowered_nightly else [])
            for runtime in attrs.get("runtime_releases", releases):
                nightly = (form_nightly and (release, runtime) not in every_build) or runtime in nightly_releases
                test = "{}_in_{}".format(program, _suffix(runtime))
                attrs.get("test", numerics_test)(
                    name = test,
                    program = ":" + program,
                    release = runtime,
                    any_release_order = True,
                    tags = NIGHTLY if nightly else [],
                    **attrs.get("test_attrs", {})
                )
                tests[nightly].append(":" + test)
                cells.append(":" + test)
        native.test_suite(name = form, tests = cells, tags = ["manual"])  # every tier: a filter by tier would drop cells
    native.test_suite(name = name, tests = tests[False])
    native.test_suite(name = nightly_suite, tests = tests[True], tags = NIGHTLY)
