"""What the repositories of Debian's tools share (graphviz_repository.bzl, valgrind_repository.bzl)."""

def tool_version(rctx, version_line, package):
    """version.txt's text: the tool's own version line, then dpkg's "debian <package> <version>".

    Args:
      rctx: the repository context.
      version_line: what the tool says of its version.
      package: the Debian package that installs it.

    Returns:
      The text.
    """
    lines = [version_line]
    dpkg = rctx.execute(["dpkg-query", "-W", "-f", "${Package} ${Version}", package])
    if dpkg.return_code == 0:
        lines.append("debian " + dpkg.stdout.strip())
    return "\n".join(lines) + "\n"

def write_missing(rctx, launcher, script, build):
    """The repository of a tool that is not installed: its launcher fails in one line.

    Args:
      rctx: the repository context.
      launcher: the launcher's name.
      script: the launcher's text, which names the package to install.
      build: the repository's BUILD file.
    """
    rctx.file(launcher, script, executable = True)
    rctx.file("version.txt", "missing\n", executable = False)
    rctx.file("BUILD", build, executable = False)
