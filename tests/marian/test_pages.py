"""An imported Marian model is listed beside the other checkpoints and every page opens on it, through the same
model and tokenizer API as our own checkpoints (no page knows it is imported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.marian.importer import import_marian
from tests.apptest_helpers import chart, checkpoints_at, open_page
from tests.marian.models import build_marian

NAME = "opus-mt-tiny"
PAGES = ("translate", "compare", "heads", "beam", "step_by_step", "positional", "tour")


@pytest.fixture(scope="module")
def imported_root(tmp_path_factory, one_torch_thread) -> Path:
    root = tmp_path_factory.mktemp("checkpoints")
    built = build_marian(tmp_path_factory.mktemp("hf") / "hf", languages=(">>deu<<", ">>kor<<"), seed=3)
    import_marian(built.path, root / NAME, target_language="kor")
    with checkpoints_at(root):
        yield root


def test_the_picker_lists_an_imported_checkpoint_with_its_source(imported_root):
    from ui.model_picker import checkpoint_choices, imported_from, imported_note

    choices = checkpoint_choices()
    assert choices[NAME] == str(imported_root / NAME)
    source = imported_from(choices[NAME])
    assert source is not None and source.endswith("hf"), source
    note = imported_note(source)
    # The source folder's path, cut with "…" where it is long (a worker's temporary folder under pytest-xdist).
    assert note.startswith("Imported from ") and note.endswith(("hf.", "….")), note


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_link_names_an_imported_model_by_its_folder(imported_root, lang):
    """The picker's labels are the folders' names in every language: Streamlit seeds a URL-bound selectbox only
    from a value equal to a shown label, so a label with its source (and a translation) in it dropped
    ?model=NAME from a link and opened the default model instead. The source is a caption under it."""
    at = open_page("pages/translate.py", model=NAME, lang=lang)
    picker = at.sidebar.selectbox(key="model")
    assert picker.value == NAME
    assert list(picker.options) == list(picker.proto.options) == [NAME], "every shown label is a folder's name"
    source = "에서 가져온 모델입니다" if lang == "ko" else "Imported from "
    assert any(source in caption.value for caption in at.sidebar.caption)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_on_an_imported_model(imported_root, page):
    at = open_page(f"pages/{page}.py", model=NAME, sentence="the big cat sees a small dog")
    assert not at.exception


def test_every_heads_view_opens_on_an_imported_model(imported_root):
    """The Heads page runs one view at a time: each of them, on the imported model."""
    from ui.heads.views import VIEWS

    at = open_page("pages/heads.py", model=NAME, h_sentence="the big cat sees a small dog")
    for view in VIEWS:
        at.segmented_control(key="h_view").set_value(view).run()
        assert not at.exception, (view, [e.message for e in at.exception])


def test_the_beam_page_names_target_tokens_from_the_target_vocabulary(tmp_path, monkeypatch, one_torch_thread):
    """An imported model with separate vocabularies: the n-best pieces and the hypothesis attention's rows are
    the target vocabulary's pieces (the same ids name other pieces in the source vocabulary)."""
    from explorer.analysis.beam import nbest_rows
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate
    from explorer.text.pieces import shown_pieces

    built = build_marian(tmp_path / "hf", shared=False, seed=5)
    import_marian(built.path, tmp_path / "ckpts" / "separate")
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(tmp_path / "ckpts"))
    ck = load_checkpoint(tmp_path / "ckpts" / "separate")
    result = translate(ck.model, ck.tokenizer, ["the big cat sees a small dog"], beam_size=3, n_best=3)[0]
    tokens = result.nbest[0].tokens
    assert ck.tokenizer.target_pieces(tokens) != ck.tokenizer.pieces(tokens), "the two vocabularies differ"
    rows = nbest_rows(result.nbest, ck.tokenizer, 0.6)
    assert rows[0]["pieces"] == " ".join(ck.tokenizer.target_pieces(tokens))
    at = open_page(
        "pages/beam.py", model="separate", beam_sentence="the big cat sees a small dog", beam_k="3", lang="en"
    )
    assert not at.exception, [e.message for e in at.exception]
    rows_shown = chart(at, "beam_attention")["layout"]["yaxis"]["ticktext"]
    assert [r.replace("&lt;", "<").replace("&gt;", ">") for r in rows_shown] == shown_pieces(
        ck.tokenizer.target_pieces(tokens)
    )


def test_the_picker_lists_imported_checkpoints_beside_the_shipped_ones(tmp_path, monkeypatch, one_torch_thread):
    """An import into checkpoints/ (the README's path) is offered in the sidebar beside the shipped models, by its
    folder's name; the app still opens on the shipped translator."""
    repo = Path(__file__).resolve().parents[2]
    root = tmp_path / "checkpoints"
    root.mkdir()
    for shipped in ("multi30k-en-de", "toy-reverse"):
        (root / shipped).symlink_to(repo / "checkpoints" / shipped, target_is_directory=True)
    built = build_marian(tmp_path / "hf", seed=4)
    import_marian(built.path, root / "opus-mt-en-de")
    monkeypatch.setenv("EXPLORER_CHECKPOINTS", str(root))
    at = open_page("pages/translate.py", lang="en")
    picker = at.sidebar.selectbox(key="model")
    assert picker.value == "multi30k-en-de"
    options = list(picker.options)
    assert "multi30k-en-de" in options and "toy-reverse" in options, options
    assert "opus-mt-en-de" in options, options


@pytest.fixture(scope="module")
def big_root(tmp_path_factory, one_torch_thread) -> Path:
    """An imported model with the big model's grid (6 + 6 layers x 16 heads) at a tiny width (d_model 64)."""
    root = tmp_path_factory.mktemp("big-checkpoints")
    built = build_marian(tmp_path_factory.mktemp("hf-big") / "hf", layers=6, heads=16, d_model=64, seed=5)
    import_marian(built.path, root / "opus-mt-big-grid")
    with checkpoints_at(root):
        yield root


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_on_an_imported_model_with_16_heads(big_root, page):
    """Pickers, grids and the tour's numbers sized by the model's own 6 layers and 16 heads, not the paper's 8."""
    at = open_page(f"pages/{page}.py", model="opus-mt-big-grid", sentence="the big cat sees a small dog")
    assert not at.exception
    assert at.sidebar.selectbox(key="model").value == "opus-mt-big-grid"
    if page == "heads":  # one switch per head: the last layer's 16th cross-attention head is there, and on
        assert at.checkbox(key="hm_cross_5_15").value is True
