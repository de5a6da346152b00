"""Marian (Hugging Face `MarianMTModel`) config and weights to explorer's, and back, name by name.

Both are the paper's post-LN encoder-decoder with sinusoidal positions and embeddings scaled by √d_model; the
differences are config fields of ours (explorer.config.ModelConfig): the activation, `final_logits_bias`, the
position table's layout (Marian: sines first, then cosines), separate vocabularies, `<pad>` as the decoder's start
token, never generating `<pad>`, and length normalisation by length^α.

Our own checkpoints interleave sines and cosines, which a Marian model cannot say; exporting one permutes the
residual stream so that its table is Marian's (every weight that reads or writes the stream, exactly: a
permutation), and writes what Marian cannot say (that order, GNMT's length penalty) under "explorer" in its
config.json, so that importing it back restores our model bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch

from explorer.config import ModelConfig

# Activations transformers' ACT2FN computes the way explorer.model.layers.ACTIVATION_FUNCTIONS does.
ACTIVATIONS = {"relu": "relu", "swish": "swish", "silu": "swish", "gelu": "gelu"}
EXPLORER_KEY = "explorer"  # in an exported config.json: our settings Marian has no field for


class UnsupportedModel(ValueError):
    """A model this importer does not read; the message names the setting and says why."""


def _layer_names(config: ModelConfig) -> Iterator[tuple[str, str]]:
    """(our name, Marian's name) of every per-layer tensor."""
    attention = {"w_q": "q_proj", "w_k": "k_proj", "w_v": "v_proj", "w_o": "out_proj"}
    for side, count in (("encoder", config.n_encoder_layers), ("decoder", config.n_decoder_layers)):
        for i in range(count):
            ours, theirs = f"{side}_layers.{i}.", f"model.{side}.layers.{i}."
            families = [("self_attention", "self_attn")]
            norms = [("attention_residual", "self_attn_layer_norm")]
            if side == "decoder":
                families.append(("cross_attention", "encoder_attn"))
                norms = [("self_residual", "self_attn_layer_norm"), ("cross_residual", "encoder_attn_layer_norm")]
            norms.append(("ffn_residual", "final_layer_norm"))
            for kind in ("weight", "bias"):
                for family, their_family in families:
                    for w, their_w in attention.items():
                        yield f"{ours}{family}.{w}.{kind}", f"{theirs}{their_family}.{their_w}.{kind}"
                for norm, their_norm in norms:
                    yield f"{ours}{norm}.norm.{kind}", f"{theirs}{their_norm}.{kind}"
                for w, their_w in (("w_1", "fc1"), ("w_2", "fc2")):
                    yield f"{ours}feed_forward.{w}.{kind}", f"{theirs}{their_w}.{kind}"


def _embedding_names(config: ModelConfig) -> dict[str, tuple[str, ...]]:
    """Our embedding-like tensors -> the Marian names that may hold them (the first found is read)."""
    names: dict[str, tuple[str, ...]] = {}
    if config.share_embeddings:
        names["embedding.weight"] = ("model.shared.weight", "model.encoder.embed_tokens.weight")
    else:
        names["embedding.weight"] = ("model.encoder.embed_tokens.weight", "model.shared.weight")
        names["target_embedding.weight"] = ("model.decoder.embed_tokens.weight",)
        if not config.tie_target_output:
            names["output_projection.weight"] = ("lm_head.weight",)
    if config.output_bias:
        names["logits_bias"] = ("final_logits_bias",)
    return names


def marian_names(config: ModelConfig) -> dict[str, str]:
    """Our tensor name -> the Marian name it is read from, for a model of `config`."""
    return dict(_layer_names(config)) | {ours: theirs[0] for ours, theirs in _embedding_names(config).items()}


# --------------------------------------------------------------------------------------------- Marian -> ours
def _setting(hf: Mapping[str, Any], key: str, default: Any = None) -> Any:
    return hf.get(key, default)


def config_from_marian(
    hf: Mapping[str, Any], generation: Mapping[str, Any], tensor_names: set[str]
) -> tuple[ModelConfig, dict[str, Any]]:
    """(our config, decoding defaults) for a Marian config.json and generation_config.json, or UnsupportedModel
    naming the first setting we cannot run exactly. Reads no tensor: `tensor_names` are the weight file's names."""
    model_type = _setting(hf, "model_type")
    if model_type != "marian":
        raise UnsupportedModel(f"model_type is {model_type!r}: this importer reads Marian models (model_type 'marian')")
    for key in ("normalize_before", "add_final_layer_norm", "layernorm_embedding", "normalize_embedding"):
        if _setting(hf, key):
            raise UnsupportedModel(f"{key} is set: pre-LN and embedding-norm variants are not the paper's model")
    if _setting(hf, "position_embedding_type", "absolute") != "absolute":
        raise UnsupportedModel(
            f"position_embedding_type is {hf['position_embedding_type']!r}: relative attention is not supported"
        )
    if _setting(hf, "static_position_embeddings", True) is False or _setting(hf, "learned_pos_emb"):
        raise UnsupportedModel("learned positions: only the sinusoid table is supported")
    if not _setting(hf, "scale_embedding", False):
        raise UnsupportedModel("scale_embedding is false: embeddings must be scaled by √d_model (Section 3.4)")
    activation = _setting(hf, "activation_function", "gelu")
    if activation not in ACTIVATIONS:
        raise UnsupportedModel(f"activation_function {activation!r} is not one of {sorted(ACTIVATIONS)}")
    for ours, (encoder_key, decoder_key) in (
        ("heads", ("encoder_attention_heads", "decoder_attention_heads")),
        ("feed-forward sizes", ("encoder_ffn_dim", "decoder_ffn_dim")),
    ):
        if hf.get(encoder_key) != hf.get(decoder_key):
            raise UnsupportedModel(f"{encoder_key} and {decoder_key} differ: the two sides need the same {ours}")
    shared = bool(_setting(hf, "share_encoder_decoder_embeddings", True))
    tied = bool(_setting(hf, "tie_word_embeddings", True))
    if shared and not tied:
        raise UnsupportedModel("tie_word_embeddings is false with shared embeddings: an untied output is not supported")
    ids = {key: _setting(hf, key) for key in ("pad_token_id", "eos_token_id", "decoder_start_token_id")}
    for key, value in ids.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise UnsupportedModel(f"{key} is {value!r}: one token id is needed")
    vocab = _setting(hf, "vocab_size")
    target_vocab = _setting(hf, "decoder_vocab_size") or vocab
    if shared and target_vocab != vocab:
        raise UnsupportedModel("decoder_vocab_size differs from vocab_size with shared embeddings")
    max_length = generation.get("max_length", hf.get("max_length"))
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2):
        raise UnsupportedModel(f"max_length is {max_length!r}: a whole number of 2 or more is needed")
    own: dict[str, Any] = hf[EXPLORER_KEY] if isinstance(hf.get(EXPLORER_KEY), dict) else {}
    bad_words = generation.get("bad_words_ids", hf.get("bad_words_ids")) or []
    banned = {tuple(words) for words in bad_words if isinstance(words, list)}
    if banned - {(ids["pad_token_id"],)}:
        raise UnsupportedModel(f"bad_words_ids {sorted(banned)}: only <pad> can be banned")
    try:
        config = ModelConfig(
            vocab_size=vocab,
            d_model=_setting(hf, "d_model"),
            n_heads=_setting(hf, "encoder_attention_heads"),
            d_ff=_setting(hf, "encoder_ffn_dim"),
            n_encoder_layers=_setting(hf, "encoder_layers"),
            n_decoder_layers=_setting(hf, "decoder_layers"),
            dropout=float(_setting(hf, "dropout", 0.1)),
            max_len=_setting(hf, "max_position_embeddings"),
            share_embeddings=shared,
            pad_id=ids["pad_token_id"],
            bos_id=ids["decoder_start_token_id"],
            eos_id=ids["eos_token_id"],
            activation=ACTIVATIONS[activation],
            position_layout=own.get("position_layout", "split"),
            target_vocab_size=None if target_vocab == vocab else target_vocab,
            tie_target_output=not shared and tied,
            output_bias="final_logits_bias" in tensor_names,
            ban_pad=bool(banned),
            length_normalisation=own.get("length_normalisation", "power"),
            # generate's max_length counts the decoder's start token; outputs beyond the table cannot be read.
            max_output_len=None if max_length is None else min(max_length - 1, _setting(hf, "max_position_embeddings")),
        )
    except (TypeError, ValueError) as error:
        raise UnsupportedModel(f"its sizes do not make a model this program runs: {error}") from None
    decoding = {
        "beam": int(generation.get("num_beams", hf.get("num_beams", 4)) or 1),
        "alpha": float(generation.get("length_penalty", hf.get("length_penalty", 1.0))),
    }
    return config, decoding


