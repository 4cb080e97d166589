"""Where a File sits in a runfiles tree, for the launchers and archives the rules write."""

def rlocation(ctx, f):
    """The path of f under a runfiles root.

    Args:
      ctx: the rule's context.
      f: a File.

    Returns:
      <workspace>/<path>, or <repository>/<path> for a file of another repository (whose
      short_path starts with ../).
    """
    short = f.short_path
    return short[len("../"):] if short.startswith("../") else ctx.workspace_name + "/" + short
