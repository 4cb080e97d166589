"""where: an executable that is write_launcher's script alone, printing the runfiles tree it found."""

load("//rules/private/lib:runfiles.bzl", "write_launcher")  # buildifier: disable=bzl-visibility

def _where_impl(ctx):
    launcher = ctx.actions.declare_file(ctx.label.name)
    write_launcher(ctx, launcher, "prints its runfiles tree and arguments", 'echo "$runfiles" "$@"')

    # Not listed in its own runfiles: Bazel adds a rule's executable, which the launcher relies on.
    return [DefaultInfo(executable = launcher)]

where = rule(
    implementation = _where_impl,
    doc = "write_launcher's script on its own, for launcher_test.",
    executable = True,
)
