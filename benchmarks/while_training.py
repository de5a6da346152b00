"""A second user's translation while a Multi30k run trains, against the same translation on an idle server.

What is timed is what the Translate page computes for one sentence: `explorer.inference.translate(...,
with_attention=True)` with the page's defaults (greedy, α = 0.6) on the shipped Multi30k model. The training
run is started the way the Train page starts one (`RunManager.start_new`: its own process, lower priority,
a bounded number of torch threads) on the Multi30k training set with the page's Multi30k defaults (small
preset, 4096 tokens per batch). In one run: idle, training, idle again; the ratio is p95 while training
over p95 of both idle phases together, so a drift in background load shows in the two idle figures.

    python -m benchmarks.while_training            # about two minutes
    python -m benchmarks.while_training --quick    # a smoke test: a few calls per phase
    python -m benchmarks.while_training --estimates  # the Train page's time estimate against short runs
    python -m benchmarks.while_training --estimates --quick  # the same for the tiny preset only, once
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks import command_line_runtime

command_line_runtime(__name__)  # run as a command: before torch loads

from benchmarks import common
from benchmarks.common import Options, Result
from explorer.checkpoint import load_checkpoint
from explorer.config import PRESETS
from explorer.data import load_multi30k
from explorer.inference import translate
from explorer.training.launcher import RunManager
from explorer.training.train_config import TrainConfig

if TYPE_CHECKING:
    from explorer.data.corpus import ParallelCorpus as Dataset
    from explorer.tokenizer import Tokenizer
    from explorer.training.run_folder import RunSnapshot

NAME = "while_training"
TITLE = "Translation latency while a run trains"
SENTENCE = "Two young men in red jackets are playing football together on a large green field ."
GOAL = 2.0  # p95 while training ÷ p95 idle
MIN_STEPS = 5  # training steps the run must make during the timed phase


def _timed(call: Callable[[], object], n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def _start_training(root: Path, tokenizer: Tokenizer, quick: bool) -> tuple[RunManager, str]:
    train, val = load_multi30k("train"), load_multi30k("val")
    config = PRESETS["small"].replace(vocab_size=tokenizer.vocab_size)
    train_config = TrainConfig(
        steps=1_000_000,
        batch_tokens=1024 if quick else 4096,
        warmup_steps=1000,
        eval_every=0,
        save_every=0,
        bleu_sentences=0,
        device="cpu",
        max_len=config.max_len,
        log_every=1,
    )
    manager = RunManager(root)
    name = manager.start_new(
        "while-training", model_config=config, train_config=train_config, tokenizer=tokenizer, train=train, val=val
    )
    return manager, name


def _snapshot(manager: RunManager, name: str) -> RunSnapshot:
    snap = manager.snapshot(name)
    assert snap is not None, f"the run {name} has no folder"
    return snap


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    if common.skipped_off_cpu(opts, result, "CPU only (the question is sharing a CPU with a training process)"):
        return result
    common.apply_threads(opts)
    checkpoint = load_checkpoint(opts.checkpoint)
    model, tokenizer = checkpoint.model.eval(), checkpoint.tokenizer

    def call() -> object:
        return translate(model, tokenizer, [SENTENCE], beam_size=1, alpha=0.6, with_attention=True)

    calls = opts.n_rounds(80, 5)
    _timed(call, opts.n_warmup(5, 1))
    idle_before = _timed(call, calls)
    with tempfile.TemporaryDirectory(prefix="while-training-") as folder:
        manager, name = _start_training(Path(folder), tokenizer, opts.quick)
        try:
            deadline = time.monotonic() + 300
            while (snap := _snapshot(manager, name)).step < 2:  # training for real, not importing torch
                if not snap.live or time.monotonic() > deadline:
                    raise RuntimeError(f"the training run did not start: {snap.status} {snap.error}\n{snap.log}")
                time.sleep(0.2)
            # At least `calls` calls, and for as long as it takes the run to make `MIN_STEPS` steps, so the phase
            # really overlaps training (a step of the small model takes seconds on a busy 2-core machine).
            first, training = snap.step, list[float]()
            deadline = time.monotonic() + (30 if opts.quick else 240)
            while len(training) < calls or (
                _snapshot(manager, name).step - first < MIN_STEPS and time.monotonic() < deadline
            ):
                training += _timed(call, 1)
            trained = _snapshot(manager, name).step - first
        finally:
            manager.stop(name)
            manager.wait(name, 300)
    idle_after = _timed(call, calls)
    idle = idle_before + idle_after
    ratio = common.percentile(training, 95) / common.percentile(idle, 95)
    rows = [
        (phase, f"{statistics.median(t) * 1e3:.1f} ms", f"{common.percentile(t, 95) * 1e3:.1f} ms", len(t))
        for phase, t in (("idle, before", idle_before), ("while training", training), ("idle, after", idle_after))
    ]
    common.print_table(("phase", "median", "p95", "calls"), rows)
    print(
        f"  p95 while training ÷ p95 idle: {ratio:.2f} (goal ≤ {GOAL}); the run trained {trained} steps meanwhile",
        flush=True,
    )
    result.add(
        "translate + all attention, p95 while a Multi30k run trains ÷ p95 idle",
        f"{ratio:.2f}",
        f"≤ {GOAL}",
        ratio <= GOAL if not opts.quick else None,
    )
    result.note(
        f"{Path(opts.checkpoint).name}, greedy with all attention maps; {calls} calls idle before and "
        f"after, {len(training)} while training; server {common.threads_text()}; the run: small preset, its own "
        f"process (nice 10, 1 torch thread on 2 cores), {trained} steps during the training phase"
    )
    return result


# What the Train page offers for each preset (its DEFAULTS): data, vocabulary, tokens per batch.
ESTIMATE_PRESETS = {
    "tiny": ("reverse task, 5,000 pairs of 4-10 symbols", 64, 1024),
    "small": ("Multi30k", 8000, 4096),
    "base": ("Multi30k", 8000, 4096),
}
ESTIMATE_STEPS = {"tiny": 60, "small": 20, "base": 8}
ESTIMATE_TOLERANCE = 0.30  # the estimate's promise: within ±30% of the measured time


def _estimate_data(name: str) -> tuple[Dataset, Dataset, Tokenizer, int]:
    """(train, val, tokenizer, tokens per batch) as the Train page gives them for `name`'s default data."""
    from explorer.data import make_splits
    from explorer.training.datasets import train_tokenizer

    _, vocab, batch = ESTIMATE_PRESETS[name]
    if name == "tiny":  # the page's synthetic defaults: reverse, 5,000 pairs, longest 10, seed 0, vocab 64
        train, val = make_splits("reverse", 5000, 500, 0, min_len=4, max_len=10)
        return train, val, train_tokenizer(train, vocab, synthetic=True), batch
    # Multi30k with an 8,000-piece vocabulary: the shipped model's tokenizer is one (the page trains its own
    # of the same size on the same corpus, which takes a minute here).
    return load_multi30k("train"), load_multi30k("val"), load_checkpoint(common.SHIPPED_CHECKPOINT).tokenizer, batch