def weights_from_marian(tensors: Mapping[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Our state (deduplicated, as in model.safetensors) from Marian's tensors, float32; a KeyError names any
    missing one."""
    found = {ours: tensors[theirs] for ours, theirs in _layer_names(config)}
    for ours, candidates in _embedding_names(config).items():
        name = next((n for n in candidates if n in tensors), None)
        if name is None:
            raise KeyError(f"the weights have none of {list(candidates)}")
        found[ours] = tensors[name].reshape(-1) if ours == "logits_bias" else tensors[name]
    found = {name: tensor.float() for name, tensor in found.items()}
    if config.position_layout == "interleaved":  # exported by us: undo the residual permutation
        found = permute_residual(found, config, inverse=True)
    return found


# --------------------------------------------------------------------------------------------- ours -> Marian
def marian_config(config: ModelConfig, decoding: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A Marian config.json (with its generation settings) for our `config`; UnsupportedModel where Marian has no
    such model (pre-LN, learned positions, d_k other than d_model / heads)."""
    if config.norm_position != "post" or config.positional != "sinusoidal":
        raise UnsupportedModel("Marian models are post-LN with sinusoidal positions")
    if config.head_dim_k * config.n_heads != config.d_model or config.head_dim_v != config.head_dim_k:
        raise UnsupportedModel("Marian's heads split d_model evenly: d_k and d_v must be d_model / n_heads")
    shared, tied = config.share_embeddings, config.share_embeddings or config.tie_target_output
    data: dict[str, Any] = {
        "model_type": "marian",
        "architectures": ["MarianMTModel"],
        "vocab_size": config.vocab_size,
        "decoder_vocab_size": config.output_vocab_size,
        "d_model": config.d_model,
        "encoder_layers": config.n_encoder_layers,
        "decoder_layers": config.n_decoder_layers,
        "encoder_attention_heads": config.n_heads,
        "decoder_attention_heads": config.n_heads,
        "encoder_ffn_dim": config.d_ff,
        "decoder_ffn_dim": config.d_ff,
        "activation_function": config.activation,
        "max_position_embeddings": config.max_len,
        "scale_embedding": True,
        "dropout": config.dropout,
        "attention_dropout": 0.0,
        "activation_dropout": 0.0,
        "pad_token_id": config.pad_id,
        "eos_token_id": config.eos_id,
        "decoder_start_token_id": config.bos_id,
        "forced_eos_token_id": None,
        "share_encoder_decoder_embeddings": shared,
        "tie_word_embeddings": tied,
        "is_encoder_decoder": True,
    }
    kept = {"position_layout": "interleaved", "length_normalisation": "gnmt"}
    data[EXPLORER_KEY] = {key: getattr(config, key) for key, value in kept.items() if getattr(config, key) == value}
    if config.ban_pad:
        data["bad_words_ids"] = [[config.pad_id]]
    if config.max_output_len is not None:
        data["max_length"] = config.max_output_len + 1
    if decoding:
        data["num_beams"], data["length_penalty"] = decoding["beam"], decoding["alpha"]
    return data


def weights_to_marian(state: Mapping[str, torch.Tensor], config: ModelConfig) -> dict[str, torch.Tensor]:
    """Marian's tensors (contiguous copies, tied ones under each name transformers reads) from our state."""
    ours = dict(state)
    if config.position_layout == "interleaved":
        ours = permute_residual(ours, config, inverse=False)
    out = {theirs: ours[name] for name, theirs in _layer_names(config)}
    target = config.output_vocab_size
    out["final_logits_bias"] = ours["logits_bias"].reshape(1, -1) if config.output_bias else torch.zeros(1, target)
    if config.share_embeddings:
        out["model.shared.weight"] = ours["embedding.weight"]
    else:
        out["model.encoder.embed_tokens.weight"] = ours["embedding.weight"]
        out["model.decoder.embed_tokens.weight"] = ours["target_embedding.weight"]
        output = "target_embedding.weight" if config.tie_target_output else "output_projection.weight"
        out["lm_head.weight"] = ours[output]
    return {name: tensor.detach().clone().contiguous() for name, tensor in out.items()}


# --------------------------------------------------------------------------------------- the residual stream
def residual_permutation(d_model: int) -> torch.Tensor:
    """Indices p with split_table = interleaved_table[:, p]: the even dimensions (sines), then the odd (cosines)."""
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


def permute_residual(
    state: Mapping[str, torch.Tensor], config: ModelConfig, *, inverse: bool
) -> dict[str, torch.Tensor]:
    """Our state with the residual stream's dimensions reordered (interleaved -> split, or back with `inverse`):
    every tensor indexed by d_model is reordered along that axis; the model computes the same function up to the
    order of floating-point sums."""
    order = residual_permutation(config.d_model)
    if inverse:
        order = torch.argsort(order)
    out = {}
    for name, tensor in state.items():
        axes = _residual_axes(name)
        for axis in axes:
            tensor = tensor.index_select(axis, order)
        out[name] = tensor
    return out


def _residual_axes(name: str) -> tuple[int, ...]:
    """The axes of our tensor `name` that run over the residual stream's d_model dimensions."""
    if name in ("embedding.weight", "target_embedding.weight", "output_projection.weight"):
        return (1,)
    if name == "logits_bias":
        return ()
    if ".norm." in name or name.endswith(("w_o.bias", "w_2.bias")):
        return (0,)
    if name.endswith(("w_q.weight", "w_k.weight", "w_v.weight", "w_1.weight")):
        return (1,)
    if name.endswith(("w_o.weight", "w_2.weight")):
        return (0,)
    return ()  # the biases of Q, K, V and the first feed-forward layer: inside a head or the hidden layer
