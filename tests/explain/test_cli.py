"""`explorer attribute --json`: one object per sentence, one value per source piece for every output token."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_attribute_json_shape(words_checkpoint, capsys):
    sentence = "a man rides a bicycle ."
    status = main(["attribute", "-c", str(words_checkpoint), "--sentence", sentence, "--steps", "8", "--json"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0 and len(out) == 1
    result = json.loads(out[0])
    assert result["source"] == sentence and result["n_steps"] == 8
    n_source = len(result["source_pieces"])
    assert result["source_pieces"][-1] == "</s>"
    assert result["tokens"] and result["tokens"][-1]["piece"] == "</s>"
    for position, token in enumerate(result["tokens"]):
        assert token["position"] == position
        assert len(token["gradient_x_input"]) == len(token["integrated_gradients"]) == n_source
        # `delta` is what the integrated gradients sum to, but for what 8 steps miss.
        assert sum(token["integrated_gradients"]) - token["delta"] == pytest.approx(
            token["completeness_error"], abs=1e-4
        )
    kinds = {(row["kind"], row["method"]) for row in result["agreement"]}
    assert ("rollout", "integrated_gradients") in kinds and ("value_weighted", "gradient_x_input") in kinds
    assert len(result["agreement"]) == 2 * (
        2 * 2 * (2 + 1) + 1
    )  # methods × (kinds × layers × (heads + mean) + rollout)


def test_attribute_refuses_too_few_steps(words_checkpoint, capsys):
    status = main(["attribute", "-c", str(words_checkpoint), "--sentence", "a dog .", "--steps", "1"])
    assert status == 2 and "--steps must be at least 2" in capsys.readouterr().err
