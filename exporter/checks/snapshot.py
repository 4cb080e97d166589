"""The canonical text of an exported program (and of its .pte) that graph_snapshot_test diffs.

The text is rendered by formats/graph_text.py, at build time, in the test's GraphSnapshot action
(actions/snapshot_text.py), so the test (golden.py) reads a file and imports no torch. Here: the
header's versions, which golden.py compares with the toolchain's (formats/graph_header.py, no
torch), and render() for tools and tests that draw the text in-process (torch imports then).
"""

from exporter.formats.graph_header import (  # noqa: F401  (snapshot.HEADER, ... for golden.py and tests)
    HEADER,
    NOTE,
    VERSIONS_PREFIX,
    format_versions,
    parse_versions,
    versions,
)


def render(label, ep, spec, pte_bytes=None):
    """The full golden text: header, the exported program, and the .pte's plan if given."""
    from exporter.formats import graph_text

    return graph_text.render(label, ep, spec, pte_bytes)
