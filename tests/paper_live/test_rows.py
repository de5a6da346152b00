"""Table 3's rows (B), (D) and (E) and Section 6.3's parsing, made live: the stored results shipped with the app,
the bracket task on the Train page's task list, the decoding settings that change for parsing, and the scoring
that the stored results and a visitor's background runs share."""

from __future__ import annotations

import math
import re

import pytest

from explorer.data import TASKS, make_splits
from explorer.i18n import translate
from explorer.tour import parsing, table3_rows
from explorer.tour.variants import ROWS, row_config, row_data, row_train_config
from ui.positional.learned_source import SOURCE_LABELS
from ui.tour.table3_live import ROW_TEXTS

HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.mark.parametrize("letter", ["A", "B", "D", "E"])
def test_each_row_ships_its_pair_scored_beside_the_papers_row(letter):
    result = table3_rows.load(letter)
    assert result is not None, f"make it with {table3_rows.command(letter)}"
    assert [v.label for v in result.variants] == [v.label for v in ROWS[letter].variants]
    for v in result.variants:
        assert v.steps > 0 and v.parameters > 0 and 0 <= v.exact <= 1 and 0 <= v.bleu <= 100
        assert math.isclose(v.perplexity, math.exp(v.val_loss)) and v.perplexity >= 1
    base, changed = table3_rows.paper_rows(letter)
    assert base.group == "base" and changed.group == f"({letter})"
    if letter == "A":
        assert result.variants[0].parameters == result.variants[1].parameters, "h·d_k = d_model kept"
    if letter == "B":
        assert result.variants[1].parameters < result.variants[0].parameters, "a smaller d_k, fewer parameters"
    if letter == "E":
        sinusoidal, learned = result.variants
        assert sorted(learned.by_length) == list(range(ROWS["E"].min_len, table3_rows.LONGEST_TESTED + 1))
        assert sinusoidal.positions is None and learned.positions is not None
        assert learned.positions.shape == (ROWS["E"].max_positions, 64)


@pytest.mark.usefixtures("one_torch_thread")
def test_scoring_outside_the_trainer_gives_the_trainers_validation_loss():
    from explorer.training.trainer import Trainer

    row = ROWS["B"]
    train, val, tokenizer = row_data(row)
    variant = row.variants[1]
    config = row_config(row, variant, tokenizer.vocab_size)
    trainer = Trainer(config, row_train_config(row, variant, 1), tokenizer, train, val, None)
    # The freshly made model: the two ways of scoring it read the same batches the same way.
    ours = table3_rows.validation_loss(trainer.model, tokenizer, val)
    assert ours == pytest.approx(trainer.validation_loss(), rel=1e-5) and ours > 1.0


def test_the_bracket_task_outputs_a_tree_longer_than_its_input():
    assert "bracket" in TASKS, "the Train page's task list is TASKS"
    assert parsing.reference("c f a b d") == "( ( c f ) ( a b d ) )"
    train, _ = make_splits("bracket", 50, 10, seed=0, min_len=3, max_len=8)
    for source, target in zip(train.source, train.target, strict=True):
        tokens = target.split()
        assert len(tokens) > len(source.split()) + 2
        assert [t for t in tokens if t not in "()"] == source.split(), "the symbols in order, brackets around"
        assert tokens.count("(") == tokens.count(")")


def test_parsing_keeps_the_papers_table_4_and_its_decoding():
    rows = {(r.parser, r.training): r.f1 for r in parsing.TABLE4}
    assert rows[("Transformer (4 layers)", "WSJ only, discriminative")] == 91.3
    assert rows[("Transformer (4 layers)", "semi-supervised")] == 92.7
    assert max(rows.values()) == rows[("Dyer et al. (2016)", "generative")] == 93.3
    assert (parsing.PARSER_EXTRA, parsing.PARSER_BEAM, parsing.PARSER_ALPHA) == (300, 21, 0.3)


def test_the_stored_bracket_model_is_cut_by_a_short_limit_and_not_by_the_parsers():
    stored = parsing.load()
    assert stored is not None, f"make it with {parsing.COMMAND}"
    assert len(stored.decoded) == len(parsing.SETTINGS) * len(parsing.INPUTS)
    for d in stored.decoded:
        if d.extra == parsing.SHORT_EXTRA:
            assert d.length < len(d.reference.split()), d
    parser = [d for d in stored.decoded if (d.beam, d.alpha) == (parsing.PARSER_BEAM, parsing.PARSER_ALPHA)]
    assert any(d.correct for d in parser), "the parser's settings give at least one whole tree"


def test_the_new_messages_that_the_code_names_indirectly_have_korean():
    messages = [
        *(text for text in ROW_TEXTS.values()),
        *SOURCE_LABELS.values(),
        *{r.training for r in parsing.TABLE4},
        TASKS["bracket"].description,
    ]
    for message in messages:
        korean = translate(message, "ko", low=2, high=10, longest=20)
        assert HANGUL.search(korean), message


def test_the_sidebar_counts_the_saves_the_shipped_weights_average():
    from pathlib import Path

    from ui.model_picker import averaged_count

    shipped = Path(__file__).resolve().parents[2] / "checkpoints" / "multi30k-en-de"
    if not (shipped / "config.json").is_file():
        pytest.skip("the shipped checkpoint checkpoints/multi30k-en-de is absent")
    assert averaged_count(str(shipped)) == 4
    assert averaged_count(str(shipped.parent / "no-such-model")) == 0
