"""Head-mask overhead: re-decoding one sentence with heads switched off vs the plain decode.

What the heads page does on every click: the same search (greedy, and beam 4) over one sentence, once with
no mask and once with two heads off (`cross.2.0,enc.0.3`, the issue's example); the goal is ≤ 1.2× the
unmasked decode. The mask gates each head's output before W^O, in the encoder's fused-kernel path and in the
packed decoder (`explorer.fastpath.packed_decoding`), so a masked re-decode runs the same operations as the plain
one plus one multiplication per module with a head off. A third variant passes an empty mask: what mask
support costs when nothing is off (the packed step then runs exactly the unmasked operations).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch

from benchmarks import common
from benchmarks.decoding import load_model
from explorer.config import ModelConfig
from explorer.inference import translate
from explorer.model import HeadMask

NAME = "head_mask"
TITLE = "Head-mask overhead (re-decoding one sentence)"
HEADS = ("cross.2.0", "enc.0.3")
FALLBACK = ("a man rides a bicycle down the street .", "two dogs play in the snow .", "a girl is reading a book .")
GOAL = 1.2
GENERIC = "empty mask"


def _sentences(opts: common.Options) -> list[str]:
    n = 4 if opts.quick else 16
    if common.multi30k_available():
        return common.read_lines(common.MULTI30K / "test2016.en")[:n]
    return list(FALLBACK)[:n]


def _mask(config: ModelConfig) -> HeadMask:
    names = [
        n
        for n in HEADS
        if int(n.split(".")[1]) < (config.n_encoder_layers if n.startswith("enc") else config.n_decoder_layers)
        and int(n.split(".")[2]) < config.n_heads
    ]
    return HeadMask.from_names(names or ["cross.0.0"], config)


def _variants(opts: common.Options, beam: int) -> tuple[dict[str, Callable[[int], object]], str]:
    model, tokenizer, label, _ = load_model(opts)
    sentences = _sentences(opts)
    mask = _mask(model.config)

    @torch.inference_mode()
    def plain(_: int) -> None:
        for s in sentences:  # one sentence at a time, as the page re-decodes it
            translate(model, tokenizer, [s], beam_size=beam)

    @torch.inference_mode()
    def masked(_: int) -> None:
        for s in sentences:
            translate(model, tokenizer, [s], beam_size=beam, head_mask=mask)

    variants: dict[str, Callable[[int], object]] = {"no mask": plain, f"{', '.join(mask.off())} off": masked}
    if "head_mask" in inspect.signature(translate).parameters:
        # An empty mask object goes wherever a mask goes, with nothing gated: the difference to "no mask" is
        # what carrying a mask costs, the difference to the masked variant is the gating itself.
        @torch.inference_mode()
        def generic(_: int) -> None:
            for s in sentences:
                translate(model, tokenizer, [s], beam_size=beam, head_mask=HeadMask())

        variants[GENERIC] = generic
    return variants, f"{label}; {len(sentences)} sentences"


def run(opts: common.Options) -> common.Result:
    common.apply_threads(opts)
    result = common.Result(NAME, TITLE)
    rounds = opts.n_rounds(9, 3)
    for beam in (1, 4):
        variants, label = _variants(opts, beam)
        times = common.interleaved(
            variants, rounds=rounds, warmup=opts.n_warmup(1, 1), device=opts.device, clock=opts.clock
        )
        names = list(variants)
        base = times[names[0]]
        common.print_table(
            (f"beam {beam}: variant", "time per sentence", "÷ no mask"),
            [
                (
                    n,
                    f"{sum(times[n]) / rounds / max(len(_sentences(opts)), 1) * 1e3:.1f} ms",
                    common.ratio_text(common.paired_ratio(times[n], base)),
                )
                for n in names
            ],
        )
        ratio = common.paired_ratio(times[names[1]], base)
        search = "greedy" if beam == 1 else f"beam {beam}"
        result.add(
            f"{search}: one sentence with 2 heads off ÷ unmasked",
            common.ratio_text(ratio),
            f"≤ {GOAL:.2f}×",
            ratio <= GOAL if not opts.quick else None,
        )
        if GENERIC in times:
            result.add(
                f"{search}: an empty mask ÷ unmasked (mask support with nothing off)",
                common.ratio_text(common.paired_ratio(times[GENERIC], base)),
            )
            result.add(
                f"{search}: … 2 heads off ÷ an empty mask (the gating alone)",
                common.ratio_text(common.paired_ratio(times[names[1]], times[GENERIC])),
            )
    result.note(f"{label}; {rounds} interleaved rounds; mask {', '.join(HEADS)}")
    return result


def memory_setup(opts: common.Options, variant: str) -> Callable[[], object]:
    variants, _ = _variants(opts, 1)
    fn = variants[variant] if variant in variants else next(iter(variants.values()))
    return lambda: fn(0)
