"""Shared helpers of the benchmarks: options, results, interleaved timing, data, tables (the machine and the
report are in benchmarks/report.py, peak memory in benchmarks/memory.py).

Every comparison is measured *within one process*, A and B interleaved round by round (ABAB…, then BABA…
so a slow drift in background load hits both alike), and reported as a ratio: the median of the per-round
ratios. Absolute numbers on a shared machine are noise; ratios taken side by side are not.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from explorer.checkpoint import Checkpoint
    from explorer.config import ModelConfig
    from explorer.data.batching import Batch
    from explorer.tokenizer import Tokenizer

REPO_ROOT = Path(__file__).resolve().parents[1]
SHIPPED_CHECKPOINT = REPO_ROOT / "checkpoints" / "multi30k-en-de"
MULTI30K = REPO_ROOT.parent / "shared" / "data" / "multi30k"
CACHE_DIR = Path(tempfile.gettempdir()) / "attention-explorer-bench"


# ---- options ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Options:
    """What every benchmark reads. `quick` shrinks everything to seconds (the smoke test)."""

    quick: bool = False
    device: str = "cpu"  # "cpu" or "cuda"
    threads: int | None = None  # torch CPU threads (None: torch's default, one per physical core)
    rounds: int | None = None  # timed rounds per variant (None: the benchmark's default)
    warmup: int | None = None
    compile: bool = False  # also time torch.compile'd variants (compile time reported separately)
    checkpoint: str = str(SHIPPED_CHECKPOINT)
    sentences: int | None = None  # decoding: how many test sentences (default 200, quick 8)
    memory: bool = True  # probe peak memory (one fresh process per variant)
    clock: str = "wall"  # "wall", or "cpu": this process's CPU time, steadier on a busy machine with 1 thread
    seed: int = 0

    def n_rounds(self, full: int, quick: int = 3) -> int:
        return self.rounds if self.rounds is not None else (quick if self.quick else full)

    def n_warmup(self, full: int, quick: int = 1) -> int:
        return self.warmup if self.warmup is not None else (quick if self.quick else full)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Options:
        return cls(**json.loads(text))


def apply_threads(opts: Options) -> None:
    if opts.threads:
        torch.set_num_threads(opts.threads)


def skipped_off_cpu(opts: Options, result: Result, why: str = "CPU only") -> bool:
    """Whether a CPU benchmark asked to run on CUDA should stop: it says why in `result`."""
    if opts.device.startswith("cuda"):
        result.skipped = why
        return True
    return False


def threads_text() -> str:
    n = torch.get_num_threads()
    return f"{n} thread" + ("" if n == 1 else "s")


# ---- results ----------------------------------------------------------------------------------------------
@dataclass
class Row:
    """One line of the results table."""

    benchmark: str
    measure: str
    value: str
    goal: str = ""
    met: bool | None = None  # None: no goal, or not applicable

    @property
    def verdict(self) -> str:
        return "" if self.met is None else ("yes" if self.met else "no")


@dataclass
class Result:
    name: str
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the benchmark did not run (e.g. no CUDA)

    def add(self, measure: str, value: str, goal: str = "", met: bool | None = None) -> Row:
        row = Row(self.name, measure, value, goal, met)
        self.rows.append(row)
        return row

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        rows = [Row(**r) for r in data.get("rows", [])]
        return cls(data["name"], data["title"], rows, list(data.get("notes", [])), data.get("skipped"))


# ---- timing -----------------------------------------------------------------------------------------------
def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def timed(fn: Callable[[], Any], device: str = "cpu", clock: str = "wall") -> tuple[float, Any]:
    """Seconds `fn()` takes, by the wall clock or by this process's CPU time (`clock="cpu"`).

    CPU time ignores the time a busy machine keeps the process waiting, so it gives steady ratios with one
    thread; with several threads it also counts threads spinning at barriers, and on CUDA it is meaningless.
    """
    now = CLOCKS["wall" if device.startswith("cuda") else clock]
    synchronize(device)
    start = now()
    out = fn()
    synchronize(device)
    return now() - start, out


def interleaved(
    variants: Mapping[str, Callable[[int], object]],
    rounds: int,
    warmup: int = 1,
    device: str = "cpu",
    progress: bool = True,
    clock: str = "wall",
) -> dict[str, list[float]]:
    """Time each variant once per round, alternating the order; `fn(round)` may use the round index.

    Warm-up rounds (untimed) come first. Returns seconds per round, per variant.
    """
    names = list(variants)
    for w in range(warmup):
        for name in names:
            variants[name](w)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            seconds, _ = timed(partial(variants[name], warmup + r), device, clock)
            times[name].append(seconds)
        if progress:
            print(
                f"    round {r + 1}/{rounds}: " + ", ".join(f"{n} {times[n][-1] * 1e3:.1f} ms" for n in names),
                flush=True,
            )
    return times


def every_round(fns: Mapping[str, Callable[[], object]]) -> dict[str, Callable[[int], object]]:
    """Variants for `interleaved` that do the same work whatever the round."""
    return {name: _ignoring_round(fn) for name, fn in fns.items()}


def _ignoring_round(fn: Callable[[], object]) -> Callable[[int], object]:
    return lambda _round: fn()


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """Median over rounds of numerator[i] / denominator[i] (times measured side by side)."""
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=False) if b > 0)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    k = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def matmul_peak(
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
    size: int | None = None,
    repeats: int = 5,
    clock: str = "wall",
) -> float:
    """Measured dense matmul throughput (FLOP/s): the best of `repeats` large `torch.mm` calls."""
    if size is None:
        size = 8192 if device.startswith("cuda") else 2048
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    torch.mm(a, b)  # warm-up (thread pool, kernel selection)
    best = math.inf
    for _ in range(repeats):
        seconds, _ = timed(lambda: torch.mm(a, b), device, clock)
        best = min(best, seconds)
    return 2.0 * size**3 / best


# ---- formatting -------------------------------------------------------------------------------------------
def si(value: float, unit: str = "") -> str:
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.2f} {prefix}{unit}"
    return f"{value:.2f} {unit}".rstrip()


def ratio_text(x: float) -> str:
    return f"{x:.2f}×"


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    rows = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False))
    print("  " + line)
    print("  " + "  ".join("-" * w for w in widths))
    for row in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)))
    sys.stdout.flush()


# ---- models and data --------------------------------------------------------------------------------------
def shipped_checkpoint(opts: Options) -> Checkpoint | None:
    """The shipped checkpoint (explorer.checkpoint.Checkpoint) or None when it is absent or unreadable."""
    from explorer.checkpoint import CheckpointError, is_checkpoint, load_checkpoint

    path = Path(opts.checkpoint)
    if not is_checkpoint(path):
        return None
    try:
        return load_checkpoint(path, opts.device)
    except CheckpointError as error:
        print(f"  could not load {path}: {error}", flush=True)
        return None


def repo_relative(path: str | Path) -> str:
    """`path` relative to the repository when it lies inside it (reports must not name this machine's folders)."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def multi30k_available() -> bool:
    return all((MULTI30K / f"{split}.{lang}").is_file() for split in ("train", "test2016") for lang in ("en", "de"))


def sample_sentences(count: int) -> list[str]:
    """The first `count` Multi30k test2016 source sentences, or where Multi30k is absent the shipped checkpoint's
    example sentences (at most `count`): what the one-sentence decoding benchmarks translate."""
    from explorer.data import default_multi30k_root, load_multi30k

    if default_multi30k_root() is not None:
        return list(load_multi30k("test2016").source[:count])
    return json.loads((SHIPPED_CHECKPOINT / "examples.json").read_text(encoding="utf-8"))["en"][:count]


def read_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]


