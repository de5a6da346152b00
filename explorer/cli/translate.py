"""`explorer translate`: sentences from arguments, a file or stdin, one per line, in streaming batches.

Output line N is the translation of input line N (a blank line gives a blank line), written and flushed
batch by batch, so a 200,000-line file needs the memory of one batch, and a pipe sees results as they come.
A line of several sentences is split into sentences (explorer/text/sentences.py), which are translated one
by one, all in the batch, and joined with a space; `--no-split` translates each line as it stands.

With `--json`, each line's object has the keys of one translation (for a line of several sentences: pieces
concatenated, `log_prob` summed, `score` their mean, `finished` all, `truncated` any, n-best lists only per
sentence), `repeated` (a decoding loop: two or more words, or sub-word pieces, three or more times in a row), and
`sentences`: one such object per sentence.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from explorer.cli.arguments import add_decoding_arguments, check_utf8_arguments, positive_int, resolve_decoding
from explorer.cli.errors import UsageError
from explorer.text.sentences import join_sentences, split_lines

if TYPE_CHECKING:
    from explorer.inference import Translation
    from explorer.tokenizer import Tokenizer

BATCH_LINES = 256  # lines read, translated and written per batch; memory is bounded by this


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("translate", help="translate sentences (arguments, a file, or stdin one per line)")
    p.add_argument("sentences", nargs="*", help="sentences to translate (default: read --input or stdin)")
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--input", "-i", help="read sentences from this UTF-8 file, one per line ('-' for stdin)")
    add_decoding_arguments(p)
    p.add_argument(
        "--no-repeat-ngram",
        type=positive_int,
        default=None,
        metavar="N",
        help="forbid the search to repeat any N-gram of pieces within a sentence's output (default: off)",
    )
    p.add_argument(
        "--no-split",
        action="store_true",
        help="translate each line as one sentence (default: split lines into sentences and join the translations)",
    )
    p.add_argument("--n-best", type=positive_int, default=1)
    p.add_argument("--json", action="store_true", help="one JSON object per line with pieces and scores")
    p.add_argument("--batch-lines", type=positive_int, default=BATCH_LINES, help=argparse.SUPPRESS)
    p.add_argument("--device", default="cpu")
    p.add_argument(
        "--int8", action="store_true", help="dynamically quantized feed-forward layers (CPU; within 0.3 BLEU of float)"
    )
    return p


def _batches(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    """Lists of `size` lines; when reading fails (a line that is not UTF-8), the lines before it come first."""
    from explorer.data.corpus import CorpusError

    batch: list[str] = []
    try:
        for line in lines:
            batch.append(line)
            if len(batch) == size:
                yield batch
                batch = []
    except CorpusError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch


def _input_lines(args: argparse.Namespace) -> Iterator[str]:
    from explorer.data.corpus import iter_lines

    if args.sentences:
        if args.input:
            raise UsageError("give sentences as arguments or with --input, not both")
        check_utf8_arguments(args.sentences, "sentence argument")
        yield from args.sentences
    elif args.input and args.input != "-":
        with open(args.input, "rb") as stream:
            yield from iter_lines(stream, args.input)
    else:
        if sys.stdin.isatty():
            print("reading sentences from the terminal, one per line; end with Ctrl-D", file=sys.stderr)
        buffer: BinaryIO | None = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # stdin replaced by a text stream (tests, embedding): already decoded
            yield from (line.rstrip("\n").rstrip("\r") for line in sys.stdin)
        else:
            yield from iter_lines(buffer, "standard input")


def _sentence_row(t: Translation, tokenizer: Tokenizer) -> dict[str, Any]:
    from explorer.decoding.repetition import output_loop

    return {
        "source": t.source,
        "translation": t.output,
        "source_pieces": t.source_pieces,
        "output_pieces": t.target_output_pieces,
        "score": t.score,
        "log_prob": t.log_prob,
        "finished": t.finished,
        "truncated": t.truncated,
        "repeated": output_loop(t.output, t.target_output_pieces) is not None,
        "nbest": [
            {
                "translation": tokenizer.decode(h.tokens),
                "score": h.score,
                "log_prob": h.log_prob,
                "tokens": list(h.tokens),
            }
            for h in t.nbest
        ],
    }


def _json_row(source: str, parts: Sequence[Translation], tokenizer: Tokenizer) -> dict[str, Any]:
    """One input line: its one sentence's row, or the rows of its sentences combined (module doc)."""
    sentences = [_sentence_row(t, tokenizer) for t in parts]
    if len(sentences) == 1:
        return {**sentences[0], "source": source, "sentences": sentences}
    if not sentences:  # a blank line: same keys, nothing translated
        return {
            "source": source,
            "translation": "",
            "source_pieces": [],
            "output_pieces": [],
            "score": None,
            "log_prob": None,
            "finished": True,
            "truncated": False,
            "repeated": False,
            "nbest": [],
            "sentences": [],
        }
    return {
        "source": source,
        "translation": join_sentences(t.output for t in parts),
        "source_pieces": [piece for row in sentences for piece in row["source_pieces"]],
        "output_pieces": [piece for row in sentences for piece in row["output_pieces"]],
        "score": sum(t.score for t in parts) / len(parts),
        "log_prob": sum(t.log_prob for t in parts),
        "finished": all(t.finished for t in parts),
        "truncated": any(t.truncated for t in parts),
        "repeated": any(row["repeated"] for row in sentences),
        "nbest": [],
        "sentences": sentences,
    }


