"""Runs ruff or mypy on the repository's Python: `run_lint.py TOOL CHECK|FIX`.

As //tools/lint:ruff_test and :mypy_test it checks; as `bazel run //tools/lint:ruff` it
fixes what ruff can. It reads the source tree itself, through the WORKSPACE runfile's symlink
(like //tools/buildifier), with the settings in ruff.toml and mypy.ini at the root.
"""

import os
import subprocess
import sys

# The Python of the product and its tools; models/, examples/ and tests/ are test code and fixtures.
FOLDERS = ("exporter", "backend_hooks", "native", "bench", "tools")


def source_root():
    if os.environ.get("BUILD_WORKSPACE_DIRECTORY"):  # bazel run
        return os.environ["BUILD_WORKSPACE_DIRECTORY"]
    return os.path.dirname(os.path.realpath("WORKSPACE"))


def command(tool, mode, binary, root):
    if tool == "ruff":
        return [binary, "check", *(["--fix"] if mode == "fix" else []), "--config", os.path.join(root, "ruff.toml"),
                *FOLDERS]
    return [binary, "--config-file", os.path.join(root, "mypy.ini"), "--cache-dir", os.devnull, *FOLDERS]


def main(argv):
    tool, mode, binary = argv
    root = source_root()
    done = subprocess.run(command(tool, mode, os.path.abspath(binary), root), cwd=root)
    if done.returncode and mode == "check":
        fixer = "`./bazelw run //tools/lint:ruff` fixes what it can; " if tool == "ruff" else ""
        print(f"{tool}: {fixer}the rest is yours (settings: {tool}.toml / mypy.ini at the root)", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
