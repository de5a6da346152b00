"""The numbers each stop of the tour shows, computed from the loaded model on the tour's sentence.

Pure functions of (model, tokenizer, translation): no streamlit, so the page caches them and the tests call
them directly. Shapes are given at each boundary; arrays come back as float64 numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from explorer.analysis.step_by_step import decoder_input, inspect_translation, softmax
from explorer.config import ModelConfig, count_parameters
from explorer.decoding.policy import length_penalty
from explorer.inference import Translation, translate
from explorer.model import Transformer
from explorer.model.transformer import causal_mask
from explorer.paper import PAPER_VOCAB, PAPER_WARMUP, TABLE3
from explorer.tokenizer import Tokenizer
from explorer.training.schedule import noam_learning_rate

# ---- stop 1: the tensors of Figure 1 ---------------------------------------------------------------------

# Blocks of Figure 1, bottom to top, as (id, label); the diagram draws them and the page shows their tensor.
ENCODER_BLOCKS = (
    ("src_embedding", "Input embedding + PE"),
    ("enc_self_attention", "Multi-head attention"),
    ("enc_norm_1", "Add & Norm"),
    ("enc_ffn", "Feed forward"),
    ("enc_norm_2", "Add & Norm"),
)
DECODER_BLOCKS = (
    ("tgt_embedding", "Output embedding + PE"),
    ("dec_self_attention", "Masked multi-head"),
    ("dec_norm_1", "Add & Norm"),
    ("dec_cross_attention", "Multi-head attention"),
    ("dec_norm_2", "Add & Norm"),
    ("dec_ffn", "Feed forward"),
    ("dec_norm_3", "Add & Norm"),
    ("linear", "Linear"),
    ("softmax", "Softmax"),
)
BLOCK_LABELS = dict(ENCODER_BLOCKS + DECODER_BLOCKS)


@dataclass(frozen=True)
class BlockTensor:
    block: str
    shape: tuple[int, ...]  # (tokens, features) of the one sentence
    rows: list[str]  # the token of each row
    values: np.ndarray  # (tokens, features) float64, the whole tensor


def _tensors(model: Transformer, translation: Translation) -> tuple[torch.Tensor, torch.Tensor]:
    config = model.config
    device = next(model.parameters()).device
    src = torch.tensor([list(translation.source_ids)], dtype=torch.long, device=device)
    tgt = torch.tensor(
        [decoder_input(translation.output_ids, config.bos_id, config.max_len)], dtype=torch.long, device=device
    )
    return src, tgt


@torch.inference_mode()
def block_tensors(model: Transformer, translation: Translation, layer: int = 0) -> dict[str, BlockTensor]:
    """The tensor leaving every block of Figure 1 for this sentence (teacher-forced on its translation).

    `layer` (0-based) picks which encoder and decoder layer the per-layer blocks show. Forward hooks are
    registered for this one pass and removed before returning: nothing is kept on the shared model.
    """
    config = model.config
    assert 0 <= layer < min(config.n_encoder_layers, config.n_decoder_layers), (
        f"layer must be in 0..{min(config.n_encoder_layers, config.n_decoder_layers) - 1}, got {layer}"
    )
    captured: dict[str, torch.Tensor] = {}
    embeddings: list[torch.Tensor] = []

    def keep(name: str) -> Callable[[nn.Module, Any, Any], None]:
        def hook(_module: nn.Module, _inputs: Any, output: Any) -> None:
            captured[name] = getattr(output, "output", output)[0].detach()

        return hook

    enc, dec = model.encoder_layers[layer], model.decoder_layers[layer]
    hooks = [
        model.embedding_dropout.register_forward_hook(lambda _m, _i, out: embeddings.append(out[0].detach())),
        enc.self_attention.register_forward_hook(keep("enc_self_attention")),
        enc.attention_residual.register_forward_hook(keep("enc_norm_1")),
        enc.feed_forward.register_forward_hook(keep("enc_ffn")),
        enc.ffn_residual.register_forward_hook(keep("enc_norm_2")),
        dec.self_attention.register_forward_hook(keep("dec_self_attention")),
        dec.self_residual.register_forward_hook(keep("dec_norm_1")),
        dec.cross_attention.register_forward_hook(keep("dec_cross_attention")),
        dec.cross_residual.register_forward_hook(keep("dec_norm_2")),
        dec.feed_forward.register_forward_hook(keep("dec_ffn")),
        dec.ffn_residual.register_forward_hook(keep("dec_norm_3")),
    ]
    try:
        src, tgt = _tensors(model, translation)
        logits = model(src, tgt).logits[0]
    finally:
        for handle in hooks:
            handle.remove()
    assert len(embeddings) == 2, f"expected the source and the target embedding, got {len(embeddings)}"
    captured["src_embedding"], captured["tgt_embedding"] = embeddings
    captured["linear"] = logits
    captured["softmax"] = torch.softmax(logits.float(), dim=-1)
    source_rows, target_rows = list(translation.source_pieces), list(translation.target_input_pieces)
    result = {}
    for block, tensor in captured.items():
        rows = source_rows if block.startswith(("src", "enc")) else target_rows
        values = tensor.double().cpu().numpy()
        result[block] = BlockTensor(block, tuple(values.shape), rows[: values.shape[0]], values)
    return result


# ---- stop 2: Eq. 1 with and without ÷√d_k ---------------------------------------------------------------


@dataclass(frozen=True)
class ScaledHead:
    """One head of encoder self-attention (layer `layer`, head `head`, 0-based) on this sentence."""

    layer: int
    head: int
    d_k: int
    tokens: list[str]
    query: np.ndarray  # (n, d_k)
    key: np.ndarray  # (n, d_k)
    value: np.ndarray  # (n, d_v)
    scaled_weights: np.ndarray  # (n, n) softmax(QKᵀ/√d_k)
    unscaled_weights: np.ndarray  # (n, n) softmax(QKᵀ)
    output: np.ndarray  # (n, d_v) softmax(QKᵀ/√d_k) V

    @staticmethod
    def entropy(weights: np.ndarray) -> np.ndarray:
        """(n,) entropy of each row in nats."""
        return -(weights * np.log(np.clip(weights, 1e-300, None))).sum(axis=-1)


def scaled_head(model: Transformer, translation: Translation, layer: int = 0, head: int = 0) -> ScaledHead:
    inspected = inspect_translation(model, translation, "encoder_self", layer)
    scores = inspected.scores[head]  # (n, n), Q Kᵀ before scaling
    masked = np.where(inspected.mask, scores, -np.inf)
    return ScaledHead(
        layer,
        head,
        inspected.d_k,
        list(inspected.query_pieces),
        inspected.query[head],
        inspected.key[head],
        inspected.value[head],
        inspected.weights[head],
        softmax(masked),
        inspected.head_outputs[head],
    )


# ---- stop 3: the three uses, side by side ----------------------------------------------------------------


def strongest_cross_row(cross: np.ndarray, layer: int, head: int, skip_last: bool = True) -> int:
    """The output position whose cross-attention in (layer, head) is most confident: the clearest question.

    cross (layers, heads, tgt, src). The final row (the one producing </s>) is skipped when possible.
    """
    rows = cross[layer, head]
    candidates = range(rows.shape[0] - 1 if skip_last and rows.shape[0] > 1 else rows.shape[0])
    return max(candidates, key=lambda t: float(rows[t].max()))


# ---- stop 4: FFN and embeddings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedForwardActivity:
    layer: int
    tokens: list[str]
    hidden: np.ndarray  # (n, d_ff) activation(x W1 + b1) of the encoder layer's FFN (ReLU: max(0, ·), Eq. 2)
    zero_fraction: float  # share of hidden units that are exactly zero (ReLU's; swish and GELU make almost none)
    embedding_norm: np.ndarray  # (n,) ‖E[token]‖ before scaling
    scaled_norm: np.ndarray  # (n,) ‖E[token]·√d_model‖
    positional_norm: np.ndarray  # (n,) ‖PE(pos)‖
    shared: bool  # one matrix for both embeddings and the output projection (Section 3.4)
    activation: str  # the model's feed-forward activation (explorer.config.ACTIVATIONS)
    off_fraction: float  # share of pre-activations ≤ 0: units the activation switches off or squeezes near 0


@torch.inference_mode()
def feed_forward_activity(model: Transformer, translation: Translation, layer: int = 0) -> FeedForwardActivity:
    ffn = model.encoder_layers[layer].feed_forward
    inputs: list[torch.Tensor] = []
    handle = ffn.register_forward_hook(lambda _m, args, _out: inputs.append(args[0][0].detach()))
    try:
        src, tgt = _tensors(model, translation)
        model.encode(src)
    finally:
        handle.remove()
    # The model's own activation (an imported Marian model's swish or GELU), not the paper's ReLU.
    pre = ffn.w_1(inputs[0])
    hidden = ffn.activation(pre).double().cpu().numpy()
    ids = torch.tensor(list(translation.source_ids), device=src.device)
    raw = model.embedding(ids).double()
    positions = model.positional_table("source")[: len(ids)].double()
    shared = model.config.share_embeddings and model.target_embedding is model.embedding
    return FeedForwardActivity(
        layer,
        list(translation.source_pieces),
        hidden,
        float((hidden == 0).mean()),
        raw.norm(dim=-1).cpu().numpy(),
        (raw * model.embedding_scale).norm(dim=-1).cpu().numpy(),
        positions.norm(dim=-1).cpu().numpy(),
        bool(shared),
        model.config.activation,
        float((pre <= 0).double().mean()),
    )


# ---- stop 5: positional encoding --------------------------------------------------------------------------


def positions_of(model: Transformer, n: int) -> np.ndarray:
    """(n, d_model) the positional vectors this model adds to the first n source tokens, with the dimensions in
    the paper's order (Section 3.5: sin in 2i, cos in 2i+1) whatever order the model stores them in: an imported
    Marian model keeps the sines in the first half and the cosines in the second (position_layout "split")."""
    table = model.positional_table("source")[:n].double().cpu().numpy()
    if model.config.positional == "sinusoidal" and model.config.position_layout == "split":
        half = (table.shape[1] + 1) // 2
        interleaved = np.empty_like(table)
        interleaved[:, 0::2], interleaved[:, 1::2] = table[:, :half], table[:, half:]
        return interleaved
    return table


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))


# ---- stop 6: Table 1 on this model ------------------------------------------------------------------------


def crossover_length(d_model: int) -> int:
    """n where self-attention's n²·d equals recurrence's n·d² (Section 4): n = d."""
    return int(d_model)


# ---- stop 7: schedule and label smoothing -----------------------------------------------------------------


# The schedule is drawn to this many warm-ups (or to the trained steps, when later): far enough to show the
# decay, near enough that the warm-up, the point of Eq. 3, is not a spike at step 0.
SCHEDULE_WARMUPS = 10
PAPER_LABEL_SMOOTHING = 0.1  # ε_ls of Section 5.4


@dataclass(frozen=True)
class Schedule:
    d_model: int
    warmup_steps: int
    scale: float  # the run's lr_scale: the curve is scale × Eq. 3
    steps: np.ndarray  # (points,) ascending, warmup_steps among them (the peak is drawn exactly)
    rates: np.ndarray  # (points,)
    from_checkpoint: bool  # False: the paper's warmup_steps (the checkpoint did not say)

    @property
    def peak(self) -> float:
        return noam_learning_rate(self.warmup_steps, self.d_model, self.warmup_steps, self.scale)


def _train_config(metadata: dict[str, Any]) -> dict[str, Any]:
    return (metadata.get("training") or {}).get("train_config") or {}


def schedule_for(
    config: ModelConfig, metadata: dict[str, Any], trained_steps: int | None = None, points: int = 300
) -> Schedule:
    """Eq. 3 for this model's d_model and the warmup_steps / scale it was trained with, when recorded, from
    step 1 to SCHEDULE_WARMUPS warm-ups or `trained_steps`, whichever is later."""
    train = _train_config(metadata)
    warmup = int(train.get("warmup_steps") or PAPER_WARMUP)
    scale = float(train.get("lr_scale") or 1.0)
    total = max(SCHEDULE_WARMUPS * warmup, trained_steps or 0)
    steps = np.unique(np.concatenate([np.linspace(1, total, points).round().astype(int), [warmup]]))
    rates = np.array([noam_learning_rate(int(s), config.d_model, warmup, scale) for s in steps])
    return Schedule(config.d_model, warmup, scale, steps, rates, bool(train.get("warmup_steps")))


def label_smoothing_of(metadata: dict[str, Any]) -> float | None:
    """The ε_ls the checkpoint was trained with, or None when it does not record it."""
    value = _train_config(metadata).get("label_smoothing")
    return None if value is None else float(value)


@dataclass(frozen=True)
class NextWord:
    """The model's distribution for one target position, beside the one-hot and the smoothed target."""

    position: int  # 0-based row of the target
    word: str  # the token the model produced there
    top_tokens: list[str]
    top_probs: np.ndarray  # (k,) the model's probabilities of its k likeliest tokens
    probability: float  # the model's probability of `word`
    smoothed_target: float  # (1 − ε) + ε/V for the right token
    smoothed_other: float  # ε/V for every other token
    vocab_size: int
    epsilon: float  # ε_ls of the smoothed target


