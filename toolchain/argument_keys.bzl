"""The keys of torch_export_toolchain_repositories' per-backend and per-release arguments.

A key that names nothing the rules lock apart (a typo, "tosa" for the Arm backends' shared lock,
or "1.5", the toolchain's own release) used to be ignored without a word: the team's lock was
then simply not used. It fails the WORKSPACE's loading in one line instead."""

def unknown_keys_error(argument, given, known):
    """The one-line error for the keys of `given` that are not in `known`, or None when there are none.

    Args:
      argument: the argument's name, e.g. "release_locks".
      given: the argument's dict.
      known: the keys it may have.

    Returns:
      The message, or None.
    """
    unknown = sorted([key for key in given if key not in known])
    if not unknown:
        return None
    hint = " (the toolchain's own release is replaced by `lock`)" if argument.startswith("release_") else ""
    return "rules_torch_export: torch_export_toolchain_repositories' {} has {}, which it does not take; its keys are {}{}".format(
        argument,
        ", ".join([repr(key) for key in unknown]),
        ", ".join([repr(key) for key in sorted({key: None for key in known}.keys())]),
        hint,
    )
