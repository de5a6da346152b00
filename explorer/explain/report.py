"""One translation's attribution beside its attention: what the page's attribution section and
`explorer attribute` show. Builds on value_weighted, attribution and agreement."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.analysis.rollout import output_attribution
from explorer.explain.agreement import Agreement, mean_agreement, token_agreement
from explorer.explain.attribution import IG_STEPS, TokenAttribution, attribute
from explorer.explain.value_weighted import ValueWeighted, value_weighted
from explorer.inference import Translation
from explorer.model import Transformer


@dataclass(frozen=True)
class AttributionReport:
    """Attribution of some output tokens of one translation, and each token's agreement with attention.

    attributions: one per output token asked for, in the order asked; agreement[i] belongs to attributions[i].
    rollout: (tgt, src), the rollout of every output token to the source pieces.
    """

    explained: ValueWeighted
    attributions: tuple[TokenAttribution, ...]
    agreement: tuple[tuple[Agreement, ...], ...]
    rollout: np.ndarray

    @property
    def mean_agreement(self) -> list[Agreement]:
        """ρ of every attention kind averaged over the tokens attributed."""
        return mean_agreement(self.agreement)


def attribution_report(
    model: Transformer,
    translation: Translation,
    positions: Sequence[int] | None = None,
    *,
    n_steps: int = IG_STEPS,
    explained: ValueWeighted | None = None,
) -> AttributionReport:
    """Attribute the output tokens at `positions` (default all) of `translation` and rank-correlate each with the
    raw, value-weighted and rolled-out cross-attention. `explained` (from `value_weighted`) saves recomputing it."""
    if explained is None:
        explained = value_weighted(model, translation.source_ids, translation.output_ids)
    raw = explained.raw
    rollout = output_attribution(raw.encoder_self, raw.decoder_self, raw.cross)
    attributions = attribute(model, translation.source_ids, translation.output_ids, positions, n_steps=n_steps)
    weighted_cross = explained.weighted("cross")
    agreement = tuple(tuple(token_agreement(a, raw.cross, weighted_cross, rollout)) for a in attributions)
    return AttributionReport(explained, tuple(attributions), agreement, rollout)


def _number(value: float) -> float | None:
    """JSON has no NaN: a correlation without a value (a constant vector) is null."""
    return None if math.isnan(value) else round(float(value), 6)


def agreement_rows(rows: Sequence[Agreement]) -> list[dict[str, Any]]:
    """Agreement as plain rows (0-based layer and head; null head: the layer's mean, null layer: rollout)."""
    return [{"kind": r.kind, "layer": r.layer, "head": r.head, "method": r.method, "rho": _number(r.rho)} for r in rows]


def report_json(translation: Translation, report: AttributionReport) -> dict[str, Any]:
    """What `explorer attribute --json` prints for one sentence."""
    return {
        "source": translation.source,
        "translation": translation.output,
        "source_pieces": list(translation.source_pieces),
        "n_steps": report.attributions[0].n_steps if report.attributions else IG_STEPS,
        "tokens": [
            {
                "position": a.position,
                "piece": translation.target_output_pieces[a.position],
                "log_prob": _number(a.log_prob),
                "gradient_x_input": [_number(v) for v in a.gradient_x_input],
                "integrated_gradients": [_number(v) for v in a.integrated_gradients],
                "delta": _number(a.delta),
                "completeness_error": _number(a.completeness_error),
            }
            for a in report.attributions
        ],
        "agreement": agreement_rows(report.mean_agreement),
    }
