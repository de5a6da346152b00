"""Peers on the same weights: the shipped checkpoint converted to CTranslate2 and to a Hugging Face Marian model.

    pip install -e '.[peers]'
    python -m benchmarks.probes.peers [ROUNDS] [SENTENCES]

Conversion, weight for weight (no training, no tokenizer of theirs: our SentencePiece pieces are the vocabulary):
- CTranslate2 (`ctranslate2.specs.TransformerSpec`, post-LN, ReLU): fused Q/K/V and cross K/V as CTranslate2
  lays them out; embeddings scaled by √d_model; our sinusoid table is handed over as the position table, so
  the interleaved sin/cos layout needs no permutation; the decoder starts from `<s>`, whose embedding was
  trained (id 2), source pieces end with `</s>` as our encoder reads them.
- Marian (`transformers.MarianMTModel`): the checkpoint exported by `explorer.marian.importer.export_marian`
  (the same weights by name; Marian computes its own sinusoids with all sines first, so the residual stream is
  permuted to match); pad id 0, `decoder_start_token_id` = 2, no banned pad token.
Neither has GNMT's length penalty: greedy outputs should match ours exactly; beam outputs are compared with
their own length normalisation (score / length^0.6), so a few differ by design.

Each system runs in its own process (`--child SYSTEM THREADS FOLDER OUT`) at 1 and at 2 threads
(`PEERS_THREADS=1,2`), the systems interleaved round by round; each cell reports a system's best setting.
`PEERS_SYSTEMS=explorer,"ctranslate2 float32"` runs only those (more rounds of a head-to-head in the same time);
CTranslate2 float32 is always run, as every ratio is against it. The one-sentence cells time the first fifth of
the sentences, one call each (`PEERS_ONE` sets how many).
CTranslate2 also runs on each of its CPU backends (`CT2_USE_MKL=1`: Intel MKL, its default on Intel CPUs;
`CT2_USE_MKL=0`: oneDNN): on an Intel Xeon with AMX its MKL backend at 2 threads took 62 ms for a sentence that
oneDNN did in 9.3 ms, and comparing against the slower backend would flatter us.
The parent converts and tokenizes beforehand, so a CTranslate2 child imports neither torch nor this project
(two OpenMP runtimes in one process slow CTranslate2 several-fold; a child that finds torch loaded says so).
Cells: greedy and beam 4 over batches of 32 (sentences/s on Multi30k test2016) and one sentence at a time (ms
per sentence). Prints a markdown table with each cell ÷ CTranslate2 float32, and the identical-output counts
against this project's outputs. benchmarks/probes/peers_opus.py runs the same rounds on a random model at
opus-mt-en-de's shape, converted by CTranslate2's own Marian converter.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.probes import child_command, rounds_and_sentences

if TYPE_CHECKING:
    import torch

    from explorer.checkpoint import Checkpoint

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO_ROOT / "checkpoints" / "multi30k-en-de"
SYSTEMS = ("explorer", "explorer int8", "ctranslate2 float32", "ctranslate2 int8", "hf marian")
CELLS = (
    "greedy, batches of 32 (sent/s)",
    "beam 4, batches of 32 (sent/s)",
    "greedy, one sentence (ms)",
    "beam 4, one sentence (ms)",
)
EXTRA = 50  # Section 6.1: output length ≤ input length + 50
# A system: translate(sentences, beam, batch) -> output strings.
System = Callable[[list[str], int, int], list[str]]


def _linear(spec: Any, weight: torch.Tensor, bias: torch.Tensor) -> None:
    spec.weight = weight.detach().float().numpy()
    spec.bias = bias.detach().float().numpy()


def _norm(spec: Any, module: Any) -> None:
    spec.gamma = module.weight.detach().float().numpy()
    spec.beta = module.bias.detach().float().numpy()


def _self_attention(spec: Any, attention: Any, norm: Any) -> None:
    """CTranslate2 fuses W^Q, W^K and W^V into one linear."""
    import torch

    weight = torch.cat([attention.w_q.weight, attention.w_k.weight, attention.w_v.weight])
    _linear(spec.linear[0], weight, torch.cat([attention.w_q.bias, attention.w_k.bias, attention.w_v.bias]))
    _linear(spec.linear[1], attention.w_o.weight, attention.w_o.bias)
    _norm(spec.layer_norm, norm)


def _feed_forward(spec: Any, ffn: Any, norm: Any) -> None:
    _linear(spec.linear_0, ffn.w_1.weight, ffn.w_1.bias)
    _linear(spec.linear_1, ffn.w_2.weight, ffn.w_2.bias)
    _norm(spec.layer_norm, norm)


def ctranslate2_spec(checkpoint: Checkpoint) -> Any:
    """A CTranslate2 TransformerSpec holding exactly the checkpoint's weights."""
    import torch
    from ctranslate2.specs import transformer_spec

    model, config = checkpoint.model, checkpoint.config
    assert config.norm_position == "post" and config.positional == "sinusoidal" and config.share_embeddings
    spec = transformer_spec.TransformerSpec.from_config(
        (config.n_encoder_layers, config.n_decoder_layers), config.n_heads, pre_norm=False
    )
    embedding = model.embedding.weight.detach().float().numpy()
    table = model.positional_table().detach().float().numpy()
    spec.encoder.embeddings[0].weight = embedding
    spec.encoder.scale_embeddings = True
    spec.encoder.position_encodings.encodings = table
    spec.decoder.embeddings.weight = embedding
    spec.decoder.scale_embeddings = True
    spec.decoder.position_encodings.encodings = table
    spec.decoder.projection.weight = embedding
    spec.decoder.projection.bias = torch.zeros(config.vocab_size).numpy()
    for ours, theirs in zip(model.encoder_layers, spec.encoder.layer, strict=False):
        _self_attention(theirs.self_attention, ours.self_attention, ours.attention_residual.norm)
        _feed_forward(theirs.ffn, ours.feed_forward, ours.ffn_residual.norm)
    for layer, layer_spec in zip(model.decoder_layers, spec.decoder.layer, strict=False):
        c = layer.cross_attention
        _self_attention(layer_spec.self_attention, layer.self_attention, layer.self_residual.norm)
        _linear(layer_spec.attention.linear[0], c.w_q.weight, c.w_q.bias)
        _linear(
            layer_spec.attention.linear[1], torch.cat([c.w_k.weight, c.w_v.weight]), torch.cat([c.w_k.bias, c.w_v.bias])
        )
        _linear(layer_spec.attention.linear[2], c.w_o.weight, c.w_o.bias)
        _norm(layer_spec.attention.layer_norm, layer.cross_residual.norm)
        _feed_forward(layer_spec.ffn, layer.feed_forward, layer.ffn_residual.norm)
    vocabulary = checkpoint.tokenizer.pieces(list(range(config.vocab_size)))
    spec.register_source_vocabulary(vocabulary)
    spec.register_target_vocabulary(vocabulary)
    spec.config.bos_token, spec.config.eos_token = vocabulary[config.bos_id], vocabulary[config.eos_id]
    spec.config.unk_token, spec.config.decoder_start_token = "<unk>", vocabulary[config.bos_id]
    spec.config.add_source_eos = False  # our pieces already end with </s>
    return spec


