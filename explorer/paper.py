"""The paper's constants and vocabulary, in one place: "Attention Is All You Need" (Vaswani et al., 2017).

- the three attention families (Section 3.2.3): their keys, their labels as message ids, and the short
  spelling head names use;
- Table 1 (Section 4): the layer types and their complexity, sequential operations and path length as printed;
- Table 2: every row, BLEU and training cost in FLOPs, and the method of Section 6.1 (footnote 5);
- Table 3: every row, with the model fields it changes, so parameter counts can be set beside the paper's;
- the training constants of Section 5 the app quotes.

The base and big models' hyperparameters are `explorer.config.PRESETS` (ModelConfig's defaults are the base
model). Labels are English message ids: callers show them through `t(...)` / `explorer.i18n.translate`, and
the Korean lives in explorer/locale/ko/LC_MESSAGES/*.po.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.config import ModelConfig, count_parameters

# ---- the attention families (Section 3.2.3) -------------------------------------------------------------

# The families' keys, in the paper's order: the fields of `AttentionMaps` / `SentenceAttention`, the `family`
# of links and of `Transformer.forward(inspect=...)`.
FAMILIES: tuple[str, ...] = ("encoder_self", "decoder_self", "cross")

# Labels (message ids) of each family; the paper calls the cross family "encoder-decoder attention".
FAMILY_TITLES: dict[str, str] = {
    "encoder_self": "Encoder self-attention",
    "decoder_self": "Decoder self-attention (masked)",
    "cross": "Encoder-decoder attention",
}
# The same, where a control has little room.
FAMILY_SHORT: dict[str, str] = {"encoder_self": "Encoder self", "decoder_self": "Decoder self", "cross": "Cross"}

# How head names (`FAMILY.LAYER.HEAD`: the command line, links, tables) and `HeadMask`'s fields spell each
# family: short, as a user types them. Derived from FAMILIES, so the two spellings cannot drift apart.
HEAD_CODES: dict[str, str] = {"encoder_self": "enc", "decoder_self": "dec", "cross": "cross"}
HEAD_FAMILIES: tuple[str, ...] = tuple(HEAD_CODES[f] for f in FAMILIES)
FAMILY_FIELDS: dict[str, str] = {code: family for family, code in HEAD_CODES.items()}  # head code -> family key
HEAD_FAMILY_TITLES: dict[str, str] = {HEAD_CODES[f]: FAMILY_TITLES[f] for f in FAMILIES}  # head code -> label

# ---- Table 1 (Section 4) ----------------------------------------------------------------------------------

SELF_ATTENTION = "self_attention"
RECURRENT = "recurrent"
CONVOLUTIONAL = "convolutional"
RESTRICTED = "self_attention_restricted"
# Rows of Table 1, in the paper's order.
LAYER_TYPES: tuple[str, ...] = (SELF_ATTENTION, RECURRENT, CONVOLUTIONAL, RESTRICTED)

# The convolutional row's path length depends on the kernel layout (Section 4): O(n/k) layers for contiguous
# kernels, O(log_k(n)) for dilated ones. Table 1 quotes the dilated figure.
CONV_CONTIGUOUS = "convolutional_contiguous"
CONV_DILATED = "convolutional_dilated"
PATH_LAYERS: tuple[str, ...] = (SELF_ATTENTION, RECURRENT, CONV_CONTIGUOUS, CONV_DILATED, RESTRICTED)

LAYER_LABELS: dict[str, str] = {
    SELF_ATTENTION: "Self-Attention",
    RECURRENT: "Recurrent",
    CONVOLUTIONAL: "Convolutional",
    RESTRICTED: "Self-Attention (restricted)",
    CONV_CONTIGUOUS: "Convolutional (contiguous)",
    CONV_DILATED: "Convolutional (dilated)",
}


@dataclass(frozen=True)
class Formulas:
    """One row of Table 1 as the paper prints it."""

    complexity: str
    sequential: str
    max_path: str


FORMULAS: dict[str, Formulas] = {
    SELF_ATTENTION: Formulas("O(n²·d)", "O(1)", "O(1)"),
    RECURRENT: Formulas("O(n·d²)", "O(n)", "O(n)"),
    CONVOLUTIONAL: Formulas("O(k·n·d²)", "O(1)", "O(log_k(n))"),
    RESTRICTED: Formulas("O(r·n·d)", "O(1)", "O(n/r)"),
}

# ---- Table 2 ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table2Row:
    """One row of Table 2: BLEU on newstest2014 and training cost in FLOPs; None where the paper gives none
    (the Transformer rows give one cost for both language pairs)."""

    model: str
    bleu_en_de: float | None
    bleu_en_fr: float | None
    flops_en_de: float | None
    flops_en_fr: float | None


TABLE2: tuple[Table2Row, ...] = (
    Table2Row("ByteNet", 23.75, None, None, None),
    Table2Row("Deep-Att + PosUnk", None, 39.2, None, 1.0e20),
    Table2Row("GNMT + RL", 24.6, 39.92, 2.3e19, 1.4e20),
    Table2Row("ConvS2S", 25.16, 40.46, 9.6e18, 1.5e20),
    Table2Row("MoE", 26.03, 40.56, 2.0e19, 1.2e20),
    Table2Row("Deep-Att + PosUnk Ensemble", None, 40.4, None, 8.0e20),
    Table2Row("GNMT + RL Ensemble", 26.30, 41.16, 1.8e20, 1.1e21),
    Table2Row("ConvS2S Ensemble", 26.36, 41.29, 7.7e19, 1.2e21),
    Table2Row("Transformer (base model)", 27.3, 38.1, 3.3e18, 3.3e18),
    Table2Row("Transformer (big)", 28.4, 41.8, 2.3e19, 2.3e19),
)
# Table 2 of the final version prints 41.8 for the big model on EN-FR; the text of Section 6.1 (and Table 2 of
# the first version) says 41.0.
BIG_EN_FR_IN_TEXT = 41.0

# Section 6.1: training FLOPs = training time × number of GPUs × sustained single-precision throughput per GPU;
# footnote 5 gives the throughputs (FLOP/s).
GPU_FLOPS: dict[str, float] = {"K80": 2.8e12, "K40": 3.7e12, "M40": 6.0e12, "P100": 9.5e12}
# Section 5.2: 8 P100 GPUs; base 100k steps of about 0.4 s (12 hours), big 300k steps of 1.0 s (3.5 days).
PAPER_GPUS = 8
PAPER_TRAINING_S = {"Transformer (base model)": 12 * 3600.0, "Transformer (big)": 3.5 * 24 * 3600.0}


def training_flops(seconds: float, gpus: int, flops_per_gpu: float) -> float:
    """Section 6.1's estimate: time × GPUs × sustained throughput (base: 12 h × 8 × 9.5 TFLOPS ≈ 3.3·10^18)."""
    return seconds * gpus * flops_per_gpu


