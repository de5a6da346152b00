"""One fresh app-like process: the Translate page's call, timed per sentence (run by benchmarks/threads.py).

    python benchmarks/app_entry.py OUT.json N_SENTENCES BEAM

Started by path, not as `-m benchmarks.…`, so that nothing but the app's own start-up line
(`configure_for("app")`, as app.py runs it before torch loads) decides the runtime settings.
"""

from __future__ import annotations

import sys

# Run by path, Python put benchmarks/ first on the path, where profile.py would shadow the standard library's.
sys.path = [p for p in sys.path if not p.rstrip("/").endswith("benchmarks")]

from explorer.runtime import configure_for  # noqa: E402

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
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
