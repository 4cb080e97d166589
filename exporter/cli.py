"""The exporter's command line: `main.py (export|lower) @params`, one-shot or as a worker.

    main.py [--warm=COMMAND] COMMAND @params       one request, then exit (request.py)
    main.py --warm=lower --persistent_worker       a JSON persistent worker (worker.py)

COMMAND is export, lower or bundle (configs.COMMANDS).
"""

import argparse
import sys


def main(argv):
    parser = argparse.ArgumentParser(prog="exporter", add_help=False)
    parser.add_argument("--persistent_worker", action="store_true")
    # Which work a persistent worker warms up for; one-shot runs ignore it.
    parser.add_argument("--warm", default="lower")
    options, request_arguments = parser.parse_known_args(argv)
    if options.persistent_worker:
        from exporter import worker

        return worker.serve(options.warm)
    from exporter import hermetic, request

    cache_dir = hermetic.private_cache_dir()
    hermetic.block_network()  # also under --spawn_strategy=local, where no sandbox does it
    try:
        code, text = request.run(request_arguments)
    finally:
        hermetic.remove_dir(cache_dir)
    sys.stderr.write(text)
    return code