def benchmark_tokenizer(vocab_size: int = 8000, *, quick: bool = False, required: bool = False) -> Tokenizer | None:
    """A joint SentencePiece vocabulary trained on Multi30k train, cached on disk between runs.

    quick: trained on the first 3000 captions per side (about a second). Without Multi30k: None, or with
    `required`, a vocabulary over made-up words (for translate() with an untrained model).
    """
    from explorer.tokenizer import Tokenizer

    if multi30k_available():
        name, lines = f"multi30k-{vocab_size}{'-quick' if quick else ''}", 3000 if quick else None

        def sentences() -> list[str]:
            en, de = read_lines(MULTI30K / "train.en"), read_lines(MULTI30K / "train.de")
            return en[:lines] + de[:lines]
    elif required:
        name = f"synthetic-{vocab_size}"

        def sentences() -> list[str]:
            rng = random.Random(0)
            words = [
                "".join(rng.choice("abcdefghiklmnoprstuwyz") for _ in range(rng.randint(2, 9))) for _ in range(3000)
            ]
            return [" ".join(rng.choice(words) for _ in range(n)) + " ." for n in synthetic_lengths(6000, 0)]
    else:
        return None
    cached = CACHE_DIR / f"{name}.model"
    if cached.is_file():
        try:
            return Tokenizer.load(cached)
        except Exception:  # a damaged cache file: train again
            pass
    tokenizer = Tokenizer.train(sentences(), vocab_size)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    staging = cached.with_suffix(f".tmp{os.getpid()}")
    tokenizer.save(staging)
    staging.replace(cached)
    return tokenizer


