"""An imported OPUS-MT model on this CPU: import time, load time, one 20-word sentence with every attention map
(median and 95th percentile), and the resident memory of a process holding the model as the app does.

Real OPUS-MT weights cannot be downloaded on machines without network access, so a random-weight
`MarianMTModel` at Helsinki-NLP/opus-mt-en-de's exact shape stands in: 6 + 6 layers, d_model 512, 8 heads,
d_ff 2048, swish, a 58,101-piece shared vocabulary (its embedding and output rows are what make the model
large), saved in the Hugging Face layout by transformers and imported with `explorer import`. Costs depend on
the shape, not on the values. Random weights never choose `</s>`, so the output is held to the source's length
(what a real translation of the sentence takes, give or take a few pieces). `--quick` builds a tiny model.

    nice python -m benchmarks --only marian
"""

from __future__ import annotations

import io
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import common
from benchmarks.common import Options, Result
from explorer.analysis.paper_figures import FIGURE3_SENTENCE, FIGURE45_SENTENCE

NAME = "marian"
TITLE = "Imported OPUS-MT model (random weights at opus-mt-en-de's shape)"
SENTENCE = (  # 20 words
    "The committee said on Tuesday that the new bridge across the wide river will open to traffic early next year."
)
VOCAB = 58_101
BASE = dict(d_model=512, layers=6, heads=8, d_ff=2048, vocab=VOCAB)
TINY = dict(d_model=32, layers=2, heads=4, d_ff=64, vocab=400)
LATENCY_GOAL_MS, MEMORY_GOAL_GB = 300.0, 1.5
# The pieces' text: the benchmark's sentence and the paper's two (the Heads page's Figures 3-5 find their words).
_WORDS = " ".join((SENTENCE, FIGURE3_SENTENCE, FIGURE45_SENTENCE)).replace(".", " .").replace(",", " ,").split()


def _sentencepiece() -> bytes:
    """A small SentencePiece model over English-like text: the source and target pieces the model reads."""
    import random

    import sentencepiece as spm

    rng = random.Random(0)
    text = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 20))) for _ in range(500)]
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_writer=writer,
        vocab_size=150,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
    )
    return writer.getvalue()


def build_marian_folder(folder: Path, shape: dict[str, int], max_length: int = 512) -> Path:
    """A random `MarianMTModel` of `shape` in the Hugging Face layout (weights, config, two SentencePiece models,
    vocab.json with </s> = 0 and <pad> last, as OPUS-MT's): the SentencePiece pieces first, then filler pieces up
    to the vocabulary's size. `max_length` is its generation config's (the decoder's start token counted): the
    imported checkpoint's output limit is one less."""
    import sentencepiece as spm
    import torch
    import transformers

    proto = _sentencepiece()
    processor = spm.SentencePieceProcessor(model_proto=proto)
    pieces = ["</s>", "<unk>"]
    pieces += [p for p in (processor.id_to_piece(i) for i in range(processor.get_piece_size())) if p not in pieces]
    pieces = [p for p in pieces if p != "<s>"]
    pieces += [f"\u2581filler{i}" for i in range(shape["vocab"] - len(pieces) - 1)]
    pieces.append("<pad>")
    vocab = {piece: i for i, piece in enumerate(pieces)}
    torch.manual_seed(0)
    config = transformers.MarianConfig(
        vocab_size=len(vocab),
        decoder_vocab_size=len(vocab),
        d_model=shape["d_model"],
        encoder_layers=shape["layers"],
        decoder_layers=shape["layers"],
        encoder_attention_heads=shape["heads"],
        decoder_attention_heads=shape["heads"],
        encoder_ffn_dim=shape["d_ff"],
        decoder_ffn_dim=shape["d_ff"],
        activation_function="swish",
        max_position_embeddings=512,
        scale_embedding=True,
        pad_token_id=len(vocab) - 1,
        eos_token_id=0,
        decoder_start_token_id=len(vocab) - 1,
        forced_eos_token_id=0,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    model = transformers.MarianMTModel(config).eval()
    model.generation_config.bad_words_ids = [[config.pad_token_id]]
    model.generation_config.num_beams, model.generation_config.max_length = 4, max_length
    model.save_pretrained(folder)
    (folder / "source.spm").write_bytes(proto)
    (folder / "target.spm").write_bytes(proto)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"separate_vocabs": False}), encoding="utf-8")
    return folder


