"""A repository that fails its fetch in one line, before any download: where the rules would
otherwise put PyPI's build of an ExecuTorch release in place of a team's own (repositories.bzl)."""

def _refused_repository_impl(rctx):
    fail(rctx.attr.message)

refused_repository = repository_rule(
    implementation = _refused_repository_impl,
    doc = "Fails its fetch with `message`; declared where no repository may be fetched without the user's say.",
    attrs = {
        "message": attr.string(mandatory = True, doc = "The one-line error: what is refused and the WORKSPACE argument to add."),
    },
)
