"""How the rules point at the user's Python: `entry` strings and the folders to import from.

torch_model and calibration_data name a callable as 'package.module:callable', whose package
path is the file's path from its repository's root; the exporter puts that root on sys.path.
Actions run in the execroot, tests in their runfiles tree, so a root has one form for each.
"""

def check_entry(where, entry, example):
    """Fails unless `entry` looks like 'package.module:callable'.

    Args:
      where: the start of the message, naming the target.
      entry: the BUILD file's entry.
      example: a good entry for the message, e.g. 'models.resnet:resnet18'.
    """
    module, sep, attr_name = entry.partition(":")
    if not sep or not module or not attr_name or " " in entry:
        fail("{}entry = {} must look like 'package.module:callable', e.g. '{}'".format(where, repr(entry), example))

def import_root(f, runfiles = False):
    """The folder from which `f` imports by its path in its repository.

    Args:
      f: a File.
      runfiles: False for the execroot-relative folder (actions), True for the folder relative
        to a test's working directory (the runfiles tree of the main repository).

    Returns:
      The folder; "." for a source file of the main repository.
    """
    if runfiles:
        return "../" + f.owner.workspace_name if f.owner.workspace_name else "."
    parts = [p for p in (f.root.path, f.owner.workspace_root) if p]
    return "/".join(parts) if parts else "."

def import_roots(files, runfiles = False):
    """The sorted, distinct import_root of each of `files` (a list)."""
    return sorted({import_root(f, runfiles): True for f in files}.keys())