_LANGUAGE_NAMES = {"en": "English"}


def _unknown_note(t: Translation, language: str | None) -> str:
    """Why a translation of input mostly unknown to the vocabulary means little (`Translation.mostly_unknown`)."""
    share = f"{t.unknown_share:.0%} of its pieces are unknown to the model's vocabulary"
    if language in _LANGUAGE_NAMES:
        return f"{share}; this model reads {_LANGUAGE_NAMES[language]}, so the translation is likely meaningless"
    return (
        f"{share}; it is probably in a language the model was not trained on, so the translation is likely meaningless"
    )


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from explorer.checkpoint import load_checkpoint, source_language
    from explorer.devices import resolve_device
    from explorer.inference import translate

    # The checkpoint first: a bad one is reported before anyone types or pipes sentences in.
    checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
    beam, alpha = resolve_decoding(args, checkpoint.metadata)
    options: dict[str, Any] = {"beam_size": beam, "alpha": alpha, "n_best": args.n_best}
    if args.no_repeat_ngram is not None:  # left out when off, so the search runs exactly as without the flag
        options["no_repeat_ngram"] = args.no_repeat_ngram
    model = checkpoint.model
    if args.int8:
        if model.embedding.weight.device.type != "cpu":
            raise UsageError("--int8 runs on the CPU; leave out --device or pass --device cpu")
        from explorer.quantize import quantize_int8

        model = quantize_int8(model)
    reads = source_language(checkpoint.metadata)
    out = sys.stdout
    line_number = 0
    with tqdm(
        total=len(args.sentences) or None,
        unit=" lines",
        file=sys.stderr,
        dynamic_ncols=True,
        disable=not sys.stderr.isatty(),
    ) as bar:
        for batch in _batches(_input_lines(args), args.batch_lines):
            # Every sentence of every line of the batch in one call: they share the batched search.
            split = split_lines(batch, split=not args.no_split)
            done = translate(model, checkpoint.tokenizer, split.sentences, **options) if split.sentences else []
            for i, (source, parts) in enumerate(zip(batch, split.regroup(done), strict=True), start=line_number + 1):
                for t in parts:
                    if t.truncated:
                        print(
                            f"warning: line {i} cut to {checkpoint.config.max_len} pieces: {t.source[:60]!r}",
                            file=sys.stderr,
                        )
                    if t.mostly_unknown:
                        print(f"warning: line {i}: {_unknown_note(t, reads)}: {t.source[:60]!r}", file=sys.stderr)
                if args.json:
                    out.write(json.dumps(_json_row(source, parts, checkpoint.tokenizer), ensure_ascii=False) + "\n")
                else:
                    out.write(join_sentences(t.output for t in parts) + "\n")
            out.flush()
            line_number += len(batch)
            bar.update(len(batch))
    if line_number == 0:
        raise UsageError("nothing to translate (give sentences as arguments, with --input, or on stdin)")
    return 0
