"""gpubook.pagefaults: minor page faults per call, and the fresh-process test."""

import pytest

from gpubook import pagefaults


def test_counter_counts_calls_and_faults():
    counted = pagefaults.FaultCounter(lambda n: bytearray(n))
    assert counted.per_call is None
    for _ in range(5):
        assert len(counted(1 << 16)) == 1 << 16
    assert counted.calls == 5
    if pagefaults.minor_faults() is not None:
        assert counted.per_call >= 0
    counted.reset()
    assert counted.calls == 0 and counted.per_call is None


def test_counter_rejects_non_callables():
    with pytest.raises(TypeError):
        pagefaults.FaultCounter(42)


def test_fresh_process_reports_failure_in_one_line():
    result = pagefaults.fresh_process("raise ValueError('no such setup')")
    assert result.timing is None
    assert result.error.startswith("the fresh process failed")
    assert "ValueError" in result.error and "\n" not in result.error


@pytest.mark.slow
def test_fresh_process_measures_a_step():
    setup = "import torch\nfn = torch.add\nargs = (torch.ones(64), torch.ones(64))\n"
    result = pagefaults.fresh_process(setup, seconds=0.01, label="add")
    assert result.error is None, result.error
    assert result.timing.mode == "latency" and result.timing.median > 0
    assert result.faults_per_call >= 0 and result.threads >= 1