# Word counts of Multi30k English captions are roughly 8–20 (mean ≈ 12), German ≈ 11; subword pieces run
# about 1.2× words. Synthetic sentences follow that shape when the corpus is absent.
def synthetic_lengths(
    n: int, seed: int, mean: float = 14.0, spread: float = 4.0, low: int = 4, high: int = 40
) -> list[int]:
    rng = random.Random(seed)
    return [int(min(high, max(low, round(rng.gauss(mean, spread))))) for _ in range(n)]


def synthetic_ids(lengths: Sequence[int], vocab: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(4, vocab) for _ in range(n)] for n in lengths]


def parallel_ids(
    n_pairs: int | None, vocab_size: int, seed: int, tokenizer: Tokenizer | None = None, split: str = "train"
) -> tuple[list[list[int]], list[list[int]], str]:
    """(source ids, target ids, description) without BOS/EOS: Multi30k tokenized, else synthetic pairs."""
    if tokenizer is not None and multi30k_available():
        en = read_lines(MULTI30K / f"{split}.en")
        de = read_lines(MULTI30K / f"{split}.de")
        pairs = [(s, t) for s, t in zip(en, de, strict=False) if s and t and t != "@@"]
        if n_pairs is not None:
            pairs = random.Random(seed).sample(pairs, min(n_pairs, len(pairs)))
        src_ids = tokenizer.encode_batch([s for s, _ in pairs])
        tgt_ids = tokenizer.encode_batch([t for _, t in pairs])
        return src_ids, tgt_ids, f"Multi30k {split} ({len(pairs)} pairs, {tokenizer.vocab_size}-piece vocabulary)"
    n = n_pairs or 2000
    src = synthetic_ids(synthetic_lengths(n, seed), vocab_size, seed)
    tgt = synthetic_ids(synthetic_lengths(n, seed + 1, mean=15.0), vocab_size, seed + 2)
    return src, tgt, f"synthetic pairs of caption-like lengths ({n} pairs)"


def collate_pairs(
    src: list[list[int]], tgt: list[list[int]], rows: Sequence[int], config: ModelConfig, device: str
) -> Batch:
    """The batch of pairs `rows` on `device`: each source ends with EOS (as the encoder reads it), each target
    gets BOS and EOS from `collate`, as the trainer's batches do."""
    from explorer.data.batching import collate

    ids = {"pad_id": config.pad_id, "bos_id": config.bos_id, "eos_id": config.eos_id}
    return collate([src[i] + [config.eos_id] for i in rows], [tgt[i] for i in rows], **ids).to(device)


@contextlib.contextmanager
def autocast_for(device: str) -> Iterator[None]:
    """bf16 autocast on CUDA (as the trainer does), nothing on CPU."""
    if device.startswith("cuda"):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            yield
    else:
        yield
