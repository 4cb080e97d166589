"""Writes a tiktoken file as large as Llama 3's (128,000 ranks; ExecuTorch's runner adds the 256
special tokens, 128,256 in all), for //models/llm:hf_llama_1b_llm, whose seeded model may generate
any of those ids. Each token is one to three printable ASCII characters, so that every id
decodes to text.

    python3 make_tiktoken_vocab.py OUT
"""

import base64
import itertools
import sys

RANKS = 128000
PRINTABLE = [chr(c) for c in range(32, 127)]


def tokens():
    """The first RANKS strings of one, two, then three printable characters, in that order."""
    strings = (("".join(chars) for chars in itertools.product(PRINTABLE, repeat=n)) for n in (1, 2, 3))
    return list(itertools.islice(itertools.chain.from_iterable(strings), RANKS))


def write(path):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for rank, token in enumerate(tokens()):
            f.write(f"{base64.b64encode(token.encode('ascii')).decode('ascii')} {rank}\n")


if __name__ == "__main__":
    write(sys.argv[1])