# The child that measures the memory of a process holding the model as the app does: the app's libraries
# imported, the checkpoint loaded, one sentence translated with every attention map.
_MEMORY_CHILD = """
import json, sys
import streamlit, plotly  # what the app's process holds besides the engine
from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from benchmarks.memory import _proc_status
ck = load_checkpoint(sys.argv[1])
translate(ck.model, ck.tokenizer, [sys.argv[2]], with_attention=True, max_extra_tokens=0)
print(json.dumps({"rss": _proc_status("VmRSS"), "peak": _proc_status("VmHWM")}))
"""


def resident_memory(checkpoint: Path) -> dict[str, int] | None:
    """VmRSS and VmHWM (bytes) of a fresh process holding `checkpoint` as the app does; None off Linux."""
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(checkpoint), SENTENCE],
        cwd=common.REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        print(done.stderr[-2000:], flush=True)
        return None
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return measured if measured["rss"] is not None else None


def run(opts: Options) -> Result:
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate
    from explorer.marian.importer import import_marian

    result = Result(NAME, TITLE)
    if common.skipped_off_cpu(opts, result):
        return result
    common.apply_threads(opts)
    shape = TINY if opts.quick else BASE
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_marian_folder(Path(tmp) / "hf", shape)
        out = Path(tmp) / "imported"
        imported = common.timed(lambda: import_marian(folder, out))[0]
        loads = [common.timed(lambda: load_checkpoint(out))[0] for _ in range(opts.n_rounds(3, 1))]
        ck = load_checkpoint(out)
        config = ck.config

        def one() -> object:
            return translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True, max_extra_tokens=0)

        (first,) = translate(ck.model, ck.tokenizer, [SENTENCE], with_attention=True, max_extra_tokens=0)
        for _ in range(opts.n_warmup(2, 1)):
            one()
        # On a busy machine `--clock cpu --threads 1` gives this process's own CPU time: what one quiet core takes.
        times = [common.timed(one, clock=opts.clock)[0] * 1e3 for _ in range(opts.n_rounds(30, 3))]
        memory = resident_memory(out) if opts.memory else None
    median, p95 = statistics.median(times), common.percentile(times, 95)
    print(
        f"  model: {config.n_encoder_layers}+{config.n_decoder_layers} layers, d_model {config.d_model}, "
        f"{config.n_heads} heads, d_ff {config.d_ff}, {config.activation}, {config.vocab_size:,} pieces; "
        f"{common.threads_text()}; sentence: {len(SENTENCE.split())} words, {len(first.source_ids)} source pieces, "
        f"{len(first.output_ids)} output pieces",
        flush=True,
    )
    common.print_table(
        ("measure", "value"),
        [("import", f"{imported:.1f} s"), ("load", f"{statistics.median(loads):.2f} s"), ("p50", f"{median:.0f} ms")],
    )
    result.add("explorer import (Hugging Face folder -> checkpoint)", f"{imported:.1f} s")
    result.add("load_checkpoint (median)", f"{statistics.median(loads):.2f} s")
    quick = opts.quick
    clock = " (CPU time)" if opts.clock == "cpu" else ""
    result.add(
        f"one 20-word sentence + all attention maps: p50{clock}",
        f"{median:.0f} ms",
        f"≤ {LATENCY_GOAL_MS:.0f} ms",
        None if quick else median <= LATENCY_GOAL_MS,
    )
    result.add(f"one 20-word sentence + all attention maps: p95{clock}", f"{p95:.0f} ms")
    if memory is not None:
        gigabytes = memory["rss"] / 1e9
        result.add(
            "resident memory, the app's libraries + the model loaded + one sentence",
            f"{gigabytes:.2f} GB (peak {memory['peak'] / 1e9:.2f} GB)",
            f"≤ {MEMORY_GOAL_GB} GB",
            None if quick else gigabytes <= MEMORY_GOAL_GB,
        )
    result.note(
        f"random weights at {'a tiny' if quick else 'opus-mt-en-de' + chr(39) + 's'} shape; output held to the "
        f"source's {len(first.source_ids)} pieces; {len(times)} calls; {common.threads_text()}"
    )
    return result