def convert_ctranslate2(checkpoint: Checkpoint, out: Path, quantization: str = "float32") -> Path:
    import ctranslate2

    class _Converter(ctranslate2.converters.Converter):
        def _load(self) -> Any:
            return ctranslate2_spec(checkpoint)

    _Converter().convert(str(out), quantization=quantization, force=True)
    return out


def marian_model(checkpoint: Checkpoint) -> Any:
    """A transformers MarianMTModel with the checkpoint's weights: written as a Marian folder by
    `explorer.marian.importer.export_marian` (which permutes the residual stream to Marian's position table), then
    read back by transformers."""
    from transformers import MarianMTModel

    from explorer.marian.importer import export_marian

    folder = export_marian(checkpoint, Path(tempfile.mkdtemp(prefix="explorer-marian-")))
    return MarianMTModel.from_pretrained(str(folder)).eval()


# ---- one system in its own process -----------------------------------------------------------------------
# The parent prepares everything a child needs in a work folder (the converted CTranslate2 models, the
# tokenizer, the sentences), so a CTranslate2 child imports ctranslate2 and sentencepiece only. Converting in
# the child, as this file first did, loaded torch beside CTranslate2: two OpenMP runtimes in one process made
# CTranslate2 6.5x slower on one sentence (47.3 ms vs 7.2 ms) and flattered us.
def prepare(folder: Path, n: int) -> Path:
    """Convert the checkpoint for CTranslate2 (float32, int8) and write the tokenizer and `n` test sentences."""
    from explorer.checkpoint import load_checkpoint

    c = load_checkpoint(CHECKPOINT, "cpu")
    for quantization in ("float32", "int8"):
        convert_ctranslate2(c, folder / f"ct2-{quantization}", quantization)
    c.tokenizer.save(folder / "tokenizer.model")
    meta = {"max_len": c.config.max_len, "eos": c.tokenizer.id_to_piece(c.config.eos_id), "sentences": _sentences(n)}
    (folder / "work.json").write_text(json.dumps(meta))
    return folder


