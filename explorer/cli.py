"""`explorer` command line: train, translate, evaluate, info.

Every command goes through the same engine functions as the app (Trainer, translate, corpus_scores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Sequence

from explorer.config import PRESETS, ModelConfig, count_parameters, preset


def _add_train(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a model (or resume a run) and write checkpoints")
    p.add_argument("--data", default="reverse",
                   help="synthetic task (copy, reverse, sort, shift), 'multi30k', a .tsv file, or 'src.txt,tgt.txt'")
    p.add_argument("--multi30k-root", default=None, help="folder with Multi30k train/val/test2016 .en/.de files")
    p.add_argument("--out", required=True, help="run directory (latest/, best/, step-N/ are written inside)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its latest/ checkpoint")
    p.add_argument("--preset", default="tiny", choices=sorted(PRESETS))
    p.add_argument("--vocab", type=int, default=None, help="SentencePiece vocabulary size (joint)")
    for flag, kind in (("--layers", int), ("--d-model", int), ("--heads", int), ("--d-ff", int),
                       ("--dropout", float), ("--max-len", int)):
        p.add_argument(flag, type=kind, default=None)
    p.add_argument("--positional", choices=["sinusoidal", "learned"], default=None)
    p.add_argument("--norm", choices=["post", "pre"], default=None)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch-tokens", type=int, default=4096)
    p.add_argument("--warmup", type=int, default=4000)
    p.add_argument("--lr-scale", type=float, default=1.0)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10, help="record the loss every N steps")
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--save-every", type=int, default=500)
    p.add_argument("--keep-last", type=int, default=5)
    p.add_argument("--bleu-sentences", type=int, default=200)
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    p.add_argument("--quiet", action="store_true", help="no progress output at all")


def _model_config(args: argparse.Namespace, vocab_size: int) -> ModelConfig:
    overrides = {"vocab_size": vocab_size}
    if args.layers is not None:
        overrides.update(n_encoder_layers=args.layers, n_decoder_layers=args.layers)
    for name, field in (("d_model", "d_model"), ("heads", "n_heads"), ("d_ff", "d_ff"), ("dropout", "dropout"),
                        ("max_len", "max_len"), ("positional", "positional"), ("norm", "norm_position")):
        if getattr(args, name) is not None:
            overrides[field] = getattr(args, name)
    return preset(args.preset, **overrides)


def _train(args: argparse.Namespace) -> int:
    import torch
    import torch.distributed as dist

    from explorer.training.datasets import is_synthetic, load_corpora, train_tokenizer
    from explorer.training.progress import ProgressBar
    from explorer.training.trainer import TrainConfig, Trainer, resume_trainer

    if args.threads:
        torch.set_num_threads(args.threads)
    distributed = "RANK" in __import__("os").environ
    if distributed and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() and args.device != "cpu" else "gloo")
    train, val = load_corpora(args.data, seed=args.seed, multi30k_root=args.multi30k_root)
    callbacks = [] if args.quiet else [ProgressBar()]
    out = Path(args.out)
    if args.resume:
        trainer = resume_trainer(out, (train, val), callbacks, steps=args.steps)
    else:
        if (out / "latest").exists():
            print(f"error: {out} already holds a run; pass --resume to continue it or choose another --out",
                  file=sys.stderr)
            return 2
        started = time.perf_counter()
        default_vocab = 64 if is_synthetic(args.data) else 8000
        tokenizer = train_tokenizer(train, args.vocab or default_vocab, synthetic=is_synthetic(args.data))
        print(f"tokenizer: {tokenizer.vocab_size} pieces in {time.perf_counter() - started:.1f}s; "
              f"{len(train)} training pairs, {len(val)} validation pairs", file=sys.stderr)
        model_config = _model_config(args, tokenizer.vocab_size)
        train_config = TrainConfig(steps=args.steps, batch_tokens=args.batch_tokens, warmup_steps=args.warmup,
                                   lr_scale=args.lr_scale, label_smoothing=args.label_smoothing, seed=args.seed,
                                   log_every=args.log_every, eval_every=args.eval_every, save_every=args.save_every,
                                   keep_last=args.keep_last,
                                   bleu_sentences=args.bleu_sentences, device=args.device,
                                   max_len=model_config.max_len)
        metadata = {"data": args.data, "command": "explorer " + " ".join(sys.argv[1:])}
        trainer = Trainer(model_config, train_config, tokenizer, train, val, out, callbacks, metadata=metadata)
    result = trainer.run()
    if dist.is_initialized():
        dist.destroy_process_group()
    if trainer.rank == 0:
        print(json.dumps({"step": result.step, "checkpoint": str(result.checkpoint),
                          "final_loss": result.history["loss"][-1] if result.history["loss"] else None,
                          "val_bleu": result.history["val_bleu"][-1] if result.history["val_bleu"] else None}))
    return 0


def _add_translate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("translate", help="translate sentences (arguments, or stdin one per line)")
    p.add_argument("sentences", nargs="*")
    p.add_argument("--checkpoint", "-c", required=True)
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty α (Section 6.1)")
    p.add_argument("--n-best", type=int, default=1)
    p.add_argument("--json", action="store_true", help="one JSON object per line with pieces and scores")
    p.add_argument("--device", default="cpu")


def _translate(args: argparse.Namespace) -> int:
    from explorer.checkpoint import load_checkpoint
    from explorer.devices import resolve_device
    from explorer.inference import translate

    sentences = args.sentences or [line.rstrip("\n") for line in sys.stdin]
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        print("error: nothing to translate (give sentences as arguments or on stdin)", file=sys.stderr)
        return 2
    checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
    results = translate(checkpoint.model, checkpoint.tokenizer, sentences, beam_size=args.beam, alpha=args.alpha,
                        n_best=args.n_best)
    for t in results:
        if t.truncated:
            print(f"warning: input cut to {checkpoint.config.max_len} pieces: {t.source[:60]!r}", file=sys.stderr)
        if args.json:
            print(json.dumps({"source": t.source, "translation": t.output, "source_pieces": t.source_pieces,
                              "output_pieces": t.target_output_pieces, "score": t.score, "log_prob": t.log_prob,
                              "finished": t.finished, "truncated": t.truncated,
                              "nbest": [{"translation": checkpoint.tokenizer.decode(h.tokens), "score": h.score,
                                         "log_prob": h.log_prob, "tokens": list(h.tokens)} for h in t.nbest]},
                             ensure_ascii=False))
        else:
            print(t.output)
    return 0


def _add_evaluate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="sacreBLEU and chrF of a checkpoint (or of a hypotheses file)")
    p.add_argument("--checkpoint", "-c", help="translate --source with this checkpoint")
    p.add_argument("--source", help="source sentences, one per line")
    p.add_argument("--reference", required=True, help="reference translations, one per line")
    p.add_argument("--hypotheses", help="score this file instead of translating")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--limit", type=int, default=None, help="only the first N sentences")
    p.add_argument("--output", help="write the translations here")
    p.add_argument("--device", default="cpu")


def _read_lines(path: str) -> list[str]:
    from explorer.data.corpus import decode_text
    return decode_text(Path(path).read_bytes(), path)


def _evaluate(args: argparse.Namespace) -> int:
    from explorer.evaluation import corpus_scores

    references = _read_lines(args.reference)[: args.limit]
    started = time.perf_counter()
    if args.hypotheses:
        hypotheses = _read_lines(args.hypotheses)[: args.limit]
    else:
        if not (args.checkpoint and args.source):
            print("error: give --checkpoint and --source, or --hypotheses", file=sys.stderr)
            return 2
        from explorer.checkpoint import load_checkpoint
        from explorer.devices import resolve_device
        from explorer.inference import translate

        sources = _read_lines(args.source)[: args.limit]
        if len(sources) != len(references):
            print(f"error: {args.source} has {len(sources)} lines but {args.reference} has {len(references)}",
                  file=sys.stderr)
            return 2
        checkpoint = load_checkpoint(args.checkpoint, resolve_device(args.device))
        hypotheses = [t.output for t in translate(checkpoint.model, checkpoint.tokenizer, sources,
                                                  beam_size=args.beam, alpha=args.alpha)]
    if args.output:
        Path(args.output).write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    scores = corpus_scores(hypotheses, references)
    print(json.dumps({**scores.as_dict(), "beam": args.beam if not args.hypotheses else None,
                      "seconds": round(time.perf_counter() - started, 1)}, indent=2))
    return 0


def _add_info(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="parameter counts (paper's Table 3 side by side) or a checkpoint's card")
    p.add_argument("--preset", default="base", choices=sorted(PRESETS))
    p.add_argument("--vocab", type=int, default=37000)
    p.add_argument("--checkpoint", "-c", help="describe this checkpoint instead")
    p.add_argument("--json", action="store_true")


def _info(args: argparse.Namespace) -> int:
    from explorer.table3 import table3_rows

    if args.checkpoint:
        from explorer.checkpoint import read_config
        config, metadata = read_config(args.checkpoint)
        info = {"checkpoint": args.checkpoint, "parameters": count_parameters(config), "config": config.to_dict(),
                "metadata": metadata}
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return 0
    config = preset(args.preset, vocab_size=args.vocab)
    rows = table3_rows(args.vocab)
    if args.json:
        print(json.dumps({"preset": args.preset, "vocab_size": args.vocab, "parameters": count_parameters(config),
                          "config": config.to_dict(),
                          "table3": [{"row": r.label, "paper_millions": r.paper_millions, "ours": r.ours,
                                      "relative_error": round(r.relative_error, 4)} for r in rows]}, indent=2))
        return 0
    print(f"preset {args.preset} (vocabulary {args.vocab}): {count_parameters(config):,} parameters\n")
    print(f"{'Table 3 row':<18}{'paper':>9}{'ours':>11}{'diff':>8}")
    for r in rows:
        print(f"{r.label:<18}{r.paper_millions:>8}M{r.ours / 1e6:>10.1f}M{r.relative_error * 100:>+7.1f}%")
    return 0


def _add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="ship a run: average its last saves, store half precision, no optimizer")
    p.add_argument("run", help="a run directory (with step-N/ saves) or a single checkpoint directory")
    p.add_argument("--to", required=True, help="target checkpoint directory, e.g. checkpoints/my-model")
    p.add_argument("--average", type=int, default=1, help="average the last N step-N/ saves (Section 6.1)")
    p.add_argument("--half", action="store_true", help="store float16 weights (loaded back as float32)")


def _export(args: argparse.Namespace) -> int:
    import torch

    from explorer.checkpoint import average_weights, is_checkpoint, load_checkpoint, load_weights_into, save_checkpoint

    run = Path(args.run)
    saves = sorted(p for p in run.glob("step-*") if is_checkpoint(p))
    sources = saves[-args.average:] if args.average > 1 and saves else [run if is_checkpoint(run) else run / "latest"]
    checkpoint = load_checkpoint(sources[-1])
    if len(sources) > 1:
        load_weights_into(checkpoint.model, average_weights(sources))
    metadata = {**checkpoint.metadata, "exported_from": [str(p) for p in sources],
                "training": {k: v for k, v in (checkpoint.training or {}).items() if k != "history"}}
    save_checkpoint(args.to, checkpoint.model, checkpoint.tokenizer, metadata=metadata,
                    dtype=torch.float16 if args.half else None)
    print(json.dumps({"to": args.to, "averaged": [str(p) for p in sources], "half": args.half}))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="explorer", description="Attention Explorer: a paper-faithful Transformer")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_train, _add_translate, _add_evaluate, _add_info, _add_export):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from explorer.checkpoint import CheckpointError
    from explorer.data.corpus import CorpusError

    handlers = {"train": _train, "translate": _translate, "evaluate": _evaluate, "info": _info, "export": _export}
    try:
        return handlers[args.command](args)
    except (CheckpointError, CorpusError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