def check_estimates(steps: dict[str, int], repeats: int = 2) -> list[tuple[str, int, float, float]]:
    """The Train page's whole-run estimate before Start (`estimate_run`: the run's own batches of its corpus,
    its threads and priority, evaluations, checkpoints and start-up) against the same run started through the
    launcher, for each preset with the page's default data; `repeats` rounds, presets interleaved.

    Each run evaluates once (at its end: validation loss, BLEU on 64 sentences, two watched sentences) and saves
    latest/ halfway and at the end, and is exported when done, as a page run with "save" ticked. Measured is
    the wall time from Start (`start_new`) to the run's recorded end. Returns (preset, round, estimated s,
    measured s).
    """
    from explorer.training.estimate.measure import estimate_run
    from explorer.training.estimate.startup import forget_process_startup

    began = time.perf_counter()
    data = {name: _estimate_data(name) for name in steps}
    print(f"  data and tokenizers ready in {time.perf_counter() - began:.0f} s", flush=True)
    found = []
    for round_ in range(1, repeats + 1):
        for name, n in steps.items():
            train, val, tokenizer, batch = data[name]
            config = PRESETS[name].replace(vocab_size=tokenizer.vocab_size)
            train_config = TrainConfig(
                steps=n,
                batch_tokens=batch,
                warmup_steps=100,
                eval_every=n,
                save_every=max(1, n // 2),
                keep_last=2,
                bleu_sentences=64,
                device="cpu",
                max_len=config.max_len,
                log_every=max(1, min(10, n // 200)),
                sample_sentences=tuple(val.source[:2]),
            )
            load_before = os.getloadavg()[0]
            forget_process_startup()  # timed again for each estimate, as a fresh server would
            timing = time.perf_counter()
            estimate = estimate_run(config, train_config, tokenizer, train, val, save_to=True)
            timing = time.perf_counter() - timing
            with tempfile.TemporaryDirectory(prefix="estimate-") as folder:
                manager = RunManager(Path(folder) / "runs")
                start = time.time()
                run_name = manager.start_new(
                    name,
                    model_config=config,
                    tokenizer=tokenizer,
                    train=train,
                    val=val,
                    train_config=train_config,
                    save_in=Path(folder) / "saved",
                )
                snap = manager.wait(run_name, 3600, poll_s=0.05)
                state = json.loads((Path(folder) / "runs" / run_name / "state.json").read_text())
            assert snap.status == "finished", (snap.error, snap.log)
            measured = float(state.get("ended", time.time())) - start
            process_up = float(state.get("started", start)) - start  # spawned, niced, torch imported
            found.append((name, round_, estimate.total_s, measured))
            print(
                f"  round {round_} {name} ({n} steps): estimated {estimate.total_s:.1f} s (timing it took "
                f"{timing:.1f} s), measured {measured:.1f} s (its process up with torch after {process_up:.1f} s), "
                f"measured ÷ estimated = {measured / estimate.total_s:.2f}; load average {load_before:.1f} → "
                f"{os.getloadavg()[0]:.1f}\n    estimate: {estimate}",
                flush=True,
            )
    within = [name for name, _, estimated, measured in found if abs(measured / estimated - 1) <= ESTIMATE_TOLERANCE]
    ratios = " / ".join(", ".join(f"{m / e:.2f}" for name, _, e, m in found if name == preset) for preset in steps)
    print(
        f"  measured ÷ estimated, {' / '.join(steps)}: {ratios} ({len(within)} of {len(found)} within "
        f"±{ESTIMATE_TOLERANCE:.0%}); the whole check took {time.perf_counter() - began:.0f} s",
        flush=True,
    )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.while_training",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="a few calls per phase (the smoke test)")
    parser.add_argument("--rounds", type=int, default=None, help="calls per phase (default 80, quick 5)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads of this (server) process")
    parser.add_argument("--checkpoint", default=str(common.SHIPPED_CHECKPOINT))
    parser.add_argument(
        "--estimates",
        action="store_true",
        help="instead: check the Train page's time estimate against short runs of each preset",
    )
    parser.add_argument(
        "--presets",
        nargs="+",
        choices=tuple(ESTIMATE_STEPS),
        default=None,
        help="with --estimates: only these presets (default all three; --quick: tiny)",
    )
    args = parser.parse_args(argv)
    if args.estimates:
        chosen = args.presets or (["tiny"] if args.quick else list(ESTIMATE_STEPS))
        steps = {name: ESTIMATE_STEPS[name] // (3 if args.quick else 1) for name in chosen}
        check_estimates(steps, 1 if args.quick else 2)
        return 0
    opts = Options(quick=args.quick, rounds=args.rounds, threads=args.threads, checkpoint=args.checkpoint)
    result = run(opts)
    for row in result.rows:
        print(f"  {row.measure}: {row.value} {row.goal} {row.verdict}".rstrip())
    return 0 if result.skipped is None else 1


if __name__ == "__main__":
    sys.exit(main())
