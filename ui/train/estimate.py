"""The run's time before Start: measured on this machine as its process will run it
(`explorer.training.estimate`), cached for every session, re-planned when only the plan changes, and told
part by part in the page's language."""

from __future__ import annotations

import hashlib
import json
import time

import streamlit as st

from explorer.config import ModelConfig, count_parameters
from explorer.data import ParallelCorpus
from explorer.i18n import translate
from explorer.tokenizer import Tokenizer
from explorer.tour.recipe import base_model_here_text, cpu_flops
from explorer.training.estimate.measure import measure_run
from explorer.training.estimate.plan import RunCosts, RunEstimate, load_average, timing_plan
from explorer.training.estimate.startup import forget_process_startup
from explorer.training.train_config import TrainConfig
from ui.i18n import current_language, t
from ui.markdown import ERROR_CHARS, shown_value
from ui.train.data import DataChoice
from ui.train.runs import duration, manager

AUTO_TIMING_PARAMETERS = 3_000_000  # larger models are timed on request (a step takes seconds on a CPU)
ESTIMATE_TTL_S = 15 * 60  # a measured estimate is timed again after this: the machine's load moves


@st.cache_data(show_spinner=False, max_entries=32, ttl=ESTIMATE_TTL_S)
def run_costs(
    data_key: str,
    tokenizer_key: str,
    config_json: str,
    plan_json: str,
    _tokenizer: Tokenizer,
    _train: ParallelCorpus,
    _val: ParallelCorpus,
) -> RunCosts:
    """What each part of a run costs on this machine (`measure_run`): once per corpus (`data_key`), tokenizer,
    model and timing plan (strings, so the cache hashes them and not the corpus), shared by every session, and
    timed again after `ESTIMATE_TTL_S` because the machine's load moves. Changing the run's length or its
    evaluation and save intervals re-plans these costs without timing again."""
    return measure_run(
        ModelConfig.from_dict(json.loads(config_json)),
        TrainConfig.from_dict(json.loads(plan_json)),
        _tokenizer,
        _train,
        _val,
    )


@st.cache_data(show_spinner=False, ttl=ESTIMATE_TTL_S)
def this_machine_flops() -> float:
    """This machine's float32 throughput (FLOP/s), measured once for every browser tab and again after
    `ESTIMATE_TTL_S`."""
    return cpu_flops()


def forget_costs(key: tuple[str, str, str, str]) -> None:
    """The "Measure again" button: drop this run's measurement and the timed process start-up, so the page
    times both at the machine's load now."""
    run_costs.clear(*key, None, None, None)
    forget_process_startup()


def estimate_parts(estimate: RunEstimate, lang: str) -> list[str]:
    """One line per part of the estimate's total, in `lang` (a function of the language, not the session, so it
    is tested without a page)."""
    step = estimate.step
    fields = dict(
        steps=f"{estimate.steps:,}",
        ms=f"{step.seconds * 1000:,.1f}",
        batches=step.timed_batches,
        repeats=step.repeats,
        device=step.device,
    )
    if step.repeats > 1:
        training = translate(
            "training: {steps} steps × {ms} ms (the median of {repeats} timings of each of {batches} of the "
            "run's own batches of this corpus, on {device}, with the run's threads and priority)",
            lang,
            **fields,
        )
    else:
        training = translate(
            "training: {steps} steps × {ms} ms (timed on {batches} of the run's own batches of this corpus, "
            "on {device}, with the run's threads and priority)",
            lang,
            **fields,
        )
    found = [training]
    if estimate.warmup_s >= 0.05:
        found.append(translate("the first steps' warm-up: {s} s", lang, s=f"{estimate.warmup_s:.1f}"))
    if estimate.evals and estimate.bleu_s:
        found.append(
            translate(
                "evaluations: {n} × {s} s (greedy BLEU decoding {bleu} s of each)",
                lang,
                n=estimate.evals,
                s=f"{estimate.eval_s:.1f}",
                bleu=f"{estimate.bleu_s:.1f}",
            )
        )
    elif estimate.evals:
        found.append(translate("evaluations: {n} × {s} s", lang, n=estimate.evals, s=f"{estimate.eval_s:.1f}"))
    if estimate.saves:
        found.append(translate("checkpoints: {n} × {s} s", lang, n=estimate.saves, s=f"{estimate.save_s:.1f}"))
    found.append(
        translate(
            "the watched sentences at step 0 and the final save: {s} s",
            lang,
            s=f"{estimate.first_samples_s + estimate.final_s:.1f}",
        )
    )
    found.append(
        translate(
            "start-up: {s} s (a new process, torch, encoding the corpus, building the model)",
            lang,
            s=f"{estimate.startup_s:.1f}",
        )
    )
    return found


