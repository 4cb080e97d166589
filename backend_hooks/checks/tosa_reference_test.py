"""The tosa_reference runtime's own refusals, each in one line, on programs that are not TOSA's:
a delegate of another backend, and a CPU operator it does not run. Neither needs tosa-tools,
which the runtime imports only to run a TOSA graph (tests/backends:arm_test runs real ones)."""

import numpy as np
import pytest

from backend_hooks.checks import tosa_reference
from exporter.checks import contract, numerics

PORTABLE = "exporter/tests/tiny_portable_pte.pte"
XNNPACK = "exporter/tests/tiny_xnnpack_pte.pte"
SHAPED = ", ".join(sorted(tosa_reference.SHAPED))


def test_a_program_with_another_delegate_is_refused_in_one_line():
    with pytest.raises(tosa_reference.Unsupported) as caught:
        tosa_reference.Method(XNNPACK, "forward")
    assert str(caught.value) == ("method forward has a XnnpackBackend delegate; the tosa_reference runtime runs "
                                 "TOSABackend and EthosUBackend delegates only")


def test_an_operator_it_does_not_run_on_the_cpu_is_refused_in_one_line():
    method = tosa_reference.Method(PORTABLE, "forward")
    feed = [np.ones((2, 4), np.float32), np.ones(2, np.int64)]
    with pytest.raises(tosa_reference.Unsupported) as caught:
        method.call(feed)
    operator, _, rest = str(caught.value).partition(" ")
    # The first of the portable program's operators, which are all ATen's.
    assert operator in method.operators and operator.startswith("aten::")
    assert rest == (f"runs outside the TOSA delegate; the tosa_reference runtime runs only quantize, dequantize "
                    f"and {SHAPED} there")


def test_numerics_test_reports_the_refusal_as_the_run_s_one_failing_line():
    config = contract.NumericsConfig.from_json({
        "label": "//pkg:numerics_test", "program": "//pkg:program", "runtimes": ["tosa_reference"],
        "pte": XNNPACK})
    lines: list[str] = []
    assert not numerics.Checks(config).reference(config, "tosa_reference", [], lines)
    assert lines == ["  tosa_reference runtime: FAIL, method forward has a XnnpackBackend delegate; the "
                     "tosa_reference runtime runs TOSABackend and EthosUBackend delegates only"]
