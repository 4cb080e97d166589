"""Entry script of the exporter: `python exporter/main.py [--warm=COMMAND] COMMAND @params`, where
COMMAND is one of the actions that actions/registry.py registers (driver/cli.py parses the rest).

Bazel runs this file by its execroot-relative path, so the exporter works the same from this
repository and from a repository that loads rules_torch_export as an external one.
"""

import os
import sys

# Python put this file's folder first on sys.path; put the folder above it there instead, so
# that `exporter` imports as a package and its module names cannot shadow a model's modules.
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from exporter.driver import cli  # noqa: E402  (needs the sys.path fix above)

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
