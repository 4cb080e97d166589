"""Runs one of the Python readers of build outputs on files, one after the other, and prints
one JSON line per file: {"index", "outcome", "message"}.

    read_probe.py KIND FILE...     (KIND: pte, ptd, etvals, pt2, bpte)

outcome is "ok" (read), "one line" (refused with core.errors.BadFile, whose message is one
line naming the file) or "traceback" (anything else escaped the reader). Before each file it
prints {"begin": index}, so that a caller sees which file a death by signal interrupted.
"""

import contextlib
import io
import json
import os
import sys


def _reader(kind):
    """The reader of kind. Each imports only what it needs: the .pte and .ptd readers no torch,
    which a probe would otherwise pay for at every start (and restart after a signal)."""
    if kind == "pte":
        from exporter.formats import pte_inspect

        return lambda path: pte_inspect.format_text(pte_inspect.summarize(path), os.path.basename(path))
    if kind == "ptd":
        from exporter.formats import pte_inspect

        return lambda path: pte_inspect.format_ptd(pte_inspect.summarize_ptd(path), os.path.basename(path))
    if kind == "etvals":
        from exporter.checks import etvals

        return etvals.read
    if kind == "pt2":
        from exporter.formats import pt2

        return pt2.load
    if kind == "bpte":
        from exporter.checks import bundled_cases

        def bpte(path):  # what bundled_program_test does before it hands the bytes to the runtime
            bundled_cases.verify_program(bundled_cases.read_bundle(path)[1], path)

        return bpte
    raise KeyError(kind)


def outcome(error, path):
    """"one line" for a BadFile that names the file in one line, else "traceback"."""
    from exporter.core.errors import BadFile

    text = str(error)
    if isinstance(error, BadFile) and "\n" not in text.strip() and os.path.basename(path) in text:
        return "one line"
    return "traceback"


def main(argv):
    kind, paths = argv[0], argv[1:]
    read = _reader(kind)
    for index, path in enumerate(paths):
        print(json.dumps({"begin": index}), flush=True)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                read(path)
            result = {"outcome": "ok", "message": ""}
        except Exception as e:  # every escape is recorded; the test judges it
            result = {"outcome": outcome(e, path), "message": f"{type(e).__name__}: {e}"}
        print(json.dumps(dict(result, index=index)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
