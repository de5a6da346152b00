"""`python -m benchmarks`: run every benchmark, print tables and ratios, optionally write a markdown report.

python -m benchmarks                              # all of them, full size (minutes)
python -m benchmarks --out benchmarks/RESULTS.md  # … and write the table between RESULTS.md's generated markers
python -m benchmarks --quick                      # tiny sizes, seconds (the smoke test)
python -m benchmarks --only training decoding     # a subset
python -m benchmarks --profile training           # torch.profiler tables instead of benchmarks
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import traceback
from pathlib import Path

from benchmarks import BENCHMARKS, command_line_runtime, load

# Before torch loads: the benchmarks run with the command line's measured settings (benchmarks/threads.py).
command_line_runtime(__name__)

from benchmarks.common import Options, Result, apply_threads  # noqa: E402
from benchmarks.memory import measure_memory  # noqa: E402
from benchmarks.report import HandWrittenFile, machine_description, markdown_report, write_report  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=None, help="run only these benchmarks")
    p.add_argument("--quick", action="store_true", help="tiny sizes: checks that everything runs, in seconds")
    p.add_argument(
        "--out",
        default=None,
        help="write the markdown table between this file's generated markers (a new file: the table alone); "
        "a file without them is left as it is",
    )
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--rounds", type=int, default=None, help="timed rounds per variant (default: per benchmark)")
    p.add_argument("--warmup", type=int, default=None, help="untimed warm-up rounds (default: per benchmark)")
    p.add_argument("--sentences", type=int, default=None, help="decoding: number of test sentences (default 200)")
    p.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="time by the wall clock (default) or by this process's CPU time: steadier ratios on a "
        "busy machine, with --threads 1",
    )
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory probes (one process each)")
    p.add_argument(
        "--compile",
        action="store_true",
        help="also time torch.compile'd training (reports compile time and when it pays back)",
    )
    p.add_argument("--checkpoint", default=None, help="model for decoding/latency (default checkpoints/multi30k-en-de)")
    p.add_argument(
        "--profile",
        nargs="+",
        choices=["training", "training-reference", "decoding"],
        default=None,
        help="print torch.profiler tables for these workloads instead of benchmarking",
    )
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="device for --profile (the benchmarks run on the CPU; the 'gpu' one on CUDA)",
    )
    # Internal: one memory probe in a fresh process (see benchmarks.memory.memory_in_subprocess).
    p.add_argument("--memory-child", nargs=2, metavar=("BENCHMARK", "VARIANT"), help=argparse.SUPPRESS)
    p.add_argument("--child-options", help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    return p


def _memory_child(args: argparse.Namespace) -> int:
    benchmark, variant = args.memory_child
    opts = Options.from_json(args.child_options)
    module = load(benchmark)
    measured = measure_memory(lambda: module.memory_setup(opts, variant), opts.device)
    Path(args.child_out).write_text(json.dumps(measured))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.memory_child:
        return _memory_child(args)
    fields = {
        "quick": args.quick,
        "threads": args.threads,
        "rounds": args.rounds,
        "warmup": args.warmup,
        "compile": args.compile,
        "sentences": args.sentences,
        "memory": not args.no_memory,
        "clock": args.clock,
    }
    if args.checkpoint:
        fields["checkpoint"] = args.checkpoint
    opts = Options(**fields)
    if args.profile:
        from benchmarks import profiling

        opts = dataclasses.replace(opts, device=args.device)
        for name in args.profile:
            profiling.run(name, opts)
        return 0

    apply_threads(opts)
    machine = machine_description(args.device)  # the --device the GPU benchmark uses (an H200 read "cpu")
    machine["clock"] = "process CPU time (--clock cpu)" if opts.clock == "cpu" else "wall clock"
    print("Attention Explorer benchmarks" + (" (quick sizes)" if args.quick else ""))
    for key, value in machine.items():
        print(f"  {key}: {value}")
    results: list[Result] = []
    failed = False
    for name in args.only or list(BENCHMARKS):
        module = load(name)
        print(f"\n== {module.TITLE} ==", flush=True)
        start = time.perf_counter()
        try:
            result = module.run(opts)
        except Exception:  # one broken benchmark must not hide the others
            traceback.print_exc()
            failed = True
            result = Result(name, module.TITLE, skipped="failed (see the log)")
        if result.skipped:
            print(f"  skipped: {result.skipped}", flush=True)
        results.append(result)
        print(f"  ({time.perf_counter() - start:.1f} s)", flush=True)

    print("\n== Summary ==")
    for result in results:
        for row in result.rows:
            goal = f"   goal {row.goal}: {row.verdict}" if row.goal else ""
            print(f"  {result.title} | {row.measure}: {row.value}{goal}")
    load_key = "load average (1/5/15 min)"
    machine[load_key] += f" at start, {machine_description('cpu')[load_key]} at end"
    if args.out:
        command = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
        try:
            write_report(Path(args.out), markdown_report(results, machine, command.strip()))
        except HandWrittenFile as error:
            print(f"\n{error}", file=sys.stderr)
            return 2
        print(f"\nwrote the generated block of {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
