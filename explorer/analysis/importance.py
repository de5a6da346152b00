"""Which heads matter: BLEU with each head removed alone, the gradient importance of Michel et al. (2019),
and the pruning curve per family.

- Ablation: BLEU (sacreBLEU) on validation sentences with one head switched off (zero-ablation, Michel et
  al. Section 3), minus the BLEU of the full model.
- Gradient importance (Michel et al., Eq. 2): I_h = E_x |∂L(x)/∂ξ_h| at ξ = 1, the teacher-forced
  cross-entropy of each reference translation differentiated by the gate of head h; normalised by the L2
  norm over the heads of each layer as in their Section 4.1.
- Pruning (their Figure 3): within one family, heads are removed cumulatively, least important first (by
  normalised gradient importance), and BLEU is measured after each removal.

Expensive (one decoding of the sentences per head and per pruning step), so it runs outside the request
path: the command line or a background thread, with a progress callback, and the result is cached on disk
under a hash of the checkpoint's files. A checkpoint may ship its table as `head_importance.json`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from explorer.config import ModelConfig
from explorer.evaluation import corpus_scores
from explorer.inference import encode_sources, pad, translate
from explorer.model import HeadMask, HeadMeans, Transformer
from explorer.model.head_mask import all_head_names, family_layers, parse_head_name
from explorer.paper import FAMILY_FIELDS, HEAD_FAMILIES
from explorer.text.spreadsheet import safe_cell
from explorer.tokenizer import Tokenizer

SHIPPED_FILE = "head_importance.json"
CHECKPOINT_FILES = ("config.json", "model.safetensors", "tokenizer.model")
DEFAULT_SENTENCES = 200
FORMAT_VERSION = 1

Progress = Callable[[int, int, str], None]  # (done, total, what is being measured)


@dataclass(frozen=True)
class ImportanceSettings:
    """Everything besides the weights that a table depends on (part of its cache key)."""

    sentences: int = DEFAULT_SENTENCES
    seed: int = 0
    beam_size: int = 1  # greedy by default: ~75 decodings of the whole set are needed

    def key(self) -> str:
        return f"n{self.sentences}-seed{self.seed}-beam{self.beam_size}"


@dataclass(frozen=True)
class HeadScore:
    name: str  # FAMILY.LAYER.HEAD, 0-based
    bleu: float  # BLEU with this head alone removed
    bleu_drop: float  # full-model BLEU minus `bleu` (positive = the head helps)
    gradient: float  # Michel et al. I_h, mean |∂L/∂ξ_h| per sentence
    gradient_normalised: float  # I_h / ||I_layer||_2


@dataclass(frozen=True)
class PruningStep:
    removed: int  # heads of the family removed so far
    head: str  # the head removed at this step ("" at step 0)
    bleu: float


@dataclass(frozen=True)
class ImportanceTable:
    checkpoint_hash: str
    settings: ImportanceSettings
    baseline_bleu: float
    bleu_signature: str
    heads: list[HeadScore]
    pruning: dict[str, list[PruningStep]] = field(default_factory=dict)

    def score(self, name: str) -> HeadScore:
        return next(h for h in self.heads if h.name == name)

    def ranked(self, by: str = "bleu_drop") -> list[HeadScore]:
        """Most important first."""
        return sorted(self.heads, key=lambda h: getattr(h, by), reverse=True)

    def grid(self, family: str, config: ModelConfig, column: str = "bleu_drop") -> list[list[float]]:
        """(layers, heads) of one column for one family, for the heatmap."""
        values = [[0.0] * config.n_heads for _ in range(family_layers(config, family))]
        for h in self.heads:
            fam, layer, head = parse_head_name(h.name, config)
            if fam == family:
                values[layer][head] = getattr(h, column)
        return values

    # ---- files ------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "checkpoint_hash": self.checkpoint_hash,
            "settings": asdict(self.settings),
            "baseline_bleu": self.baseline_bleu,
            "bleu_signature": self.bleu_signature,
            "heads": [asdict(h) for h in self.heads],
            "pruning": {f: [asdict(s) for s in steps] for f, steps in self.pruning.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImportanceTable:
        if data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"importance table format {data.get('format_version')!r}, expected {FORMAT_VERSION}")
        return cls(
            data["checkpoint_hash"],
            ImportanceSettings(**data["settings"]),
            data["baseline_bleu"],
            data["bleu_signature"],
            [HeadScore(**h) for h in data["heads"]],
            {f: [PruningStep(**s) for s in steps] for f, steps in data["pruning"].items()},
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    def to_csv(self) -> str:
        """One row per head; the numbers stay numbers, the head name is made safe for a spreadsheet."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["head", "bleu_without", "bleu_drop", "gradient_importance", "gradient_importance_normalised"])
        for h in self.heads:
            writer.writerow(
                [
                    safe_cell(h.name),
                    f"{h.bleu:.2f}",
                    f"{h.bleu_drop:.2f}",
                    f"{h.gradient:.6g}",
                    f"{h.gradient_normalised:.4f}",
                ]
            )
        return out.getvalue()

    def write(self, folder: str | Path, stem: str = "head_importance") -> tuple[Path, Path]:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        json_path, csv_path = folder / f"{stem}.json", folder / f"{stem}.csv"
        _atomic_write(json_path, self.to_json())
        _atomic_write(csv_path, self.to_csv())
        return json_path, csv_path


