"""A venv from a hash-pinned lock, apart from the toolchain's: the tools that must never change
the toolchain's identity (ruff and mypy, Model Explorer) install this way."""

def run_or_fail(rctx, args, what, timeout = 600):
    """Runs args in the repository, or fails with the tail of its output.

    Args:
      rctx: the repository context.
      args: the command.
      what: what the command does, for the failure message.
      timeout: seconds.

    Returns:
      The command's stdout, stripped.
    """
    result = rctx.execute(args, timeout = timeout, quiet = True)
    if result.return_code != 0:
        fail("rules_torch_export: {} failed (exit {}):\n{}".format(what, result.return_code, (result.stdout + result.stderr)[-3000:]))
    return result.stdout.strip()

# pip's arguments for a hash-pinned lock: exactly its pins, wheels only, nothing asked.
PIP_INSTALL_LOCKED = [
    "-m",
    "pip",
    "install",
    "--no-deps",
    "--no-input",
    "--disable-pip-version-check",
    "--require-hashes",
    "--only-binary=:all:",
]

def make_locked_venv(rctx, python, lock, what, timeout = 600):
    """Makes `venv/` from `lock`: no dependency resolved, every wheel's sha256 checked, no sdist built.

    Args:
      rctx: the repository context.
      python: the interpreter that makes the venv.
      lock: the label of a requirements file with --hash for every wheel.
      what: what the venv is for, for failure messages.
      timeout: seconds for pip.
    """
    run_or_fail(rctx, [python, "-m", "venv", "venv"], "python3 -m venv (for {})".format(what))
    run_or_fail(rctx, ["venv/bin/python3"] + PIP_INSTALL_LOCKED + ["-r", rctx.path(lock)], "pip install of " + str(lock), timeout)
