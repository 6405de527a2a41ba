"""Chapter 9's plumbing: run functions on several processes with ``torchrun`` and
collect what each rank returns.

The notebook writes its worker functions into a script in a temporary folder
(:func:`write_script`, from the functions' own source), :func:`launch` starts
``torchrun`` on it, and every rank writes one JSON file that :func:`launch` reads back.
Inside the workers, :func:`setup` opens the process group (NCCL and one GPU per process
when there are GPUs enough, else Gloo on the CPU), :func:`timed` times a call across
ranks (barriers around it, the max over ranks of each sample) and :func:`run_worker`
runs the named experiments. Bus bandwidth follows nccl-tests (:func:`bus_bandwidth`).

Times are in seconds, sizes in bytes, bandwidths in GB/s (1e9 bytes per second).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Iterable

__all__ = [
    "SAFE_ENV",
    "BUS_FACTORS",
    "Launch",
    "alone",
    "bus_bandwidth",
    "bus_factor",
    "choose_backend",
    "launch",
    "launch_environment",
    "peak_memory",
    "run_worker",
    "setup",
    "timed",
    "trim_error",
    "write_script",
]

SAFE_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
"""Set in every process this module starts: NVLink multicast (NVLS) stays off."""


def _all_reduce(n: int) -> float:
    return 2 * (n - 1) / n


def _gather_or_scatter(n: int) -> float:
    return (n - 1) / n


BUS_FACTORS: dict[str, Callable[[int], float]] = {
    "all_reduce": _all_reduce,
    "all_gather": _gather_or_scatter,
    "reduce_scatter": _gather_or_scatter,
    "broadcast": lambda n: 1.0,
}
"""busbw = algbw * factor(ranks), as nccl-tests' PERFORMANCE.md defines them."""


def bus_factor(op: str, ranks: int) -> float:
    """The factor nccl-tests multiplies algorithm bandwidth by to get bus bandwidth:
    all_reduce 2(n-1)/n, all_gather and reduce_scatter (n-1)/n, broadcast 1."""
    if op not in BUS_FACTORS:
        raise ValueError(f"op must be one of {sorted(BUS_FACTORS)}, got {op!r}")
    if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
        raise ValueError(f"ranks must be a positive int, got {ranks!r}")
    return BUS_FACTORS[op](ranks)


def bus_bandwidth(op: str, nbytes: float, seconds: float, ranks: int) -> float:
    """Bus bandwidth in GB/s of one collective, as nccl-tests reports it.

    ``nbytes`` is the size nccl-tests calls the message size: the buffer each rank
    reduces (all_reduce), the full gathered output (all_gather), the full input
    before scattering (reduce_scatter), the buffer sent (broadcast). Algorithm bandwidth
    is ``nbytes / seconds``; bus bandwidth multiplies it by :func:`bus_factor`, so that
    it can be compared with the link's bandwidth whatever the number of ranks.
    """
    if not nbytes > 0 or not seconds > 0:
        raise ValueError(f"nbytes and seconds must be > 0, got {nbytes!r}, {seconds!r}")
    return nbytes / seconds * bus_factor(op, ranks) / 1e9


def choose_backend(gpus: int, ranks: int = 2) -> tuple[str, int]:
    """``("nccl", gpus)`` with one process per GPU when there are at least two GPUs,
    else ``("gloo", ranks)`` on the CPU."""
    if gpus >= 2:
        return "nccl", gpus
    return "gloo", ranks


def launch_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment, plus :data:`SAFE_ENV`, plus ``extra``."""
    env = dict(os.environ)
    env.update(SAFE_ENV)
    env.update(extra or {})
    for key in SAFE_ENV:  # extra may not switch multicast back on
        env[key] = SAFE_ENV[key]
    return env


def write_script(
    functions: Iterable[Callable], folder: str | Path | None = None
) -> Path:
    """Write ``worker.py`` into ``folder`` (a new temporary one by default): the
    source of each function (``inspect.getsource``, so functions defined in notebook
    cells work), then a call of :func:`run_worker` with them. Returns the path."""
    folder = Path(folder or tempfile.mkdtemp(prefix="gpubook-ch09-"))
    folder.mkdir(parents=True, exist_ok=True)
    parts = [
        "import time\n\nimport torch\nimport torch.distributed as dist\n\n"
        "from gpubook import distributed as gd\n"
    ]
    names = []
    for function in functions:
        if not callable(function):
            raise ValueError(f"functions must be callables, got {function!r}")
        parts.append(textwrap.dedent(inspect.getsource(function)))
        names.append(function.__name__)
    parts.append(
        'if __name__ == "__main__":\n'
        f"    gd.run_worker({{{', '.join(f'{n!r}: {n}' for n in names)}}})\n"
    )
    path = folder / "worker.py"
    path.write_text("\n\n".join(parts))
    return path


@dataclass
class Launch:
    """What one ``torchrun`` launch gave back: ``ranks[r]`` is rank r's dict of
    experiment results, ``seconds`` the wall time of the whole launch."""

    ranks: list[dict]
    seconds: float
    returncode: int
    output: str = field(repr=False, default="")

    def __getitem__(self, experiment: str) -> list:
        """One experiment's result on every rank, in rank order."""
        return [rank[experiment] for rank in self.ranks]


