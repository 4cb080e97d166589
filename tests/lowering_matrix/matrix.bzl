"""The lowering matrix: every shape_spec feature, exported, lowered for each backend and run.

ROWS is the one table. Each row becomes a torch_model, a shape_spec and a torch_export, then per
backend an executorch_program and a numerics_test (the .pte in the ExecuTorch runtime against
eager at every dim's min, example and max). A row that ExecuTorch cannot lower or run says so in
`fails`: {backend: [needles of the one-line error]}; that program is tagged manual and
//tests/lowering_matrix:matrix_errors_test builds it and checks the message.
"""

load(
    "//rules:defs.bzl",
    "AUTO",
    "DYNAMIC",
    "STATIC",
    "dim",
    "executorch_program",
    "numerics_test",
    "shape_spec",
    "tensor",
    "torch_export",
    "torch_model",
)

BACKENDS = {
    "portable": [],
    "xnnpack": ["xnnpack"],
}

def _row(feature, model, inputs, dims = {}, hint = None, fails = {}, srcs = ["models.py"]):
    """model: a class in srcs (models.py), "module:callable" in srcs, or a torch_model label."""
    return struct(feature = feature, model = model, srcs = srcs, inputs = inputs, dims = dims, hint = hint, fails = fails)

def _both(needles):
    return {backend: needles for backend in BACKENDS}

# ExecuTorch (1.4.1, 1.5.1) plans memory for every input's largest size. A hint has no max, so a size
# that stays dynamic under one would be planned for its traced size only: the build refuses it.
def _unbounded_hint(hint, more = ""):
    return _both([
        'inputs["x"] axis 0 (its {} hint) {}'.format(hint, more).strip(),
        "has no max in shape_spec",
        "the .pte would accept only the traced size 6",
        'name that axis as a dim with a max there: write "n" at it and add dims = {"n": dim(max = N)}',
    ])

ROWS = {
    "shared_dim": _row(
        "a named dim shared between inputs",
        "SharedDim",
        {"x": tensor(["n", 4]), "y": tensor(["n", 4])},
        {"n": dim(min = 1, max = 16)},
    ),
    "derived_twice": _row(
        "a derived size 2*d (the tutorial's Named case), an open min",
        "//examples/tutorial:named",
        {"x": tensor(["dx", 3]), "y": tensor(["2*dx", "dh"])},
        {"dx": dim(min = 4, max = 256), "dh": dim(max = 512)},
    ),
    "derived_plus_one": _row(
        "a derived size d+1",
        "PlusOne",
        {"x": tensor(["d", 4]), "y": tensor(["d+1", 4])},
        {"d": dim(min = 1, max = 32)},
    ),
    "derived_affine": _row(
        "a derived size 4*d-2",
        "Affine",
        {"x": tensor(["d", 4]), "y": tensor(["4*d-2", 4])},
        {"d": dim(min = 1, max = 16)},
    ),
    "open_max": _row(
        "a dim with no max",
        "Linear",
        {"x": tensor(["n", 8])},
        {"n": dim(min = 1)},
        fails = _both([
            'inputs["x"] axis 0 (dim "n") has no max in shape_spec //tests/lowering_matrix:open_max_spec',
            "accept only the traced size 2",
            'give dims["n"] a max there',
        ]),
    ),
    "hint_auto_specialised": _row(
        "an AUTO hint on an axis the model fixes (it specialises)",
        "FixedWidth",
        {"x": tensor([6, 5], hint = {1: AUTO})},
    ),
    "hint_static_spec": _row(
        "a STATIC hint for the whole spec",
        "RowSums",
        {"x": tensor([6, 5])},
        hint = STATIC,
    ),
    "hint_auto_axis": _row(
        "an AUTO hint on one axis",
        "RowSums",
        {"x": tensor([6, 5], hint = {0: AUTO})},
        fails = _unbounded_hint("AUTO"),
    ),
    "hint_dynamic_axis": _row(
        "a DYNAMIC hint on one axis",
        "RowSums",
        {"x": tensor([6, 5], hint = [DYNAMIC, None])},
        fails = _unbounded_hint("DYNAMIC"),
    ),
    "hint_static_axis": _row(
        "a STATIC hint on one axis under a spec-wide DYNAMIC (axis 0 stays DYNAMIC)",
        "RowSums",
        {"x": tensor([6, 5], hint = {1: STATIC})},
        hint = DYNAMIC,
        fails = _unbounded_hint("DYNAMIC"),
    ),
    "hint_per_input": _row(
        "a DYNAMIC hint for a whole input",
        "RowSums",
        {"x": tensor([6, 5], hint = DYNAMIC)},
        fails = _unbounded_hint("DYNAMIC", more = "(and 1 more sizes)"),
    ),
    "hint_per_spec": _row(
        "an AUTO hint for the whole spec (every size stays dynamic)",
        "TwoInputs",
        {"x": tensor([6, 5]), "y": tensor([4, 3])},
        hint = AUTO,
        fails = _unbounded_hint("AUTO", more = "(and 3 more sizes)"),
    ),
    "nested": _row(
        "nested lists, tuples and dicts",
        "exporter.tests.spec_models:Nested",
        {
            "xs": [tensor(["n", 3]), tensor(["n", 4])],
            "table": {"w": tensor(["n", 3]), 3: tensor([3])},
            "pair": (tensor(["n", 3]), tensor(["n", 3])),
        },
        {"n": dim(min = 1, max = 16)},
        srcs = ["//exporter/tests:spec_models.py"],
    ),
    "non_tensor": _row(
        "int, float, bool, str and None inputs",
        "exporter.tests.spec_models:NonTensor",
        {"x": tensor(["n", 4]), "repeats": 2, "scale": 0.5, "negate": True, "mode": "relu", "extra": None},
        {"n": dim(min = 1, max = 16)},
        srcs = ["//exporter/tests:spec_models.py"],
    ),
    "keywords": _row(
        "keyword inputs",
        "Keywords",
        {"x": tensor(["n", 4]), "mask": tensor(["n", 4]), "scale": tensor([4])},
        {"n": dim(min = 1, max = 16)},
    ),
    "fill": _row(
        "a tensor traced with fill",
        "Filled",
        {"x": tensor(["n", 4]), "offset": tensor([], fill = 3)},
        {"n": dim(min = 1, max = 16)},
    ),
    "cond_on_dim": _row(
        "torch.cond on a dynamic dim",
        "//examples/tutorial:shape_cond",
        {"x": tensor(["n", 3])},
        {"n": dim(min = 2, max = 64)},
    ),
    "checked_item": _row(
        ".item() bounded with torch._check",
        "//examples/tutorial:checked_item",
        {"x": tensor([], dtype = "int64", fill = 2), "y": tensor(["n", 3])},
        {"n": dim(min = 2, max = 64)},
    ),
}

