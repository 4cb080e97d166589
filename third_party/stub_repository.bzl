"""A repository rule that assembles a small local repository from files in this one."""

def _stub_repository_impl(repository_ctx):
    for src, dest in repository_ctx.attr.files.items():
        repository_ctx.symlink(src, dest)

stub_repository = repository_rule(
    implementation = _stub_repository_impl,
    doc = "Creates a repository whose files are symlinks to files of rules_torch_export.",
    attrs = {
        "files": attr.label_keyed_string_dict(
            allow_files = True,
            doc = "Each file of this repository, mapped to its path in the new repository.",
        ),
    },
)
