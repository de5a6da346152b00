"""`explorer train`: train a model (or resume a run) and write checkpoints."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from explorer.cli.arguments import every_n_steps, non_negative_float, positive_int
from explorer.cli.errors import UsageError
from explorer.config import PRESETS, ModelConfig, preset


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    p = subparsers.add_parser("train", help="train a model (or resume a run) and write checkpoints")
    p.add_argument(
        "--data",
        default="reverse",
        help="synthetic task (copy, reverse, sort, shift), 'multi30k', a .tsv file, or 'src.txt,tgt.txt'",
    )
    p.add_argument("--multi30k-root", default=None, help="folder with Multi30k train/val/test2016 .en/.de files")
    p.add_argument("--out", required=True, help="run directory (latest/, best/, step-N/ are written inside)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its latest/ checkpoint")
    p.add_argument(
        "--init-from",
        help="start from this checkpoint's weights, shape and tokenizer with a fresh optimizer and schedule "
        "(continue an exported average, or fine-tune); only --dropout may change the model",
    )
    p.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    p.add_argument("--vocab", type=positive_int, default=None, help="SentencePiece vocabulary size (joint)")
    # Ranges are checked by ModelConfig itself, before any data is read (see `_model_config`).
    for flag, kind in (
        ("--layers", int),
        ("--d-model", int),
        ("--heads", int),
        ("--d-ff", int),
        ("--dropout", float),
        ("--max-len", int),
    ):
        p.add_argument(flag, type=kind, default=None)
    p.add_argument("--positional", choices=["sinusoidal", "learned"], default=None)
    p.add_argument("--norm", choices=["post", "pre"], default=None)
    p.add_argument("--steps", type=positive_int, default=2000)
    p.add_argument("--batch-tokens", type=positive_int, default=4096)
    p.add_argument("--warmup", type=positive_int, default=4000)
    p.add_argument("--lr-scale", type=non_negative_float, default=1.0)
    p.add_argument("--label-smoothing", type=non_negative_float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=positive_int, default=10, help="record the loss every N steps")
    p.add_argument("--eval-every", type=every_n_steps, default=500, help="validation BLEU every N steps (0: never)")
    p.add_argument("--save-every", type=every_n_steps, default=500, help="keep a step-N/ save every N steps (0: never)")
    p.add_argument("--keep-last", type=positive_int, default=5)
    p.add_argument("--bleu-sentences", type=positive_int, default=200)
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--quiet", action="store_true", help="no progress output at all")
    p.add_argument(
        "--watch",
        action="append",
        default=None,
        metavar="SENTENCE",
        help="a source sentence whose translation and cross-attention are snapshotted at every evaluation "
        "(repeatable; the Heads page replays them over training, and `explorer export` ships them)",
    )
    return p


# Flags that set the TrainConfig field of the same name: the run's recipe, then its reports and saves.
_RECIPE_FLAGS = ("steps", "batch_tokens", "lr_scale", "label_smoothing", "seed", "device")
_REPORT_FLAGS = ("log_every", "eval_every", "save_every", "keep_last", "bleu_sentences")


def _model_config(args: argparse.Namespace, vocab_size: int) -> ModelConfig:
    overrides = {"vocab_size": vocab_size}
    if args.layers is not None:
        overrides.update(n_encoder_layers=args.layers, n_decoder_layers=args.layers)
    for name, field in (
        ("d_model", "d_model"),
        ("heads", "n_heads"),
        ("d_ff", "d_ff"),
        ("dropout", "dropout"),
        ("max_len", "max_len"),
        ("positional", "positional"),
        ("norm", "norm_position"),
    ):
        if getattr(args, name) is not None:
            overrides[field] = getattr(args, name)
    return preset(args.preset, **overrides)


MAX_WATCHED = 8  # each is translated with all cross-attention at every evaluation: a few, short


def _watched(sentences: list[str] | None) -> list[str]:
    """The --watch sentences, stripped, checked before any model is built."""
    watched = [s.strip() for s in sentences or []]
    if any(not s for s in watched):
        raise UsageError("--watch needs a sentence, got an empty one")
    if len(watched) > MAX_WATCHED:
        raise UsageError(f"--watch takes at most {MAX_WATCHED} sentences, got {len(watched)}")
    return watched


def run(args: argparse.Namespace) -> int:
    import torch
    import torch.distributed as dist

    from explorer.data.corpus import require_training_pairs
    from explorer.training.datasets import is_synthetic, load_corpora, train_tokenizer
    from explorer.training.progress import ProgressBar
    from explorer.training.trainer import TrainConfig, Trainer, resume_trainer

    # Everything the user can get wrong is checked before a tokenizer or model is built: the run folder,
    # the model flags (ModelConfig validates them; the real vocabulary size comes later) and the corpus.
    out = Path(args.out)
    if not args.resume and (out / "latest").exists():
        raise UsageError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if args.init_from is not None:
        if args.resume:
            raise UsageError("--init-from starts a new run; --resume continues one: pass only one of them")
        shape_flags = ("vocab", "layers", "d_model", "heads", "d_ff", "max_len", "positional", "norm")
        given = [f"--{name.replace('_', '-')}" for name in shape_flags if getattr(args, name) is not None]
        if given:
            raise UsageError(f"--init-from takes the model's shape from the checkpoint; drop {', '.join(given)}")
    if args.watch and args.resume:
        raise UsageError("--watch is set when a run starts; a resumed run keeps the sentences it watched")
    _watched(args.watch)
    if args.label_smoothing >= 1:
        raise UsageError(f"--label-smoothing must be below 1, got {args.label_smoothing}")
    default_vocab = 64 if is_synthetic(args.data) else 8000
    initial = None
    if args.init_from is not None:
        from explorer.checkpoint import load_checkpoint

        # Loaded (and validated) before the corpus is read: a wrong path fails at once.
        initial = load_checkpoint(args.init_from)
    elif not args.resume:
        _model_config(args, args.vocab or default_vocab)
    if args.threads:
        torch.set_num_threads(args.threads)
    distributed = "RANK" in os.environ
    if distributed and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() and args.device != "cpu" else "gloo")
    train, val = load_corpora(args.data, seed=args.seed, multi30k_root=args.multi30k_root)
    require_training_pairs(train, val)
    callbacks = [] if args.quiet else [ProgressBar()]
    if args.resume:
        trainer = resume_trainer(out, (train, val), callbacks, steps=args.steps)
    else:
        started = time.perf_counter()
        if initial is not None:
            tokenizer = initial.tokenizer
            model_config = initial.config
            if args.dropout is not None:
                model_config = dataclasses.replace(model_config, dropout=args.dropout)
        else:
            tokenizer = train_tokenizer(train, args.vocab or default_vocab, synthetic=is_synthetic(args.data))
            model_config = _model_config(args, tokenizer.vocab_size)
        print(
            f"tokenizer: {tokenizer.vocab_size} pieces in {time.perf_counter() - started:.1f}s; "
            f"{len(train)} training pairs, {len(val)} validation pairs",
            file=sys.stderr,
        )
        train_config = TrainConfig(
            **{name: getattr(args, name) for name in (*_RECIPE_FLAGS, *_REPORT_FLAGS)},
            warmup_steps=args.warmup,
            max_len=model_config.max_len,
            sample_sentences=tuple(_watched(args.watch)),
        )
        metadata: dict[str, object] = {"data": args.data, "command": "explorer " + " ".join(sys.argv[1:])}
        if initial is not None:
            metadata["initialised_from"] = {"path": str(args.init_from), "metadata": initial.metadata}
        trainer = Trainer(model_config, train_config, tokenizer, train, val, out, callbacks, metadata=metadata)
        if initial is not None:
            trainer.load_initial_weights(initial.model)
    from explorer.training.worker import run_here

    result = run_here(trainer)  # listed by `explorer runs`, stoppable by `explorer stop`
    if dist.is_initialized():
        dist.destroy_process_group()
    if trainer.rank == 0:
        print(
            json.dumps(
                {
                    "step": result.step,
                    "checkpoint": str(result.checkpoint),
                    "final_loss": result.history["loss"][-1] if result.history["loss"] else None,
                    "val_bleu": result.history["val_bleu"][-1] if result.history["val_bleu"] else None,
                }
            )
        )
    return 0
