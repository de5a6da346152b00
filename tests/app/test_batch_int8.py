"""The Translate page's batch upload with the int8 switch: the file is translated by the one shared
int8 copy of the model, the table and its download say which model translated, and the result cache never hands
a float result to an int8 request or the other way round."""

from __future__ import annotations

import csv
import io

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.quantize import is_quantized, quantize_int8
from tests.apptest_helpers import open_page
from ui.attention_view import rows_to_delimited
from ui.model_cache import int8_unavailable, load_int8_model, load_model, result_cache, translate_for
from ui.model_picker import Selection, weights_version
from ui.translate.batch import batch_rows

PAGE = "pages/translate.py"
# More than explorer.serving.MAX_QUEUED_CALL sentences: the upload's one chunk is translated in one call, as the
# engine below translates them. (Fewer would go through the batching queue, whose batches depend on timing, and
# int8 scores depend on the batch: its activations are quantized with one scale per batch.)
LINES = ["a b c", "d e f g", "b a d c a b", "c c a", "g f e d", "a", "b d", "e e f f", "d c b a", "f a"]
N = len(LINES)


@pytest.fixture
def spy(monkeypatch):
    """The models explorer.serving translated with, in order (the batch path and the batching worker both
    call explorer.serving.translate); the result cache starts and ends empty, so every translation is made
    here and none of this test's results reach other tests."""
    import explorer.serving

    real, models = explorer.serving.translate, []

    def recording(model, *args, **kwargs):
        models.append(model)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(explorer.serving, "translate", recording)
    result_cache().clear()
    yield models
    result_cache().clear()


def engine_scores(model, tokenizer) -> list[float]:
    return [round(t.score, 4) for t in translate(model, tokenizer, LINES)]


def upload(at):
    at.file_uploader(key="upload").upload("batch.txt", "\n".join(LINES).encode(), "text/plain").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_int8_switch_translates_the_upload_with_the_shared_int8_model(checkpoint_root, reverse_checkpoint, spy):
    ck = load_checkpoint(reverse_checkpoint)
    float_scores = engine_scores(ck.model, ck.tokenizer)
    int8_scores = engine_scores(quantize_int8(ck.model), ck.tokenizer)
    assert float_scores != int8_scores, "the fixture should tell the two models apart by their scores"

    at = open_page(PAGE, model="reverse-fixture", input="file")
    switch = at.toggle(key="int8")
    assert switch.value is False and not switch.disabled, "off by default, usable on the CPU"
    assert "0.3 BLEU" in switch.help and "CPU only" in switch.help and "float model" in switch.help

    upload(at)
    table = at.dataframe[0].value
    assert list(table["model"]) == ["float"] * N
    assert list(table["score"]) == float_scores
    assert not any(is_quantized(m) for m in spy)
    assert not any("int8 model" in c.value for c in at.caption)

    spy.clear()
    at.toggle(key="int8").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[0].value
    assert list(table["model"]) == ["int8"] * N
    assert list(table["score"]) == int8_scores, "int8 results, not the cached float ones"
    shared = load_int8_model(str(reverse_checkpoint), weights_version(str(reverse_checkpoint)))
    assert is_quantized(shared)
    assert any(m is shared for m in spy), "the upload is translated by the one cached int8 model"
    assert all(m is shared or not is_quantized(m) for m in spy), "no second int8 model"
    assert any("Translated with the int8 model" in c.value for c in at.caption)
    # A row looked at in detail, with its attention, is translated by the float model.
    spy.clear()
    at.selectbox(key="row").set_value(2).run()
    assert not at.exception, [e.message for e in at.exception]
    assert spy and not any(is_quantized(m) for m in spy)
    shared_float = load_model(str(reverse_checkpoint), "cpu", weights_version(str(reverse_checkpoint))).model
    assert shared is not shared_float and not is_quantized(shared_float), "the float model is left as it was"

    # Back to float: the float results come from the cache, not the int8 ones under the same sentences.
    spy.clear()
    at.toggle(key="int8").set_value(False).run()
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[0].value
    assert list(table["model"]) == ["float"] * N and list(table["score"]) == float_scores
    assert not any(is_quantized(m) for m in spy)


def test_int8_results_are_keyed_apart_and_the_int8_model_is_made_once(reverse_checkpoint, spy):
    selection = Selection(str(reverse_checkpoint), "cpu", weights_version(str(reverse_checkpoint)))
    first = translate_for(selection, LINES, with_attention=False, int8=True)
    plain = translate_for(selection, LINES, with_attention=False)
    again = translate_for(selection, LINES, with_attention=False, int8=True)
    assert again is first and plain is not first, "each from its own cache entry"
    assert [t.score for t in plain] != [t.score for t in first]
    assert len(spy) == 2 and is_quantized(spy[0]) and not is_quantized(spy[1])
    assert load_int8_model(selection.path, selection.version) is spy[0], "one int8 copy for every session"
    assert translate_for(selection, LINES, with_attention=False) is plain
    with pytest.raises(ValueError, match="float model"):
        translate_for(selection, LINES, with_attention=True, int8=True)


def test_the_switch_is_off_on_a_gpu():
    assert not int8_unavailable("cpu")
    assert int8_unavailable("cuda") and int8_unavailable("cuda:1")


def test_the_switch_is_disabled_with_a_note_when_the_model_is_on_a_gpu(checkpoint_root, monkeypatch, spy):
    """A machine with CUDA, pretended: the sidebar offers "cuda" and the model (on the CPU here) loads under it.
    A switch left on from before is disabled and not used."""
    import ui.model_cache
    import ui.model_picker

    monkeypatch.setattr(ui.model_picker, "available_devices", lambda: ["cuda", "cpu"])
    monkeypatch.setattr(ui.model_cache, "resolve_device", lambda name: torch.device("cpu"))
    load_model.clear()
    try:
        at = open_page(PAGE, model="reverse-fixture", input="file", state={"device": "cuda", "int8": True})
        assert at.toggle(key="int8").disabled
        assert any("int8 runs on the CPU only and the model is on cuda" in c.value for c in at.caption)
        upload(at)
        assert list(at.dataframe[0].value["model"]) == ["float"] * N
        assert spy and not any(is_quantized(m) for m in spy)
    finally:
        load_model.clear()  # the CPU model filed under "cuda" goes


def test_the_table_and_its_download_say_which_model_translated(reverse_checkpoint):
    ck = load_checkpoint(reverse_checkpoint)
    batch = [[t] for t in translate(ck.model, ck.tokenizer, LINES)]
    for int8, name in ((True, "int8"), (False, "float")):
        rows = list(csv.DictReader(io.StringIO(rows_to_delimited(batch_rows(LINES, batch, int8=int8)))))
        assert [row["model"] for row in rows] == [name] * N
        assert [row["source"] for row in rows] == LINES
