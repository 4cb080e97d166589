"""How long an exporter action may run: the build-wide flag, and the default both fall back on."""

# Generous: the zoo's slowest action (a Hugging Face model's lowering) takes under a minute.
DEFAULT_DEADLINE_SECONDS = 3600

ExporterDeadlineInfo = provider(
    doc = "The value of --@rules_torch_export//rules:exporter_deadline.",
    fields = {"seconds": "int: how long an exporter action may run before it is stopped."},
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
