"""The layout of experiments/ (one folder per claim, shared code in lib/, legs in legs/) and the links of the
Markdown documents: every relative link of README.md, docs/*.md and experiments/**/*.md resolves."""

import ast
import pathlib
import re
import urllib.parse

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
EXPERIMENTS = REPO / "experiments"
NOT_CLAIMS = {"lib", "legs"}  # the shared package and the long runs' legs
CLAIMS = sorted(p.name for p in EXPERIMENTS.iterdir() if p.is_dir() and p.name not in NOT_CLAIMS | {"__pycache__"})
DOCUMENTS = sorted({REPO / "README.md", *REPO.glob("docs/*.md"), *EXPERIMENTS.glob("**/*.md")})


def test_only_the_runner_and_the_package_marker_are_modules_of_experiments():
    assert sorted(p.name for p in EXPERIMENTS.glob("*.py")) == ["__init__.py", "run.py"]


def test_the_claims_are_the_folders():
    assert len(CLAIMS) >= 15 and "sharp_value" in CLAIMS


@pytest.mark.parametrize("claim", CLAIMS)
def test_each_claim_has_its_config_readme_and_results(claim):
    folder = EXPERIMENTS / claim
    for name in ("config.py", "README.md", "results"):
        assert (folder / name).exists(), f"experiments/{claim}/ has no {name}"
    lines = (folder / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"experiments/{claim}/README.md has {lines} lines (at most 250: the rest goes to journal.md)"
    assert f"python -m experiments.run --config=experiments/{claim}/config.py" in (folder / "README.md").read_text(
        encoding="utf-8"
    ), f"experiments/{claim}/README.md does not give its command"


def test_the_experiments_readme_is_short_and_lists_every_claim():
    text = (EXPERIMENTS / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 150
    for claim in CLAIMS:
        assert f"]({claim}/README.md)" in text, f"experiments/README.md does not link {claim}/"


def _imports(path: pathlib.Path) -> set[str]:
    """The modules ``path`` imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``), anywhere in the file."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("claim", CLAIMS)
def test_no_claim_imports_another_claim_or_the_runner(claim):
    for path in (EXPERIMENTS / claim).glob("*.py"):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "experiments" or len(parts) == 1:
                continue
            assert parts[1] in (claim, "lib"), f"experiments/{claim}/{path.name} imports {name}"


def test_the_shared_package_imports_no_claim():
    for path in (EXPERIMENTS / "lib").glob("*.py"):
        for name in _imports(path):
            parts = name.split(".")
            assert parts[0] != "experiments" or parts[1:2] == ["lib"], f"experiments/lib/{path.name} imports {name}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_\[\]()]|<[^>]+>", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: pathlib.Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    return ids | {_slug(h) for h in re.findall(r"^#{1,6} (.*)$", text, re.M)}


def _links(path: pathlib.Path):
    """(line, target) of every Markdown link outside fenced code."""
    fenced = False
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                yield i, target


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(doc):
    broken = []
    for line, target in _links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, fragment = urllib.parse.unquote(target).partition("#")
        where = (doc.parent / path).resolve() if path else doc
        if not where.exists():
            broken.append(f"line {line}: {target} (no such file)")
        elif fragment and where.suffix == ".md" and fragment not in _anchors(where):
            broken.append(f"line {line}: {target} (no anchor {fragment!r})")
    assert not broken, f"{doc.relative_to(REPO)}: " + "; ".join(broken)
