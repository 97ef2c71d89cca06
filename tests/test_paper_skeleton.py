"""Every paper folder has the skeleton of docs/paper-skeleton.md; artifacts are registered
one way, from the inventory; the book's table of contents is the registry's; the page
object owns a notebook's parameters."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

import flcore  # noqa: F401  (registers the papers)
from flcore.report import page as page_module
from flcore.report.page import SMOKE_NOTE, Page
from flcore.reproduction.artifacts import ARTIFACTS, get_artifact, no_runs, register_artifacts, settings_table
from flcore.reproduction.inventory import entry
from flcore.reproduction.paper_registry import get_paper, import_layers, paper_ids
from flcore.reproduction.paper_yaml import read_yaml

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "flcore" / "papers"
REQUIRED = ("__init__.py", "paper.yaml", "inventory.yaml", "claims.yaml", "published/sources.yaml", "runs.py")
OPTIONAL_MODULES = {"results.py", "analysis.py", "config_tables.py", "method_costs.py", "metrics.py", "pages.py"}


@pytest.mark.parametrize("paper", sorted(p.name for p in PAPERS.iterdir() if (p / "__init__.py").is_file()))
def test_every_paper_folder_has_the_skeleton(paper):
    folder = PAPERS / paper
    for name in REQUIRED:
        assert (folder / name).is_file(), f"{paper}: {name} is missing"
    modules = {p.name for p in folder.glob("*.py")} - {"__init__.py", "runs.py"}
    strays = modules - OPTIONAL_MODULES
    assert not strays, f"{paper}: modules outside the skeleton: {sorted(strays)}"
    assert isinstance(read_yaml(folder / "paper.yaml").get("order"), int)


def test_papers_are_found_in_the_order_their_paper_yaml_gives():
    here = [p for p in paper_ids() if get_paper(p).folder.parent == PAPERS]
    assert here == sorted(here, key=lambda p: get_paper(p).info["order"])
    assert set(here) == {p.name for p in PAPERS.iterdir() if (p / "paper.yaml").is_file()}


def test_an_artifact_takes_its_kind_and_caption_from_the_inventory():
    for artifact_id, artifact in ARTIFACTS.items():
        if artifact.kind == "page":  # the book's own page (register_page): no inventory entry
            assert artifact.caption == artifact.title == artifact.page_title
            continue
        item = entry(artifact_id)
        assert (artifact.kind, artifact.caption) == (item.kind, item.caption)
    assert get_artifact("fedsam-table-2").title.startswith("Table 2: ")
    assert get_artifact("since-these-papers").kind == "page"


def test_an_artifact_missing_from_its_papers_inventory_is_refused():
    with pytest.raises(KeyError, match="not in fedsam's inventory.yaml"):
        register_artifacts("fedsam", {"fedsam-table-99": no_runs})
    with pytest.raises(ValueError, match="belongs to 'fedgf'"):
        register_artifacts("fedsam", {"fedgf-table-1": no_runs})
    with pytest.raises(ValueError, match="registered twice"):
        register_artifacts("fedsam", {"fedsam-table-2": no_runs})
    assert "fedsam-table-99" not in ARTIFACTS


def test_the_committed_table_of_contents_is_the_registrys():
    from flcore.site.toc import papers_part, with_papers_part

    text = (ROOT / "_toc.yml").read_text()
    assert with_papers_part(text) == text, "run `flcore book` (or flcore.site.toc.update_toc) and commit _toc.yml"
    chapters = [line for line in papers_part().splitlines() if line.startswith("      - file: ")]
    assert chapters == [f"      - file: book/{paper}/index" for paper in paper_ids()]


def test_the_generated_part_follows_a_change_of_the_registry(monkeypatch):
    from flcore.site import toc

    monkeypatch.setattr(toc, "paper_ids", lambda: ("fedgf",))
    part = toc.papers_part()
    assert part.splitlines()[2:4] == ["      - file: book/fedgf/index", "        sections:"]
    assert "fedsam" not in part and part.count("          - file: book/artifacts/fedgf/") == 12


def _page(monkeypatch, scale):
    calls = []
    monkeypatch.setattr(page_module, "ensure_runs", lambda specs, **kw: calls.append((list(specs), kw)) or "frame")
    shown = []
    monkeypatch.setattr(page_module, "_display", lambda obj, metadata=None: shown.append(obj))
    page = Page("fedsam-table-2", scale=scale, seeds=[0, 1], store="/s", device="cpu", workers=2,
                data_root="d", download=False)
    return page, calls, shown


def test_the_page_trains_its_artifacts_runs_with_the_notebooks_parameters(monkeypatch):
    page, calls, _ = _page(monkeypatch, "smoke")
    assert page.runs() == "frame"
    specs, kwargs = calls[0]
    assert [s.run_id() for s in specs] == [s.run_id() for s in get_artifact("fedsam-table-2").runs("smoke", [0, 1])]
    assert kwargs == {"store": "/s", "device": "cpu", "workers": 2, "data_root": "d", "download": False}
    page.runs(specs[:1])
    assert len(calls[1][0]) == 1


@pytest.mark.parametrize("scale", ["smoke", "small"])
def test_the_findings_end_with_the_smoke_note_at_the_smoke_scale_only(monkeypatch, scale):
    page, _, shown = _page(monkeypatch, scale)
    page.findings(["One.", "Two."])
    page.findings(["One."], sep="\n\n")
    texts = [obj.data for obj in shown]
    if scale == "smoke":
        assert texts == [f"One. Two. {SMOKE_NOTE}", f"One.\n\n{SMOKE_NOTE}"]
    else:
        assert texts == ["One. Two.", "One."]
    # nothing found: the smoke note alone at the smoke scale, else the text for that case
    page.findings([], empty="Nothing to draw.")
    assert shown[-1].data == (SMOKE_NOTE if scale == "smoke" else "Nothing to draw.")


def test_the_page_from_a_notebooks_parameters_takes_them_by_name_and_sets_the_style(monkeypatch):
    import pandas as pd

    styled = []
    monkeypatch.setattr(page_module, "set_style", lambda: styled.append(True))
    namespace = {"scale": "small", "device": "cpu", "seeds": [3, 4], "store": "/s", "workers": 2,
                 "data_root": "d", "download": False, "max_rounds": None, "split_files": None, "pd": pd}
    page = Page.from_parameters("fedsam-table-2", namespace)
    assert styled == [True] and page.artifact_id == "fedsam-table-2" and page.artifact.id == "fedsam-table-2"
    assert (page.scale, page.device, page.seeds, page.store, page.workers, page.data_root, page.download) == (
        "small", "cpu", [3, 4], "/s", 2, "d", False)
    # a config page declares no workers, data folder or download: the page's defaults stand
    page = Page.from_parameters("fedsam-table-9", {"scale": "smoke", "device": "auto", "seeds": [0], "store": None,
                                                   "max_rounds": None})
    assert (page.workers, page.data_root, page.download, page.seeds) == (None, None, None, [0])


def test_the_page_shows_notes_run_status_and_settings_with_their_captions(monkeypatch):
    import pandas as pd

    page, _, shown = _page(monkeypatch, "small")
    page.note("**Bold** text.")
    assert shown[0].data == "**Bold** text." and page.tables == 0
    runs = pd.DataFrame({"status": ["finished", "finished", "pending"], "run_id": ["a", "a", None]})
    table = page.run_status(runs)
    # two cells share run "a": 2 distinct runs, 3 cells; the caption names the artifact's kind
    assert table.to_dict("list") == {"status": ["finished", "pending"], "runs": [1, 1], "cells": [2, 1]}
    assert shown[1].data.startswith("**Table 1.** ") and page.artifact.kind in shown[1].data
    specs = get_artifact("fedsam-table-2").runs("smoke", [0])
    settings = page.settings("the rows'", by=("algorithm",), specs=specs)
    common = ", ".join(f"`{k}` = {v}" for k, v in settings.attrs["common"].items())
    assert common and len(settings) == len({s.labels["algorithm"] for s in specs})
    assert [obj.data for obj in shown if str(getattr(obj, "data", "")).startswith("**Table 2.**")] == [
        f"**Table 2.** What differs between the rows' runs; every run shares {common}."]
    # without specs: the page's own (the artifact's runs at its scale and seeds)
    assert page.settings("the rows'", by=("algorithm",)).equals(
        settings_table(page.specs(), by=("algorithm",), grid=("alpha", "per_round", "seed")))


def test_train_shows_the_status_of_the_pages_runs_and_returns_them(monkeypatch):
    import pandas as pd

    page, calls, shown = _page(monkeypatch, "small")
    runs = pd.DataFrame({"status": ["finished", "pending"], "run_id": ["a", "b"]})
    monkeypatch.setattr(page_module, "ensure_runs", lambda specs, **kw: calls.append(list(specs)) or runs)
    assert page.train() is runs
    assert [s.run_id() for s in calls[0]] == [s.run_id() for s in page.specs()]
    assert shown[0].data.startswith("**Table 1.** ") and page.tables == 1


def test_runs_table_counts_the_finished_runs_in_its_caption(monkeypatch):
    import pandas as pd

    page, _, shown = _page(monkeypatch, "small")
    runs = pd.DataFrame({"algorithm": ["A", "A", "B"], "alpha": [0.0, 0.0, 1.0],
                         "status": ["finished", "finished", "pending"], "run_id": ["a", "b", "c"]})
    table = page.runs_table(runs, ["algorithm", "status"], "Runs: {finished} of {total} finished.")
    assert len(table) == 3 and list(table.columns) == ["algorithm", "status"]
    assert shown[0].data == "**Table 1.** Runs: 2 of 3 finished."
    # one row per distinct (algorithm, alpha); the counts are still of every run
    table = page.runs_table(runs, ["algorithm", "run_id"], "{finished} finished of {total}.", distinct=["algorithm"])
    assert table["run_id"].tolist() == ["a", "c"]
    assert [obj.data for obj in shown if str(getattr(obj, "data", "")).startswith("**Table 2.**")] == [
        "**Table 2.** 2 finished of 3."]


def test_the_analysis_device_is_the_pages_device_resolved(monkeypatch):
    page, _, _ = _page(monkeypatch, "small")
    assert page.analysis_device == "cpu"
    page.device = "auto"
    assert page.analysis_device in ("cpu", "cuda")


def test_show_claims_checks_the_claims_when_the_page_has_not(monkeypatch):
    page, _, shown = _page(monkeypatch, "smoke")
    checked = []

    def check_claims():
        checked.append(True)
        page.claim_results = []

    monkeypatch.setattr(page, "check_claims", check_claims)
    monkeypatch.setattr(page_module, "claims_markdown", lambda results, scale: f"{len(results)} claims at {scale}")
    page.show_claims()
    page.show_claims()  # checked once: the second call shows the verdicts kept
    assert checked == [True] and [obj.data for obj in shown] == ["0 claims at smoke"] * 2


def _papers_imported(text: str, papers: set[str]) -> set[str]:
    """The papers an import statement of ``text`` names (``from flcore.papers.x...``,
    ``import flcore.papers.x``, ``from flcore.papers import x``)."""
    found = re.findall(r"^\s*(?:from|import)\s+flcore\.papers\.([a-z][a-z0-9_]*)", text, re.M)
    found += [name.strip() for names in re.findall(r"^\s*from\s+flcore\.papers\s+import\s+([a-z0-9_, ]+)", text, re.M)
              for name in names.split(",")]
    return {name.split(" as ")[0].strip() for name in found} & papers


@pytest.mark.parametrize("paper", sorted(p.name for p in PAPERS.iterdir() if (p / "__init__.py").is_file()))
def test_a_paper_imports_only_the_papers_it_builds_on(paper):
    """Its modules and its notebooks name no other paper than those its paper.yaml's
    ``builds_on`` lists (import-linter sees the modules only)."""
    papers = {p.name for p in PAPERS.iterdir() if (p / "__init__.py").is_file()}
    sources = [*(PAPERS / paper).glob("*.py"), *(ROOT / "notebooks" / paper).glob("*.py")]
    named = set().union(*(_papers_imported(p.read_text(), papers) for p in sources)) - {paper}
    assert named <= set(get_paper(paper).builds_on), f"{paper} imports {sorted(named)} but builds on " \
                                                      f"{list(get_paper(paper).builds_on)}"


def test_the_import_contract_is_the_one_the_papers_declare():
    contract = next(c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
                    if c.get("containers") == ["flcore.papers"])
    here = tuple(p for p in paper_ids() if get_paper(p).folder.parent == PAPERS)
    assert contract["layers"] == import_layers(here)


def test_import_layers_put_a_paper_above_what_it_builds_on(monkeypatch):
    from flcore.reproduction import paper_registry

    declared = {"a": (), "b": ("a",), "c": ("b",), "d": ()}
    monkeypatch.setattr(paper_registry, "get_paper", lambda p: type("P", (), {"builds_on": declared[p]})())
    assert paper_registry.import_layers(("a", "b", "c", "d")) == ["c", "b", "a | d"]
