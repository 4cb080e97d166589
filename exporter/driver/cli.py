"""The exporter's command line: `main.py COMMAND @params`, one-shot or as a worker.

    main.py [--warm=COMMAND] COMMAND @params       one request, then exit (request.py)
    main.py --warm=COMMAND --persistent_worker     a persistent worker (worker.py)

Either may take --executorch_layer=<identity.txt> first: the process then runs with that
ExecuTorch release's packages ahead of the toolchain's (core/release_site.py).

COMMAND is one of the registered actions (actions/registry.py's ACTIONS, where request.py takes
its choices from; a command that is not one gets the usage line that lists them).
"""

import argparse
import sys


def main(argv):
    parser = argparse.ArgumentParser(prog="exporter", add_help=False)
    parser.add_argument("--persistent_worker", action="store_true")
    # Which action a persistent worker warms up for (its module's warm_up); one-shot runs ignore it.
    parser.add_argument("--warm", default="lower")
    parser.add_argument("--executorch_layer")
    options, request_arguments = parser.parse_known_args(argv)
    if options.executorch_layer:
        from exporter.core import release_site

        release_site.activate(options.executorch_layer)
    if options.persistent_worker:
        from exporter.driver import worker

        return worker.serve(options.warm)
    from exporter.driver import worker_child

    # In a child of its own, as in the worker: the same isolation (private caches, no network,
    # also under --spawn_strategy=local, where no sandbox blocks it), deadline and crash report.
    code, text = worker_child.run_one_shot(request_arguments)
    sys.stderr.write(text)
    return code
