"""The header of a graph snapshot's text (formats/graph_text.py): the subject, and the torch and
ExecuTorch versions that wrote it, which the golden runner (checks/golden.py) compares with the
toolchain's when a golden differs. No torch import: the test reads it."""

import importlib.metadata

HEADER = "# rules_torch_export graph snapshot of {label}"
VERSIONS_PREFIX = "# versions: "
NOTE = "# Written by the graph_snapshot_test's .update target; do not edit by hand."


def versions():
    """The torch and executorch versions of this environment, as the golden header records them."""
    found = {}
    for name in ("torch", "executorch"):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "none"
    return found


def format_versions(found):
    return VERSIONS_PREFIX + " ".join(f"{k}=={v}" for k, v in sorted(found.items()))


def parse_versions(text):
    """The versions a golden's header names, or None when it names none."""
    for line in text.splitlines():
        if line.startswith(VERSIONS_PREFIX):
            pairs = (p.partition("==") for p in line[len(VERSIONS_PREFIX):].split())
            return {name: version for name, _, version in pairs}
        if not line.startswith("#"):
            return None
    return None


def header_lines(label):
    """The text's first lines: the subject, the versions, the note."""
    return [HEADER.format(label=label), format_versions(versions()), NOTE]
