#!/usr/bin/env bash
# Adopt a GPU run as the book's stored outputs, and regenerate what is built from them.
#
#   bash tools/adopt-run.sh RUN_DIR TAR [TAR ...]
#
# Each TAR is a notebooks.tar that tools/gpu-run.sh left under $OUT (one per command of the
# run). Their notebooks/ are extracted into RUN_DIR (kept, for `python -m gpubook.reference
# compare` against another run); each executed notebook must carry a `gpu` record whose code
# hash matches the notebook here (a chapter that failed comes back unexecuted, with its old
# record, and stops the adoption). Then each notebook here takes the run's outputs into its
# code cells (its markdown stays as it is here, edits made since the run included), the
# reference-results, run-times, seeds' claims and section-times pages are written, and
# `reference check` runs. Set PYTHON to the interpreter with the book's requirements.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: bash tools/adopt-run.sh RUN_DIR TAR [TAR ...]" >&2
  exit 2
fi
python=${PYTHON:-python}
run_dir=$1
shift
mkdir -p "$run_dir"
for tar in "$@"; do
  tar -xf "$tar" -C "$run_dir" --wildcards 'notebooks/*.ipynb'
done
"$python" - "$run_dir" <<'PY'
import sys
from pathlib import Path

import nbformat

from gpubook.reference import METADATA_KEY, staleness

adopt, bad = [], []
for executed_path in sorted(Path(sys.argv[1], "notebooks").glob("[0-9][0-9]_*.ipynb")):
    executed = nbformat.read(executed_path, as_version=4)
    here_path = Path("notebooks") / executed_path.name
    here = nbformat.read(here_path, as_version=4)
    record = executed.metadata.get(METADATA_KEY, {})
    if staleness(here, record):  # not a gpu run, or of other code than here
        bad.append(executed_path.name)
        continue
    # the run's outputs into this notebook's code cells: markdown edited since the run
    # stays as it is here
    ran = [cell for cell in executed.cells if cell.cell_type == "code"]
    for cell, done in zip([c for c in here.cells if c.cell_type == "code"], ran):
        cell.outputs = done.outputs
        cell.execution_count = done.get("execution_count")
        cell.metadata = done.metadata
    for key in (METADATA_KEY, "language_info", "kernelspec"):
        if key in executed.metadata:
            here.metadata[key] = executed.metadata[key]
    adopt.append((here_path, here))
    print(f"{executed_path.name}: {record.get('run_seconds')} s, {record.get('date')}")
if bad:
    sys.exit(f"not executed from this code under the gpu profile: {', '.join(bad)}")
for path, notebook in adopt:
    nbformat.write(notebook, path)
PY
"$python" -m gpubook.reference results
"$python" -m gpubook.seeds
"$python" -m gpubook.workshop notebooks/ > book/_generated/section-times.md
"$python" -m gpubook.reference check notebooks
