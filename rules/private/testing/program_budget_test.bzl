"""program_budget_test: size and planned-memory limits of a .pte, with a golden to catch growth."""

load("//exporter:exporter_facts.bzl", "BACKENDS", "BACKEND_RECORDS")
load("//rules:providers.bzl", "ExecuTorchProgramInfo")
load("//rules/private/lib:attr_checks.bzl", "check_method")
load("//rules/private/lib:byte_sizes.bzl", "parse_percent", "parse_size")
load("//rules/private/lib:exporter_py.bzl", "EXPORTER_MODULES")
load(":config_test.bzl", "GOLDEN_ATTRS", "config_target_attrs", "config_test_attrs", "config_test_rule", "config_test_update", "test_prefix", "write_test_config")
load(":instruction_counts.bzl", "INSTRUCTION_ATTRS", "instruction_counts", "instruction_limits")

def _size(where, attr, value):
    parsed = parse_size(value)
    if parsed.error:
        fail("{}{} = {} {}".format(where, attr, repr(value), parsed.error))
    return parsed.bytes

def _delegate_limits(where, given, program):
    """{backend: bytes} of max_delegate_bytes, each backend one the program is lowered for."""
    delegates = given.get("max_delegate_bytes") or {}
    if type(delegates) != "dict":
        fail(where + "max_delegate_bytes must be a dict of backend name to size, e.g. {\"xnnpack\": \"4MiB\"}")
    limits = {}
    for backend, value in delegates.items():
        if backend not in program.backends:
            fail(where + "max_delegate_bytes names backend {}, but {} is lowered for {}; name one of those".format(repr(backend), program.label, program.backends))
        limits[backend] = _size(where, "max_delegate_bytes[{}]".format(repr(backend)), value)
    return limits

def _number(where, attr, value, low, high, example):
    """A number in [low, high] (an int, a float or a string such as "0.9"), or fail."""
    text = str(value).strip() if type(value) in ("int", "float", "string") else ""
    whole, _, fraction = text.partition(".")
    if not whole.isdigit() or (fraction and not fraction.isdigit()) or float(text) < low or float(text) > high:
        fail("{}{} = {} is not a number from {} to {}; write e.g. {}".format(where, attr, repr(value), low, high, example))
    return float(text)

# Vela's figures (in the manifest of a program of a backend whose record has vela_figures), by
# attribute: {attribute: Limits' field}.
_VELA_BACKENDS = [name for name in BACKENDS if BACKEND_RECORDS[name]["vela_figures"]]
_VELA_LIMITS = {"max_sram_bytes": "sram_bytes", "max_flash_bytes": "flash_bytes", "min_npu_fraction": "min_npu_fraction", "max_estimated_ms": "estimated_ms"}

def _vela_limits(where, given, program):
    """{Limits' field: value} of the Vela limits given; each needs a program of _VELA_BACKENDS."""
    limits = {}
    for attr, field in _VELA_LIMITS.items():
        value = given.get(attr)
        if value == None:
            continue
        if attr == "min_npu_fraction":
            limits[field] = _number(where, attr, value, 0, 1, "0.9")
        elif attr == "max_estimated_ms":
            limits[field] = _number(where, attr, value, 0, 3600000, "5")
        else:
            limits[field] = _size(where, attr, value)
        if not [name for name in program.backends if name in _VELA_BACKENDS]:
            fail(where + "{} bounds Vela's figures, which only {} program has, but {} is lowered for {}; remove {}, or budget a program with backends = [{}(...)]".format(attr, _TITLES, program.label, program.backends, attr, _VELA_BACKENDS[0]))
    return limits

# "an Ethos-U": the backends with Vela's figures, as the message names them.
_TITLES = " or ".join(["{} {}".format("an" if BACKEND_RECORDS[name]["title"][0] in "AEIOU" else "a", BACKEND_RECORDS[name]["title"]) for name in _VELA_BACKENDS])

