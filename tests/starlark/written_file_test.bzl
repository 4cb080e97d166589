"""written_file_test: an analysis test of the text a target writes with ctx.actions.write.

Reads the content of the target's FileWrite of <target name><suffix>, in-process with skylib's
analysistest, so no action runs.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _written_file_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    basename = target.label.name + ctx.attr.suffix
    written = [
        action
        for action in analysistest.target_actions(env)
        if action.mnemonic == "FileWrite" and [f for f in action.outputs.to_list() if f.basename == basename]
    ]
    asserts.equals(env, 1, len(written), "actions that write " + basename)
    if written:
        content = written[0].content
        for needle in ctx.attr.needles:
            asserts.true(env, needle in content, "{} should hold {}, but holds:\n{}".format(basename, repr(needle), content))
        for needle in ctx.attr.absent:
            asserts.false(env, needle in content, "{} should not hold {}, but holds:\n{}".format(basename, repr(needle), content))
    return analysistest.end(env)

_written_file_test = analysistest.make(
    _written_file_test_impl,
    attrs = {
        "suffix": attr.string(mandatory = True, doc = "The written file's name after the target's name, e.g. \".sh\"."),
        "needles": attr.string_list(doc = "Fragments the file must hold."),
        "absent": attr.string_list(doc = "Fragments the file must not hold."),
    },
)

def written_file_test(name, target, suffix, needles, absent = []):
    """Tests that the file `target` writes (<target name><suffix>) holds `needles`, not `absent`.

    Args:
      name: the test's name.
      target: the label of the target; tag it manual if it must not run or build on its own.
      suffix: the file's name after the target's name, e.g. ".sh".
      needles: fragments the file must hold.
      absent: fragments it must not hold.
    """
    _written_file_test(name = name, target_under_test = target, suffix = suffix, needles = needles, absent = absent)
