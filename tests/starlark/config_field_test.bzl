"""config_field_test: an analysis test of one field of the JSON config a rule writes.

Reads the content of the target's ctx.actions.write of <target name>.config.json, in-process with
skylib's analysistest, so no action runs.
"""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts")

def _config_field_test_impl(ctx):
    env = analysistest.begin(ctx)
    target = analysistest.target_under_test(env)
    written = [
        action
        for action in analysistest.target_actions(env)
        if action.mnemonic == "FileWrite" and [f for f in action.outputs.to_list() if f.basename == target.label.name + ".config.json"]
    ]
    asserts.equals(env, 1, len(written), "actions that write {}.config.json".format(target.label.name))
    if written:
        config = json.decode(written[0].content)
        asserts.equals(env, json.decode(ctx.attr.expected_json), config.get(ctx.attr.field), "config field " + repr(ctx.attr.field))
    return analysistest.end(env)

_config_field_test = analysistest.make(
    _config_field_test_impl,
    attrs = {
        "field": attr.string(mandatory = True, doc = "The top-level key of the config."),
        "expected_json": attr.string(mandatory = True, doc = "Its expected value, as JSON."),
    },
)

def config_field_test(name, target, field, expected, tags = None):
    """Tests that the JSON config test `target` writes (<target name>.config.json) has `field` = `expected`.

    Args:
      name: the test's name.
      target: the label of the test, e.g. ":x_numerics_test"; tag it manual.
      field: a top-level key of the config, e.g. "method".
      expected: its value (any JSON value).
      tags: the test's tags (NIGHTLY for a target whose analysis installs a release's runtimes).
    """
    _config_field_test(name = name, target_under_test = target, field = field, expected_json = json.encode(expected), tags = tags)
