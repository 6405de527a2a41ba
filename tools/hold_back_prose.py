"""Hold back prose written for outputs a notebook does not have yet.

After a chapter's code changes, its stored outputs stay those of the last GPU run until
the next one; markdown that glues names only the new code produces would break the book
build (myst-nb: "No key ... found in glue data"). This script puts back, for each such
markdown cell, the cell of the same id from ``--base`` (a commit whose prose matches the
stored outputs), or drops a cell that did not exist there. Commit the result on its own:
before the next GPU run, ``git revert`` that commit to restore the new prose.

    python tools/hold_back_prose.py --base <commit> notebooks/NN_x.ipynb ...
"""

import argparse
import re
import subprocess
import sys

sys.path.insert(0, ".")
import nbformat  # noqa: E402

from gpubook.reference import glued_values  # noqa: E402

GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)")


def missing_keys(cell, present):
    return sorted({k for k in GLUE.findall(cell.source) if k not in present})


def at_commit(commit, path):
    shown = subprocess.run(
        ["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
    )
    return nbformat.reads(shown.stdout, as_version=4)


def restore(nb, path, commit, present, dry_run):
    """Put back the markdown cells of ``commit`` that glue names ``present`` lacks."""
    source = at_commit(commit, path)
    index = {c.get("id"): i for i, c in enumerate(nb.cells)}
    previous, changed = None, 0
    for cell in source.cells:
        keys = missing_keys(cell, present) if cell.cell_type == "markdown" else []
        if keys:
            changed += 1
            where = index.get(cell.get("id"))
            if where is not None:
                nb.cells[where] = cell
                print(f"{path}: cell {cell.get('id')} restored")
            else:
                after = index.get(previous, len(nb.cells) - 1)
                nb.cells.insert(after + 1, cell)
                index = {c.get("id"): i for i, c in enumerate(nb.cells)}
                print(f"{path}: cell {cell.get('id')} inserted after {previous}")
        previous = cell.get("id")
    if changed and not dry_run:
        nbformat.write(nb, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--base")
    group.add_argument("--restore-from")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    for path in args.paths:
        nb = nbformat.read(path, as_version=4)
        present = set(glued_values(nb))
        if args.restore_from:
            restore(nb, path, args.restore_from, present, args.dry_run)
            continue
        old = nbformat.reads(
            subprocess.run(
                ["git", "show", f"{args.base}:{path}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout,
            as_version=4,
        )
        old_cells = {c.get("id"): c for c in old.cells}
        kept, changed = [], 0
        for cell in nb.cells:
            keys = missing_keys(cell, present) if cell.cell_type == "markdown" else []
            if not keys:
                kept.append(cell)
                continue
            changed += 1
            base = old_cells.get(cell.get("id"))
            what = "put back" if base is not None else "dropped (new cell)"
            print(f"{path}: cell {cell.get('id')} {what}; missing {', '.join(keys)}")
            if base is not None:
                still = missing_keys(base, present)
                if still:
                    print(f"  WARNING: the base cell lacks {', '.join(still)} too")
                kept.append(base)
        if changed and not args.dry_run:
            nb.cells = kept
            nbformat.write(nb, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
