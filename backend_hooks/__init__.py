"""Each backend's hooks: the code that runs ExecuTorch's own for one backend, beside its record.

A backend's record (exporter/core/backends.py) says what it is; its hooks module, `<name>.py` here
(the record's `hooks`), does what only code can: it builds the partitioner, changes what the
backend's lowering must change, and reads what it leaves. The exporter imports a hooks module only
for a program that uses the backend (and the default backend's in a worker's warm-up), so a module
imports ExecuTorch and the backend's packages inside its functions, not at its top. Every hook but
partitioner is optional:

    partitioner(options)            the partitioner of a lowering for the backend, from its
                                    options' dataclass (None for a backend without options);
                                    None for a backend that delegates nothing
    patches(options)                a context manager around every lowering for it: what must
                                    change in the backend's own code so that its bytes are what
                                    the options say, the same on every run
    recording(found)                a context manager around the lowering action: what it keeps
                                    of the lowering, in the dict `found` (shared with the other
                                    backends of the program: a key already there is kept)
    manifest_record(found)          {manifest key: value} of what recording kept; {} keeps the
                                    manifest's bytes
    write_outputs(found, outputs, label)   writes the files of the record's outputs ({role:
                                    path}) for the program `label`
    per_machine_record(pte)         for a per-machine backend: the manifest's "per_machine", what
                                    the .pte's bytes are compiled for
    quantizer(settings)             for a record with a quantizer: its PT2E quantizer, from the
                                    scheme's settings (actions/quantize.py's SCHEMES)
    warm_up()                       what a warm worker builds ahead for it

The test runners' hooks, which no build action needs, are in backend_hooks/checks/. CONTRIBUTING.md,
"Adding a backend", says what else a backend needs.

May import exporter.core and exporter.formats (and ExecuTorch, inside functions); checks/ also
its own modules; nothing in exporter/ imports a module here but through a record.
"""
