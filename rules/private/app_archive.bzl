"""app_archive: an app, its shared libraries and its data as one .tar.gz that runs where unpacked."""

load("//rules:providers.bzl", "Arm64BinaryInfo")
load("//rules/private/lib:runfiles.bzl", "rlocation")

def _app_archive_impl(ctx):
    target = ctx.attr.binary
    if Arm64BinaryInfo in target:  # ship the aarch64 ELF, not the launcher that runs it here
        binary, runfiles = target[Arm64BinaryInfo].binary, target[Arm64BinaryInfo].runfiles
    else:
        binary, runfiles = target[DefaultInfo].files_to_run.executable, target[DefaultInfo].default_runfiles
    if binary == None:
        fail("app_archive {}: binary {} is not executable; give a cc_binary or an arm64_binary".format(ctx.label, target.label))
    top = binary.basename + ".runfiles/"
    files = {top + rlocation(ctx, f): f for f in runfiles.files.to_list()}
    for entry in runfiles.symlinks.to_list():
        files[top + ctx.workspace_name + "/" + entry.path] = entry.target_file
    for entry in runfiles.root_symlinks.to_list():
        files[top + entry.path] = entry.target_file
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest.json")
    ctx.actions.write(manifest, json.encode({
        "entry": [binary.basename, top + rlocation(ctx, binary)],
        "files": [[path, f.path] for path, f in sorted(files.items())],
    }))
    out = ctx.actions.declare_file(ctx.label.name + ".tar.gz")
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [manifest.path, out.path],
        inputs = depset([manifest], transitive = [runfiles.files] + [depset([e.target_file for e in runfiles.symlinks.to_list() + runfiles.root_symlinks.to_list()])]),
        outputs = [out],
        mnemonic = "AppArchive",
        progress_message = "Archiving {} for shipping".format(target.label),
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

app_archive = rule(
    implementation = _app_archive_impl,
    doc = """`<name>.tar.gz`: an app ready to copy to a device. It holds the binary's runfiles tree
(`NAME.runfiles/`: the binary, the ExecuTorch shared libraries it links, its `.pte` and other
data, as regular files) and `NAME` at the top, a symlink to the binary. Unpacked anywhere,
`./NAME` runs: the binary finds its libraries through its RUNPATH (`$ORIGIN`-relative) and its
data through Bazel's runfiles library (`NAME.runfiles/`). The bytes depend on the files alone
(sorted, mtime 0, owner root).

With an arm64_binary, it ships the aarch64 ELF (the launcher that runs it here under qemu stays
out): on x86-64, `qemu-aarch64-static -L /usr/aarch64-linux-gnu ./NAME` runs the unpacked app.""",
    attrs = {
        "binary": attr.label(
            mandatory = True,
            doc = "A cc_binary (built for the target platform) or an arm64_binary (its aarch64 ELF).",
        ),
        "_tool": attr.label(
            default = Label("//tools/app_archive"),
            executable = True,
            cfg = "exec",
        ),
    },
)
