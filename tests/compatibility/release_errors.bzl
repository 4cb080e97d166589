"""The analysis errors of a test that runs a program in a release's runtimes, as one table per kind.

numerics_test, llm_generation_test, executorch_benchmark and executorch_profile share the checks
(rules/private/lib/releases.bzl), so each gets the same rows: an older runtime for a newer program
(both named), a release's program tested without naming a release, and a release the records do
not have.
"""

def release_errors(prefix, programs, attrs = {}):
    """The rows of bad_target_test_suite for one kind of test.

    Args:
      prefix: the start of the fixtures' names.
      programs: {release: (the program target lowered for it, its label as messages name it)}
        for "1.4" and "1.5".
      attrs: the other attributes every fixture needs (a generation test's tokenizer and prompts).

    Returns:
      A list of struct(name, attrs, needles).
    """
    old, old_label = programs["1.4"]
    new, new_label = programs["1.5"]
    rows = {
        "newer_program_older_runtime": ({"program": new, "release": "1.4"}, [
            "program {} is lowered for ExecuTorch 1.5 (1.5.1), newer than the runtimes of ExecuTorch 1.4 (1.4.1) this test runs it in".format(new_label),
            "lower it with release = \"1.4\", or test it with release = \"1.5\"",
        ]),
        "release_program_no_release": ({"program": old}, [
            "program {} is lowered for ExecuTorch 1.4 (1.4.1); set release = \"1.4\"".format(old_label),
        ]),
        "unknown_test_release": ({"program": new, "release": "2.0"}, [
            "release = \"2.0\" is not an ExecuTorch release these rules know; use one of [\"1.3\", \"1.4\", \"1.5\"]",
        ]),
    }
    return [struct(name = prefix + row, attrs = dict(attrs, **given), needles = needles) for row, (given, needles) in rows.items()]
