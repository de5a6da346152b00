"""Where one greedy sentence's time goes, against CTranslate2 float32 on the same weights: the encoder (with the
first decoder step) and each further step.

    pip install -e '.[peers]'
    python -m benchmarks.probes.peer_steps [ROUNDS] [SENTENCES]

The one-sentence greedy cell of `benchmarks/probes/peers.py` is one number; this splits it. Each system, in its own
process at 2 threads (CTranslate2 on both CPU backends, as peers.py runs it), decodes each of the first N
Multi30k test2016 sentences greedily three times: with the output capped at 1 and at 2 pieces, and uncapped.
From the medians over sentences and the mean number of steps:
- "encoder + first step": the capped-at-1 time (encoding, the cross-attention's keys and values, one step);
- "a further step": (capped at 2) - (capped at 1), and (uncapped - capped at 1) / (steps - 1) as a check;
- "sentence": the uncapped time.
Both start from the source pieces (no tokenization) and stop at output ids, so only the engines are timed.
Settings alternate round by round; each figure is the median over rounds.
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
from typing import Any

from benchmarks.probes import child_command, peers, rounds_and_sentences

REPO_ROOT = Path(__file__).resolve().parents[2]
SETTINGS: tuple[tuple[str, dict[str, str]], ...] = (  # (label, environment of the child)
    ("explorer", {}),
    ("ctranslate2 float32 (oneDNN)", {"CT2_USE_MKL": "0"}),
    ("ctranslate2 float32 (MKL)", {"CT2_USE_MKL": "1"}),
)
# A source as each engine reads it (explorer: piece ids; CTranslate2: pieces), and what decodes one with an
# output cap, giving the steps it took.
Source = list[Any]
Sources = list[Source]
Decode = Callable[[Source, int | None], int]
CAPS = (1, 2, None)  # output pieces at most; None: as the search decides (input length + 50)


def _explorer(folder: Path) -> tuple[Decode, Sources]:
    import torch

    from explorer.checkpoint import load_checkpoint
    from explorer.decoding.search import greedy_search
    from explorer.inference import encode_sources, scorer_for
    from explorer.runtime import configure_allocator

    configure_allocator()  # as `explorer translate` sets it
    torch.set_num_threads(2)
    c = load_checkpoint(REPO_ROOT / "checkpoints" / "multi30k-en-de", "cpu")
    config, model = c.config, c.model
    sentences = json.loads((folder / "work.json").read_text())["sentences"]
    ids, _ = encode_sources(c.tokenizer, sentences, config.max_len, config.eos_id)

    @torch.inference_mode()
    def decode(source: Source, cap: int | None) -> int:
        limit = len(source) + 50 if cap is None else cap
        scorer = scorer_for(model, torch.tensor([source]))
        (found,) = greedy_search(scorer, 1, config.bos_id, config.eos_id, limit)
        return len(found.tokens)

    return decode, ids


def _ctranslate2(folder: Path) -> tuple[Decode, Sources]:
    import ctranslate2
    import sentencepiece as spm

    meta = json.loads((folder / "work.json").read_text())
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    translator = ctranslate2.Translator(str(folder / "ct2-float32"), device="cpu", inter_threads=1, intra_threads=2)
    pieces = [p[: meta["max_len"] - 1] + [meta["eos"]] for p in sp.encode(meta["sentences"], out_type=str)]

    def decode(source: Source, cap: int | None) -> int:
        limit = len(source) + 50 if cap is None else cap
        (result,) = translator.translate_batch([source], beam_size=1, max_decoding_length=limit, max_batch_size=1)
        return len(result.hypotheses[0]) + 1  # the pieces before </s>, and </s>

    return decode, pieces


def child(label: str, folder: str, out: str) -> None:
    decode, sources = (_explorer if label == "explorer" else _ctranslate2)(Path(folder))
    for source in sources[:5]:  # warm-up
        decode(source, None)
    times: dict[str, list[float]] = {str(cap): [] for cap in CAPS}
    steps = []
    for source in sources:
        for cap in CAPS:
            start = time.perf_counter()
            produced = decode(source, cap)
            times[str(cap)].append((time.perf_counter() - start) * 1e3)
            if cap is None:
                steps.append(produced)
    medians = {cap: statistics.median(values) for cap, values in times.items()}
    full, one, two = medians["None"], medians["1"], medians["2"]
    mean_steps = statistics.mean(steps)
    # The uncapped cell as a mean (sentences differ in length), its steps from the mean step count.
    mean_full = statistics.mean(times["None"])
    figures = {
        "encoder + first step (ms)": one,
        "a further step (ms)": two - one,
        "a further step, whole sentences (ms)": (mean_full - statistics.mean(times["1"])) / (mean_steps - 1),
        "sentence (ms)": full,
        "steps": mean_steps,
    }
    Path(out).write_text(json.dumps(figures))


def main(rounds: int = 3, n: int = 100) -> int:
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in SETTINGS}
    with tempfile.TemporaryDirectory(prefix="explorer-peer-steps-") as tmp:
        folder = peers.prepare(Path(tmp), n)
        for r in range(rounds):
            for label, extra in SETTINGS if r % 2 == 0 else SETTINGS[::-1]:
                out = Path(tmp) / "out.json"
                env = {**os.environ, "OMP_NUM_THREADS": "2", "EXPLORER_RUNTIME": "as-given", **extra}
                done = subprocess.run(
                    child_command("benchmarks.probes.peer_steps", label, str(folder), str(out)),
                    cwd=REPO_ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=1800,
                )
                if done.returncode != 0:
                    print(f"  {label} failed: {done.stderr.strip()[-400:]}", flush=True)
                    continue
                results[label].append(json.loads(out.read_text()))
                print(f"  round {r + 1} {label}: {results[label][-1]}", flush=True)
    print(f"\n{n} test2016 sentences, greedy, one at a time, 2 threads, median of {rounds} rounds (ms)")
    keys = ("encoder + first step (ms)", "a further step (ms)", "a further step, whole sentences (ms)", "sentence (ms)")
    print("| system | " + " | ".join(keys) + " | steps |")
    print("|---|" + "---:|" * (len(keys) + 1))
    for label, runs in results.items():
        if runs:
            cells = [f"{statistics.median(r[k] for r in runs):.3f}" for k in keys]
            print(f"| {label} | " + " | ".join(cells) + f" | {statistics.median(r['steps'] for r in runs):.1f} |")
    return 0


if __name__ == "__main__":
    args = rounds_and_sentences("benchmarks.probes.peer_steps", __doc__, 3, 100, child=("SYSTEM", "FOLDER", "OUT"))
    if args.child:
        child(*args.child)
    else:
        sys.exit(main(args.rounds, args.sentences))
