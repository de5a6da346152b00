"""What browser sessions sharing one cached model would get: each input decoded alone, then all at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import torch


def alone_and_together(decode: Callable[[Any], object], inputs: Sequence[Any], repeats: int = 3) -> tuple[list, list]:
    """(`decode` of each input in turn, the last of `repeats` calls per input made in one thread per input at once)."""
    with torch.inference_mode():
        alone = [decode(x) for x in inputs]
    together: dict[int, object] = {}

    def run(index: int) -> None:
        with torch.inference_mode():
            for _ in range(repeats):
                together[index] = decode(inputs[index])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return alone, [together[i] for i in range(len(inputs))]