@torch.inference_mode()
def next_word(
    model: Transformer,
    tokenizer: Tokenizer,
    translation: Translation,
    position: int,
    epsilon: float = PAPER_LABEL_SMOOTHING,
    k: int = 5,
) -> NextWord:
    src, tgt = _tensors(model, translation)
    probs = torch.softmax(model(src, tgt).logits[0, position].float(), dim=-1).double().cpu().numpy()
    order = np.argsort(-probs)[:k]
    token = int(translation.output_ids[position])
    vocab = model.config.vocab_size
    return NextWord(
        position,
        translation.target_output_pieces[position],
        tokenizer.target_pieces([int(i) for i in order]),
        probs[order],
        float(probs[token]),
        1 - epsilon + epsilon / vocab,
        epsilon / vocab,
        vocab,
        epsilon,
    )


def middle_position(translation: Translation) -> int:
    """A target position inside the sentence (not the final </s>), for the label-smoothing example."""
    return max(0, (len(translation.output_ids) - 1) // 2)


def training_history(metadata: dict[str, Any], training: dict[str, Any] | None) -> dict[str, list[float]]:
    """Whatever the checkpoint recorded of its training: validation BLEU, losses by step ({} when nothing)."""
    history: dict[str, list[float]] = {}
    if metadata.get("val_bleu"):
        history["val_bleu"] = [float(b) for b in metadata["val_bleu"]]
    log = (training or {}).get("history") or []
    if isinstance(log, list):
        for name in ("loss", "val_loss", "val_bleu"):
            pairs = [
                (row["step"], row[name])
                for row in log
                if isinstance(row, dict) and row.get(name) is not None and row.get("step") is not None
            ]
            if pairs:
                history[f"{name}_steps"] = [float(s) for s, _ in pairs]
                history[name] = [float(v) for _, v in pairs]
    return history


# ---- stop 8: beam size and α ------------------------------------------------------------------------------

BEAMS = (1, 2, 4, 8)
ALPHAS = (0.0, 0.6, 1.0)


@dataclass(frozen=True)
class BeamRow:
    beam: int
    alpha: float
    output: str
    length: int  # tokens, </s> included
    log_prob: float
    score: float  # log_prob / lp(Y)
    penalty: float  # lp(Y), in the model's form (GNMT's, or |Y|^α for an imported Marian model)


def beam_grid(
    model: Transformer,
    tokenizer: Tokenizer,
    sentence: str,
    beams: Sequence[int] = BEAMS,
    alphas: Sequence[float] = ALPHAS,
) -> list[BeamRow]:
    rows = []
    for alpha in alphas:
        for beam in beams:
            t = translate(model, tokenizer, [sentence], beam_size=beam, alpha=alpha)[0]
            length = len(t.output_ids)
            penalty = length_penalty(length, alpha, model.config.length_normalisation)
            # Greedy search reports its score with the default α; every row is rescored with its own.
            rows.append(BeamRow(beam, alpha, t.output, length, t.log_prob, t.log_prob / penalty, penalty))
    return rows


# ---- stop 9: Table 3 --------------------------------------------------------------------------------------


def table3_parameter_rows(vocab_size: int = PAPER_VOCAB) -> list[dict[str, Any]]:
    """Every Table 3 row with the paper's BLEU and parameter count beside the engine's count of its config.

    Rows (D) change training only; their count is the base model's.
    """
    return [
        {
            "row": r.group,
            "change": r.change,
            "ppl": r.ppl,
            "bleu": r.bleu,
            "paper_millions": r.paper_millions,
            "engine_millions": r.parameters(vocab_size) / 1e6,
        }
        for r in TABLE3
    ]


def embedding_share(config: ModelConfig) -> float:
    """Fraction of the model's parameters in its embedding matrix (matrices, when they are not shared)."""
    embeddings = config.vocab_size * config.d_model * (1 if config.share_embeddings else 3)
    return embeddings / count_parameters(config)


# ---- stop 10: the same layer under an encoder mask and a causal mask --------------------------------------


@dataclass(frozen=True)
class MaskComparison:
    layer: int
    tokens: list[str]
    bidirectional: np.ndarray  # (heads, n, n) padding mask only (BERT-like)
    causal: np.ndarray  # (heads, n, n) causal mask (GPT-like)


@torch.inference_mode()
def mask_comparison(model: Transformer, translation: Translation, layer: int = 0) -> MaskComparison:
    """Run encoder layer `layer`'s self-attention on its real input twice: with every position visible and
    with only the earlier ones (the decoder's mask)."""
    module = model.encoder_layers[layer]
    inputs: list[torch.Tensor] = []
    handle = module.register_forward_hook(lambda _m, args, _out: inputs.append(args[0].detach()))
    try:
        src, _ = _tensors(model, translation)
        model.encode(src)
    finally:
        handle.remove()
    x = inputs[0]  # (1, n, d_model)
    n = x.shape[1]
    everything = torch.ones(1, 1, n, n, dtype=torch.bool, device=x.device)
    both = {}
    for name, mask in (("bidirectional", everything), ("causal", causal_mask(n, x.device))):
        both[name] = module.self_attention(x, x, mask, need_weights=True).weights[0].double().cpu().numpy()
    return MaskComparison(layer, list(translation.source_pieces), both["bidirectional"], both["causal"])


def attention_distance(weights: np.ndarray) -> float:
    """Mean |i − j| weighted by attention, over heads and rows. weights (heads, n, n)."""
    n = weights.shape[-1]
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    return float((weights * distance).sum(-1).mean())
