"""A paper id names folders and pages (``book/<paper>/``) and prefixes artifact ids: one that
could be a path, or that a built-in paper could not have, is refused at registration, before
anything is written."""
import pytest

from flcore.reproduction import paper_registry as registry
from flcore.reproduction.paper_registry import PAPER_ID, paper_ids
from flcore.reproduction.papers import register_paper


@pytest.mark.parametrize("paper_id", ["../../../escape12", "a/b", "FedSAM", "fed-sam", "", ".hidden", "x" * 41,
                                      "fedsam\n", 7])
def test_an_id_that_is_no_plain_word_is_refused(tmp_path, paper_id):
    (tmp_path / "paper.yaml").write_text("title: T\n")
    with pytest.raises(ValueError, match="must match"):
        register_paper(paper_id, "Name", tmp_path)
    assert paper_id not in registry.PAPERS


def test_the_built_in_papers_ids_are_plain_words():
    assert paper_ids() and all(PAPER_ID.fullmatch(p) for p in paper_ids())
