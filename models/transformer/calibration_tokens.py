"""Calibration rows for the encoder's quantized programs: seeded token ids and padding masks,
drawn as numerics_test draws its inputs (ids 0 to 7, random masks), with another seed."""

import torch


def token_rows(count=8, seq=32, seed=1):
    """`count` batches of one row: {"input_ids": int64[1, seq], "attention_mask": bool[1, seq]}."""
    generator = torch.Generator().manual_seed(seed)
    return [{"input_ids": torch.randint(0, 8, (1, seq), generator=generator),
             "attention_mask": torch.randint(0, 2, (1, seq), generator=generator).bool()}
            for _ in range(count)]
