"""The shape that numerics_test, program_budget_test, graph_snapshot_test and the other tests share.

Each of these macros declares one test target, `<name>`, of a Starlark test rule that:

- checks the test's attributes at analysis time (a bad one fails the build with one line naming
  `<name>`);
- writes the JSON config `<name>.config.json` that the test runner (an exporter module) reads;
- writes `<name>`, a shell launcher that starts the registered Python toolchain's interpreter on
  `<module>.main(["<name>.config.json"])`, with the import path a py_test's stub would set.

With a golden, the macro also declares `<name>.update` and its alias `<name>_update`, a
py_binary that rewrites the golden from the config (it takes `:<name>.config.json` as data).
One Starlark test instead of a config rule plus a native py_test saves a target and two actions
per test: 6 actions (its 2 writes, and Bazel's runfiles manifest, tree, middleman and test run)
where there were 8 (docs/performance.md, "Scale").

The pieces, used in this order by each rule's .bzl file:

    _my_test = config_test_rule(
        implementation = _my_test_impl,   # ends with: return write_test_config(ctx, {...}, files)
        doc = "...",
        attrs = config_test_attrs({...the rule's own attrs...}),
    )

    def my_test(name, program, **kwargs):
        _my_test(program = program, **config_target_attrs(name, EXPORTER_MODULES["my_check"], kwargs))
        config_test_update(name, golden = None, kwargs = kwargs)
"""

load("//rules:providers.bzl", "golden_update_info")
load("//rules/private/lib:attr_checks.bzl", "macro_label", "message_prefix")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_LIB", "EXPORTER_MODULES", "exporter_py")
load("//rules/private/lib:runfiles.bzl", "rlocation", "write_launcher")
load("//toolchain:toolchain_types.bzl", "TORCH_EXPORT_TOOLCHAIN_TYPE")

# The toolchain whose py3_runtime runs py_test and py_binary (toolchain/BUILD: venv_py3_runtime):
# the tests run on the same interpreter.
_PYTHON_TOOLCHAIN = "@bazel_tools//tools/python:toolchain_type"

# The attributes every config test rule has, set by config_target_attrs.
_CONFIG_ATTRS = {
    "test_label": attr.string(mandatory = True, doc = "The test's label, for messages and the config."),
    "module": attr.string(mandatory = True, doc = "The exporter module whose main(argv) the test runs."),
    "config": attr.output(mandatory = True, doc = "The JSON config the module reads: <name>.config.json."),
    # A py_test took env; Bazel 4.2.3 gives a Starlark test no such attribute, so the rule has its own.
    "env": attr.string_dict(doc = "Environment variables to set when the test runs, as a py_test's env (values as given, no $(location))."),
    "_exporter_lib": attr.label(default = EXPORTER_LIB, providers = [PyInfo], doc = "The module's library."),
}

# The attributes of a config test rule that compares with a golden; config_target_attrs sets them
# when called with updatable = True.
GOLDEN_ATTRS = {
    "golden_path": attr.string(doc = "The golden's workspace-relative path, or empty for none."),
    "golden_file": attr.label_list(allow_files = True, doc = "The golden if it exists: a glob that may be empty, so that a missing golden is the test's failure (with the fix), not a load error."),
    "update_target": attr.string(mandatory = True, doc = "The label of the .update binary."),
}

# The tolerances of a test that compares outputs; the macro passes number_attr(rtol) and the
# rule reads them with parse_tolerance (attr_checks.bzl), which names the test on a bad one.
TOLERANCE_ATTRS = {
    "rtol": attr.string(doc = "Relative tolerance; empty for the backend's default."),
    "atol": attr.string(doc = "Absolute tolerance; empty for the backend's default."),
}

def config_test_attrs(attrs, *shared):
    """The attrs of a config test rule.

    Args:
      attrs: the rule's own attrs.
      *shared: dicts of attrs that several config rules share: GOLDEN_ATTRS, TOLERANCE_ATTRS.

    Returns:
      A dict: `attrs`, every `shared` dict, and the attrs every config test rule has.
    """
    result = dict(attrs)
    for more in list(shared) + [_CONFIG_ATTRS]:
        result.update(more)
    return result

def config_test_rule(implementation, doc, attrs, exporter = False):
    """A test rule (its name must end in _test) whose implementation ends with write_test_config.

    Args:
      implementation: the rule's implementation.
      doc: the rule's doc.
      attrs: config_test_attrs(...).
      exporter: whether the rule also runs exporter actions (run_exporter), which compute at
        build time, in the warm worker, what the test compares (numerics_test's values, a
        snapshot's text): the test then imports neither torch nor ExecuTorch.
    """
    return rule(
        implementation = implementation,
        doc = doc,
        attrs = attrs,
        test = True,
        toolchains = [_PYTHON_TOOLCHAIN] + ([TORCH_EXPORT_TOOLCHAIN_TYPE] if exporter else []),
    )

def test_prefix(kind, ctx):
    """The start of a config rule's failure messages: "<kind> <the test's label>: "."""
    return message_prefix(kind, ctx.attr.test_label)

