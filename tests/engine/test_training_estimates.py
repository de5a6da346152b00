"""The Train page's estimate before Start times the trainer's own step on the run's own batches of its corpus
(shapes, not stopwatches), robustly to a burst of other work while it times, and one measurement serves every
plan of the same run."""

from __future__ import annotations

import dataclasses
import math

import pytest

from explorer.data import make_splits
from explorer.data.batching import Batch
from explorer.training.batches import encode_pairs, epoch_batches
from explorer.training.datasets import train_tokenizer
from explorer.training.estimate import harness, startup
from explorer.training.estimate.harness import StepClock, padded_positions, spread_sample
from explorer.training.estimate.measure import MeasureSettings, estimate_run, measure_run
from explorer.training.estimate.plan import LOAD_CHANGED, RunEstimate, timing_plan
from explorer.training.train_config import TrainConfig
from explorer.training.trainer import Trainer
from tests.tiny_task import tiny_config

BATCH_TOKENS = 256
REAL_MAKE_BATCH = Trainer.make_batch
QUICK = MeasureSettings(time_budget_s=0.05, startup=False)  # a short timing, no process start-up


def corpus_batches(tokenizer, corpus, batch_tokens: int, max_len: int, seed: int = 0):
    """The pairs' ids and the batches a run with `seed` draws from them in its first epoch."""
    ids = encode_pairs(tokenizer, corpus, max_len)
    return ids, epoch_batches(ids, batch_tokens, seed=seed, epoch=0)


def corpus_of(min_len: int, max_len: int):
    train, val = make_splits("reverse", 300, 20, 0, min_len=min_len, max_len=max_len)
    return train, val


@pytest.fixture(scope="module")
def tokenizer():
    # One vocabulary for both corpora (the same 20 symbols), so only the lengths differ.
    train, _ = corpus_of(4, 24)
    return train_tokenizer(train, 64, synthetic=True)


def plan(**changes) -> TrainConfig:
    values = dict(
        steps=10,
        batch_tokens=BATCH_TOKENS,
        warmup_steps=10,
        eval_every=0,
        save_every=0,
        bleu_sentences=0,
        device="cpu",
        max_len=32,
        log_every=1,
    )
    return TrainConfig(**{**values, **changes})


def timed_shapes(monkeypatch, config, tokenizer, train, **changes) -> tuple[RunEstimate, list[tuple]]:
    """Run the estimate and record the shape of every batch the trainer's step was timed on."""
    shapes: list[tuple[int, int, int]] = []

    def spy(self, rows, ids) -> Batch:
        batch = REAL_MAKE_BATCH(self, rows, ids)
        shapes.append((batch.src.shape[0], batch.src.shape[1], batch.tgt_in.shape[1]))
        return batch

    monkeypatch.setattr(Trainer, "make_batch", spy)
    found = estimate_run(config, plan(**changes), tokenizer, train, settings=QUICK)
    return found, shapes


def test_the_timed_batches_are_the_runs_own_batches_of_its_corpus(monkeypatch, tokenizer):
    config = tiny_config(tokenizer.vocab_size)
    short, _ = corpus_of(4, 5)
    long, _ = corpus_of(20, 24)
    found_short, short_shapes = timed_shapes(monkeypatch, config, tokenizer, short)
    found_long, long_shapes = timed_shapes(monkeypatch, config, tokenizer, long)
    # Sentences of 4-5 symbols make short, wide batches; 20-24 symbols long, narrow ones (same token budget).
    assert short_shapes and all(src <= 6 and tgt <= 6 for _, src, tgt in short_shapes)
    assert long_shapes and all(src >= 20 and tgt >= 20 for _, src, tgt in long_shapes)
    assert min(rows for rows, _, _ in short_shapes) > max(rows for rows, _, _ in long_shapes)
    # Every batch stepped on is one the trainer will form from this corpus (its cut, budget and shuffle).
    ids, batches = corpus_batches(tokenizer, short, BATCH_TOKENS, 32, seed=0)
    trainer_shapes = {(len(b), max(len(ids[0][i]) for i in b) + 1, max(len(ids[1][i]) for i in b) + 1) for b in batches}
    assert set(short_shapes) <= trainer_shapes
    # The run's first batch is among them (its warm-up), and the estimate says it timed the corpus.
    first = batches[0]
    assert short_shapes[0] == (
        len(first),
        max(len(ids[0][i]) for i in first) + 1,
        max(len(ids[1][i]) for i in first) + 1,
    )
    assert found_short.step.timed_batches >= 3


