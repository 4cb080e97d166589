"""The FoundationWeights action: a program's .ptd -> the foundation's index.

foundation_weights(name, program) names the .ptd of a program lowered with weights = "external"
as weights that other programs share. The index lists every entry of that file (key, size,
sha256, layout), so that the lowering of a program built against the foundation can check each
tensor it references without reading the weights themselves (actions/sharing.py). The index
depends on the .ptd's bytes alone, never on the programs that share it: adding one rebuilds
nothing else.
"""

import json

from exporter.core import manifest
from exporter.core.errors import UserError
from exporter.formats import ptd

FORMAT = "rules_torch_export/foundation-index/1"


def index(config):
    """The index of the foundation's .ptd, checked against its program's manifest."""
    try:
        entries = ptd.read(config.ptd).entries
    except (OSError, ValueError) as e:
        raise UserError(f"foundation_weights {config.label}: {config.program}'s .ptd cannot be read: {e}; "
                        f"rebuild {config.program}") from None
    with open(config.manifest, encoding="utf-8") as f:
        recorded = json.load(f)
    record = manifest.file_record(config.ptd)
    if recorded.get("ptd", {}).get("sha256") != record["sha256"]:
        raise UserError(f"foundation_weights {config.label}: {config.program}'s .ptd is not the one its manifest "
                        f"records; rebuild {config.program}")
    return {
        "format": FORMAT,
        "label": config.label,
        "program": config.program,
        "backends": recorded["backends"],
        "ptd": record,
        "entries": {key: entry.to_json() for key, entry in sorted(entries.items())},
        "toolchain": recorded["toolchain"],
    }


def run(config):
    """Runs the action for a FoundationConfig."""
    manifest.write_json(config.outputs["index"], index(config))
