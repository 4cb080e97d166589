"""What every layer shares: shape specs and their ranges, model loading, mutable buffers, kernel
lists, operator and dtype names, manifests, determinism, and errors with their explanations.

May import only core (and torch, ExecuTorch and the other libraries of the toolchain).
"""
