"""The C++ app (keyword_spotter) picks the keyword the eager model picks, for seeded clips."""

import os
import re
import subprocess
import tempfile

import torch

from keywords.keyword_net import keyword_net


def test_the_app_picks_the_eager_models_keyword():
    app = os.path.join(os.environ["TEST_SRCDIR"], "consumer", "keywords", "keyword_spotter")
    model = keyword_net(keywords=8)
    generator = torch.Generator().manual_seed(7)
    for _ in range(4):
        clip = torch.randn(1, 40, 100, generator=generator)
        with tempfile.NamedTemporaryFile(suffix=".f32") as f:
            f.write(clip.numpy().tobytes())
            f.flush()
            result = subprocess.run([app, f.name], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        (line,) = [line for line in result.stdout.splitlines() if line.startswith("keyword ")]
        keyword, score = re.match(r"keyword (\d+) \(score (\S+)\)", line).groups()
        with torch.no_grad():
            expected = model(clip)[0]
        assert int(keyword) == int(expected.argmax()), (line, expected)
        assert abs(float(score) - float(expected.max())) < 1e-3, (line, expected)


def test_a_short_clip_file_is_refused_in_one_line():
    app = os.path.join(os.environ["TEST_SRCDIR"], "consumer", "keywords", "keyword_spotter")
    with tempfile.NamedTemporaryFile(suffix=".f32") as f:
        f.write(b"\0" * 16)
        f.flush()
        result = subprocess.run([app, f.name], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip() == f"keyword_spotter: {f.name} does not hold 4000 float32 values"


if __name__ == "__main__":
    import sys

    import pytest

    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