def _limits(ctx, where, program):
    """{pte_bytes, ptd_bytes, planned_bytes: {method: bytes}} from the macro's JSON, checked."""
    given = json.decode(ctx.attr.limits_json)
    limits = {"pte_bytes": None, "ptd_bytes": None, "planned_bytes": {}, "delegate_bytes": _delegate_limits(where, given, program)}
    limits.update(_vela_limits(where, given, program))
    if given.get("max_pte_bytes") != None:
        limits["pte_bytes"] = _size(where, "max_pte_bytes", given["max_pte_bytes"])
    if given.get("max_ptd_bytes") != None:
        if not program.ptd:
            fail(where + "max_ptd_bytes is set, but {} keeps its weights in the .pte (no .ptd); remove max_ptd_bytes, or set weights = \"external\" on the program".format(program.label))
        limits["ptd_bytes"] = _size(where, "max_ptd_bytes", given["max_ptd_bytes"])
    planned = given.get("max_planned_bytes") or {}
    if type(planned) != "dict":
        fail(where + "max_planned_bytes must be a dict of method name to size, e.g. {\"forward\": \"4MiB\"}")
    for method, value in planned.items():
        check_method(where, "max_planned_bytes names method", method, program)
        limits["planned_bytes"][method] = _size(where, "max_planned_bytes[{}]".format(repr(method)), value)
    instructions = instruction_limits(where, given, program)
    if instructions:  # a key only then: the configs of budgets without it keep their bytes
        limits["instructions"] = instructions
    return limits

def _growth(ctx, where):
    """The allowed growth in percent, or None; checked against golden."""
    value = json.decode(ctx.attr.limits_json).get("max_growth_percent")
    if value == None:
        if ctx.attr.golden_path:
            fail(where + "golden is set without max_growth_percent; add max_growth_percent = 2 (say), or remove golden")
        return None
    if not ctx.attr.golden_path:
        fail(where + "max_growth_percent needs a golden to grow from; add golden = \"<program>.budget.json\" and run the test's .update target")
    parsed = parse_percent(value)
    if parsed.error:
        fail("{}max_growth_percent = {} {}".format(where, repr(value), parsed.error))
    return parsed.percent

def _budget_test_impl(ctx):
    where = test_prefix("program_budget_test", ctx)
    program = ctx.attr.program[ExecuTorchProgramInfo]
    limits = _limits(ctx, where, program)
    growth = _growth(ctx, where)
    vela = [f for f in _VELA_LIMITS.values() if f in limits]
    if limits["pte_bytes"] == None and limits["ptd_bytes"] == None and not limits["planned_bytes"] and not limits["delegate_bytes"] and not vela and not limits.get("instructions") and growth == None:
        fail(where + "sets no budget; set max_pte_bytes = \"4MiB\", max_planned_bytes = {\"forward\": \"1MiB\"}, max_instructions = {\"forward\": \"40M\"}, or golden with max_growth_percent")
    config = {
        "kind": "budget",
        "label": ctx.attr.test_label,
        "program": str(program.label),
        "manifest": program.manifest.short_path,
        "pte": program.pte.short_path,
        "ptd": program.ptd.short_path if program.ptd else None,
        "methods": sorted(program.methods.keys()),
        "limits": limits,
        "max_growth_percent": growth,
        "golden": ctx.attr.golden_path or None,
        "update_target": ctx.attr.update_target,
    }
    files = [program.manifest, program.pte] + ([program.ptd] if program.ptd else [])
    golden_files = [program.manifest]
    if limits.get("instructions"):
        counts = instruction_counts(ctx, program, sorted(limits["instructions"].keys()))
        config["instructions"] = counts.short_path
        files, golden_files = files + [counts], golden_files + [counts]
    return write_test_config(ctx, config, files, golden_files = golden_files)

_budget_test = config_test_rule(
    implementation = _budget_test_impl,
    doc = "The rule behind program_budget_test: it checks the limits, counts the instructions of max_instructions, and writes the JSON config that exporter/checks/budget.py reads and the launcher that runs it.",
    exporter = True,
    attrs = config_test_attrs({
        "program": attr.label(mandatory = True, providers = [ExecuTorchProgramInfo], doc = "The executorch_program to budget."),
        "limits_json": attr.string(default = "{}", doc = "The macro's limits as JSON (set by the macro)."),
    }, GOLDEN_ATTRS, INSTRUCTION_ATTRS),
)

