"""The one training loop (Section 5), shared by `explorer train` and the app's train page.

It never prints or draws: progress goes to callbacks (`TrainingCallback`), and the caller decides what to
show. It saves periodic checkpoints atomically (with optimizer state, so a run can be resumed exactly),
stops cleanly when asked, and runs unchanged under `torchrun` with DistributedDataParallel.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from explorer.checkpoint import load_checkpoint, save_checkpoint
from explorer.config import ModelConfig
from explorer.data.batching import Batch, collate, token_budget_batches
from explorer.data.corpus import ParallelCorpus
from explorer.devices import resolve_device
from explorer.model import Transformer
from explorer.tokenizer import Tokenizer
from explorer.training.batches import batch_lengths, encode_pairs, epoch_batches
from explorer.training.callbacks import EvalEvent, SampleTranslation, StepEvent, TrainingCallback
from explorer.training.loss import label_smoothed_loss, token_nll
from explorer.training.optimizer_state import optimizer_from_tensors, optimizer_to_tensors
from explorer.training.schedule import make_optimizer, noam_learning_rate
from explorer.training.train_config import TrainConfig


@dataclass
class TrainResult:
    step: int
    stopped_early: bool
    checkpoint: Path | None
    history: dict[str, list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class StepOutcome:
    """What one training step leaves for the log."""

    loss_sum: torch.Tensor  # this rank's summed label-smoothed loss: a 0-d tensor on the device, not synced
    tokens: int  # target tokens in the global batch (all ranks)
    lr: float  # the learning rate the step used (Eq. 3)


class StopSignal(Protocol):
    """What `Trainer.run` polls once per step: a `threading.Event`, or a stop-request file (run_folder)."""

    def is_set(self) -> bool: ...


def _rank_and_world() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class Trainer:
    """Trains a `Transformer` on a parallel corpus; checkpoints go to `run_dir` (`latest/`, `step-N/`, `best/`)."""

    def __init__(
        self,
        model_config: ModelConfig,
        train_config: TrainConfig,
        tokenizer: Tokenizer,
        train_corpus: ParallelCorpus,
        val_corpus: ParallelCorpus | None,
        run_dir: str | Path | None,
        callbacks: Sequence[TrainingCallback] = (),
        *,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if tokenizer.vocab_size != model_config.vocab_size:
            raise ValueError(
                f"tokenizer has {tokenizer.vocab_size} pieces but the model config says {model_config.vocab_size}"
            )
        if len(train_corpus) == 0:
            raise ValueError(f"training corpus {train_corpus.name!r} is empty")
        self.model_config, self.config, self.tokenizer = model_config, train_config, tokenizer
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.callbacks = list(callbacks)
        self.metadata = dict(metadata or {})
        self.rank, self.world = _rank_and_world()
        self.device = resolve_device(train_config.device)
        # The run owns its random numbers (initial weights, dropout masks): two runs in one process, or a
        # run and the code around it, never draw from each other's stream.
        self.generator = torch.Generator().manual_seed(train_config.seed)
        self._cuda_rng: torch.Tensor | None = None
        self._ddp: DistributedDataParallel | None = None
        with self.own_rng():
            self.model = Transformer(model_config).to(self.device)
        self.optimizer = make_optimizer(
            self.model.parameters(), (train_config.adam_beta1, train_config.adam_beta2), train_config.adam_eps
        )
        self.train_ids = encode_pairs(tokenizer, train_corpus, train_config.max_len)
        self.val_corpus = val_corpus
        self.val_ids = (
            encode_pairs(tokenizer, val_corpus, train_config.max_len)
            if val_corpus is not None and len(val_corpus) > 0
            else None
        )
        self.step = 0
        self.epoch, self.batch_in_epoch = 0, 0
        self.history: dict[str, list[Any]] = {
            "step": [],
            "loss": [],
            "lr": [],
            "tokens_per_s": [],
            "eval_step": [],
            "val_loss": [],
            "val_bleu": [],
        }
        self.best_bleu = -1.0
        self.started = time.perf_counter()
        self.elapsed_before = 0.0

    @contextmanager
    def own_rng(self) -> Iterator[None]:
        """Run the block with this run's generator standing in for torch's global one, then put both back.

        Dropout (nn.Dropout, F.dropout, SDPA's dropout_p) takes no generator argument, so the run's state is
        swapped in around each step instead; the caller's global RNG comes back untouched. (Not safe for two
        runs stepping in two threads at once; the app trains each run in its own process.)
        """
        cuda = [self.device] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=cuda):
            torch.set_rng_state(self.generator.get_state())
            if cuda and self._cuda_rng is None:
                torch.cuda.manual_seed(self.config.seed)
            elif cuda and self._cuda_rng is not None:
                torch.cuda.set_rng_state(self._cuda_rng, self.device)
            try:
                yield
            finally:
                self.generator.set_state(torch.get_rng_state())
                if cuda:
                    self._cuda_rng = torch.cuda.get_rng_state(self.device)

    # ---- data -------------------------------------------------------------------------------------------
    def batches_of_epoch(self, epoch: int) -> list[list[int]]:
        """The global batches (indices of `train_ids`) the run takes in `epoch`, in order."""
        return epoch_batches(self.train_ids, self.config.batch_tokens * self.world, seed=self.config.seed, epoch=epoch)

    def make_batch(self, indices: Sequence[int], ids: tuple[list[list[int]], list[list[int]]]) -> Batch:
        """The pairs `indices` of `ids` (this run's encoded train or validation pairs), collated on the device."""
        src = [ids[0][i] + [self.model_config.eos_id] for i in indices]
        tgt = [ids[1][i] for i in indices]
        batch = collate(
            src, tgt, pad_id=self.model_config.pad_id, bos_id=self.model_config.bos_id, eos_id=self.model_config.eos_id
        )
        # From page-locked memory the copy to a GPU is asynchronous: the host goes on launching the step's
        # kernels instead of waiting for the GPU to drain its queue before each batch.
        return (batch.pinned() if self.device.type == "cuda" else batch).to(self.device)

    # ---- resume -----------------------------------------------------------------------------------------
    def load_initial_weights(self, model: Transformer) -> None:
        """Start from another model's weights (same shape; dropout may differ), keeping a fresh optimizer and step 0."""
        if dataclasses.replace(model.config, dropout=0.0) != dataclasses.replace(self.model_config, dropout=0.0):
            raise ValueError("the initial weights come from a model of a different shape")
        self.model.load_state_dict(model.state_dict())

    def restore(self, checkpoint_dir: str | Path) -> None:
        """Continue from a checkpoint written by this trainer: weights, Adam moments, step, data position."""
        checkpoint = load_checkpoint(checkpoint_dir, self.device, with_optimizer=True)
        if checkpoint.config != self.model_config:
            raise ValueError(f"{checkpoint_dir} was trained with a different model config")
        self.model.load_state_dict(checkpoint.model.state_dict())
        state = checkpoint.training or {}
        self.step = int(state.get("step", 0))
        self.epoch, self.batch_in_epoch = int(state.get("epoch", 0)), int(state.get("batch_in_epoch", 0))
        self.history = state.get("history", self.history)
        self.best_bleu = float(state.get("best_bleu", -1.0))
        self.elapsed_before = float(state.get("elapsed_s", 0.0))
        if checkpoint.optimizer_tensors is not None:
            rng = optimizer_from_tensors(self.optimizer, checkpoint.optimizer_tensors)
            if rng is not None:
                self.generator.set_state(rng)

    # ---- the loop ---------------------------------------------------------------------------------------
    def _emit(self, method: str, *args: Any) -> None:
        if self.rank == 0:
            for callback in self.callbacks:
                getattr(callback, method)(*args)

    def train_step(self, batch: Batch) -> StepOutcome:
        """One optimizer step on `batch` (this rank's share of the global batch): `forward_backward`, then
        `update`. The training loop takes every step through here, and the run-time estimate times it."""
        outcome = self.forward_backward(batch)
        self.update()
        return outcome

    def forward_backward(self, batch: Batch) -> StepOutcome:
        """The first part of `train_step`: count the step, set Eq. 3's learning rate, and run the forward and
        backward passes under the run's RNG (dropout), leaving the gradients for `update`."""
        # The global target-token count, as a Python int: on one process it needs no device tensor, so a CUDA
        # step runs without a host-device sync (a .item() or a blocking copy per step).
        tokens = batch.n_tgt_tokens
        if self.world > 1:
            count = torch.tensor(float(tokens), device=self.device)
            dist.all_reduce(count)
            tokens = int(count.item())
        self.step += 1
        cfg = self.config
        lr = noam_learning_rate(self.step, self.model_config.d_model, cfg.warmup_steps, cfg.lr_scale)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        model = self._stepped_model()
        model.train()
        with self.own_rng():
            if self.device.type == "cuda":
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(batch.src, batch.tgt_in).logits
            else:
                logits = model(batch.src, batch.tgt_in).logits
            loss_sum = label_smoothed_loss(
                logits, batch.tgt_out, smoothing=cfg.label_smoothing, pad_id=self.model_config.pad_id
            )
            # Normalised by the global token count, so the averaged gradient over ranks equals one process's.
            loss = loss_sum * self.world / tokens
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
        return StepOutcome(loss_sum, tokens, lr)

    def update(self) -> None:
        """The second part of `train_step`: Adam's update from the gradients `forward_backward` left."""
        self.optimizer.step()

    def _stepped_model(self) -> torch.nn.Module:
        """The model the steps run: wrapped in DistributedDataParallel (made once) under torchrun."""
        if self.world > 1 and self._ddp is None:
            self._ddp = DistributedDataParallel(self.model)
        return self._ddp if self._ddp is not None else self.model

    def run(self, stop: StopSignal | None = None) -> TrainResult:
        """Train until `config.steps` or until `stop` is set; always leaves a resumable `latest/` checkpoint."""
        cfg = self.config
        stopped = False
        window_tokens, window_start = 0, time.perf_counter()
        self._emit("on_start", self)
        while self.step < cfg.steps:
            batches = self.batches_of_epoch(self.epoch)
            while self.batch_in_epoch < len(batches) and self.step < cfg.steps:
                if stop is not None and stop.is_set():
                    stopped = True
                    break
                global_indices = batches[self.batch_in_epoch]
                self.batch_in_epoch += 1
                # Each rank takes an interleaved share of the global batch.
                local = global_indices[self.rank :: self.world] or global_indices[:1]
                outcome = self.train_step(self.make_batch(local, self.train_ids))
                window_tokens += outcome.tokens
                if self.step % cfg.log_every == 0 or self.step == cfg.steps:
                    now = time.perf_counter()
                    rate = window_tokens / max(now - window_start, 1e-9)
                    window_tokens, window_start = 0, now
                    self._log(outcome, rate)
                if cfg.evaluates_at(self.step):
                    self._evaluate()
                if cfg.save_every and self.step % cfg.save_every == 0:
                    self._save_periodic()
            if stopped:
                break
            if self.batch_in_epoch >= len(batches):
                self.epoch, self.batch_in_epoch = self.epoch + 1, 0
        if not stopped and cfg.eval_every and not cfg.evaluates_at(self.step):
            self._evaluate()
        latest = self._save("latest", with_optimizer=True)
        result = TrainResult(self.step, stopped, latest, self.history)
        self._emit("on_end", result)
        return result

    def _log(self, outcome: StepOutcome, rate: float) -> None:
        """Record a logged step (its global mean loss, learning rate, tokens per second) and report it."""
        global_loss = outcome.loss_sum.detach().clone()
        if self.world > 1:
            dist.all_reduce(global_loss)
        mean_loss = float(global_loss / outcome.tokens)
        for key, value in (("step", self.step), ("loss", mean_loss), ("lr", outcome.lr), ("tokens_per_s", rate)):
            self.history[key].append(value)
        self._emit(
            "on_step", StepEvent(self.step, self.config.steps, mean_loss, outcome.lr, rate, self.epoch, self.elapsed())
        )

    def elapsed(self) -> float:
        return self.elapsed_before + time.perf_counter() - self.started

    # ---- evaluation -------------------------------------------------------------------------------------
    def validation_batches(self) -> list[list[int]]:
        """The validation pairs in token-budget batches, in a fixed order (none without a validation set)."""
        if self.val_ids is None:
            return []
        src, tgt = self.val_ids
        return token_budget_batches(
            batch_lengths(src), batch_lengths(tgt), self.config.batch_tokens, shuffle=False, seed=0
        )

    @torch.inference_mode()
    def validation_nll(self, indices: Sequence[int]) -> tuple[float, int]:
        """(summed NLL, target tokens) of the validation pairs `indices`, without smoothing."""
        assert self.val_ids is not None, "validation_nll needs a validation set"
        batch = self.make_batch(indices, self.val_ids)
        logits = self.model(batch.src, batch.tgt_in).logits
        return float(token_nll(logits, batch.tgt_out, pad_id=self.model_config.pad_id)), batch.n_tgt_tokens

    def validation_loss(self) -> float:
        """Per-token NLL (no smoothing) over the validation set; exp() of it is the perplexity."""
        if self.val_ids is None:
            return float("nan")
        self.model.eval()
        total, count = 0.0, 0
        for indices in self.validation_batches():
            nll, tokens = self.validation_nll(indices)
            total += nll
            count += tokens
        return total / max(count, 1)

    def _evaluate(self) -> None:
        if self.rank != 0:
            return
        from explorer.evaluation import corpus_scores
        from explorer.inference import translate

        val_loss = self.validation_loss()
        bleu = float("nan")
        self.model.eval()
        if self.val_corpus is not None and self.config.bleu_sentences > 0:
            n = min(self.config.bleu_sentences, len(self.val_corpus))
            outputs = translate(self.model, self.tokenizer, list(self.val_corpus.source[:n]), batch_size=64)
            bleu = corpus_scores([t.output for t in outputs], list(self.val_corpus.target[:n])).bleu
        samples = []
        if self.config.sample_sentences:
            for t in translate(self.model, self.tokenizer, list(self.config.sample_sentences), with_attention=True):
                assert t.attention is not None
                samples.append(
                    SampleTranslation(t.source, t.output, t.source_pieces, t.target_output_pieces, t.attention.cross)
                )
        self.history["eval_step"].append(self.step)
        self.history["val_loss"].append(val_loss)
        self.history["val_bleu"].append(None if math.isnan(bleu) else bleu)
        if not math.isnan(bleu) and bleu > self.best_bleu:
            self.best_bleu = bleu
            self._save("best")
        self._emit("on_eval", EvalEvent(self.step, val_loss, bleu, samples))

    # ---- saving -----------------------------------------------------------------------------------------
    def training_state(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "epoch": self.epoch,
            "batch_in_epoch": self.batch_in_epoch,
            "history": self.history,
            "best_bleu": self.best_bleu,
            "elapsed_s": self.elapsed(),
            "train_config": self.config.to_dict(),
            "device": str(self.device),
            "world_size": self.world,
        }

    def _save(self, name: str, *, with_optimizer: bool = False) -> Path | None:
        if self.rank != 0 or self.run_dir is None:
            return None
        metadata = {**self.metadata, "step": self.step, "val_bleu": self.history["val_bleu"][-1:] or None}
        path = save_checkpoint(
            self.run_dir / name,
            self.model,
            self.tokenizer,
            metadata=metadata,
            training=self.training_state(),
            optimizer_tensors=optimizer_to_tensors(self.optimizer, self.generator.get_state())
            if with_optimizer
            else None,
        )
        self._emit("on_checkpoint", path, self.step)
        return path

    def _save_periodic(self) -> None:
        self._save("latest", with_optimizer=True)
        if self.rank != 0 or self.run_dir is None or not self.config.keep_last:
            return
        self._save(f"step-{self.step:07d}")
        numbered = sorted(p for p in self.run_dir.glob("step-*") if p.is_dir())
        for old in numbered[: -self.config.keep_last]:
            shutil.rmtree(old, ignore_errors=True)


def resume_trainer(
    run_dir: str | Path,
    tokenizer_corpus: tuple[ParallelCorpus, ParallelCorpus | None],
    callbacks: Sequence[TrainingCallback] = (),
    *,
    steps: int | None = None,
) -> Trainer:
    """Rebuild a Trainer from `run_dir/latest` (its configs, tokenizer, weights and optimizer)."""
    latest = Path(run_dir) / "latest"
    checkpoint = load_checkpoint(latest)
    state = checkpoint.training or {}
    train_config = TrainConfig.from_dict(state.get("train_config", {}))
    if steps is not None:
        train_config = dataclasses.replace(train_config, steps=steps)
    trainer = Trainer(
        checkpoint.config,
        train_config,
        checkpoint.tokenizer,
        tokenizer_corpus[0],
        tokenizer_corpus[1],
        run_dir,
        callbacks,
        metadata=checkpoint.metadata,
    )
    trainer.restore(latest)
    return trainer


# TrainConfig, encode_pairs and batch_lengths live in their own light modules (no training loop behind them),
# so the app's server can plan a run without importing this one; they stay importable from here.
__all__ = ["StopSignal", "TrainConfig", "TrainResult", "Trainer", "batch_lengths", "encode_pairs", "resume_trainer"]
