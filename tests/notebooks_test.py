"""Every colab/*.ipynb runs end to end, and is committed without outputs.

The notebooks run with SAIJAX_NB_SMALL=1 (their small but real setting) in a
`python3` kernel started from this interpreter: jupyter_client runs a kernel
spec whose command is plain `python` with `sys.executable`, and
test_kernel_is_this_interpreter checks that it did.
"""

import pathlib
import sys

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

REPO = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "colab").glob("*.ipynb"))
KERNEL = "python3"
TIMEOUT = 600  # seconds per cell


def _run(nb, cwd):
    NotebookClient(nb, timeout=TIMEOUT, kernel_name=KERNEL, resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def _stale_fields(nb):
    """What a stripped notebook must not have: outputs, counts, widget state."""
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {i} has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i} has an execution count")
        if "execution" in cell.get("metadata", {}):
            problems.append(f"cell {i} has execution timing metadata")
    if "widgets" in nb.metadata:
        problems.append("notebook has widget state")
    return problems


def test_the_notebooks_exist():
    names = {path.name for path in NOTEBOOKS}
    assert {"score_vs_winrate.ipynb", "sigmoid.ipynb"} <= names
    assert SLOW_NOTEBOOKS <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert not _stale_fields(nb), f"{path.name}: strip outputs before committing"


def test_stripped_checker_catches_outputs():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    assert not _stale_fields(nb)
    nb.cells[0].execution_count = 1
    nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)]
    assert len(_stale_fields(nb)) == 2


def test_kernel_is_this_interpreter(tmp_path):
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    assert spec.language == "python"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.executable); print(sys.prefix)")]
    )
    _run(nb, tmp_path)
    executable, prefix = nb.cells[0].outputs[0]["text"].split()
    # The prefix, not a resolved path: a venv's python is a symlink to the
    # system one, but only the venv has this project's packages.
    assert prefix == sys.prefix
    assert executable == sys.executable


# The six slowest notebooks (40-150 s each, about 5 minutes together) run in
# `make test-slow`, which CI runs after `make test`; the rest in `make test`.
SLOW_NOTEBOOKS = {
    "ablation.ipynb",
    "elo_curve.ipynb",
    "handicap.ipynb",
    "position_control.ipynb",
    "score_estimation.ipynb",
    "styles.ipynb",
}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_NOTEBOOKS else p for p in NOTEBOOKS],
    ids=lambda p: p.name,
)
def test_notebook_runs(path, monkeypatch):
    monkeypatch.setenv("SAIJAX_NB_SMALL", "1")
    nb = _run(nbformat.read(path, as_version=4), path.parent)
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
