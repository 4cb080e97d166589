"""The exporter's persistent-worker settings, read by //toolchain:BUILD.

Exporter actions run in a warm persistent worker (exporter/worker.py) by default, one process
per mnemonic that takes concurrent requests (a multiplex worker). To run them one-shot, pass
`--strategy=TorchExport=sandboxed --strategy=ExecuTorchLower=sandboxed` (or
`--config=noworker`), or set this dict to {} to stop offering the worker at all. Without
"supports-multiplex-workers" (or with --noexperimental_worker_multiplex), Bazel starts one
worker process per concurrent action instead, and each pays its own warm-up.
"""

EXPORTER_WORKER_REQUIREMENTS = {
    "requires-worker-protocol": "json",
    "supports-multiplex-workers": "1",
    "supports-workers": "1",
}
