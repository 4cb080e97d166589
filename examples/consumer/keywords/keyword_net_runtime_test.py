"""//keywords:keyword_net_pte runs in the ExecuTorch runtime at every clip count and matches
the eager model; program_info read the rules' providers across repositories."""

import json
import os
import unittest

import torch
from executorch.runtime import Runtime

from keywords.keyword_net import keyword_net


def runfile(rel):
    # py_test runs in its runfiles tree, in the folder of this repository ("consumer").
    path = os.path.join(os.environ["TEST_SRCDIR"], "consumer", rel)
    if not os.path.exists(path):
        raise AssertionError(f"{rel} is not in the test's runfiles")
    return path


class KeywordNetRuntimeTest(unittest.TestCase):
    def test_pte_matches_eager(self):
        method = Runtime.get().load_program(runfile("keywords/keyword_net_pte.pte")).load_method("forward")
        model = keyword_net()
        for clips in (1, 3, 4):
            mfcc = torch.randn(clips, 40, 100, generator=torch.Generator().manual_seed(clips))
            (actual,) = method.execute([mfcc])
            with torch.no_grad():
                torch.testing.assert_close(actual, model(mfcc), rtol=1e-3, atol=1e-4)

    def test_providers_reach_this_repository(self):
        with open(runfile("keywords/keyword_net_info.json")) as f:
            info = json.load(f)
        self.assertEqual(info["program"], "//keywords:keyword_net_pte")
        self.assertEqual(info["model"], "//keywords:keyword_net")
        self.assertEqual(info["entry"], "keywords.keyword_net:keyword_net")
        self.assertEqual(info["backends"], ["xnnpack"])


if __name__ == "__main__":
    unittest.main()
