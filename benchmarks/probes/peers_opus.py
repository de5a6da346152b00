"""Explorer against CTranslate2 on the same weights at opus-mt-en-de's shape: batch translation (greedy and beam 4,
batches of 32) and one sentence at a time.

    pip install -e '.[peers]'
    nice python -m benchmarks.probes.peers_opus [ROUNDS] [SENTENCES] [--quick]

Real OPUS-MT weights cannot be downloaded here, so the random `MarianMTModel` of benchmarks/marian.py stands in
(6 + 6 layers, d_model 512, 8 heads, d_ff 2048, swish, 58,101 shared pieces): written in the Hugging Face layout,
imported with `explorer import` (explorer's side) and converted by CTranslate2's own
`ctranslate2.converters.TransformersConverter` (CTranslate2's side, float32), both from that one folder. No
conversion code of ours touches CTranslate2's model, so a mistake in it cannot flatter either side.

Random weights never choose `</s>`, so every output is held to exactly OUTPUT_TOKENS pieces: CTranslate2 by
`min_decoding_length` = `max_decoding_length`, explorer by the imported checkpoint's own output limit
(`max_output_len`, read from the folder's generation `max_length`, the decoder's start token counted), which
`explorer.inference.translate` applies to every sentence. 15 is what a German output of a test2016 sentence takes
in the shipped model's pieces (14.9 on average, `</s>` counted). With every output the same length, length
normalisation cannot reorder beams, so greedy and beam outputs should be identical token for token; an explorer
output that ended early on `</s>` is counted, and differs by design.

The sentences are Multi30k test2016's word counts filled with the stand-in SentencePiece model's own words (it was
trained on three sentences' words; the test2016 text itself falls apart into characters there, 54 pieces a
sentence): 12.9 pieces a sentence with `</s>`, the shipped model's 14.9 on the real text. explorer sorts the
sentences by length before cutting batches of 32; CTranslate2 is handed them all with `max_batch_size` 32, which
sorts and cuts the same way. `--quick` builds the tiny shape of benchmarks/marian.py on 8 sentences (the test).

The rounds, child processes and settings are benchmarks/probes/peers.py's (`PEERS_THREADS`, `PEERS_ONE`,
CTranslate2 on its MKL and oneDNN backends, each cell a system's best setting); the parent builds, imports,
converts and tokenizes, so the CTranslate2 child imports neither torch nor this project.
On a 2-core machine shared with other work, `PEERS_THREADS=1` spares the rounds settings that only measure the
contention: beside a load of 3, explorer at 2 threads did 4.0 sentences/s greedy where it did 22 at 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.probes import add_rounds, add_sentences, parser, peers
from benchmarks.report import cpu_model

MODULE = "benchmarks.probes.peers_opus"
SYSTEMS = ("explorer", "ctranslate2 float32")
OUTPUT_TOKENS = 15
QUICK_SENTENCES = 8


def _sentences(n: int, quick: bool) -> list[str]:
    """`n` sentences of the stand-in SentencePiece model's words, each as many words as a test2016 source sentence
    (quick: as benchmarks/marian.py's three sentences, cycled), drawn with a fixed seed."""
    from benchmarks.marian import _WORDS, SENTENCE
    from explorer.analysis.paper_figures import FIGURE3_SENTENCE, FIGURE45_SENTENCE

    if quick:
        texts = [SENTENCE, FIGURE3_SENTENCE, FIGURE45_SENTENCE]
        counts = [len(texts[i % 3].split()) for i in range(n)]
    else:
        from explorer.data import load_multi30k

        counts = [len(s.split()) for s in load_multi30k("test2016").source[:n]]
    rng = random.Random(0)
    return [" ".join(rng.choice(_WORDS) for _ in range(count)) for count in counts]


def prepare(folder: Path, n: int, quick: bool = False) -> Path:
    """The random Marian folder, explorer's import of it, CTranslate2's conversion of it, and the sentences with
    their source pieces (as explorer reads them, `</s>` last) in work.json."""
    import ctranslate2

    from benchmarks.marian import BASE, TINY, build_marian_folder
    from explorer.checkpoint import load_checkpoint
    from explorer.inference import encode_sources
    from explorer.marian.importer import import_marian

    hf = build_marian_folder(folder / "hf", TINY if quick else BASE, max_length=OUTPUT_TOKENS + 1)
    import_marian(hf, folder / "explorer")
    ctranslate2.converters.TransformersConverter(str(hf)).convert(
        str(folder / "ct2-float32"), quantization="float32", force=True
    )
    c = load_checkpoint(folder / "explorer", "cpu")
    assert c.config.max_output_len == OUTPUT_TOKENS, c.config.max_output_len
    # CTranslate2 drops <pad> (the last piece; it starts its decoder from a zero embedding instead): the rest must
    # be explorer's pieces in explorer's order, or equal outputs would not be equal ids.
    theirs = json.loads((folder / "ct2-float32" / "shared_vocabulary.json").read_text(encoding="utf-8"))
    if theirs != c.tokenizer.pieces(list(range(c.config.vocab_size - 1))):
        raise RuntimeError("CTranslate2's converted vocabulary is not explorer's imported one")
    sentences = _sentences(n, quick)
    ids, _ = encode_sources(c.tokenizer, sentences, c.config.max_len, c.config.eos_id)
    config = c.config
    meta = {
        "sentences": sentences,
        "pieces": [c.tokenizer.pieces(x) for x in ids],
        "output_tokens": OUTPUT_TOKENS,
        "model": f"{config.n_encoder_layers}+{config.n_decoder_layers} layers, d_model {config.d_model}, "
        f"{config.n_heads} heads, d_ff {config.d_ff}, {config.activation}, {config.vocab_size:,} pieces",
    }
    (folder / "work.json").write_text(json.dumps(meta))
    return folder


def _system(name: str, threads: int, folder: Path) -> peers.System:
    """(translate(sentences, beam, batch) -> each output's pieces) for `name` from the prepared folder."""
    meta = json.loads((folder / "work.json").read_text())
    length = meta["output_tokens"]
    if name == "ctranslate2 float32":
        import ctranslate2  # and nothing else: no torch beside CTranslate2's OpenMP runtime

        pieces = dict(zip(meta["sentences"], meta["pieces"], strict=True))
        translator = ctranslate2.Translator(
            str(folder / "ct2-float32"), device="cpu", inter_threads=1, intra_threads=threads
        )

        def run_ct2(s: list[str], beam: int, batch: int) -> list[Any]:
            found = translator.translate_batch(
                [pieces[x] for x in s],
                beam_size=beam,
                max_batch_size=batch,
                min_decoding_length=length,
                max_decoding_length=length,
                length_penalty=0.6,
            )
            return [r.hypotheses[0] for r in found]

        return run_ct2
    import torch

    from explorer.checkpoint import load_checkpoint
    from explorer.inference import translate
    from explorer.runtime import configure_allocator

    os.environ.pop("EXPLORER_RUNTIME", None)  # as peers.py: the allocator as `explorer translate` sets it
    configure_allocator()
    torch.set_num_threads(threads)
    c = load_checkpoint(folder / "explorer", "cpu")

    def run_explorer(s: list[str], beam: int, batch: int) -> list[Any]:
        found = translate(c.model, c.tokenizer, s, beam_size=beam, batch_size=batch)
        # An output that ended on </s> keeps it, so it counts as different from CTranslate2's held one.
        return [c.tokenizer.target_pieces(t.output_ids) for t in found]

    return run_explorer


def child(name: str, threads: int, folder: str, out: str) -> None:
    peers.child(name, threads, folder, out, system=_system)


def early_endings(results: peers.Runs, n: int, length: int) -> str:
    """How many of explorer's outputs ended on </s> before `length` pieces (CTranslate2's are held to it)."""
    explorer = [rs[0] for rs in results["explorer"].values() if rs]
    if not explorer:
        return ""
    early = [sum(len(o) < length or o[-1] == "</s>" for o in explorer[0][k]) for k in ("greedy", "beam")]
    return f"\nexplorer outputs that ended on </s> before {length} pieces: {early[0]}/{n} greedy, {early[1]}/{n} beam 4"


def main(rounds: int = 3, n: int = 128, quick: bool = False) -> int:
    settings = tuple(int(t) for t in os.environ.get("PEERS_THREADS", "1,2").split(","))
    with tempfile.TemporaryDirectory(prefix="explorer-peers-opus-") as tmp:
        folder = prepare(Path(tmp), n, quick)
        meta = json.loads((folder / "work.json").read_text())
        results, loads = peers.run_rounds(SYSTEMS, settings, rounds, folder, MODULE)
    sources = [len(p) for p in meta["pieces"]]
    print(
        f"\n{'tiny' if quick else 'opus-mt-en-de'}-shaped random Marian model ({meta['model']}), explorer's import "
        f"against CTranslate2's own conversion of the same folder; {n} sentences of {sum(sources) / n:.1f} source "
        f"pieces on average; every output held to exactly {OUTPUT_TOKENS} pieces (CTranslate2: min_decoding_length "
        f"= max_decoding_length = {OUTPUT_TOKENS}; explorer: the checkpoint's max_output_len = {OUTPUT_TOKENS}); "
        f"{rounds} interleaved rounds, each system in its own process at each of {settings} threads, CTranslate2 on "
        f"both CPU backends (each cell: that system's best setting, in brackets); {cpu_model()}, "
        f"{os.cpu_count()} logical CPUs; 1-minute load {min(loads):.1f}–{max(loads):.1f}; ratio = ÷ CTranslate2 float32"
    )
    print("\n".join(peers.table(results, n)))
    print(early_endings(results, n, OUTPUT_TOKENS))
    return 0 if all(any(runs.values()) for runs in results.values()) else 1


if __name__ == "__main__":
    command = parser(MODULE, __doc__)
    add_rounds(command, 3)
    add_sentences(command, 128)
    command.add_argument("--quick", action="store_true", help=f"the tiny shape on {QUICK_SENTENCES} sentences")
    command.add_argument("--child", nargs=4, metavar=("SYSTEM", "THREADS", "FOLDER", "OUT"), help=argparse.SUPPRESS)
    args = command.parse_args()
    if args.child:
        system, threads, folder, out = args.child
        child(system, int(threads), folder, out)
    else:
        sys.exit(main(args.rounds, QUICK_SENTENCES if args.quick else args.sentences, args.quick))
