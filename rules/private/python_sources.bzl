"""Where Python sources import from, for the rules that run the user's code in the exporter."""

def import_root(f):
    """The execroot-relative folder from which `f` imports by its workspace-relative path."""
    parts = [p for p in (f.root.path, f.owner.workspace_root) if p]
    return "/".join(parts) if parts else "."
