"""numerics_test(steps = [...]): a sequence of calls on one loaded program against one eager
model, for programs that keep state in mutable buffers (a KV cache).

Both sides carry their own state from call to call: the runtime in the program's buffers
(shared by its methods), the eager module in its own. The test feeds only each step's inputs,
never the state, so a program that loses or misplaces its state fails at the first step that
reads it. Every method a step names is loaded before the first call, as an app does.

The calls' inputs and both sides' outputs come from the test's build action
(actions/numerics_values.py, prepare_steps); the test compares them and runs the native runners.
"""

import sys

from exporter.checks import contract, numerics


def run(config):
    """Compares the steps' outputs, in order; returns (ok, report text)."""
    values = numerics.load_values(config)
    checks = numerics.Checks(config)
    lines = [f"{config.label}: {config.program}, {len(config.steps)} calls in order on one "
             f"loaded program, vs the same calls on {values.reference} ({checks.describe()})"]
    ok = checks.python(values, lines)
    # The same calls in order on one natively loaded program (and on arm64, under qemu).
    ok &= checks.runners(config, values.calls, lines)
    return checks.finish(ok, config, lines)


def main(argv):
    """numerics_test's main for a test with steps."""
    return contract.main(argv, contract.NumericsConfig, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
