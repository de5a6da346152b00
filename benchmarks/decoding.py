"""Decoding speed: greedy and beam search (k = 4), with the key/value cache vs recomputing the whole prefix.

The cached scorer is the engine's (`explorer.inference.ModelScorer`: one `decode_step` per step, cache
reordered by beam). The recompute scorer below is the naive baseline: every step runs `model.decode` over the
entire prefix generated so far and keeps only the last position. Both go through the same search functions,
batches (32 sentences, sorted by length, as `translate` does) and output limits, so they must produce the same
translations — the benchmark checks that too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from benchmarks import common
from benchmarks.memory import memory_rows
from explorer.config import preset
from explorer.decoding.search import beam_search, greedy_search
from explorer.inference import EXTRA_OUTPUT_TOKENS, ModelScorer, encode_sources, pad
from explorer.model import EncoderOutput, Transformer

if TYPE_CHECKING:
    from explorer.tokenizer import Tokenizer

NAME = "decoding"
TITLE = "Decoding (cache vs recompute)"
VARIANTS = ("greedy, cache", "greedy, recompute", "beam 4, cache", "beam 4, recompute")
MEMORY_VARIANTS = ("beam 4, cache", "beam 4, recompute")
# An untrained model rarely emits EOS; capping its outputs keeps lengths caption-like (a trained model stops
# by itself within about source length + 5).
UNTRAINED_EXTRA_TOKENS = 5


class RecomputeScorer:
    """A `StepScorer` without a cache: each step decodes the whole prefix again (O(t²) work per sentence)."""

    def __init__(self, model: Transformer, encoded: EncoderOutput) -> None:
        self.model = model
        self.memory, self.src_mask = encoded.memory, encoded.src_mask
        self.prefix = torch.empty(encoded.memory.shape[0], 0, dtype=torch.long, device=encoded.memory.device)

    def step(self, last_tokens: torch.Tensor, step: int) -> torch.Tensor:
        self.prefix = torch.cat([self.prefix, last_tokens.to(self.prefix.device).view(-1, 1)], dim=1)
        out = self.model.decode(self.prefix, EncoderOutput(self.memory, self.src_mask, None))
        return torch.log_softmax(out.logits[:, -1].float(), dim=-1)

    def reorder(self, rows: torch.Tensor) -> None:
        rows = rows.to(self.prefix.device)
        self.prefix = self.prefix.index_select(0, rows)
        self.memory = self.memory.index_select(0, rows)
        self.src_mask = self.src_mask.index_select(0, rows)


@dataclass
class DecodeSetup:
    model: Transformer
    source_ids: list[list[int]]
    extra_tokens: int
    model_label: str
    data_label: str
    device: str
    batch_size: int = 32


def load_model(opts: common.Options) -> tuple[Transformer, Tokenizer, str, int]:
    """(model, tokenizer, label, extra output tokens): the shipped checkpoint or an untrained "small"."""
    checkpoint = common.shipped_checkpoint(opts)
    if checkpoint is not None:
        label = f"shipped checkpoint {common.repo_relative(opts.checkpoint)}"
        return checkpoint.model, checkpoint.tokenizer, label, EXTRA_OUTPUT_TOKENS
    tokenizer = common.benchmark_tokenizer(1000 if opts.quick else 8000, quick=opts.quick, required=True)
    assert tokenizer is not None, "required=True always gives a vocabulary"
    torch.manual_seed(opts.seed)
    if opts.quick:
        config = preset("tiny", vocab_size=tokenizer.vocab_size, max_len=128)
        name = "tiny"
    else:
        config = preset("small", vocab_size=tokenizer.vocab_size)
        name = "small"
    model = Transformer(config).to(opts.device).eval()
    label = (
        f"randomly initialised '{name}' model (no checkpoint at {common.repo_relative(opts.checkpoint)}); "
        "outputs capped at "
        f"source length + {UNTRAINED_EXTRA_TOKENS}"
    )
    return model, tokenizer, label, UNTRAINED_EXTRA_TOKENS


def setup(opts: common.Options) -> DecodeSetup:
    common.apply_threads(opts)
    model, tokenizer, label, extra = load_model(opts)
    n = opts.sentences or (8 if opts.quick else 200)
    config = model.config
    if common.multi30k_available() and tokenizer is not None:
        sentences = [s for s in common.read_lines(common.MULTI30K / "test2016.en") if s][:n]
        ids, _ = encode_sources(tokenizer, sentences, config.max_len, config.eos_id)
        data = f"{len(ids)} Multi30k test2016 sentences"
    else:
        lengths = common.synthetic_lengths(n, opts.seed)
        ids = [s + [config.eos_id] for s in common.synthetic_ids(lengths, config.vocab_size, opts.seed)]
        data = f"{len(ids)} synthetic sentences of caption-like lengths"
    return DecodeSetup(model, ids, extra, label, data, opts.device)


@torch.inference_mode()
def decode_all(d: DecodeSetup, beam_size: int, scorer: str) -> list[tuple[int, ...]]:
    """Translate every source as `translate` does (length-sorted batches); returns the best token ids."""
    model, config = d.model, d.model.config
    order = sorted(range(len(d.source_ids)), key=lambda i: len(d.source_ids[i]))
    outputs: list[tuple[int, ...]] = [()] * len(order)
    for start in range(0, len(order), d.batch_size):
        chunk = order[start : start + d.batch_size]
        ids = [d.source_ids[i] for i in chunk]
        encoded = model.encode(pad(ids, config.pad_id, torch.device(d.device)))
        limits = [min(len(s) + d.extra_tokens, config.max_len) for s in ids]
        step_scorer = (
            ModelScorer(model, model.start_decoding(encoded)) if scorer == "cache" else RecomputeScorer(model, encoded)
        )
        if beam_size == 1:
            best = [h.tokens for h in greedy_search(step_scorer, len(chunk), config.bos_id, config.eos_id, limits)]
        else:
            found = beam_search(step_scorer, len(chunk), beam_size, config.bos_id, config.eos_id, limits, n_best=1)
            best = [r.hypotheses[0].tokens for r in found]
        for index, tokens in zip(chunk, best, strict=False):
            outputs[index] = tokens
    return outputs


def _variant(d: DecodeSetup, name: str) -> Callable[[], list[tuple[int, ...]]]:
    beam = 1 if name.startswith("greedy") else 4
    scorer = "cache" if name.endswith("cache") else "recompute"
    return lambda: decode_all(d, beam, scorer)


def run(opts: common.Options) -> common.Result:
    cuda = opts.device.startswith("cuda")
    result = common.Result(NAME if not cuda else "gpu-decoding", TITLE if not cuda else f"{TITLE} (CUDA)")
    d = setup(opts)
    print(f"  model: {d.model_label}", flush=True)
    print(f"  data: {d.data_label}; batches of {d.batch_size}; {common.threads_text()}", flush=True)
    fns = {name: _variant(d, name) for name in VARIANTS}
    outputs = {name: fn() for name, fn in fns.items()}  # also the warm-up
    rounds = opts.n_rounds(3, 2)
    times = common.interleaved(
        common.every_round(fns),
        rounds=rounds,
        warmup=0,
        device=opts.device,
        clock=opts.clock,
    )
    n = len(d.source_ids)
    table = []
    for name in VARIANTS:
        rate = n * rounds / sum(times[name])
        table.append((name, f"{rate:.1f}", f"{sum(times[name]) / rounds:.2f} s"))
        result.add(f"sentences/s, {name}", f"{rate:.1f}")
    common.print_table(("variant", "sentences/s", "time per pass"), table)
    for search in ("greedy", "beam 4"):
        speedup = common.paired_ratio(times[f"{search}, recompute"], times[f"{search}, cache"])
        same = sum(a == b for a, b in zip(outputs[f"{search}, cache"], outputs[f"{search}, recompute"], strict=False))
        goal = "≥ 3.00×" if search == "beam 4" else ""
        result.add(
            f"{search}: cache speed-up over recompute",
            common.ratio_text(speedup),
            goal,
            speedup >= 3.0 if search == "beam 4" and not opts.quick else None,
        )
        result.add(f"{search}: identical outputs, cache vs recompute", f"{same}/{n}")
        print(
            f"  {search}: cache is {common.ratio_text(speedup)} faster than recompute; identical outputs {same}/{n}",
            flush=True,
        )
    result.note(f"{d.model_label}; {d.data_label}; {rounds} interleaved passes per variant")
    if opts.memory:
        memory_rows(result, NAME, MEMORY_VARIANTS, opts)
    return result


def memory_setup(opts: common.Options, variant: str) -> Callable[[], object]:
    d = setup(opts)
    return _variant(d, variant)
