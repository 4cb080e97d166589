"""The exporter's persistent-worker settings, read by //toolchain:BUILD.

Exporter actions run in a warm persistent worker (exporter/driver/worker.py) by default, one
process per worker key that takes concurrent requests (a multiplex worker): TorchExport's runs
export and quantize, ExecuTorchLower's runs lower and etrecord (actions/registry.py, worker=). It speaks Bazel's
default worker protocol, protobuf, so no flag is needed; it also understands JSON, for a
toolchain whose worker_requirements add "requires-worker-protocol": "json" (which Bazel 4.2.3
allows only with --experimental_worker_allow_json_protocol).

To run the actions one-shot, pass --spawn_strategy=sandboxed (this repository's
--config=noworker), or --strategy=<mnemonic>=sandboxed for one kind of action; or set this
dict to {} to stop offering the worker at all. Without "supports-multiplex-workers" (or with
--noexperimental_worker_multiplex), Bazel starts one worker process per concurrent action
instead, and each pays its own warm-up.
"""

EXPORTER_WORKER_REQUIREMENTS = {
    "supports-multiplex-workers": "1",
    "supports-workers": "1",
}