# Programs that ExecuTorch cannot lower, from elsewhere in the repository: each must fail in one
# line that names the operator, where the model calls it, and a fix this target does not have.
LOWERING_ERRORS = {
    "while_loop_portable_pte": struct(
        exported = "//examples/tutorial:while_ep",
        backends = [],
        needles = [
            "ExecuTorch cannot run torch.ops.higher_order.while_loop in examples.tutorial.control_flow.WhileModel",
            "rewrite that part of the model without while_loop",
        ],
        absent = [],
    ),
    "custom_op_portable_pte": struct(
        exported = "//examples/tutorial:custom_op_ep",  # ir = "core_aten" keeps the custom op
        backends = [],
        needles = [
            "//examples/tutorial:custom_op_ep calls tutorial.scaled_sin.default, which ExecuTorch has no kernel for",
            'set decompose = ["tutorial.scaled_sin"] on torch_export //examples/tutorial:custom_op_ep',
        ],
        absent = ['ir = "core_aten"', 'ir = "inference"'],
    ),
    "two_dynamic_dims_xnnpack_pte": struct(
        exported = "//models/transformer:transformer_batch_ep",  # batch and seq both dynamic
        backends = ["xnnpack"],
        needles = [
            "the XNNPACK delegate cannot take it at aten.unsqueeze_copy.default in models.transformer.encoder.TransformerEncoder",
            "XNNPACK reshape only supports 1 dynamic dimension",
            "set backends = [] on //tests/lowering_matrix:two_dynamic_dims_xnnpack_pte",
            "make all but one of the input's dynamic sizes static in //models/specs:token_batch",
        ],
        absent = [],
    ),
}

def _expected_failures_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".json")
    ctx.actions.write(out, ctx.attr.failures_json)
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

_expected_failures = rule(
    implementation = _expected_failures_impl,
    doc = "Writes the table's expected failures as JSON, for the test that builds them.",
    attrs = {"failures_json": attr.string(mandatory = True, doc = "{label: {needles, absent}} as JSON.")},
)

def _label(name):
    return "//{}:{}".format(native.package_name(), name)

def lowering_matrix(name, rows = ROWS, backends = BACKENDS, errors = LOWERING_ERRORS):
    """Declares every row's targets (see the module docstring) and the expected failures.

    Args:
      name: a rule that writes <name>.json: {program label: {"needles", "absent"}} of the
        programs that must fail, for //tests/specs:bad_specs_test.
      rows: the table, {row name: _row(...)}.
      backends: {backend name: executorch_program backends}.
      errors: {program name: struct(exported, backends, needles, absent)}.
    """
    failures = {}
    for row_name, row in rows.items():
        model = row.model
        if not model.startswith("//"):
            entry = model if ":" in model else "tests.lowering_matrix.models:" + model
            torch_model(name = row_name, srcs = row.srcs, entry = entry)
            model = ":" + row_name
        shape_spec(name = row_name + "_spec", inputs = row.inputs, dims = row.dims, hint = row.hint)
        torch_export(name = row_name + "_ep", model = model, shapes = ":{}_spec".format(row_name))
        for backend, partitioners in backends.items():
            program = "{}_{}_pte".format(row_name, backend)
            fails = backend in row.fails
            executorch_program(
                name = program,
                backends = partitioners,
                exported = ":{}_ep".format(row_name),
                tags = ["manual"] if fails else [],
            )
            if fails:
                failures[_label(program)] = {"needles": row.fails[backend], "absent": []}
            else:
                numerics_test(name = "{}_{}_numerics_test".format(row_name, backend), program = ":" + program)
    for program, error in errors.items():
        executorch_program(name = program, backends = error.backends, exported = error.exported, tags = ["manual"])
        failures[_label(program)] = {"needles": error.needles, "absent": error.absent}
    _expected_failures(name = name, failures_json = json.encode_indent(failures) + "\n")
