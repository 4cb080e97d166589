"""Real torch.export failures, translated into one line of shape_spec edits and model fixes."""

from types import SimpleNamespace

import pytest

from exporter.core.errors import UserError
from exporter.tests.export_harness import config_for, has_output, run_export, tensor

ENTRY = "exporter.tests.spec_models:"
TUTORIAL = "examples.tutorial."


def failure(tmp_path, entry, inputs, dims=None, **options):
    config = config_for(tmp_path, entry, inputs, dims, **options)
    with pytest.raises(UserError) as error:
        run_export(config)
    message = str(error.value)
    assert "\n" not in message
    assert not has_output(config)
    return message


def test_related_dims_become_a_derived_size(tmp_path):
    message = failure(
        tmp_path, ENTRY + "Shifted",
        {"x": tensor(["dx"]), "y": tensor(["dy"]), "z": tensor(["2*dy"])},
        {"dx": {"min": 4, "max": 256, "example": 4}, "dy": {"min": None, "max": None, "example": 5}},
    )
    assert message.startswith("shape_spec //test:spec does not fit model //test:model: ")
    assert 'dy = inputs["y"] axis 0 must always be related to the values of dx = inputs["x"] axis 0' in message
    assert ('Change the shape_spec: inputs["y"] axis 0 becomes "dx+1"; '
            'inputs["z"] axis 0 becomes "2*dx+2"; remove dims["dy"]') in message


def test_new_root_dim_for_a_multiple(tmp_path):
    message = failure(tmp_path, ENTRY + "Reshape4", {"x": tensor(["dx"])}, {"dx": {"min": None, "max": 100, "example": 8}})
    assert 'add dims["_dx"] = dim(min = 1, max = 25)' in message
    assert 'inputs["x"] axis 0 becomes "4*_dx"; remove dims["dx"]' in message


def test_range_fix_keeps_the_other_bound(tmp_path):
    message = failure(tmp_path, TUTORIAL + "derived:Bounded", {"x": tensor(["n", 3])},
                      {"n": {"min": 3, "max": 1024, "example": 4}})
    assert 'Change the shape_spec: dims["n"] = dim(min = 3, max = 512)' in message


def test_named_dim_that_specialises(tmp_path):
    message = failure(tmp_path, ENTRY + "Reshape4", {"x": tensor(["dx", 1])}, {"dx": {"min": 2, "max": 8, "example": 4}})
    assert "the model needs dx to be exactly 4" in message or 'inputs["x"] axis 0 becomes 4' in message
    assert "mark_dynamic" not in message


def test_data_dependent_branch_points_at_the_line(tmp_path):
    message = failure(tmp_path, TUTORIAL + "data_dependent:UncheckedBranch",
                      {"x": tensor([], "int64", fill=3), "y": tensor([4])})
    assert "Could not guard on data-dependent expression u0 > 2" in message
    assert "examples/tutorial/data_dependent.py:21 (if n > 2:)" in message
    assert "torch._check" in message and "torch.cond" in message


def test_strict_graph_break_points_to_strict_false(tmp_path):
    message = failure(tmp_path, TUTORIAL + "non_strict:UsesId", {"x": tensor([3, 3])}, strict=True)
    assert "strict torch.export (TorchDynamo) cannot trace model //test:model" in message
    assert "examples/tutorial/non_strict.py:11 (return x + (id(x) > 0))" in message
    assert "Set strict = False on torch_export //test:ep" in message


def test_other_errors_name_the_user_line_and_the_shapes(tmp_path):
    message = failure(tmp_path, ENTRY + "Fails", {"x": tensor(["n", 3], "float16")}, {"n": {"min": 2, "max": 8, "example": 2}})
    assert "ValueError: this model refuses to be traced" in message
    assert "exporter/tests/spec_models.py:" in message and "raise ValueError" in message
    assert 'x ["n", 3] float16' in message


def test_specialised_dynamic_hint_is_an_error(tmp_path):
    message = failure(tmp_path, ENTRY + "FourColumns", {"x": tensor([8, 4], hints=["STATIC", "DYNAMIC"])})
    assert 'the model needs inputs["x"] axis 1 to be exactly 4' in message
    assert 'make inputs["x"] axis 1 static: write 4 there' in message


@pytest.mark.parametrize("requested", ["n", "2*n", "DYNAMIC"])
def test_any_specialised_request_but_auto_is_refused(requested):
    """The exporter's own check, for when torch lets a requested dim become a constant."""
    from exporter.actions import export

    record = {"input": 'inputs["x"]', "axis": 0, "requested": requested, "specialised": 4}
    config = SimpleNamespace(spec_label="//t:spec", model=SimpleNamespace(label="//t:model"))
    with pytest.raises(UserError, match=r'inputs\["x"\] axis 0 to be dynamic .*specialised it to 4'):
        export._check_specialised([record], config)
    export._check_specialised([dict(record, requested="AUTO")], config)