def _sentences(n: int) -> list[str]:
    from explorer.data import load_multi30k

    return list(load_multi30k("test2016").source[:n])


def _ct2_system(folder: Path, quantization: str, threads: int) -> System:
    """CTranslate2 from the prepared folder; imports neither torch nor explorer."""
    import ctranslate2
    import sentencepiece as spm

    meta = json.loads((folder / "work.json").read_text())
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    translator = ctranslate2.Translator(
        str(folder / f"ct2-{quantization}"), device="cpu", inter_threads=1, intra_threads=threads
    )
    eos, max_len = meta["eos"], meta["max_len"]

    def run_ct2(s: list[str], beam: int, batch: int) -> list[str]:
        # As explorer's encode_sources: pieces cut to max_len - 1, then </s>.
        pieces = [p[: max_len - 1] + [eos] for p in sp.encode(list(s), out_type=str)]
        out = []
        for start in range(0, len(pieces), batch):
            chunk = pieces[start : start + batch]
            found = translator.translate_batch(
                chunk,
                beam_size=beam,
                length_penalty=0.6,
                max_decoding_length=max(len(p) for p in chunk) + EXTRA,
                max_batch_size=batch,
            )
            out += sp.decode([[p for p in r.hypotheses[0] if p != eos] for r in found])
        return out

    return run_ct2


def _system(name: str, threads: int, folder: Path | None = None) -> System:
    """(translate(list of sentences, beam, batch) -> list of output strings) for `name`."""
    if name.startswith("ctranslate2"):
        if folder is None:  # a caller without a prepared folder (the test): prepare one
            folder = prepare(Path(tempfile.mkdtemp(prefix="explorer-ct2-")), 0)
        return _ct2_system(folder, "int8" if name.endswith("int8") else "float32", threads)
    import torch

    from explorer.checkpoint import load_checkpoint
    from explorer.inference import encode_sources, translate

    if name.startswith("explorer"):  # the allocator as `explorer translate` sets it (explorer/runtime.py)
        from explorer.runtime import configure_allocator

        os.environ.pop("EXPLORER_RUNTIME", None)  # as-given kept the OpenMP defaults; the thread count is set here
        configure_allocator()
    torch.set_num_threads(threads)
    c = load_checkpoint(CHECKPOINT, "cpu")
    tokenizer, config = c.tokenizer, c.config
    if name.startswith("explorer"):
        model = c.model
        if name.endswith("int8"):
            from explorer.quantize import quantize_int8

            model = quantize_int8(model)
        return lambda s, beam, batch: [
            t.output for t in translate(model, tokenizer, s, beam_size=beam, batch_size=batch)
        ]
    marian = marian_model(c)

    @torch.inference_mode()
    def run_marian(s: list[str], beam: int, batch: int) -> list[str]:
        ids, _ = encode_sources(tokenizer, s, config.max_len, config.eos_id)
        out = []
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            width = max(len(x) for x in chunk)
            src = torch.tensor([x + [config.pad_id] * (width - len(x)) for x in chunk])
            generated = marian.generate(
                input_ids=src,
                attention_mask=src != config.pad_id,
                num_beams=beam,
                do_sample=False,
                max_new_tokens=width + EXTRA,
                length_penalty=0.6,
                early_stopping=True,
            )
            for row in generated.tolist():
                body = [t for t in row[1:] if t not in (config.eos_id, config.pad_id)]
                out.append(tokenizer.decode(body))
        return out

    return run_marian