def estimate_section(
    choice: DataChoice, tokenizer: Tokenizer, config: ModelConfig, train_config: TrainConfig, save: bool
) -> None:
    """The whole run's time, measured as its process will run it (its own batches of this corpus, its threads
    and priority, evaluations, checkpoints and start-up), with its parts; timed on request for large models."""
    plan = json.dumps(timing_plan(train_config).to_dict(), sort_keys=True)
    digest = hashlib.sha256(tokenizer.to_bytes()).hexdigest()[:16]
    key = (choice.key, digest, config.to_json(), plan)
    wanted = st.session_state.setdefault("train_timed", set())
    if count_parameters(config) > AUTO_TIMING_PARAMETERS and key not in wanted:
        st.button(
            t("Estimate the run's time"),
            icon=":material/timer:",
            key="train_estimate",
            on_click=wanted.add,
            args=(key,),
            help=t(
                "Times real training steps of this model on batches of this corpus, one evaluation and one "
                "checkpoint, as the run's process will run them (seconds to minutes)."
            ),
        )
        return
    wanted.add(key)
    try:
        with st.spinner(t("Timing this run's steps, evaluation and checkpoint on this machine…")):
            costs = run_costs(*key, tokenizer, choice.train, choice.val)
    except (RuntimeError, OSError, ValueError) as error:
        st.caption(t("The run could not be timed: {error}", error=shown_value(error, ERROR_CHARS)))
        return
    estimate = costs.estimate(train_config, save_to=save)
    per_step = estimate.step.seconds
    cols = st.columns(3)
    cols[0].metric(
        t("Estimated time"),
        f"≈ {duration(estimate.total_s)}",
        help=t("From Start until the run has finished and saved: training, evaluations, checkpoints and start-up."),
    )
    cols[1].metric(
        t("Time per step"), t("{ms} ms", ms=f"{per_step * 1000:,.0f}") if per_step < 2 else duration(per_step)
    )
    cols[2].metric(
        t("{steps} steps", steps=f"{estimate.steps:,}"),
        f"≈ {duration(estimate.training_s)}",
        help=t("Training steps only; evaluations and checkpoints add to it."),
    )
    st.caption("\n".join(f"- {part}" for part in estimate_parts(estimate, current_language())))
    age = max(0.0, time.time() - costs.measured_at)
    when = t("just now") if age < 5 else t("{ago} ago", ago=duration(age))
    note = (
        t(
            "An estimate, measured on this machine {when} at a load average of {load}: other work on the "
            "machine (another run, many people using the app) changes it.",
            when=when,
            load=f"{costs.load_average:.1f}",
        )
        if costs.load_average is not None
        else t(
            "An estimate, measured on this machine {when}: other work on the machine (another run, many "
            "people using the app) changes it.",
            when=when,
        )
    )
    if manager().live_names():
        note += t(" Another run is training on this machine right now, so this is slower than usual.")
    st.caption(note)
    st.caption(base_model_here_text(this_machine_flops(), current_language()))
    now = load_average()
    if costs.stale(now):
        left, right = st.columns((3, 1))
        left.warning(
            t(
                "The machine's load has changed since this was measured (load average {then} then, {now} now).",
                then=f"{costs.load_average:.1f}",
                now=f"{now:.1f}",
            ),
            icon=":material/speed:",
        )
        right.button(
            t("Measure again"),
            icon=":material/refresh:",
            key="train_estimate_again",
            on_click=forget_costs,
            args=(key,),
        )
