"""The one model configuration, its presets, and parameter counting.

A `ModelConfig` is written into every checkpoint (as JSON) next to the weights and the tokenizer, so a
checkpoint directory alone rebuilds the model. Presets `base` and `big` are Table 3 of the paper; the
small ones train on a laptop CPU.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import re
from dataclasses import dataclass
from typing import Any

# SentencePiece ids fixed by explorer.tokenizer (a test checks they agree).
PAD_ID, BOS_ID, EOS_ID = 0, 2, 3

POSITIONAL_KINDS = ("sinusoidal", "learned")
NORM_POSITIONS = ("post", "pre")
# The feed-forward's activation: the paper's ReLU (Eq. 2); imported Marian models use swish (SiLU) or GELU.
ACTIVATIONS = ("relu", "swish", "gelu")
# The sinusoid table's layout: the paper's sin/cos pairs interleaved, or Marian's sines first then cosines.
POSITION_LAYOUTS = ("interleaved", "split")
# Beam scores: GNMT's lp = ((5 + |Y|) / 6)^α (the paper), or Marian's and Hugging Face's |Y|^α.
LENGTH_NORMALISATIONS = ("gnmt", "power")

# Sane upper bounds, far above the paper's big model (Table 3: d_model 1024, d_ff 4096, 16 heads, 6 layers) and a
# 37,000-piece vocabulary. They keep a crafted config from asking for terabytes: besides the weights (which
# must be in model.safetensors), the model allocates a (max_len, d_model) sinusoid table.
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "vocab_size": (5, 1_000_000),  # 4 special pieces + 1 (explorer.tokenizer)
    "target_vocab_size": (5, 1_000_000),
    "d_model": (1, 8192),
    "n_heads": (1, 256),
    "d_ff": (1, 65_536),
    "n_encoder_layers": (1, 64),
    "n_decoder_layers": (1, 64),
    "d_k": (1, 8192),
    "d_v": (1, 8192),
    "max_len": (2, 4096),  # room for BOS/EOS
}
MAX_PARAMETERS = 2_000_000_000
_LANGUAGE_TOKEN = re.compile(r">>[^<>\s]{1,32}<<")  # a multi-target model's target-language token  # 8 GB in float32


def _whole_number(name: str, value: Any, low: int, high: int) -> int:
    """`value` as an int in [low, high], or a ValueError naming the field; bools and floats are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, got {value!r}")
    number = int(value)
    if not low <= number <= high:
        raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}, got {number:,}")
    return number