def launch(
    script: str | Path,
    experiments: Iterable[str],
    nproc: int,
    backend: str,
    config: dict | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> Launch:
    """Run ``torchrun --standalone --nproc-per-node=nproc script`` and collect each
    rank's JSON results.

    ``experiments`` names the worker functions to run, in order; ``config`` is passed to
    every one of them (JSON). ``env`` adds environment variables (the multicast
    switches of :data:`SAFE_ENV` are always set). Raises ``RuntimeError`` with the end
    of the output when torchrun fails or a rank writes no result.
    """
    if not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"nproc must be a positive int, got {nproc!r}")
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend must be 'gloo' or 'nccl', got {backend!r}")
    script = Path(script)
    out = Path(tempfile.mkdtemp(prefix="results-", dir=script.parent))
    spec = {"experiments": list(experiments), "config": config or {}}
    extra = {"GPUBOOK_WORKER": json.dumps(spec), "GPUBOOK_BACKEND": backend}
    extra["GPUBOOK_RESULTS"] = str(out)
    extra.update(env or {})
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc-per-node={nproc}", str(script)]
    start = time.perf_counter()
    result = subprocess.run(
        command,
        env=launch_environment(extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=script.parent,
    )
    seconds = time.perf_counter() - start
    output = result.stdout + result.stderr
    files = [out / f"rank{r}.json" for r in range(nproc)]
    if result.returncode != 0 or not all(f.exists() for f in files):
        errors = [line for line in output.splitlines() if "Error" in line]
        raise RuntimeError(
            f"torchrun exited with {result.returncode}; lines naming errors:\n"
            + "\n".join(errors[:20])
        )
    ranks = [json.loads(f.read_text()) for f in files]
    return Launch(ranks, seconds, result.returncode, output)


# --- inside the workers -------------------------------------------------------------


def setup(backend: str | None = None, timeout_s: float = 300):
    """Open the default process group (``backend`` from ``GPUBOOK_BACKEND`` by
    default; torchrun supplies rank and world size) and return ``(rank, world,
    device)``: ``cuda:LOCAL_RANK`` with NCCL, the CPU with Gloo."""
    import torch
    import torch.distributed as dist

    backend = backend or os.environ.get("GPUBOOK_BACKEND", "gloo")
    if backend == "nccl":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
    return dist.get_rank(), dist.get_world_size(), device


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], Any], device, samples: int = 10, warmup: int = 2) -> list:
    """Times of ``samples`` calls of ``fn()`` across all ranks, in seconds: each sample
    starts after a barrier, ends after the device synchronises, and is the slowest
    rank's time (one all_reduce of MAX over the samples at the end). Latency mode."""
    import torch
    import torch.distributed as dist

    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    for _ in range(samples):
        dist.barrier()
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    slowest = torch.tensor(times, dtype=torch.float64, device=device)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return slowest.cpu().tolist()


def alone(fn: Callable[[], Any], rank: int, device, samples: int = 10, warmup: int = 2):
    """Times of ``samples`` calls of ``fn()`` on rank 0 alone (the one-process
    baseline; seconds, latency mode) while the other ranks wait at a barrier. Returns
    the list on rank 0 and ``[]`` elsewhere."""
    import torch.distributed as dist

    times = []
    if rank == 0:
        for _ in range(warmup):
            fn()
        for _ in range(samples):
            _sync(device)
            start = time.perf_counter()
            fn()
            _sync(device)
            times.append(time.perf_counter() - start)
    dist.barrier()
    return times


def peak_memory(device) -> float | None:
    """Peak bytes allocated by PyTorch on a CUDA device since the last reset (then
    resets it); ``None`` on the CPU, where PyTorch keeps no such counter."""
    import torch

    if device.type != "cuda":
        return None
    peak = torch.cuda.max_memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    return float(peak)


def trim_error(error: BaseException, limit: int = 160) -> str:
    """``'TypeName: first line of the message'``, cut to ``limit`` characters."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run_worker(functions: dict[str, Callable]) -> None:
    """The worker's main: open the process group, run each experiment named in
    ``GPUBOOK_WORKER`` as ``fn(rank, world, device, config) -> dict`` and write the
    results to ``GPUBOOK_RESULTS/rank{r}.json``; then close the group."""
    import torch.distributed as dist

    spec = json.loads(os.environ["GPUBOOK_WORKER"])
    rank, world, device = setup(timeout_s=spec["config"].get("timeout_s", 300))
    results = {"backend": dist.get_backend(), "world": world, "device": str(device)}
    for name in spec["experiments"]:
        results[name] = functions[name](rank, world, device, spec["config"])
    path = Path(os.environ["GPUBOOK_RESULTS"]) / f"rank{rank}.json"
    path.write_text(json.dumps(results))
    if spec["config"].get("barrier_at_end", True):
        dist.barrier()
    dist.destroy_process_group()
