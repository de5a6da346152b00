"""Translate's search settings in the sidebar: beam size and length penalty α (the checkpoint's stored choice
as the defaults), and the no-repeat constraint; each kept in the URL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.checkpoint import Checkpoint, decoding_settings
from ui.i18n import t
from ui.model_picker import decoding_note
from ui.urlstate import bound_choice, bound_select_slider

BEAM_SIZES = list(range(1, 11))
ALPHA = 0.6  # Section 6.1: beam size 4, length penalty alpha = 0.6
ALPHAS = [round(0.1 * i, 1) for i in range(21)]
NO_REPEAT = (0, 2, 3, 4)  # 0: off, the search as the paper's


@dataclass(frozen=True)
class Decoding:
    """The search the page translates with."""

    beam: int
    alpha: float
    no_repeat: int  # 0: off

    @property
    def options(self) -> dict[str, Any]:
        """Keyword arguments of `translate_for`; no_repeat_ngram left out when off, so the search (and the cache
        key) stay as without the constraint."""
        options: dict[str, Any] = dict(beam_size=self.beam, alpha=self.alpha)
        if self.no_repeat:
            options["no_repeat_ngram"] = self.no_repeat
        return options

    def how(self) -> str:
        """'greedy decoding' or 'beam search, 4 beams, α = 0.6', in the page's language."""
        if self.beam == 1:
            return t("greedy decoding")
        return t("beam search, {beam} beams, α = {alpha}", beam=self.beam, alpha=self.alpha)


def _stored_slider(side: Any, label: str, options: list[Any], key: str, default: Any, **kwargs: Any) -> Any:
    """A select slider over `options` plus `default` (a checkpoint's stored choice need not be among them), kept in
    the URL; kwargs go to the widget."""
    return bound_select_slider(side, label, sorted({*options, default}), key, default, **kwargs)


def decoding_controls(side: Any, checkpoint: Checkpoint) -> Decoding:
    """The sliders and the constraint in `side` (the sidebar's controls slot). The beam and α stored with the
    model (chosen on its validation set) are the defaults; without them the page starts greedy, the quickest
    view of the attention."""
    stored = decoding_settings(checkpoint.metadata)
    default_beam, default_alpha = (stored.beam, stored.alpha) if stored else (1, ALPHA)
    beam = _stored_slider(
        side,
        t("Beam size"),
        BEAM_SIZES,
        "beam",
        default_beam,
        help=t(
            "1 is greedy decoding. The paper uses beam search with 4 beams and length penalty α = {alpha} "
            "(Section 6.1).",
            alpha=ALPHA,
        ),
    )
    alpha = _stored_slider(
        side,
        t("Length penalty α"),
        ALPHAS,
        "alpha",
        default_alpha,
        disabled=beam == 1,
        help=t(
            "Beam search ranks finished translations by log-probability / ((5 + length) / 6)^α (Section 6.1): a "
            "larger α favours longer outputs. Greedy decoding does not use it."
        ),
    )
    if stored is not None:
        # Under the sliders it sets, to compare a choice of one's own with; not in the main area, whose height
        # the attention figure needs at 1024x768 (the translation's own line says the beam and α in use).
        side.caption(decoding_note(stored, imported=checkpoint.metadata.get("imported_from") is not None))
    no_repeat = bound_choice(  # labelled options: the URL keeps the number (ui/urlstate.py)
        side.segmented_control,
        t("Forbid repeating n pieces"),
        NO_REPEAT,
        "no_repeat",
        0,
        cast=int,
        required=True,
        format_func=lambda n: t("Off") if n == 0 else str(n),
        help=t(
            "Off by default. When set to n, the search may not produce any n pieces in a row that the output "
            "already holds: it cannot loop, but it also cannot repeat a phrase that should repeat."
        ),
    )
    return Decoding(int(beam), float(alpha), int(no_repeat))
