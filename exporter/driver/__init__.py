"""The driver: how a process runs exporter requests.

cli (main.py's argument parsing), request (one request from its params file: the config, the
action, the one-line error), worker and worker_child (the persistent worker and the children it
forks per request), work_protocol (Bazel's WorkRequest/WorkResponse, protobuf or JSON), capture
(the output a request prints) and isolation (private caches, no network, clean-up).

May import actions (through actions/registry), core and formats; never checks.
"""
