"""Rows of the paper's Table 3 that report a parameter count, as ModelConfigs (vocabulary 37000, Section 5.1)."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.config import ModelConfig, count_parameters, preset

PAPER_VOCAB = 37_000


@dataclass(frozen=True)
class Table3Row:
    label: str
    config: ModelConfig
    paper_millions: float

    @property
    def ours(self) -> int:
        return count_parameters(self.config)

    @property
    def relative_error(self) -> float:
        return self.ours / (self.paper_millions * 1e6) - 1.0


def table3_rows(vocab_size: int = PAPER_VOCAB) -> list[Table3Row]:
    base = preset("base", vocab_size=vocab_size)
    rows = [
        ("base", base, 65),
        ("(B) d_k=16", base.replace(d_k=16), 58),
        ("(B) d_k=32", base.replace(d_k=32), 60),
        ("(C) N=2", base.replace(n_encoder_layers=2, n_decoder_layers=2), 36),
        ("(C) N=4", base.replace(n_encoder_layers=4, n_decoder_layers=4), 50),
        ("(C) N=8", base.replace(n_encoder_layers=8, n_decoder_layers=8), 80),
        ("(C) d_model=256", base.replace(d_model=256, d_k=32, d_v=32), 28),
        ("(C) d_model=1024", base.replace(d_model=1024, d_k=128, d_v=128), 168),
        ("(C) d_ff=1024", base.replace(d_ff=1024), 53),
        ("(C) d_ff=4096", base.replace(d_ff=4096), 90),
        ("big", preset("big", vocab_size=vocab_size), 213),
    ]
    return [Table3Row(label, config, paper) for label, config, paper in rows]
