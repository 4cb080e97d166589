"""Prints the environment's identity: the Python version and every installed distribution.

Run inside the container image (see Dockerfile); its output is image_identity.txt. It prints
the same lines as the venv repository rule's identity script, so equal environments have
equal identities.
"""

import importlib.metadata
import platform
import sys


def identity():
    lines = [
        "python " + platform.python_version() + " " + sys.implementation.cache_tag,
        "machine " + platform.machine(),
    ]
    versions = {}
    for dist in importlib.metadata.distributions():
        versions[dist.metadata["Name"].lower().replace("_", "-")] = dist.version
    lines += [name + "==" + versions[name] for name in sorted(versions)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(identity())
