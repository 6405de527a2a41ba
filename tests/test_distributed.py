"""gpubook.distributed: nccl-tests' bus-bandwidth factors, backend choice, the launch
environment, the worker script, and one real torchrun launch on two Gloo processes."""

import pytest

from gpubook import distributed as gd


def test_bus_factors_match_nccl_tests():
    assert gd.bus_factor("all_reduce", 2) == 1.0
    assert gd.bus_factor("all_reduce", 8) == 1.75
    assert gd.bus_factor("all_gather", 4) == 0.75
    assert gd.bus_factor("reduce_scatter", 8) == 0.875
    assert gd.bus_factor("broadcast", 8) == 1.0
    assert gd.bus_factor("all_reduce", 1) == 0.0


def test_bus_bandwidth_in_gb_per_s():
    # 1e9 bytes in 1 s on 8 ranks: algbw 1 GB/s, busbw 1.75 GB/s
    assert gd.bus_bandwidth("all_reduce", 1e9, 1.0, 8) == pytest.approx(1.75)
    assert gd.bus_bandwidth("all_gather", 2e9, 0.5, 2) == pytest.approx(2.0)
    assert gd.bus_bandwidth("broadcast", 3e9, 1.0, 4) == pytest.approx(3.0)


@pytest.mark.parametrize(
    "args",
    [
        ("gather", 1e6, 1.0, 2),
        ("all_reduce", 0, 1.0, 2),
        ("all_reduce", 1e6, 0.0, 2),
        ("all_reduce", 1e6, 1.0, 0),
        ("all_reduce", 1e6, 1.0, 2.0),
        ("all_reduce", 1e6, 1.0, True),
    ],
)
def test_bus_bandwidth_rejects_bad_input(args):
    with pytest.raises(ValueError):
        gd.bus_bandwidth(*args)


def test_choose_backend():
    assert gd.choose_backend(0) == ("gloo", 2)
    assert gd.choose_backend(1) == ("gloo", 2)
    assert gd.choose_backend(2) == ("nccl", 2)
    assert gd.choose_backend(4) == ("nccl", 4)
    assert gd.choose_backend(0, ranks=3) == ("gloo", 3)


def test_launch_environment_keeps_multicast_off(monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    env = gd.launch_environment({"NVSHMEM_DISABLE_NVLS": "0", "EXTRA": "x"})
    assert env["NCCL_NVLS_ENABLE"] == "0"
    assert env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert env["NVSHMEM_DISABLE_NVLS"] == "1"
    assert env["EXTRA"] == "x"


def test_trim_error():
    error = RuntimeError("first line\nsecond line")
    assert gd.trim_error(error) == "RuntimeError: first line"
    assert gd.trim_error(ValueError("x" * 500), limit=20) == "ValueError: xxxxx..."
    assert len(gd.trim_error(ValueError("x" * 500), limit=20)) == 20


def _ranks_and_sum(rank, world, device, config):
    import torch
    import torch.distributed as dist

    total = torch.tensor([float(rank + 1)])
    dist.all_reduce(total)
    times = gd.timed(lambda: dist.all_reduce(total), device, samples=3, warmup=1)
    alone = gd.alone(lambda: None, rank, device, samples=2, warmup=0)
    return {
        "rank": rank,
        "world": world,
        "sum": total.item() / 2**4,
        "times": times,
        "alone": alone,
        "scale": config["scale"],
    }


def test_write_script_holds_the_functions(tmp_path):
    path = gd.write_script([_ranks_and_sum], tmp_path)
    text = path.read_text()
    assert path == tmp_path / "worker.py"
    assert "def _ranks_and_sum(rank, world, device, config):" in text
    assert "gd.run_worker({'_ranks_and_sum': _ranks_and_sum})" in text
    compile(text, str(path), "exec")  # valid Python
    with pytest.raises(ValueError):
        gd.write_script([42], tmp_path)


def test_launch_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError):
        gd.launch(tmp_path / "w.py", [], 0, "gloo")
    with pytest.raises(ValueError):
        gd.launch(tmp_path / "w.py", [], 2, "mpi")


@pytest.mark.slow
def test_launch_two_gloo_ranks(tmp_path):
    """One real torchrun launch: every rank's result comes back, in rank order."""
    script = gd.write_script([_ranks_and_sum], tmp_path)
    run = gd.launch(script, ["_ranks_and_sum"], 2, "gloo", {"scale": 3}, timeout=300)
    results = run["_ranks_and_sum"]
    assert [r["rank"] for r in results] == [0, 1]
    assert [r["world"] for r in results] == [2, 2]
    # all_reduce of 1 and 2, then three timed and one warm-up all_reduce: 3 * 2**4
    assert [r["sum"] for r in results] == [3.0, 3.0]
    assert results[0]["times"] == results[1]["times"]  # the max over ranks, shared
    assert len(results[0]["times"]) == 3
    assert len(results[0]["alone"]) == 2 and results[1]["alone"] == []
    assert run.ranks[0]["backend"] == "gloo" and run.returncode == 0
    assert results[0]["scale"] == 3


@pytest.mark.slow
def test_launch_reports_a_failing_rank(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text("raise SystemExit('rank failed on purpose')\n")
    with pytest.raises(RuntimeError, match="torchrun exited with"):
        gd.launch(script, [], 2, "gloo", timeout=300)


def test_gpu_run_script_sets_the_same_multicast_switches():
    """tools/gpu-run.sh exports gd.SAFE_ENV for the whole run (its twin, in bash)."""
    from pathlib import Path

    script = (Path(__file__).parent.parent / "tools" / "gpu-run.sh").read_text()
    exports = [line for line in script.splitlines() if line.startswith("export NCCL_")]
    assert len(exports) == 1
    assert sorted(exports[0].split()[1:]) == sorted(
        f"{key}={value}" for key, value in gd.SAFE_ENV.items()
    )
