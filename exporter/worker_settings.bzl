"""The exporter's persistent-worker settings, read by //toolchain:BUILD.

Exporter actions run in a warm persistent worker (exporter/worker.py) by default. To run them
one-shot, pass `--strategy=TorchExport=sandboxed --strategy=ExecuTorchLower=sandboxed` (or
`--config=noworker`), or set this dict to {} to stop offering the worker at all.
"""

EXPORTER_WORKER_REQUIREMENTS = {
    "requires-worker-protocol": "json",
    "supports-workers": "1",
}
