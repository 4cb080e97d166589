"""Runs buildifier on every BUILD, .bzl and WORKSPACE file of the source tree.

    bazel run //:buildifier          formats them and fixes what lint can fix
    bazel test //:buildifier_test    fails on a file that is not formatted or has a warning

Warnings that stay off, and why:
  native-py            Bazel 4.2.3 has the Python rules built in; rules_python is not here.
  native-cc-*, native-java-*
                       only third_party's stand-ins call them: forwarding @rules_cc and
                       @rules_java to the native rules is their whole job.
"""

import os
import subprocess
import sys

DISABLED = ["native-py"] + [f"native-cc-{k}" for k in (
    "binary", "fdo-prefetch-hints", "fdo-profile", "import", "library", "objc-import",
    "objc-library", "proto", "test", "toolchain", "toolchain-suite")] + [f"native-java-{k}" for k in (
    "binary", "import", "library", "lite-proto", "package-config", "plugin", "proto", "runtime",
    "test", "toolchain")]

_NAMES = ("BUILD", "BUILD.bazel", "WORKSPACE")
_SKIP = (".git", "__pycache__")


def starlark_files(root):
    """Workspace-relative paths of the Starlark files, BUILD.zoo (tests' zoo) included."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not d.startswith("bazel-"))
        for name in sorted(filenames):
            if name in _NAMES or name.endswith((".bzl", ".BUILD", "BUILD.zoo")):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def command(binary, mode, files):
    build_like = [f for f in files if not f.endswith(".bzl")]
    args = [binary, f"-mode={mode}", f"-lint={'fix' if mode == 'fix' else 'warn'}",
            "-warnings=" + ",".join("-" + w for w in DISABLED)]
    # Files whose name buildifier does not know (BUILD.zoo, *.BUILD) are read as BUILD files.
    unknown = [f for f in build_like if os.path.basename(f) not in _NAMES]
    return [args + [f for f in files if f not in unknown], args + ["-type=build"] + unknown]


def _source_root():
    """The source tree: from `bazel run`, or through a runfile's symlink under `bazel test`."""
    if os.environ.get("BUILD_WORKSPACE_DIRECTORY"):
        return os.environ["BUILD_WORKSPACE_DIRECTORY"]
    return os.path.dirname(os.path.realpath("WORKSPACE"))


def main(argv):
    binary, mode = os.path.abspath(argv[0]), argv[1]
    root = _source_root()
    failed = False
    for args in command(binary, mode, starlark_files(root)):
        if len(args) > 4 and subprocess.run(args, cwd=root).returncode != 0:
            failed = True
    if failed and mode == "check":
        print("buildifier: fix with `./bazelw run //:buildifier` (warnings it cannot fix are yours)",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