def _atomic_write(path: Path, text: str) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    staging.write_text(text, encoding="utf-8")
    staging.replace(path)


# ---- measuring ------------------------------------------------------------------------------------------
def sample_pairs(sources: Sequence[str], references: Sequence[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    """n pairs drawn without replacement by `seed` (all of them when there are fewer), in corpus order."""
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} sources but {len(references)} references")
    chosen = sorted(random.Random(seed).sample(range(len(sources)), min(n, len(sources))))
    return [sources[i] for i in chosen], [references[i] for i in chosen]


def bleu_with(
    model: Transformer,
    tokenizer: Tokenizer,
    sources: Sequence[str],
    references: Sequence[str],
    mask: HeadMask | None,
    beam_size: int = 1,
) -> tuple[float, str]:
    """Corpus BLEU of the model's translations with `mask`'s heads off, and the sacreBLEU signature."""
    outputs = translate(model, tokenizer, list(sources), beam_size=beam_size, head_mask=mask)
    scores = corpus_scores([o.output for o in outputs], list(references))
    return scores.bleu, scores.bleu_signature


def gradient_importance(
    model: Transformer, tokenizer: Tokenizer, sources: Sequence[str], references: Sequence[str]
) -> dict[str, float]:
    """Michel et al. (2019) Eq. 2: mean over sentences of |∂L/∂ξ_h| at ξ = 1, per head name.

    L is the summed token cross-entropy of the reference under teacher forcing (no label smoothing).
    One sentence per backward pass, since |·| of a batch sum is not the mean of per-sentence |·|.
    """
    config = model.config
    device = next(model.parameters()).device
    gates = {
        f: torch.ones(family_layers(config, f), config.n_heads, device=device, requires_grad=True)
        for f in HEAD_FAMILIES
    }
    total = {f: torch.zeros(family_layers(config, f), config.n_heads) for f in HEAD_FAMILIES}
    source_ids, _ = encode_sources(tokenizer, sources, config.max_len, config.eos_id)
    target_ids, _ = encode_sources(tokenizer, references, config.max_len, config.eos_id)
    for src, tgt in zip(source_ids, target_ids, strict=True):
        target_in = pad([[config.bos_id] + tgt[:-1]], config.pad_id, device)
        logits = model(
            pad([src], config.pad_id, device),
            target_in,
            head_mask=HeadMask(enc=gates["enc"], dec=gates["dec"], cross=gates["cross"]),
        ).logits
        loss = torch.nn.functional.cross_entropy(logits[0].float(), torch.tensor(tgt, device=device), reduction="sum")
        grads = torch.autograd.grad(loss, [gates[f] for f in HEAD_FAMILIES])
        for family, grad in zip(HEAD_FAMILIES, grads, strict=True):
            total[family] += grad.detach().abs().cpu()
    n = max(len(source_ids), 1)
    return {
        f"{f}.{layer}.{head}": float(total[f][layer, head]) / n
        for f in HEAD_FAMILIES
        for layer in range(total[f].shape[0])
        for head in range(config.n_heads)
    }


@torch.inference_mode()
def head_means(
    model: Transformer, tokenizer: Tokenizer, sources: Sequence[str], references: Sequence[str]
) -> HeadMeans:
    """Every head's mean output (before W^O) over the real positions of a reference set, for mean-ablation.

    Teacher-forced on the references, so the decoder heads see the inputs they see in translation.
    Returns (layers, heads, d_v) per family.
    """
    config = model.config
    device = next(model.parameters()).device
    source_ids, _ = encode_sources(tokenizer, sources, config.max_len, config.eos_id)
    target_ids, _ = encode_sources(tokenizer, references, config.max_len, config.eos_id)
    src = pad(source_ids, config.pad_id, device)
    tgt_in = pad([[config.bos_id] + t[:-1] for t in target_ids], config.pad_id, device)
    means = {}
    for family in HEAD_FAMILIES:
        real = (src if family == "enc" else tgt_in) != config.pad_id  # (batch, positions)
        per_layer = []
        for layer in range(family_layers(config, family)):
            internals = model(src, tgt_in, inspect=(FAMILY_FIELDS[family], layer)).internals
            heads = internals.head_outputs  # (batch, heads, positions, d_v)
            weight = real[:, None, :, None].to(heads.dtype)
            per_layer.append((heads * weight).sum(dim=(0, 2)) / weight.sum(dim=(0, 2)))
        means[family] = torch.stack(per_layer).cpu()
    return HeadMeans(**means)


def _normalise_by_layer(raw: dict[str, float], config: ModelConfig) -> dict[str, float]:
    normalised = {}
    for family in HEAD_FAMILIES:
        for layer in range(family_layers(config, family)):
            names = [f"{family}.{layer}.{h}" for h in range(config.n_heads)]
            norm = sum(raw[n] ** 2 for n in names) ** 0.5
            normalised.update({n: raw[n] / norm if norm > 0 else 0.0 for n in names})
    return normalised


def total_steps(config: ModelConfig, prune: bool = True) -> int:
    """Decodings + the gradient pass: what the progress bar counts to."""
    heads = len(all_head_names(config))
    return 1 + 1 + heads + (heads if prune else 0)


def compute_importance(
    model: Transformer,
    tokenizer: Tokenizer,
    sources: Sequence[str],
    references: Sequence[str],
    *,
    settings: ImportanceSettings = ImportanceSettings(),
    checkpoint_hash: str = "",
    prune: bool = True,
    progress: Progress | None = None,
) -> ImportanceTable:
    """The importance table over the first `settings.sentences` of the given pairs, drawn with its seed."""
    config = model.config
    sources, references = sample_pairs(sources, references, settings.sentences, settings.seed)
    names = all_head_names(config)
    steps, done = total_steps(config, prune), 0

    def tick(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps, what)

    # Decoding is deterministic on one device; the seed only picks the sentences, and fixes torch's
    # generator in case a model has sampling in it.
    torch.manual_seed(settings.seed)
    with torch.inference_mode():
        baseline, signature = bleu_with(model, tokenizer, sources, references, None, settings.beam_size)
    tick("full model")
    raw = gradient_importance(model, tokenizer, sources, references)
    normalised = _normalise_by_layer(raw, config)
    tick("gradient importance")
    heads = []
    with torch.inference_mode():
        for name in names:
            bleu, _ = bleu_with(
                model, tokenizer, sources, references, HeadMask.from_names([name], config), settings.beam_size
            )
            heads.append(HeadScore(name, bleu, baseline - bleu, raw[name], normalised[name]))
            tick(name)
        pruning = {}
        if prune:
            for family in HEAD_FAMILIES:
                order = sorted((n for n in names if n.startswith(family + ".")), key=lambda n: normalised[n])
                curve = [PruningStep(0, "", baseline)]
                for count in range(1, len(order) + 1):
                    bleu, _ = bleu_with(
                        model,
                        tokenizer,
                        sources,
                        references,
                        HeadMask.from_names(order[:count], config),
                        settings.beam_size,
                    )
                    curve.append(PruningStep(count, order[count - 1], bleu))
                    tick(f"pruning {family}: {count} heads")
                pruning[family] = curve
    return ImportanceTable(checkpoint_hash, settings, baseline, signature, heads, pruning)


# ---- cache --------------------------------------------------------------------------------------------
def checkpoint_hash(path: str | Path) -> str:
    """SHA-256 (16 hex digits) of the files that define the model's behaviour: config, weights, tokenizer."""
    digest = hashlib.sha256()
    for name in CHECKPOINT_FILES:
        file = Path(path) / name
        if file.is_file():
            digest.update(name.encode())
            with file.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """$EXPLORER_CACHE/importance, else ~/.cache/attention-explorer/importance."""
    root = os.environ.get("EXPLORER_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "attention-explorer"
    return base / "importance"


def cache_path(digest: str, settings: ImportanceSettings) -> Path:
    return cache_dir() / f"{digest}-{settings.key()}.json"


def _read_table(path: Path) -> ImportanceTable | None:
    try:
        return ImportanceTable.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def find_table(checkpoint: str | Path, settings: ImportanceSettings | None = None) -> ImportanceTable | None:
    """A ready table for this checkpoint's current files: the shipped one, else the disk cache; no computing.

    With `settings` None, any shipped table matching the files will do; otherwise the settings must match.
    """
    digest = checkpoint_hash(checkpoint)
    shipped = _read_table(Path(checkpoint) / SHIPPED_FILE)
    if shipped is not None and shipped.checkpoint_hash == digest and settings in (None, shipped.settings):
        return shipped
    if settings is None:
        candidates = sorted(cache_dir().glob(f"{digest}-*.json")) if cache_dir().is_dir() else []
        return next((t for t in map(_read_table, candidates) if t is not None), None)
    return _read_table(cache_path(digest, settings))


def validation_pairs(metadata: dict[str, Any], n: int, seed: int) -> tuple[list[str], list[str]]:
    """Validation sentences for the checkpoint's training data (its metadata "data"), n of them by seed."""
    from explorer.data import TASKS, load_multi30k, make_splits

    data = metadata.get("data")
    if data == "multi30k":
        corpus = load_multi30k("val")
    elif data in TASKS:
        _, corpus = make_splits(data, 1, max(n, 1), seed)
    else:
        raise ValueError(f"no validation set known for data {data!r}; pass sentences and references yourself")
    return sample_pairs(list(corpus.source), list(corpus.target), n, seed)


class ImportanceRun:
    """Computes one checkpoint's table in a background thread and writes it to the cache.

    `progress` is (done, total, what); `table` is set when finished; `error` holds a failure's message.
    The app keeps one per (checkpoint, settings) with `st.cache_resource`, so sessions share it.
    """

    def __init__(self, checkpoint: str | Path, settings: ImportanceSettings = ImportanceSettings()) -> None:
        self.checkpoint, self.settings = Path(checkpoint), settings
        self.progress: tuple[int, int, str] = (0, 1, "starting")
        self.table: ImportanceTable | None = find_table(checkpoint, settings)
        self.error: str | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> ImportanceRun:
        with self._lock:
            if self.table is None and not self.running:
                self._thread = threading.Thread(target=self._run, name="head-importance", daemon=True)
                self._thread.start()
        return self

    def _report(self, done: int, total: int, what: str) -> None:
        self.progress = (done, total, what)

    def _run(self) -> None:
        from explorer.checkpoint import load_checkpoint

        try:
            # Its own copy of the model: the app's cached one stays free for requests.
            loaded = load_checkpoint(self.checkpoint)
            sources, references = validation_pairs(loaded.metadata, self.settings.sentences, self.settings.seed)
            digest = checkpoint_hash(self.checkpoint)
            table = compute_importance(
                loaded.model,
                loaded.tokenizer,
                sources,
                references,
                settings=self.settings,
                checkpoint_hash=digest,
                progress=self._report,
            )
            path = cache_path(digest, self.settings)
            path.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(path, table.to_json())
            self.table = table
        except Exception as error:  # reported to the page, which shows it instead of a spinner forever
            self.error = f"{type(error).__name__}: {error}"