# ---- Table 3 ----------------------------------------------------------------------------------------------

PAPER_VOCAB = 37_000  # the shared source-target vocabulary of Section 5.1, which Table 3's counts assume


@dataclass(frozen=True)
class Table3Row:
    """One row of Table 3 (newstest2013, dev).

    fields: the ModelConfig fields that change from the base model; None where the row changes training
    (dropout, label smoothing), not the model's shape.
    """

    group: str  # "base", "(A)" … "(E)", "big"
    change: str  # what the row changes, as the paper writes it
    ppl: float
    bleu: float
    paper_millions: float | None  # the paper's parameter count ×10^6, where it gives one
    fields: dict[str, Any] | None

    @property
    def label(self) -> str:
        return self.group if self.group in ("base", "big") else f"{self.group} {self.change}"

    def config(self, vocab_size: int = PAPER_VOCAB) -> ModelConfig:
        """The row's model (the base model's for a row that changes training only)."""
        return ModelConfig(vocab_size=vocab_size).replace(**(self.fields or {}))

    def parameters(self, vocab_size: int = PAPER_VOCAB) -> int:
        """The engine's parameter count of the row's model."""
        return count_parameters(self.config(vocab_size))


TABLE3: tuple[Table3Row, ...] = (
    Table3Row("base", "N=6, d_model=512, d_ff=2048, h=8, d_k=d_v=64", 4.92, 25.8, 65, {}),
    Table3Row("(A)", "h=1, d_k=d_v=512", 5.29, 24.9, None, dict(n_heads=1, d_k=512, d_v=512)),
    Table3Row("(A)", "h=4, d_k=d_v=128", 5.00, 25.5, None, dict(n_heads=4, d_k=128, d_v=128)),
    Table3Row("(A)", "h=16, d_k=d_v=32", 4.91, 25.8, None, dict(n_heads=16, d_k=32, d_v=32)),
    Table3Row("(A)", "h=32, d_k=d_v=16", 5.01, 25.4, None, dict(n_heads=32, d_k=16, d_v=16)),
    Table3Row("(B)", "d_k=16", 5.16, 25.1, 58, dict(d_k=16, d_v=64)),
    Table3Row("(B)", "d_k=32", 5.01, 25.4, 60, dict(d_k=32, d_v=64)),
    Table3Row("(C)", "N=2", 6.11, 23.7, 36, dict(n_encoder_layers=2, n_decoder_layers=2)),
    Table3Row("(C)", "N=4", 5.19, 25.3, 50, dict(n_encoder_layers=4, n_decoder_layers=4)),
    Table3Row("(C)", "N=8", 4.88, 25.5, 80, dict(n_encoder_layers=8, n_decoder_layers=8)),
    Table3Row("(C)", "d_model=256, d_k=d_v=32", 5.75, 24.5, 28, dict(d_model=256, d_k=32, d_v=32)),
    Table3Row("(C)", "d_model=1024, d_k=d_v=128", 4.66, 26.0, 168, dict(d_model=1024, d_k=128, d_v=128)),
    Table3Row("(C)", "d_ff=1024", 5.12, 25.4, 53, dict(d_ff=1024)),
    Table3Row("(C)", "d_ff=4096", 4.75, 26.2, 90, dict(d_ff=4096)),
    Table3Row("(D)", "P_drop=0.0", 5.77, 24.6, None, None),
    Table3Row("(D)", "P_drop=0.2", 4.95, 25.5, None, None),
    Table3Row("(D)", "ε_ls=0.0", 4.67, 25.3, None, None),
    Table3Row("(D)", "ε_ls=0.2", 5.47, 25.7, None, None),
    Table3Row("(E)", "positional embedding instead of sinusoids", 4.92, 25.7, None, dict(positional="learned")),
    Table3Row(
        "big",
        "N=6, d_model=1024, d_ff=4096, h=16, P_drop=0.3",
        4.33,
        26.4,
        213,
        dict(d_model=1024, n_heads=16, d_ff=4096, dropout=0.3),
    ),
)


def parameter_comparison(vocab_size: int = PAPER_VOCAB) -> list[tuple[Table3Row, int, float]]:
    """The rows the paper gives a parameter count for, each with the engine's count of its model and the
    relative difference (ours / paper - 1)."""
    compared = []
    for row in TABLE3:
        if row.paper_millions is not None:
            ours = row.parameters(vocab_size)
            compared.append((row, ours, ours / (row.paper_millions * 1e6) - 1.0))
    return compared


# ---- training (Section 5) ---------------------------------------------------------------------------------

PAPER_WARMUP, PAPER_STEPS = 4000, 100_000  # warmup_steps of Eq. 3; the base model's training steps (5.2)
PAPER_ADAM = (0.9, 0.98, 1e-9)  # Section 5.3: Adam's β₁, β₂, ε
PAPER_DROPOUT = 0.1  # Section 5.4: P_drop of the base model
