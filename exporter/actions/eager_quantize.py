"""Weight quantization of the eager model before torch.export (torch_export's `quantize`), with
torchao's quantize_: the schemes ExecuTorch's LLM flow uses. It belongs before export because a
loaded .pt2 has no nn.Linear left to quantize; XNNPACK then takes the quantized linears whole.

    "8da4w"   int8 dynamic activations, int4 weights in groups of group_size (ExecuTorch's 8da4w)
    "8da8w"   the same with int8 weights

Every nn.Linear whose input width the group size divides is quantized; the others stay float,
and the manifest lists them with their width.

torch_export's `embedding_quantize` ("bits,group", as ExecuTorch's export_llm spells it) swaps every
nn.Embedding for ExecuTorch's own quantized table (its LLM recipe's transform, from the wheel), which
runs as quantized_decomposed::embedding_<bits>bit in the runtime's quantized kernels.
"""

import contextlib
import math
import sys

import torch

from exporter.core.errors import UserError

SCHEMES = {"8da4w": torch.int4, "8da8w": torch.int8}


def apply(module, scheme, group_size, label):
    """Quantizes module's linears in place; returns the manifest's "eager_quantization" record."""
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.quantization.granularity import PerGroup

    quantized, skipped = [], {}
    for name, child in module.named_modules():
        if isinstance(child, torch.nn.Linear):
            if child.in_features % group_size:
                skipped[name] = f"input width {child.in_features}"
            else:
                quantized.append(name)
    if not quantized:
        widths = sorted({int(w.split()[-1]) for w in skipped.values()})
        if not widths:
            raise UserError(f"torch_export {label}: quantize = {scheme!r} fits no layer: the model has no "
                            f"nn.Linear; remove quantize")
        raise UserError(f"torch_export {label}: quantize = {scheme!r} with group_size = {group_size} fits no "
                        f"linear layer of the model (input widths {widths}); set group_size to a divisor of "
                        f"those widths, e.g. {math.gcd(*widths)}, or remove quantize")
    config = Int8DynamicActivationIntxWeightConfig(weight_dtype=SCHEMES[scheme], weight_granularity=PerGroup(group_size))
    chosen = set(quantized)
    with torch.no_grad():
        quantize_(module, config, filter_fn=lambda child, name: name in chosen)
    return {"scheme": scheme, "group_size": group_size, "layers": len(quantized), "float_layers": skipped}


def quantize_embeddings(module, spec, label):
    """Replaces module's nn.Embedding tables by ExecuTorch's quantized ones (spec "bits,group"; group
    0 is one scale per row); returns the manifest's "embedding_quantization" record."""
    from executorch.examples.models.llama.source_transformation.quantize import get_quant_embedding_transform

    bits, group = (int(part) for part in spec.split(","))
    widths = {name: child.embedding_dim for name, child in module.named_modules() if isinstance(child, torch.nn.Embedding)}
    if not widths:
        raise UserError(f"torch_export {label}: embedding_quantize = {spec!r} fits no layer: the model has no "
                        f"nn.Embedding; remove embedding_quantize")
    misfits = sorted(name for name, width in widths.items() if group and width % group)
    if misfits:
        raise UserError(f"torch_export {label}: embedding_quantize = {spec!r}: group {group} does not divide the "
                        f"width of {', '.join(misfits)} ({sorted(set(widths.values()))}); set the group to a "
                        f"divisor of it, or 0 for one scale per row")
    with torch.no_grad(), contextlib.redirect_stdout(sys.stderr):  # it prints each table; stdout is the worker's
        get_quant_embedding_transform(spec)(module)
    return {"scheme": spec, "bits": bits, "group_size": group, "tables": sorted(widths)}