@dataclass(frozen=True)
class ModelConfig:
    """Hyper-parameters of the encoder-decoder Transformer (Section 3, Table 3).

    `d_k`/`d_v` default to d_model / n_heads as in Section 3.2.2; Table 3 row (B) changes d_k alone.
    `share_embeddings` ties source, target and output embeddings (Section 3.4), which needs a joint
    vocabulary of `vocab_size` pieces.

    The fields after `eos_id` describe imported Marian models; their defaults are the paper's model, so a
    checkpoint saved before they existed loads unchanged. `bos_id` is the token the decoder starts from
    (Marian's is `<pad>`). `target_vocab_size` (None: the source's) sizes a separate target vocabulary, which
    needs `share_embeddings` off; `tie_target_output` then makes the output projection the target embedding.
    `output_bias` adds a learned bias to the logits; `ban_pad` never lets the search produce `pad_id`;
    `length_normalisation` is the beam score's form ("gnmt" or "power", see explorer.decoding.policy);
    `target_prefix` is the target-language token (">>kor<<") a multi-target model reads before a sentence that has
    none (explorer.marian.tokenizer). `max_output_len` (None: input length + 50, Section 6.1) is the model's own
    limit on an output's tokens, </s> included: Marian's `max_length` less the decoder's start token.
    """

    vocab_size: int = 8000
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_k: int | None = None
    d_v: int | None = None
    dropout: float = 0.1
    max_len: int = 256
    positional: str = "sinusoidal"
    norm_position: str = "post"
    share_embeddings: bool = True
    pad_id: int = PAD_ID
    bos_id: int = BOS_ID
    eos_id: int = EOS_ID
    activation: str = "relu"
    position_layout: str = "interleaved"
    target_vocab_size: int | None = None
    tie_target_output: bool = False
    output_bias: bool = False
    ban_pad: bool = False
    length_normalisation: str = "gnmt"
    target_prefix: str | None = None
    max_output_len: int | None = None

    def __post_init__(self) -> None:
        # Checked field by field so a crafted or damaged config.json is refused with one sentence before any
        # tensor is allocated (see explorer.checkpoint), and a mistyped value never reaches torch.
        for name, (low, high) in _INT_BOUNDS.items():
            value = getattr(self, name)
            if value is None and name in ("d_k", "d_v", "target_vocab_size"):
                continue
            object.__setattr__(self, name, _whole_number(name, value, low, high))
        # pad and eos are on both sides; the decoder's start token only in the target vocabulary.
        for name in ("pad_id", "bos_id", "eos_id"):
            _whole_number(name, getattr(self, name), 0, min(self.vocab_size, self.output_vocab_size) - 1)
        dropout = self.dropout
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a number from 0 up to (not including) 1, got {dropout!r}")
        object.__setattr__(self, "dropout", float(dropout))
        if self.positional not in POSITIONAL_KINDS:
            raise ValueError(f"positional must be one of {POSITIONAL_KINDS}, got {self.positional!r}")
        if self.norm_position not in NORM_POSITIONS:
            raise ValueError(f"norm_position must be one of {NORM_POSITIONS}, got {self.norm_position!r}")
        for name, allowed in (
            ("activation", ACTIVATIONS),
            ("position_layout", POSITION_LAYOUTS),
            ("length_normalisation", LENGTH_NORMALISATIONS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        for name in ("share_embeddings", "tie_target_output", "output_bias", "ban_pad"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.share_embeddings and (self.target_vocab_size is not None or self.tie_target_output):
            raise ValueError(
                "share_embeddings ties every embedding, so target_vocab_size and tie_target_output are unset"
            )
        if self.max_output_len is not None:
            object.__setattr__(
                self, "max_output_len", _whole_number("max_output_len", self.max_output_len, 1, self.max_len)
            )
        prefix = self.target_prefix
        if prefix is not None and not (isinstance(prefix, str) and _LANGUAGE_TOKEN.fullmatch(prefix)):
            raise ValueError(f"target_prefix must be a target-language token such as '>>kor<<', got {prefix!r}")
        if self.positional == "learned" and self.position_layout != "interleaved":
            raise ValueError("position_layout applies to sinusoidal positions only")
        if (self.d_k is None or self.d_v is None) and self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; set d_k/d_v")
        parameters = count_parameters(self)
        if parameters > MAX_PARAMETERS:
            raise ValueError(
                f"this config describes {parameters:,} parameters, more than the {MAX_PARAMETERS:,} this program loads"
            )

    @property
    def output_vocab_size(self) -> int:
        """Pieces of the target vocabulary: the decoder's embedding rows and the logits' width."""
        return self.target_vocab_size if self.target_vocab_size is not None else self.vocab_size

    @property
    def head_dim_k(self) -> int:
        return self.d_k if self.d_k is not None else self.d_model // self.n_heads

    @property
    def head_dim_v(self) -> int:
        return self.d_v if self.d_v is not None else self.d_model // self.n_heads

    def output_limit(self, source_len: int, extra_tokens: int) -> int:
        """The most tokens (</s> included) an output of a `source_len`-token source may have: `extra_tokens` past
        the source (the paper's 50), within the position table and the model's own `max_output_len`."""
        limit = min(source_len + extra_tokens, self.max_len)
        return limit if self.max_output_len is None else min(limit, self.max_output_len)

    def replace(self, **changes: Any) -> ModelConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every field, except the imported models' switches left at their defaults: a checkpoint of the paper's
        model writes the config.json it always wrote."""
        data = dataclasses.asdict(self)
        for name, default in _IMPORT_DEFAULTS.items():
            if data[name] == default:
                del data[name]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Rebuild from a checkpoint's JSON; unknown keys are an error, not silently dropped."""
        if not isinstance(data, dict):
            raise ValueError(f"model config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"model config has unknown fields {unknown}; is this checkpoint from a newer version?")
        return cls(**data)


# The fields that describe imported models, with their defaults (the paper's model).
_IMPORT_DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in dataclasses.fields(ModelConfig)
    if f.name
    in (
        "activation",
        "position_layout",
        "target_vocab_size",
        "tie_target_output",
        "output_bias",
        "ban_pad",
        "length_normalisation",
        "target_prefix",
        "max_output_len",
    )
}


def count_parameters(config: ModelConfig) -> int:
    """Exact trainable-parameter count of `Transformer(config)`, computed without building it.

    Kept in closed form so `explorer info --preset big` answers instantly; a test checks it against
    the real module.
    """
    d, dk, dv, h, ff = config.d_model, config.head_dim_k, config.head_dim_v, config.n_heads, config.d_ff
    attention = d * h * dk * 2 + h * dk * 2 + d * h * dv + h * dv + h * dv * d + d  # W_Q, W_K, W_V, W_O
    ffn = d * ff + ff + ff * d + d
    norm = 2 * d
    encoder_layer = attention + ffn + 2 * norm
    decoder_layer = 2 * attention + ffn + 3 * norm
    if config.share_embeddings:
        embeddings = config.vocab_size * d
    else:
        target = config.output_vocab_size * d
        embeddings = config.vocab_size * d + target * (1 if config.tie_target_output else 2)
    embeddings += config.output_vocab_size if config.output_bias else 0
    learned_positions = 2 * config.max_len * d if config.positional == "learned" else 0
    final_norms = 2 * norm if config.norm_position == "pre" else 0
    return (
        config.n_encoder_layers * encoder_layer
        + config.n_decoder_layers * decoder_layer
        + embeddings
        + learned_positions
        + final_norms
    )


# Table 3 of the paper. "big" also raises dropout to 0.3 (Table 3, last row).
PRESETS: dict[str, ModelConfig] = {
    "base": ModelConfig(),
    "big": ModelConfig(d_model=1024, n_heads=16, d_ff=4096, dropout=0.3),
    # Multi30k-sized: the shipped English->German translator.
    "small": ModelConfig(d_model=256, n_heads=4, d_ff=1024, n_encoder_layers=3, n_decoder_layers=3),
    # Trains on a laptop CPU in seconds; toy tasks and tests.
    "tiny": ModelConfig(
        d_model=64, n_heads=4, d_ff=128, n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, vocab_size=64, max_len=64
    ),
}


def preset(name: str, **overrides: Any) -> ModelConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return PRESETS[name].replace(**overrides)