# The test's launcher, after write_launcher's lines: it puts the folders a py_test's stub would
# on the import path (the exporter library's import roots, then every repository in the
# runfiles), and runs the module's main on the config from the working directory Bazel gives (the
# main repository's runfiles folder, which the config's paths are relative to). -c leaves ''
# first on sys.path; the stub's sys.path[0] is its script's folder, so the command drops it.
_LAUNCHER = """path={imports}
for repository in "$runfiles"/*/; do
  path="$path:${{repository%/}}"
done
export RUNFILES_DIR="$runfiles"
export PYTHONPATH="$path${{PYTHONPATH:+:$PYTHONPATH}}"
exec {interpreter} -c 'import sys; del sys.path[0]; from {module} import main; sys.exit(main(sys.argv[1:]))' '{config}' "$@"
"""

def _write_launcher(ctx):
    """Writes the test's launcher; returns it and the runfiles it needs (interpreter, exporter library)."""
    runtime = ctx.toolchains[_PYTHON_TOOLCHAIN].py3_runtime
    if runtime.interpreter:
        interpreter = '"$runfiles/{}"'.format(rlocation(ctx, runtime.interpreter))
        interpreter_files = depset([runtime.interpreter], transitive = [runtime.files])
    else:
        interpreter, interpreter_files = "'{}'".format(runtime.interpreter_path), runtime.files
    library = ctx.attr._exporter_lib
    imports = ['"$runfiles/{}"'.format(i) for i in library[PyInfo].imports.to_list()]
    launcher = ctx.actions.declare_file(ctx.label.name)
    write_launcher(ctx, launcher, "runs {}.main".format(ctx.attr.module), _LAUNCHER.format(
        module = ctx.attr.module,
        imports = ":".join(imports) if imports else '""',
        interpreter = interpreter,
        config = ctx.outputs.config.short_path,
    ))
    runfiles = ctx.runfiles(files = [launcher], transitive_files = interpreter_files)
    return launcher, runfiles.merge(library[DefaultInfo].default_runfiles)

def write_test_config(ctx, config, files = [], transitive_files = None, golden_files = None, runfiles = None):
    """Writes `config` as <name>.config.json and the launcher; returns the test rule's providers.

    Args:
      ctx: the config test rule's context.
      config: the dict the test runner reads.
      files: the Files the runner reads (programs, manifests, goldens' inputs).
      transitive_files: a depset of more such Files, or None.
      golden_files: for a rule with golden attrs, the Files that rewriting the golden needs
        besides the config; None for a rule without.
      runfiles: more runfiles the runner needs (a binary it starts, with its libraries), or None.

    Returns:
      [DefaultInfo] (the launcher, with the config, the files and the interpreter in its
      runfiles), plus GoldenUpdateInfo when golden_files is given, which lists the config if the
      test has a golden (an update list may name a test without one), plus the test's env.
    """
    out = ctx.outputs.config
    ctx.actions.write(out, json.encode_indent(config) + "\n")
    launcher, launch = _write_launcher(ctx)
    golden = getattr(ctx.files, "golden_file", [])
    own = ctx.runfiles(files = [out] + files + golden, transitive_files = transitive_files).merge(launch)
    providers = [DefaultInfo(
        executable = launcher,
        files = depset([launcher, out]),
        runfiles = own.merge(runfiles) if runfiles else own,
    )]
    if golden_files != None:
        providers.append(golden_update_info(
            configs = depset([out] if ctx.attr.golden_path else []),
            runfiles = ctx.runfiles(files = [out] + golden_files),
        ))
    if ctx.attr.env:
        providers.append(testing.TestEnvironment(ctx.attr.env))
    return providers

def config_target_attrs(name, module, kwargs, golden = None, updatable = False):
    """The attributes a macro gives its config test rule, besides the rule's own.

    Args:
      name: the test's name.
      module: the exporter module the test runs, e.g. EXPORTER_MODULES["budget"].
      kwargs: the macro's **kwargs (tags, size, timeout, visibility, ...), given to the test.
      golden: the golden's file name in this package, or None.
      updatable: whether the rule has GOLDEN_ATTRS.

    Returns:
      A dict of keyword arguments for the config test rule.
    """
    attrs = dict(kwargs)
    attrs.update({
        "name": name,
        "module": module,
        "config": name + ".config.json",
        "test_label": macro_label(name),
        # Not testonly, as the config was before: a program_dashboard (not a test) reads the
        # config, and the .update binary runs from the test's runfiles.
        "testonly": kwargs.get("testonly", False),
    })
    if updatable:
        package = native.package_name()
        attrs["golden_path"] = (package + "/" + golden if package else golden) if golden else ""
        attrs["golden_file"] = native.glob([golden], allow_empty = True) if golden else []
        attrs["update_target"] = macro_label(name + ".update")
    return attrs

def config_test_update(name, golden, kwargs):
    """With `golden`, declares `<name>.update` and its alias `<name>_update`.

    `<name>.update` is a py_binary running exporter.checks.golden --update on the test's config,
    from the test's runfiles (the programs the golden is made of); both get the test's tags.

    Args:
      name: the test's name.
      golden: the golden file, relative to the package; None for none (then nothing is declared).
      kwargs: the macro's **kwargs, for their tags.
    """
    if not golden:
        return
    config = ":{}.config.json".format(name)
    update = name + ".update"
    exporter_py(
        native.py_binary,
        name = update,
        module = EXPORTER_MODULES["golden"],
        data = [":" + name, config],
        args = ["--update", "$(rootpath {})".format(config)],
        tags = kwargs.get("tags"),
        testonly = kwargs.get("testonly"),
    )
    native.alias(name = name + "_update", actual = ":" + update, tags = kwargs.get("tags"), testonly = kwargs.get("testonly"))
