"""This checkout's engine against an older commit's, on the same weights: is a change faster, measured as users run it?

    python -m benchmarks.probes.versions COMMIT [ROUNDS] [SENTENCES]

COMMIT is checked out into a temporary git worktree. A child process per version imports that version's
`explorer` (its folder first on sys.path; the child checks which one it got), configures the allocator as
`explorer translate` does, loads this checkout's shipped checkpoint (both versions decode the same weights) and
translates the first N Multi30k test2016 sentences in the four cells of `benchmarks/probes/peers.py`: greedy and beam 4
over batches of 32, and greedy and beam 4 one sentence at a time (each sentence its own `translate` call, as a
page translates a typed sentence). Versions alternate round by round (old, new, then new, old, ...) so that
background load hits both alike; each cell's speed-up is the median over rounds of old time ÷ new time of the
same round. Outputs are compared sentence by sentence.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.probes import add_rounds, add_sentences, child_command, parser

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO_ROOT / "checkpoints" / "multi30k-en-de"
CELLS = (  # (cell, beam, sentences a call)
    ("greedy, batches of 32", 1, 32),
    ("beam 4, batches of 32", 4, 32),
    ("greedy, one sentence", 1, 1),
    ("beam 4, one sentence", 4, 1),
)


def child(tree: str, n: int) -> dict[str, Any]:
    """Translate the first `n` test2016 sentences in every cell with the `explorer` of `tree`."""
    os.chdir(tree)
    sys.path.insert(0, tree)
    import explorer

    loaded = Path(explorer.__file__).resolve()
    assert loaded.is_relative_to(Path(tree).resolve()), f"imported {loaded}, not the version in {tree}"
    from explorer.runtime import configure_allocator

    os.environ.pop("EXPLORER_RUNTIME", None)
    configure_allocator()  # as `explorer translate` sets it
    import torch

    from explorer.checkpoint import load_checkpoint
    from explorer.data import load_multi30k
    from explorer.inference import translate

    torch.set_num_threads(2)
    checkpoint = load_checkpoint(CHECKPOINT, "cpu")
    model, tokenizer = checkpoint.model, checkpoint.tokenizer
    sentences = list(load_multi30k("test2016").source[:n])
    translate(model, tokenizer, sentences[:32], beam_size=4, batch_size=32)  # warm-up
    for sentence in sentences[:5]:
        translate(model, tokenizer, [sentence])
    seconds, outputs = {}, {}
    for cell, beam, batch in CELLS:
        start = time.perf_counter()
        if batch > 1:
            found = translate(model, tokenizer, sentences, beam_size=beam, batch_size=batch)
        else:
            found = [translate(model, tokenizer, [s], beam_size=beam)[0] for s in sentences]
        seconds[cell] = time.perf_counter() - start
        outputs[cell] = [t.output for t in found]
    return {"seconds": seconds, "outputs": outputs}


def _run_child(tree: Path, n: int, data: Path) -> dict[str, Any]:
    env = {**os.environ, "EXPLORER_RUNTIME": "as-given", "OMP_NUM_THREADS": "2", "PYTHONPATH": str(tree)}
    env["EXPLORER_MULTI30K"] = str(data)  # the old worktree would look for ../shared beside itself
    done = subprocess.run(
        child_command("benchmarks.probes.versions", str(tree), str(n)),
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,  # where this checkout's probe is found; the child then moves to `tree`
    )
    if done.returncode != 0:
        raise RuntimeError(f"the child for {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(commit: str, rounds: int = 4, n: int = 300) -> int:
    from explorer.data.multi30k import default_multi30k_root

    data = default_multi30k_root()
    if data is None:
        print("Multi30k is not here: set EXPLORER_MULTI30K to a folder holding test2016.en", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="explorer-versions-") as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), commit], cwd=REPO_ROOT, check=True)
        try:
            runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
            for r in range(rounds):
                for version in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    runs[version].append(_run_child(old if version == "old" else REPO_ROOT, n, data))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=REPO_ROOT, check=False)
    print(f"{commit} (old) against this checkout (new): {n} test2016 sentences, {rounds} alternating rounds, 2 threads")
    print("| cell | old | new | speed-up (old ÷ new time, median of rounds) | outputs identical |")
    print("|---|---:|---:|---:|---:|")
    for cell, _, batch in CELLS:
        times = {v: [run["seconds"][cell] for run in runs[v]] for v in runs}
        if batch > 1:
            shown = [f"{n / statistics.median(times[v]):.1f} sent/s" for v in ("old", "new")]
        else:
            shown = [f"{statistics.median(times[v]) / n * 1e3:.2f} ms" for v in ("old", "new")]
        ratios = sorted(o / w for o, w in zip(times["old"], times["new"], strict=True))
        spread = f"{statistics.median(ratios):.3f}× ({ratios[0]:.3f}–{ratios[-1]:.3f})"
        pairs = zip(runs["old"][0]["outputs"][cell], runs["new"][0]["outputs"][cell], strict=True)
        same = sum(a == b for a, b in pairs)
        print(f"| {cell} | {shown[0]} | {shown[1]} | {spread} | {same}/{n} |")
    return 0


if __name__ == "__main__":
    command = parser("benchmarks.probes.versions", __doc__)
    command.add_argument("commit", nargs="?", help="the older commit (required unless --child)")
    add_rounds(command, 4)
    add_sentences(command, 300)
    command.add_argument("--child", nargs=2, metavar=("TREE", "SENTENCES"), help=argparse.SUPPRESS)
    args = command.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
    elif args.commit is None:
        command.error("COMMIT is required")
    else:
        sys.exit(main(args.commit, args.rounds, args.sentences))
