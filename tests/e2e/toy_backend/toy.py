"""The hooks of the toy backend that tests/e2e/incremental_test.py adds to a copy of the rules, as
CONTRIBUTING.md ("Adding a backend") says a team adds theirs: this module and one record.

Its partitioner gives every operator of a method to one ToyBackend delegate, whose blob is the
names of the partition's operators: a real ExecuTorch delegate that no runtime here runs (its
record says where it would).
"""

import functools


@functools.cache
def _classes():
    """(ToyBackend, ToyPartitioner), defined once, when a lowering first asks for them."""
    from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
    from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
    from executorch.exir.backend.utils import tag_constant_data

    class ToyBackend(BackendDetails):
        @staticmethod
        def preprocess(edge_program, compile_specs):
            names = [str(n.target) for n in edge_program.graph.nodes if n.op == "call_function"]
            return PreprocessResult(processed_bytes=("toy:" + " ".join(names)).encode())

    class ToyPartitioner(Partitioner):
        def __init__(self):
            super().__init__()
            self.delegation_spec = DelegationSpec(ToyBackend.__name__, [])

        def partition(self, exported_program):
            for node in exported_program.graph_module.graph.nodes:
                if node.op == "call_function":
                    node.meta["delegation_tag"] = "toy"
            tag_constant_data(exported_program)
            return PartitionResult(tagged_exported_program=exported_program,
                                   partition_tags={"toy": self.delegation_spec})

    return ToyBackend, ToyPartitioner


def partitioner(_options):
    return _classes()[1]()
