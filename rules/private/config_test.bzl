"""The shape that numerics_test, program_budget_test, graph_snapshot_test and bundled_program_test share.

Each of these macros declares two targets:

- `<name>.config`, a rule that checks the test's attributes at analysis time (a bad one fails
  the build with one line naming `<name>`, not `<name>.config`) and writes the JSON config
  `<name>.config.json` that the test runner reads;
- `<name>`, a py_test whose main runs the runner (an exporter module) on that config; with a
  golden, also `<name>.update` and its alias `<name>_update`, which rewrite the golden.

The pieces, used in this order by each rule's .bzl file:

    _my_config = rule(
        implementation = _my_config_impl,   # ends with: return write_test_config(ctx, {...}, files)
        attrs = config_test_attrs({...the rule's own attrs...}),
    )

    def my_test(name, program, **kwargs):
        _my_config(program = program, **config_target_attrs(name, kwargs))
        config_test(name, module = EXPORTER_MODULES["my_check"], **kwargs)
"""

load("//rules:providers.bzl", "golden_update_info")
load(":checks.bzl", "macro_label", "message_prefix")
load(":exporter_py.bzl", "EXPORTER_MODULES", "exporter_py")

# The attributes every config rule has, set by config_target_attrs.
_CONFIG_ATTRS = {
    "test_label": attr.string(mandatory = True, doc = "The test's label, for messages."),
}

# The attributes of a config rule whose test compares with a golden; config_target_attrs sets
# them when called with updatable = True.
GOLDEN_ATTRS = {
    "golden_path": attr.string(doc = "The golden's workspace-relative path, or empty for none."),
    "update_target": attr.string(mandatory = True, doc = "The label of the .update binary."),
}

# The tolerances of a test that compares outputs; the macro passes number_attr(rtol) and the
# rule reads them with parse_tolerance (checks.bzl), which names the test on a bad one.
TOLERANCE_ATTRS = {
    "rtol": attr.string(doc = "Relative tolerance; empty for the backend's default."),
    "atol": attr.string(doc = "Absolute tolerance; empty for the backend's default."),
}

def config_test_attrs(attrs, *shared):
    """The attrs of a config rule.

    Args:
      attrs: the rule's own attrs.
      *shared: dicts of attrs that several config rules share: GOLDEN_ATTRS, TOLERANCE_ATTRS.

    Returns:
      A dict: `attrs`, every `shared` dict and test_label.
    """
    result = dict(attrs)
    for more in list(shared) + [_CONFIG_ATTRS]:
        result.update(more)
    return result

def test_prefix(kind, ctx):
    """The start of a config rule's failure messages: "<kind> <the test's label>: "."""
    return message_prefix(kind, ctx.attr.test_label)

def write_test_config(ctx, config, files = [], transitive_files = None, golden_files = None, runfiles = None):
    """Writes `config` as <target name>.json; returns the config rule's providers.

    Args:
      ctx: the config rule's context.
      config: the dict the test runner reads.
      files: the Files the runner reads (programs, manifests, goldens' inputs).
      transitive_files: a depset of more such Files, or None.
      golden_files: for a rule with golden attrs, the Files that rewriting the golden needs
        besides the config; None for a rule without.
      runfiles: more runfiles the runner needs (a binary it starts, with its libraries), or None.

    Returns:
      [DefaultInfo] (the config, with the files in its runfiles), plus GoldenUpdateInfo when
      golden_files is given, which lists the config if the test has a golden (an update list
      may name a test without one).
    """
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, json.encode_indent(config) + "\n")
    own = ctx.runfiles(files = [out] + files, transitive_files = transitive_files)
    providers = [DefaultInfo(
        files = depset([out]),
        runfiles = own.merge(runfiles) if runfiles else own,
    )]
    if golden_files != None:
        providers.append(golden_update_info(
            configs = depset([out] if ctx.attr.golden_path else []),
            runfiles = ctx.runfiles(files = [out] + golden_files),
        ))
    return providers

def config_target_attrs(name, kwargs, golden = None, updatable = False):
    """The attributes a macro gives its config target, besides the rule's own.

    Args:
      name: the test's name; the config target is `<name>.config`.
      kwargs: the macro's **kwargs; the config takes their tags ("manual" keeps a deliberately
        bad test's config out of //... too).
      golden: the golden's file name in this package, or None.
      updatable: whether the rule has GOLDEN_ATTRS.

    Returns:
      A dict of keyword arguments for the config rule.
    """
    attrs = {
        "name": name + ".config",
        "test_label": macro_label(name),
        "tags": kwargs.get("tags"),
        "visibility": ["//visibility:private"],
    }
    if updatable:
        package = native.package_name()
        attrs["golden_path"] = (package + "/" + golden if package else golden) if golden else ""
        attrs["update_target"] = macro_label(name + ".update")
    return attrs

def config_test(name, module, golden = None, **kwargs):
    """Declares the py_test `name` running `<module>.main` on `:<name>.config`.

    With `golden`, also declares `<name>.update`, a py_binary running exporter.checks.golden --update
    on the config, and the alias `<name>_update` to it; both get the test's tags.

    Args:
      name: the test's name.
      module: the exporter module the test runs, e.g. EXPORTER_MODULES["budget"].
      golden: the golden file, relative to the package; None for none.
      **kwargs: passed to the py_test (tags, size, timeout, ...).
    """
    config = ":{}.config".format(name)
    exporter_py(
        native.py_test,
        name = name,
        module = module,
        # A glob that may be empty, so that a missing golden is the test's failure (with the fix),
        # not a load error.
        data = [config] + (native.glob([golden], allow_empty = True) if golden else []),
        args = ["$(rootpath {})".format(config)],
        **kwargs
    )
    if golden:
        update = name + ".update"
        exporter_py(
            native.py_binary,
            name = update,
            module = EXPORTER_MODULES["golden"],
            data = [config],
            args = ["--update", "$(rootpath {})".format(config)],
            tags = kwargs.get("tags"),
        )
        native.alias(name = name + "_update", actual = ":" + update, tags = kwargs.get("tags"))
