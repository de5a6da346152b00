"""The explain page's computations, each cached per checkpoint (ui/model_cache.py's one result cache) by what
it depends on, under a spinner: the page reruns on every click and must not recompute."""

from __future__ import annotations

from explorer.explain.report import AttributionReport, attribution_report
from explorer.explain.value_weighted import ValueWeighted, value_weighted
from explorer.inference import Translation
from explorer.model.head_mask import HeadMask
from ui.model_cache import cached
from ui.model_picker import Selection


def _ids(translation: Translation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(translation.source_ids), tuple(translation.output_ids)


def explained_for(selection: Selection, translation: Translation, head_mask: HeadMask | None = None) -> ValueWeighted:
    """Raw and value-weighted attention of every head of `translation`; `head_mask`: the heads it was decoded
    without (an ablated translation), switched off again for its attention."""
    source, output = _ids(translation)
    masked = () if head_mask is None else (tuple(head_mask.off()), head_mask.means is not None)
    return cached(
        "explain_values",
        selection,
        (source, output, masked),
        lambda ck: value_weighted(ck.model, source, output, head_mask),
    )


def attribution_for(selection: Selection, translation: Translation, position: int, n_steps: int) -> AttributionReport:
    """Attribution of output row `position` with `n_steps` integration steps, and its agreement with attention."""
    explained = explained_for(selection, translation)
    return cached(
        "explain_attribution",
        selection,
        (*_ids(translation), position, n_steps),
        lambda ck: attribution_report(ck.model, translation, [position], n_steps=n_steps, explained=explained),
    )
