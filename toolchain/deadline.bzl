"""How long an exporter action may run: the build-wide flag, and the default both fall back on."""

# The exporter's default (exporter/driver/request.py), generated into repository_facts.bzl.
load("//exporter:repository_facts.bzl", "DEFAULT_DEADLINE_SECONDS")

ExporterDeadlineInfo = provider(
    doc = "The value of --@rules_torch_export//rules:exporter_deadline.",
    fields = {"seconds": "int: how long an exporter action may run before it is stopped."},
)

ExporterDeadlineStampInfo = provider(
    doc = "How exporter actions find the build's deadline without holding it in their keys.",
    fields = {
        "stamp": "File: the stamp every exporter action declares; its bytes never change.",
        "flag": "str: the flag's label as a command line in this workspace names it.",
    },
)

def _exporter_deadline_impl(ctx):
    if ctx.build_setting_value < 1:
        fail("--{}={}: give the exporter's deadline in seconds, at least 1, e.g. {}".format(
            ctx.label,
            ctx.build_setting_value,
            DEFAULT_DEADLINE_SECONDS,
        ))
    return [ExporterDeadlineInfo(seconds = ctx.build_setting_value)]

exporter_deadline = rule(
    implementation = _exporter_deadline_impl,
    doc = "An int flag: the seconds an exporter action may run before it is stopped and fails.",
    build_setting = config.int(flag = True),
)

def _exporter_deadline_stamp_impl(ctx):
    stamp = ctx.actions.declare_file(ctx.label.name)
    seconds = ctx.actions.declare_file(ctx.label.name + ".seconds")
    ctx.actions.run_shell(
        outputs = [stamp, seconds],
        command = 'printf "exporter deadline\\n" > "$1" && printf "%s\\n" "$3" > "$2"',
        arguments = [stamp.path, seconds.path, str(ctx.attr.deadline[ExporterDeadlineInfo].seconds)],
        mnemonic = "ExporterDeadline",
        progress_message = "Recording the exporter's deadline",
        # Local: a file the exporter reads beside the stamp, which a remote cache hit would not bring.
        execution_requirements = {"no-remote": ""},
    )
    return [
        DefaultInfo(files = depset([stamp])),
        ExporterDeadlineStampInfo(stamp = stamp, flag = str(ctx.attr.deadline.label)),
    ]

# A deadline changes no output, so it must stay out of every exporter action's key (or a CI and a
# developer with other deadlines would share no cache; docs/caching.md). Bazel 4.2.3 keys an
# action on all it passes it: arguments, environment, execution requirements, and the bytes of
# its inputs. So the flag's value goes to a file no exporter action declares, <name>.seconds,
# written by an action whose other output, the stamp, every exporter action declares: the stamp
# orders the two, and its bytes are the same for every deadline. The exporter reads the seconds
# beside the stamp (exporter/driver/request.py, build_deadline).
exporter_deadline_stamp = rule(
    implementation = _exporter_deadline_stamp_impl,
    doc = "Writes the exporter's deadline where exporter actions find it, outside their keys.",
    attrs = {
        "deadline": attr.label(
            mandatory = True,
            providers = [ExporterDeadlineInfo],
            doc = "The exporter_deadline flag.",
        ),
    },
)
