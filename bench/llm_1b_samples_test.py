"""bench/llm_1b_samples.py on made-up samples: a sandboxed action's peak, a worker's own RSS
before, during and after its request, and a test's summed peak."""

from bench import llm_1b_samples

SERVER = 1
WORKER = ["python3", "exporter/main.py", "--warm=export", "--persistent_worker"]
ACTION = ["python3", "exporter/main.py", "@bazel-out/k8/bin/m/ep.pt2-0.params"]
TEST = ["python3", "exporter/checks/generation.py"]
GIB = 2**20  # KiB

# (time, phase, [(pid, parent pid, RSS KiB, arguments)]): the worker warms up, forks a request
# (whose own child does the work), grows a little while it runs, and keeps less after.
SAMPLES = [
    (0, "build", [(10, SERVER, GIB // 4, WORKER)]),
    (1, "build", [(10, SERVER, GIB // 2, WORKER), (20, SERVER, 3 * GIB, ACTION)]),
    (2, "build", [(10, SERVER, GIB, WORKER), (11, 10, GIB, WORKER), (12, 11, 8 * GIB, WORKER),
                  (20, SERVER, 5 * GIB, ACTION)]),
    (3, "build", [(10, SERVER, GIB + GIB // 4, WORKER), (11, 10, GIB, WORKER), (12, 11, 6 * GIB, WORKER)]),
    (4, "test", [(10, SERVER, GIB, WORKER), (30, SERVER, GIB, TEST), (31, 30, 2 * GIB, ["et_runner"])]),
]


def test_worker_memory_is_the_parents_own_before_during_and_after():
    after = [(10, SERVER, GIB, WORKER)]
    assert llm_1b_samples.worker_memory(SAMPLES, SERVER, after) == {"--warm=export": {
        "name": "--warm=export", "before": GIB // 2, "during": GIB + GIB // 4, "request": 8 * GIB, "served": True,
        "after": GIB, "left": 0}}


def test_a_process_left_below_the_worker_is_counted():
    after = [(10, SERVER, GIB, WORKER), (11, 10, GIB, WORKER)]
    assert llm_1b_samples.worker_memory(SAMPLES, SERVER, after)["--warm=export"]["left"] == 1


def test_action_peaks_and_the_tests_summed_peak():
    assert llm_1b_samples.action_peaks(SAMPLES) == {"ep.pt2": [5 * GIB, 1, 2]}
    assert llm_1b_samples.phase_peak(SAMPLES, "test", SERVER) == 3 * GIB