def test_the_step_timed_is_the_trainers_own_train_step(monkeypatch, tokenizer):
    config = tiny_config(tokenizer.vocab_size)
    train, _ = corpus_of(4, 8)
    stepped = []
    real = Trainer.train_step

    def spy(self, batch):
        stepped.append(batch.src.shape[0])
        return real(self, batch)

    monkeypatch.setattr(Trainer, "train_step", spy)
    found = estimate_run(config, plan(), tokenizer, train, settings=QUICK)
    # The warm-up's two steps, then each timed batch once or `repeats` times, all through Trainer.train_step.
    assert len(stepped) == 2 + found.step.repeats * found.step.timed_batches


def test_the_sample_spans_short_and_long_batches(tokenizer):
    train, _ = corpus_of(4, 24)
    ids, batches = corpus_batches(tokenizer, train, BATCH_TOKENS, 32)
    sizes = sorted(padded_positions(b, ids) for b in batches)
    picked = [padded_positions(batches[b], ids) for b in spread_sample(batches, ids, 4)]
    assert len(set(spread_sample(batches, ids, 4))) == 4
    assert min(picked) <= sizes[len(sizes) // 4] and max(picked) >= sizes[3 * len(sizes) // 4]


def test_a_batch_too_big_to_time_whole_is_timed_in_parts_of_its_own_rows(monkeypatch, tokenizer):
    config = tiny_config(tokenizer.vocab_size)
    train, _ = corpus_of(4, 5)
    monkeypatch.setattr(harness, "count_parameters", lambda _: 10**9)  # every batch over the flop budget
    found, shapes = timed_shapes(monkeypatch, config, tokenizer, train)
    ids, batches = corpus_batches(tokenizer, train, BATCH_TOKENS, 32)
    full_rows = min(len(b) for b in batches)
    # The run's first two batches are stepped whole (warm-up), the second once more whole and then in part to
    # calibrate the scaling; every other batch timed is stepped on part of its rows.
    assert [rows for rows, _, _ in shapes[:3]] == [len(batches[0]), len(batches[1]), len(batches[1])]
    assert len(shapes) > 3 and max(rows for rows, _, _ in shapes[3:]) < full_rows
    assert found.step.scaled and found.step.seconds > 0


def test_evaluations_checkpoints_and_start_up_are_counted(tokenizer):
    config = tiny_config(tokenizer.vocab_size)
    train, val = corpus_of(4, 8)
    found = estimate_run(
        config,
        plan(steps=25, eval_every=10, save_every=10, bleu_sentences=8, sample_sentences=(val.source[0],)),
        tokenizer,
        train,
        val,
        save_to=True,
        settings=QUICK,
    )
    assert found.evals == 3 and found.saves == 2  # evaluations at 10, 20 and the last step; saves at 10, 20
    assert found.eval_s > found.bleu_s > 0 and found.save_s > 0 and found.first_samples_s > 0
    parts = (
        found.startup_s
        + found.steps * (found.step.seconds + found.overhead_per_step_s)
        + found.warmup_s
        + found.first_samples_s
        + 3 * found.eval_s
        + 2 * found.save_s
        + found.final_s
    )
    assert math.isclose(found.total_s, parts)
    quiet = estimate_run(config, plan(steps=25), tokenizer, train, val, settings=QUICK)
    assert quiet.evals == 0 and quiet.saves == 0 and quiet.eval_s == 0


def test_a_burst_of_other_work_while_timing_does_not_move_the_step_time(monkeypatch, tokenizer):
    """Each sampled batch is timed three times, round by round, and its median counts: a burst of other work
    that slows one round's steps tenfold leaves the estimate where the undisturbed steps put it."""
    config = tiny_config(tokenizer.vocab_size)
    train, _ = corpus_of(4, 24)
    calls = []

    def step(self, rows, *, whole=False) -> float:
        calls.append(len(rows))
        return 0.020 if 8 <= len(calls) < 14 else 0.002  # six steps of the first round interrupted

    monkeypatch.setattr(StepClock, "step", step)
    found = estimate_run(config, plan(), tokenizer, train, settings=MeasureSettings(startup=False))
    assert found.step.repeats == 3 and found.step.timed_batches >= 6
    assert len(calls) == 2 + 3 * found.step.timed_batches  # the warm-up, then three rounds
    assert found.step.seconds == pytest.approx(0.002)
    assert found.warmup_s == pytest.approx(0.0)


def test_one_measurement_serves_every_plan_of_the_same_run(tokenizer):
    config = tiny_config(tokenizer.vocab_size)
    train, val = corpus_of(4, 8)
    short = plan(steps=20, eval_every=10, save_every=10, bleu_sentences=8, keep_last=2)
    long = plan(steps=1000, eval_every=300, save_every=250, bleu_sentences=16, keep_last=2, warmup_steps=100)
    assert timing_plan(short) == timing_plan(long)
    costs = measure_run(config, timing_plan(short), tokenizer, train, val, settings=QUICK)
    a, b = costs.estimate(short, save_to=True), costs.estimate(long)
    assert (a.steps, a.evals, a.saves) == (20, 2, 2) and (b.steps, b.evals, b.saves) == (1000, 4, 4)
    assert a.step == b.step and b.bleu_s == pytest.approx(2 * a.bleu_s)  # BLEU on 16 sentences, not 8
    # Fifty times the steps, each at least as dear (a longer history in every progress.json rewrite).
    assert b.training_s - b.warmup_s >= 50 * (a.training_s - a.warmup_s)
    # Costs timed without evaluations cannot plan a run that evaluates: that would leave them out silently.
    bare = measure_run(config, plan(steps=20), tokenizer, train, val, settings=QUICK)
    assert bare.estimate(plan(steps=50)).evals == 0
    with pytest.raises(ValueError, match="without evaluations"):
        bare.estimate(short)


def test_a_measurement_knows_when_the_load_has_moved(tokenizer):
    config = tiny_config(tokenizer.vocab_size)
    train, _ = corpus_of(4, 5)
    costs = measure_run(config, plan(), tokenizer, train, settings=QUICK)
    if costs.load_average is None:
        pytest.skip("no load average on this system")
    # The machine's own load is whatever it is; the rule is judged at fixed loads (CI once read 1.06, where
    # "down by 1.5" is clamped to 0 and moves by only 1.06).
    for then in (0.3, 1.06, 2.0, 6.0):
        measured = dataclasses.replace(costs, load_average=then)
        assert not measured.stale(then) and not measured.stale(then + 0.5) and not measured.stale(then - 0.5)
        assert measured.stale(then + 1.5) and measured.stale(then + LOAD_CHANGED)
        # A load cannot fall below 0: from `then` it can fall by `then` at most.
        assert measured.stale(max(0.0, then - 1.5)) == (then >= LOAD_CHANGED)
        assert not measured.stale(None)
    assert not dataclasses.replace(costs, load_average=None).stale(3.0)


def test_the_process_start_up_is_timed_again_once_old_or_forgotten(monkeypatch):
    timings = []
    monkeypatch.setattr(startup, "_time_process_startup", lambda: timings.append(1) or 2.5)
    startup.forget_process_startup()
    assert startup.process_startup_s() == startup.process_startup_s() == 2.5 and len(timings) == 1
    startup.forget_process_startup()  # "Measure again" on the page
    startup.process_startup_s()
    assert len(timings) == 2
    monkeypatch.setattr(startup, "STARTUP_MAX_AGE_S", 0.0)
    startup.process_startup_s()
    assert len(timings) == 3
    startup.forget_process_startup()  # the next test times a real one