def child(name: str, threads: int, folder: str, out: str, system: Callable[[str, int, Path], Any] = _system) -> None:
    """Time `system(name, threads, folder)` on the prepared sentences, writing its figures and outputs to `out`."""
    translate = system(name, threads, Path(folder))
    sentences = json.loads((Path(folder) / "work.json").read_text())["sentences"]
    n = len(sentences)
    translate(sentences[:8], 4, 8)  # warm-up
    figures, outputs = {}, {}
    for cell, beam, batch in ((CELLS[0], 1, 32), (CELLS[1], 4, 32)):
        start = time.perf_counter()
        outputs[cell] = translate(sentences, beam, batch)
        figures[cell] = len(sentences) / (time.perf_counter() - start)
    one = sentences[: int(os.environ.get("PEERS_ONE", max(n // 5, 10)))]
    for cell, beam in ((CELLS[2], 1), (CELLS[3], 4)):
        start = time.perf_counter()
        for sentence in one:
            translate([sentence], beam, 1)
        figures[cell] = (time.perf_counter() - start) / len(one) * 1e3
    result: dict[str, Any] = {"figures": figures, "greedy": outputs[CELLS[0]], "beam": outputs[CELLS[1]]}
    result["torch_loaded"] = "torch" in sys.modules
    Path(out).write_text(json.dumps(result))


# A system's settings besides the thread count: (label, environment). CTranslate2 picks its CPU backend from
# CT2_USE_MKL when it loads.
_CT2_BACKENDS = (("mkl", {"CT2_USE_MKL": "1"}), ("dnnl", {"CT2_USE_MKL": "0"}))
VARIANTS: dict[str, tuple[tuple[str, dict[str, str]], ...]] = {
    "ctranslate2 float32": _CT2_BACKENDS,
    "ctranslate2 int8": _CT2_BACKENDS,
}


def settings_of(name: str, threads: tuple[int, ...]) -> list[tuple[str, int, dict[str, str]]]:
    """(label, threads, extra environment) of every setting `name` runs under."""
    variants = VARIANTS.get(name, (("", {}),))
    return [(f"{t}t {label}".strip(), t, env) for t in threads for label, env in variants]


def _run_child(
    name: str, threads: int, folder: Path, extra: dict[str, str] | None = None, module: str = "benchmarks.probes.peers"
) -> dict[str, Any] | None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "EXPLORER_RUNTIME": "as-given", **(extra or {})}
        done = subprocess.run(
            child_command(module, name, str(threads), str(folder), str(out)),
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0 or not out.is_file():
            print(f"  {name} ({threads} threads) failed: {done.stderr.strip()[-400:]}", flush=True)
            return None
        return json.loads(out.read_text())


def _best(runs: dict[str, list[dict[str, Any]]], cell: str) -> tuple[float, str]:
    """(median over rounds at the best setting for this cell, that setting); ms cells: lower is better."""
    medians = {label: statistics.median(r["figures"][cell] for r in rs) for label, rs in runs.items() if rs}
    pick = min if cell.endswith("(ms)") else max
    best = pick(medians, key=lambda label: medians[label])
    return medians[best], best


def chosen_systems(asked: str | None) -> tuple[str, ...]:
    """The systems `PEERS_SYSTEMS` names, in the table's order (all of them when unset), CTranslate2 float32
    always: every ratio is against it."""
    if not asked:
        return SYSTEMS
    chosen = {name.strip() for name in asked.split(",") if name.strip()} | {"ctranslate2 float32"}
    unknown = chosen - set(SYSTEMS)
    if unknown:
        raise ValueError(f"unknown systems {sorted(unknown)}; known: {', '.join(SYSTEMS)}")
    return tuple(name for name in SYSTEMS if name in chosen)


Runs = dict[str, dict[str, list[dict[str, Any]]]]  # system -> setting label -> one child's result per round


def run_rounds(
    systems: tuple[str, ...],
    settings: tuple[int, ...],
    rounds: int,
    folder: Path,
    module: str = "benchmarks.probes.peers",
) -> tuple[Runs, list[float]]:
    """Each system at each of its settings in its own `module --child` process, the systems interleaved round by
    round (reversed every other round); the results and the 1-minute load before each round."""
    results: Runs = {name: {label: [] for label, _, _ in settings_of(name, settings)} for name in systems}
    loads = []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for name in systems if r % 2 == 0 else systems[::-1]:
            for label, threads, extra in settings_of(name, settings):
                measured = _run_child(name, threads, folder, extra, module)
                if measured is None:
                    continue
                if name.startswith("ctranslate2") and measured["torch_loaded"]:
                    print(f"  warning: torch was loaded in the {name} child: its figures are unfair to it")
                results[name][label].append(measured)
                figures = ", ".join(f"{k} {v:.1f}" for k, v in measured["figures"].items())
                print(f"  round {r + 1} {name} ({label}): {figures}", flush=True)
    return results, loads


def table(results: Runs, n: int) -> list[str]:
    """The markdown table: each cell's best setting and its ratio to CTranslate2 float32, and how many of each
    system's outputs (greedy / beam 4) are explorer's."""
    base = results["ctranslate2 float32"]
    explorer = [runs[0] for runs in results.get("explorer", {}).values() if runs]
    reference = explorer[0] if explorer else None
    lines = [
        "| system | " + " | ".join(CELLS) + " | identical to explorer (greedy / beam 4) |",
        "|---|" + "---:|" * (len(CELLS) + 1),
    ]
    for name, runs in results.items():
        if not any(runs.values()):
            lines.append(f"| {name} | failed |")
            continue
        cells = []
        for cell in CELLS:
            value, label = _best(runs, cell)
            ratio = f", {value / _best(base, cell)[0]:.2f}×" if any(base.values()) else ""
            cells.append(f"{value:.1f} ({label}{ratio})")
        mine = next(rs[0] for rs in runs.values() if rs)
        same = "" if reference is None else " / ".join(_same(mine, reference, k, n) for k in ("greedy", "beam"))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {same} |")
    return lines


def _same(mine: dict[str, Any], reference: dict[str, Any], search: str, n: int) -> str:
    return f"{sum(a == b for a, b in zip(mine[search], reference[search], strict=False))}/{n}"


def main(rounds: int = 3, n: int = 1000) -> int:
    settings = tuple(int(t) for t in os.environ.get("PEERS_THREADS", "1,2").split(","))
    try:
        systems = chosen_systems(os.environ.get("PEERS_SYSTEMS"))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="explorer-peers-") as tmp:
        results, loads = run_rounds(systems, settings, rounds, prepare(Path(tmp), n))
    print(
        f"\n{n} test2016 sentences, {rounds} interleaved rounds, each system in its own process at each of "
        f"{settings} threads, CTranslate2 on both CPU backends (each cell: that system's best setting, in brackets), "
        f"1-minute load {min(loads):.1f}–{max(loads):.1f}; ratio = ÷ CTranslate2 float32"
    )
    print("\n".join(table(results, n)))
    return 0


if __name__ == "__main__":
    args = rounds_and_sentences(
        "benchmarks.probes.peers", __doc__, 3, 1000, child=("SYSTEM", "THREADS", "FOLDER", "OUT")
    )
    if args.child:
        system, threads, folder, out = args.child
        child(system, int(threads), folder, out)
    else:
        sys.exit(main(args.rounds, args.sentences))