def program_budget_test(
        name,
        program,
        max_pte_bytes = None,
        max_ptd_bytes = None,
        max_planned_bytes = {},
        max_delegate_bytes = {},
        max_sram_bytes = None,
        max_flash_bytes = None,
        min_npu_fraction = None,
        max_estimated_ms = None,
        max_instructions = {},
        max_growth_percent = None,
        golden = None,
        **kwargs):
    """Tests that a program stays within its size and memory budget, and does not creep up.

    Fails when the .pte, the .ptd (external weights), a method's planned memory or instructions
    per call, a backend's delegate blobs or the Vela figures of a program Vela compiled are over
    their limit, or grew more than `max_growth_percent` since `golden`. The report prints every
    figure and the biggest contributors; the sizes come from the program's manifest (<name>.pte.json).

    Sizes are ints (bytes) or strings with a unit: B, kB, MB, GB are powers of 1000, KiB, MiB,
    GiB powers of 1024 ("48MiB", "1.5MB"); fractions of a byte are dropped; a bad one fails.

    With `golden`, also declares `<name>.update` (alias `<name>_update`), whose `bazel run` records
    the current figures; graph_snapshot_updates collects it like a snapshot test's.

    Args:
      name: the test's name.
      program: an executorch_program target.
      max_pte_bytes: limit on the .pte file's size.
      max_ptd_bytes: limit on the .ptd file's size, for a program with weights = "external".
      max_planned_bytes: {method name: limit} on the memory the runtime plans for the method
        (its activations and inputs outside delegates), e.g. {"forward": "20MiB"}.
      max_delegate_bytes: {backend: limit} on the bytes of the delegate blobs a backend of the
        program holds, over its methods, e.g. {"xnnpack": "2MiB"} (docs/backends.md). XNNPACK
        keeps its weights outside its blobs, as named data; some backends keep them inside.
      max_sram_bytes: limit on the SRAM Vela plans, e.g. "64KiB". This and the next three need
        a backend that Vela compiles for (docs/backends.md, "Arm").
      max_flash_bytes: limit on the flash (on- and off-chip) Vela plans, e.g. "256KiB".
      min_npu_fraction: the least share of Vela's operators on the NPU, 0 to 1, e.g. 1.
      max_estimated_ms: limit on Vela's estimated time at the system config, in ms, e.g. 5.
      max_instructions: {method name: limit} on one call's instructions in the native runner,
        counted by callgrind, e.g. {"forward": "40M"} (docs/deployment.md, "Instruction budgets").
      max_growth_percent: how much each figure may grow past the golden's, in percent, e.g. 2.
        Needs golden; a figure that shrank passes, and the report suggests the update.
      golden: the golden file, relative to this package, e.g. "resnet_pte.budget.json".
      **kwargs: passed to the test (tags, size, timeout, ...).
    """
    limits = dict(max_pte_bytes = max_pte_bytes, max_ptd_bytes = max_ptd_bytes, max_planned_bytes = max_planned_bytes, max_delegate_bytes = max_delegate_bytes, max_instructions = max_instructions)
    limits.update(max_sram_bytes = max_sram_bytes, max_flash_bytes = max_flash_bytes, min_npu_fraction = min_npu_fraction, max_estimated_ms = max_estimated_ms, max_growth_percent = max_growth_percent)
    kwargs.setdefault("size", "small")  # it reads a manifest and walks one flatbuffer
    _budget_test(
        program = program,
        limits_json = json.encode({k: v for k, v in limits.items() if v != None}),
        instructions_file = name + ".instructions.json" if max_instructions else None,
        **config_target_attrs(name, EXPORTER_MODULES["budget"], kwargs, golden = golden, updatable = True)
    )
    config_test_update(name, golden, kwargs)
