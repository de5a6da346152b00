"""The from-scratch recipe sweep for the shipped Multi30k model, sized for about 15 minutes on one GPU:
train several shapes side by side until a wall-clock deadline, score each run's averaged saves on the
validation set, choose run, average and decoding on validation only, export the winner with its decoding, and
only then decode test2016, once.

    python -m checkpoints.recipes.multi30k_sweep --data ../shared/data/multi30k --work /tmp/sweep --out sweep-out \\
        --minutes 5.5 --device cuda

Training runs are ordinary `explorer train` processes (one per grid row, one CPU thread each): their run
folders can be resumed and exported like any other. They are stopped through their stop file, so each ends
after a full step with its saves intact. The inverse-square-root schedule needs no total step count, so a
run stopped by the clock is a run like any other. Scoring runs on the CPU in worker processes, which leaves the
GPU to whatever runs after training (the GPU benchmarks).

Written to --out: sweep.json (every row), sweep.md (the tables for the card), model/ (the exported winner),
evaluate-*.txt (what `explorer evaluate` printed for the winner on val and test2016).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from checkpoints.recipes.multi30k_recipe import bleu_of, load_average, saves_of

# One row per shape. All keep the paper's architecture (post-LN, sinusoidal positions, one shared embedding)
# and label smoothing 0.1; they differ in size, depth, vocabulary and dropout. Every shape fits the 40 MiB
# the shipped checkpoints may take in float16 (d_model 384 with 3 + 3 layers is about 31 MB).
GRID: dict[str, list[str]] = {
    "d256-L3-v8k-p0.3": ["--d-model", "256", "--layers", "3", "--heads", "4", "--d-ff", "1024", "--vocab", "8000"],
    "d256-L4-v8k-p0.3": ["--d-model", "256", "--layers", "4", "--heads", "4", "--d-ff", "1024", "--vocab", "8000"],
    "d256-L6-v8k-p0.3": ["--d-model", "256", "--layers", "6", "--heads", "4", "--d-ff", "1024", "--vocab", "8000"],
    "d256-L3-v6k-p0.3": ["--d-model", "256", "--layers", "3", "--heads", "4", "--d-ff", "1024", "--vocab", "6000"],
    "d256-L3-v10k-p0.3": ["--d-model", "256", "--layers", "3", "--heads", "4", "--d-ff", "1024", "--vocab", "10000"],
    "d256-L4-v8k-p0.2": ["--d-model", "256", "--layers", "4", "--heads", "4", "--d-ff", "1024", "--vocab", "8000"],
    "d384-L3-v8k-p0.3": ["--d-model", "384", "--layers", "3", "--heads", "6", "--d-ff", "1536", "--vocab", "8000"],
    "d128-L4-v8k-p0.3": ["--d-model", "128", "--layers", "4", "--heads", "4", "--d-ff", "256", "--vocab", "8000"],
}
# The rows a 15-minute run trains side by side (the other two are for a longer run: dropout 0.3 beat 0.1 by
# 0.9 BLEU when the shipped model was continued, and d_model 128 learns slowest).
DEFAULT_ROWS = [n for n in GRID if n not in ("d256-L4-v8k-p0.2", "d128-L4-v8k-p0.3")]
# Per row: dropout from the name; deeper stacks warm up longer (post-LN is touchy early), the tiny one at a
# higher peak (the learning rate scales as d_model^-0.5 already, so this is on top of it).
LR_SCALE = {"d128-L4-v8k-p0.3": "1.0"}
WARMUP = {"d256-L6-v8k-p0.3": "1600"}
# The sentences whose attention is snapshotted during training: the shipped model's examples, which the app
# offers and the Heads page replays.
EXAMPLES_OF = Path(__file__).resolve().parents[1] / "multi30k-en-de"


@dataclass(frozen=True)
class AverageRow:
    run: str
    last_step: int
    averaged: int
    val_bleu_greedy: float
    training_minutes: float
    parameters: int


@dataclass(frozen=True)
class DecodingRow:
    run: str
    averaged: int
    beam: int
    alpha: float
    val_bleu: float
    val_bleu_lowercase: float


def train_command(name: str, args: argparse.Namespace, evaluate: bool) -> list[str]:
    dropout = name.rsplit("-p", 1)[1]
    command = [sys.executable, "-m", "explorer", "train", "--data", "multi30k", "--multi30k-root", str(args.data)]
    command += ["--out", str(args.work / name), *GRID[name], "--dropout", dropout]
    command += ["--warmup", WARMUP.get(name, "800"), "--lr-scale", LR_SCALE.get(name, args.lr_scale)]
    command += ["--steps", str(args.max_steps), "--batch-tokens", str(args.batch_tokens), "--label-smoothing", "0.1"]
    command += ["--save-every", str(args.save_every), "--keep-last", "10", "--seed", "1", "--threads", "1"]
    command += ["--device", args.device, "--log-every", "50", "--quiet"]
    if evaluate:
        command += ["--eval-every", str(args.eval_every), "--bleu-sentences", "200"]
        from explorer.examples import examples_for

        for sentence in examples_for(EXAMPLES_OF):
            command += ["--watch", sentence]
    else:
        command += ["--eval-every", "0"]
    return command


def train_until(names: list[str], args: argparse.Namespace, deadline: float) -> dict[str, str]:
    """Run every row until `deadline` (time.time()); returns each row's run folder name. A row that fails
    before the deadline is started again once, without evaluations during training (the decoding path on the
    device is the part most likely to fail there, and the sweep does not need it)."""
    args.work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    folders = {name: name for name in names}
    retried: set[str] = set()

    def start(name: str, evaluate: bool) -> None:
        log = open(args.work / f"{folders[name]}.log", "wb")  # noqa: SIM115 - the child holds it
        procs[name] = subprocess.Popen(train_command_for(name, evaluate), stdout=log, stderr=subprocess.STDOUT, env=env)

    def train_command_for(name: str, evaluate: bool) -> list[str]:
        command = train_command(name, args, evaluate)
        command[command.index("--out") + 1] = str(args.work / folders[name])
        return command

    # SIGTERM (`timeout`, a closing terminal) ends the sweep through the `finally` below, which stops the runs:
    # otherwise they would train on, orphaned, holding the CPU and the GPU.
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        for name in names:
            start(name, evaluate=args.eval_every > 0)
        while time.time() < deadline:
            time.sleep(2)
            for name, proc in list(procs.items()):
                if proc.poll() not in (None, 0) and name not in retried:
                    retried.add(name)
                    print(f"[sweep] {name} failed (exit {proc.returncode}); starting it again without evaluations")
                    folders[name] = name + "-noeval"
                    start(name, evaluate=False)
    finally:
        for name in procs:
            (args.work / folders[name]).mkdir(parents=True, exist_ok=True)  # a run that failed early made none
            (args.work / folders[name] / "stop").write_text(f"{time.time()}\n")
        for name, proc in procs.items():
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                print(f"[sweep] {name} did not stop within 90 s: killed (its saves so far stand)")
            print(f"[sweep] {name}: exit {proc.returncode}")
        signal.signal(signal.SIGTERM, previous)
    return folders


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _worker_init(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def _val(data: Path) -> tuple[list[str], list[str]]:
    sources = (data / "val.en").read_text(encoding="utf-8").splitlines()
    return sources, (data / "val.de").read_text(encoding="utf-8").splitlines()


def score_average(run: str, saves: list[str], data: str, beam: int, alpha: float) -> dict[str, float | int]:
    """Validation BLEU of the average of `saves`, decoded with (beam, alpha); runs in a worker process."""
    checkpoint = load_average([Path(s) for s in saves])
    scores = bleu_of(checkpoint, *_val(Path(data)), beam=beam, alpha=alpha)
    training = checkpoint.training or checkpoint.metadata.get("training", {})
    return {
        "bleu": scores.bleu,
        "bleu_lowercase": scores.bleu_lowercase,
        "step": int(training.get("step", 0)),
        "elapsed_s": float(training.get("elapsed_s", 0.0)),
        "parameters": sum(p.numel() for p in checkpoint.model.parameters()),
    }


def score(folders: dict[str, str], args: argparse.Namespace) -> tuple[list[AverageRow], list[DecodingRow]]:
    """Stage 1: greedy validation BLEU of each run's last few saves averaged (--averages). Stage 2: the two best
    (run, average) pairs over the beam × α grid. Everything on validation."""
    context = multiprocessing.get_context("spawn")
    averages: list[AverageRow] = []
    jobs: dict[cf.Future[dict[str, float | int]], tuple[str, list[Path]]] = {}
    with cf.ProcessPoolExecutor(
        args.workers, mp_context=context, initializer=_worker_init, initargs=(args.worker_threads,)
    ) as pool:
        for name, folder in folders.items():
            saves = saves_of(args.work / folder)
            for n in args.averages:
                if n <= len(saves):
                    chosen = saves[-n:]
                    future = pool.submit(score_average, name, [str(s) for s in chosen], str(args.data), 1, 0.6)
                    jobs[future] = (name, chosen)
        for future in cf.as_completed(jobs):
            name, chosen = jobs[future]
            try:
                r = future.result()
            except Exception as error:  # one broken run must not cost the others
                print(f"[sweep] scoring {name} ({len(chosen)} saves) failed: {error!r}")
                continue
            row = AverageRow(
                name,
                int(r["step"]),
                len(chosen),
                round(float(r["bleu"]), 2),
                round(float(r["elapsed_s"]) / 60, 1),
                int(r["parameters"]),
            )
            averages.append(row)
            print(f"[sweep] {row}", flush=True)
        ranked = sorted(averages, key=lambda a: a.val_bleu_greedy, reverse=True)[: args.finalists]
        decode_jobs: dict[cf.Future[dict[str, float | int]], tuple[AverageRow, int, float]] = {}
        for row in ranked:
            chosen = saves_of(args.work / folders[row.run])[-row.averaged :]
            for beam in args.beams:
                for alpha in args.alphas:
                    future = pool.submit(score_average, row.run, [str(s) for s in chosen], str(args.data), beam, alpha)
                    decode_jobs[future] = (row, beam, alpha)
        decodings: list[DecodingRow] = []
        for future in cf.as_completed(decode_jobs):
            row, beam, alpha = decode_jobs[future]
            try:
                r = future.result()
            except Exception as error:
                print(f"[sweep] decoding {row.run} beam {beam} α {alpha} failed: {error!r}")
                continue
            decodings.append(
                DecodingRow(
                    row.run, row.averaged, beam, alpha, round(float(r["bleu"]), 2), round(float(r["bleu_lowercase"]), 2)
                )
            )
            print(f"[sweep] {decodings[-1]}", flush=True)
    return averages, decodings


def export_and_test(best: DecodingRow, folders: dict[str, str], args: argparse.Namespace) -> None:
    """Export the chosen average with its decoding, then evaluate it: val (greedy and stored decoding), and
    test2016 once, at the very end (greedy and stored decoding)."""
    model = args.out / "model"
    run = args.work / folders[best.run]
    explorer = [sys.executable, "-m", "explorer"]
    subprocess.run(
        [*explorer, "export", str(run), "--to", str(model), "--average", str(best.averaged), "--half"]
        + ["--beam", str(best.beam), "--alpha", str(best.alpha)],
        check=True,
    )
    for split in ("val", "test2016"):
        for label, extra in (("stored", []), ("greedy", ["--beam", "1"])):
            result = subprocess.run(
                [*explorer, "evaluate", "-c", str(model), "--source", str(args.data / f"{split}.en")]
                + ["--reference", str(args.data / f"{split}.de"), "--device", "cpu", *extra],
                capture_output=True,
                text=True,
            )
            text = result.stdout + result.stderr
            (args.out / f"evaluate-{split}-{label}.txt").write_text(text)
            print(f"[sweep] {split} {label}:\n{text}", flush=True)


def markdown(averages: list[AverageRow], decodings: list[DecodingRow], best: DecodingRow | None) -> str:
    lines = ["| run | parameters | last step | saves averaged | val BLEU (greedy) | training (min) |"]
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for a in sorted(averages, key=lambda a: (a.run, a.averaged)):
        lines.append(
            f"| {a.run} | {a.parameters / 1e6:.1f} M | {a.last_step:,} | {a.averaged} | {a.val_bleu_greedy:.2f} "
            f"| {a.training_minutes} |"
        )
    lines += ["", "| run | saves averaged | beam | α | val BLEU (cased) | val BLEU (lower-cased) |"]
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for d in sorted(decodings, key=lambda d: (d.run, d.averaged, d.beam, d.alpha)):
        lines.append(
            f"| {d.run} | {d.averaged} | {d.beam} | {d.alpha} | {d.val_bleu:.2f} | {d.val_bleu_lowercase:.2f} |"
        )
    if best is not None:
        lines += [
            "",
            f"Chosen on validation: {best.run}, last {best.averaged} saves averaged, beam {best.beam}, "
            f"α {best.alpha} (val BLEU {best.val_bleu:.2f})",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with Multi30k train/val/test2016 files")
    parser.add_argument("--work", type=Path, required=True, help="run folders are made here")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=5.5, help="wall-clock training time of every row")
    parser.add_argument("--rows", nargs="+", choices=list(GRID), default=DEFAULT_ROWS)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--max-steps", type=int, default=200_000)
    parser.add_argument("--batch-tokens", type=int, default=6000)
    parser.add_argument("--lr-scale", default="0.8", help="peak-rate scale of every row without its own")
    parser.add_argument("--save-every", type=int, default=150)
    parser.add_argument("--eval-every", type=int, default=1000, help="validation BLEU (200 sentences) during training")
    parser.add_argument("--averages", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--finalists", type=int, default=2, help="(run, average) pairs that get the beam × α grid")
    parser.add_argument("--beams", type=int, nargs="+", default=[4, 5])
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.6, 0.8, 1.0, 1.2, 1.4, 1.6])
    parser.add_argument("--workers", type=int, default=6, help="scoring processes")
    parser.add_argument("--worker-threads", type=int, default=2)
    parser.add_argument("--skip-training", action="store_true", help="score the run folders already in --work")
    parser.add_argument("--no-test", action="store_true", help="stop after choosing: no export, no test2016")
    parser.add_argument("--train-only", action="store_true", help="stop after training (a smoke run of the grid)")
    args = parser.parse_args(argv)
    args.data, args.work, args.out = args.data.resolve(), args.work.resolve(), args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)

    started = time.time()
    if args.skip_training:
        folders = {n: n for n in args.rows if (args.work / n).exists()}
        folders.update({n: n + "-noeval" for n in args.rows if (args.work / (n + "-noeval")).exists()})
    else:
        folders = train_until(args.rows, args, started + args.minutes * 60)
    print(f"[sweep] training done at {time.time() - started:.0f}s", flush=True)
    if args.train_only:
        return 0
    averages, decodings = score(folders, args)
    print(f"[sweep] scoring done at {time.time() - started:.0f}s", flush=True)
    best = max(decodings, key=lambda d: (d.val_bleu, -d.beam)) if decodings else None
    (args.out / "sweep.json").write_text(
        json.dumps(
            {
                "averages": [asdict(a) for a in averages],
                "decodings": [asdict(d) for d in decodings],
                "chosen": asdict(best) if best else None,
                "folders": folders,
                "minutes": args.minutes,
                "batch_tokens": args.batch_tokens,
                "commands": {n: train_command(n, args, args.eval_every > 0)[2:] for n in args.rows},
            },
            indent=2,
        )
        + "\n"
    )
    tables = markdown(averages, decodings, best)
    (args.out / "sweep.md").write_text(tables)
    print(tables, flush=True)
    if best is not None and not args.no_test:
        export_and_test(best, folders, args)
    print(f"[sweep] all done at {time.time() - started:.0f}s", flush=True)
    return 0 if best is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
