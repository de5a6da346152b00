"""One fresh app-like process: the Translate page's call, timed per sentence (run by benchmarks/threads.py).

    python -m benchmarks.app_entry OUT.json N_SENTENCES BEAM

Nothing but the app's own start-up line (`configure_for("app")`, as app.py runs it before torch loads) decides
the runtime settings: importing the `benchmarks` package sets none.
"""

from __future__ import annotations

import argparse

from explorer.runtime import configure_for

configure_for("app")

import json  # noqa: E402  (after the runtime settings, as in app.py)
import os  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from explorer.checkpoint import load_checkpoint  # noqa: E402
from explorer.data import load_multi30k  # noqa: E402
from explorer.inference import translate  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent


def main(out: str, n_sentences: int, beam: int) -> None:
    c = load_checkpoint(REPO_ROOT / "checkpoints" / "multi30k-en-de", "cpu")
    sentences = list(load_multi30k("test2016").source[: n_sentences + 2])
    for sentence in sentences[:2]:  # warm-up, as a server that has answered a request or two
        translate(c.model, c.tokenizer, [sentence], beam_size=beam, with_attention=True)
    times = []
    for sentence in sentences[2:]:
        start = time.perf_counter()
        translate(c.model, c.tokenizer, [sentence], beam_size=beam, with_attention=True)
        times.append(time.perf_counter() - start)
    Path(out).write_text(
        json.dumps(
            {"times": times, "threads": torch.get_num_threads(), "policy": os.environ.get("OMP_WAIT_POLICY", "")}
        )
    )


if __name__ == "__main__":
    command = argparse.ArgumentParser(prog="python -m benchmarks.app_entry", description=__doc__)
    command.add_argument("out", help="JSON file for the per-sentence times")
    command.add_argument("sentences", type=int, help="timed Multi30k test2016 sentences")
    command.add_argument("beam", type=int, help="beam width")
    args = command.parse_args()
    main(args.out, args.sentences, args.beam)
