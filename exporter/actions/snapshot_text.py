"""The GraphSnapshot action: a graph_snapshot_test's text (formats/graph_text.py), rendered at
build time in the export's warm worker from the .pt2 (and the .pte's plan), so that the test
compares two files without importing torch (checks/golden.py). Its `.update` target copies it
into the source tree."""

from exporter.core import atomic
from exporter.formats import graph_text, pt2


def run(config):
    """Runs the action for a SnapshotTextConfig (output "text")."""
    ep = pt2.load(config.pt2)
    pte_bytes = None
    if config.pte:
        with open(config.pte, "rb") as f:
            pte_bytes = f.read()
    text = graph_text.render(config.subject, ep, config.spec, pte_bytes)
    atomic.write_bytes(config.outputs["text"], text.encode("utf-8"))
