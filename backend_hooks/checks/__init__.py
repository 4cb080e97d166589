"""The backends' hooks that only the test runners use (no build action imports them, so they are
no part of the toolchain's sources): a reference runtime's runner (a record's ReferenceRuntime),
and the reader of a backend's delegates that delegate_structure_test runs (a record's
structure_check).

A reference runtime's module has run_calls(config, calls) -> each call's outputs, and Unsupported,
the ValueError it raises in one line for what it cannot run. A structure reader has read(payload)
-> (input shapes, output shapes) of one delegate's blob, KIND (what a blob is) and LOADER (what
reads it), for the messages.

May import exporter.core and exporter.formats.
"""
