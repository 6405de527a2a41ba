#!/usr/bin/env bash
# Execute notebooks on a GPU machine that has torch but no Jupyter (the device tool's H100/H200).
#
#   bash tools/gpu-run.sh notebooks/03_compile_basics.ipynb [more notebooks or folders]
#
# Needs the Jupyter wheels of ../shared/gpu-jupyter-wheels.txt (plus nvidia-ml-py, threadpoolctl)
# in .whl/ (carried with the call). Installs them into /tmp/site, registers the kernel, runs
# `python -m gpubook.reference run` under the `gpu` profile (GPUBOOK_PROFILE overrides), and tars
# the executed notebooks plus the log into $OUT/notebooks.tar.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
# Bytecode: the device image sets PYTHONDONTWRITEBYTECODE=1 and ships torch without .pyc
# files, so every process compiled about 1,500 modules from source: 7.5 s of a fresh
# process's first torch.compile (15.5 s against 7.7 s, tools/diag/startup_prof.py, H100,
# torch 2.11, 28 Nov 2026). A reader's pip or conda install writes .pyc files when it
# installs, so the run writes them first, under a prefix outside the packages and the tree.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-/tmp/pycache}"
export GPUBOOK_PROFILE="${GPUBOOK_PROFILE:-gpu}"
# NVLink multicast stays off on the lent multi-GPU machines, in every process (gpubook.distributed
# sets the same for the processes it starts).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
out="${OUT:-/tmp/gpu-run-out}"; mkdir -p "$out"
# a notebook whose run fails or is stopped is kept there with the cells it ran
export GPUBOOK_FAILED_DIR="$out/failed"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl >/dev/null 2>&1 || { echo "wheel install failed"; exit 3; }
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
  export PATH="/tmp/site/bin:$PATH"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
python3 -m ipykernel install --user >/dev/null 2>&1 || { echo "ipykernel install failed"; exit 3; }
pyc_start=$(date +%s)
python3 -m compileall -q -j 0 $(python3 -c 'import sys; print(" ".join(p for p in sys.path if p.endswith("-packages") or p == "/tmp/site"))') >"$out/compileall.log" 2>&1
pyc_status=$?
echo "gpu-run: bytecode of the installed packages written in $(( $(date +%s) - pyc_start )) s, compileall exit $pyc_status (not counted in the chapters' times)"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader || true
start=$(date +%s)
# GPU_RUN_LIMIT (seconds): stop the run in time to tar the notebooks finished so far (each
# notebook is written as soon as it has run), instead of losing all of them to the caller's cap.
limit=()
if [ -n "${GPU_RUN_LIMIT:-}" ]; then limit=(timeout -s INT -k 15 "$GPU_RUN_LIMIT"); fi
"${limit[@]}" python3 -m gpubook.reference run "$@" 2>&1 | tee "$out/run.log"
status=${PIPESTATUS[0]}
echo "gpu-run: $(( $(date +%s) - start )) s, exit $status" | tee -a "$out/run.log"
targets=()
for t in "$@"; do if [ -d "$t" ]; then targets+=("$t"/[0-9][0-9]_*.ipynb); else targets+=("$t"); fi; done
tar -cf "$out/notebooks.tar" "${targets[@]}" book/reference-results.md book/_generated 2>/dev/null
exit $status
