"""CI's two tiers. Every CI run (.ci/run: `bazel test //...`) runs the every-build tier; the
nightly tier (.ci/nightly) runs it and the targets tagged NIGHTLY.

The every-build tier checks every rule, backend, runtime and promise at least once, so that it
fits CI's 30 minutes on 2 cores. A target joins the nightly tier when the every-build tier
already checks its path and it adds breadth, not a new path: a second program on the same
backend, a larger model of a kind already checked, a matrix's extra rows (CONTRIBUTING.md,
"CI's two tiers").
"""

# `manual` keeps a target out of `//...` (explicit labels still build it); `nightly` is what
# .ci/nightly queries. zoo_package checks the zoo's rule over nightly programs in a nightly test.
NIGHTLY = [
    "manual",
    "nightly",
]
