"""The train page's setup form: data, tokenizer, model and training knobs, the run's time estimate, and Start.

Each section reads its widgets and returns what the next one needs (a corpus, a tokenizer, a model config,
a training config), or None after a message saying why it cannot go on, so the page script stays a short
chain. Knob values live in `st.session_state` under "train_*" keys and survive a visit to the live view.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

import streamlit as st

from explorer.config import PRESETS, ModelConfig, count_parameters
from explorer.data import TASKS, CorpusError, ParallelCorpus, make_splits, multi30k_available, task_description
from explorer.data.corpus import parallel_from_bytes, tsv_from_bytes
from explorer.devices import available_devices
from explorer.tokenizer import Tokenizer
from explorer.training.datasets import SYNTHETIC_VAL_PAIRS, load_corpora, split_off_validation, train_tokenizer
from explorer.training.estimates import (
    RunCosts,
    batches_per_epoch,
    forget_process_startup,
    load_average,
    measure_run,
    timing_plan,
)
from explorer.training.launcher import JobError
from explorer.training.run_folder import validate_run_name
from explorer.training.train_config import TrainConfig
from ui.i18n import current_language, t
from ui.train_runs import checkpoint_target, duration, manager, runs_root

UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024  # per file
MAX_SAMPLES = 4  # sentences whose attention is watched
AUTO_TIMING_PARAMETERS = 3_000_000  # larger models are timed on request (a step takes seconds on a CPU)
ESTIMATE_TTL_S = 15 * 60  # a measured estimate is timed again after this: the machine's load moves


def data_sources() -> dict[str, str]:
    return {
        "synthetic": t("Synthetic task"),
        "multi30k": t("Multi30k (English → German)"),
        "upload": t("Upload a corpus"),
    }


def preset_labels() -> dict[str, str]:
    return {"tiny": t("Tiny (seconds on a CPU)"), "small": t("Small (Multi30k)"), "base": t("Paper base (Table 3)")}


D_MODELS = (16, 32, 64, 128, 256, 512, 768, 1024)
HEADS = (1, 2, 4, 8, 16)
D_FFS = (32, 64, 128, 256, 512, 1024, 2048, 4096)
BATCH_TOKENS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 25000)
VOCABS = (32, 64, 128, 256, 500, 1000, 2000, 4000, 8000, 16000, 37000)
PAIRS = (500, 1000, 2000, 5000, 10000, 20000, 50000)
# Per data source: knobs for a sensible first run on a laptop (the paper trains base for 100k steps with
# 4000 warm-up steps and about 25,000 tokens per batch: Section 5).
DEFAULTS = {
    "synthetic": dict(
        preset="tiny", vocab=64, steps=600, warmup=100, batch_tokens=1024, eval_every=100, bleu=100, save_every=200
    ),
    "multi30k": dict(
        preset="small", vocab=8000, steps=5000, warmup=1000, batch_tokens=4096, eval_every=500, bleu=200, save_every=500
    ),
    "upload": dict(
        preset="small", vocab=4000, steps=5000, warmup=1000, batch_tokens=2048, eval_every=500, bleu=100, save_every=500
    ),
}


# --------------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class DataChoice:
    """The corpus the run will train on, as the data section chose and loaded it."""

    key: str  # identifies the corpus in caches
    kind: str  # task name, "multi30k" or "upload" (written into the checkpoint's metadata as "data")
    label: str
    train: ParallelCorpus
    val: ParallelCorpus

    @property
    def synthetic(self) -> bool:
        return self.kind in TASKS


@st.cache_resource(show_spinner=False, max_entries=8)
def synthetic_corpora(task: str, n_train: int, max_len: int, seed: int) -> tuple[ParallelCorpus, ParallelCorpus]:
    n_val = min(SYNTHETIC_VAL_PAIRS, max(50, n_train // 10))
    return make_splits(task, n_train, n_val, seed, min_len=min(4, max_len), max_len=max_len)


@st.cache_resource(show_spinner=False, max_entries=1)
def multi30k_corpora() -> tuple[ParallelCorpus, ParallelCorpus]:
    return load_corpora("multi30k")


@st.cache_resource(show_spinner=False, max_entries=4)
def upload_corpora(files: tuple[tuple[str, bytes], ...]) -> tuple[ParallelCorpus, ParallelCorpus]:
    """Two aligned files (source, target) or one TSV; the last 5% of pairs are held out for validation."""
    if len(files) == 1:
        corpus = tsv_from_bytes(files[0][1], files[0][0], UPLOAD_LIMIT_BYTES)
    else:
        (src_name, src), (tgt_name, tgt) = files
        corpus = parallel_from_bytes(src, tgt, src_name, tgt_name, UPLOAD_LIMIT_BYTES)
    if len(corpus) < 2:
        raise CorpusError(
            t(
                "{name} has {count} sentence pair; at least 2 are needed (one is held out for validation)",
                name=corpus.name,
                count=len(corpus),
            )
        )
    return split_off_validation(corpus)


def apply_data_defaults() -> None:
    for key, value in DEFAULTS[st.session_state["train_data"]].items():
        st.session_state[f"train_{key}"] = value
    apply_preset()


def apply_preset() -> None:
    config = PRESETS[st.session_state["train_preset"]]
    st.session_state.update(
        train_layers=config.n_encoder_layers,
        train_d_model=config.d_model,
        train_heads=config.n_heads,
        train_d_ff=config.d_ff,
        train_dropout=config.dropout,
    )


# Knobs kept while their widgets are not drawn (on the Watch view), so a run is set up once per session.
PERSISTENT = (
    "train_data",
    "train_task",
    "train_pairs",
    "train_seq_len",
    "train_upload_mode",
    "train_vocab",
    "train_preset",
    "train_layers",
    "train_d_model",
    "train_heads",
    "train_d_ff",
    "train_dropout",
    "train_smoothing",
    "train_warmup",
    "train_batch_tokens",
    "train_seed",
    "train_duration",
    "train_steps",
    "train_epochs",
    "train_device",
    "train_eval_every",
    "train_bleu",
    "train_save_every",
    "train_samples",
    "train_samples_for",
    "train_name",
    "train_name_auto",
    "train_save",
)


def init_state() -> None:
    """Widget defaults, once per session (the synthetic reverse task with the tiny model)."""
    if "train_data" not in st.session_state:
        st.session_state["train_data"] = "synthetic"
        st.session_state.update(
            train_task="reverse",
            train_pairs=5000,
            train_seq_len=10,
            train_upload_mode="two",
            train_smoothing=0.1,
            train_seed=0,
            train_duration="steps",
            train_epochs=5,
            train_save=True,
        )
        apply_data_defaults()
    for key in PERSISTENT:  # Streamlit forgets a widget's value when the widget is not drawn in a run
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def data_section() -> DataChoice | None:
    """Data source widgets, corpus size and a preview; None (after a message) when there is no usable corpus."""
    st.subheader(t("1 · Data"))
    sources = data_sources()
    source = st.segmented_control(
        t("Training data"),
        tuple(sources),
        key="train_data",
        required=True,
        format_func=sources.get,
        on_change=apply_data_defaults,
    )
    choice: DataChoice | None = None
    if source == "synthetic":
        left, middle, right = st.columns(3)
        task = left.selectbox(t("Task"), tuple(TASKS), key="train_task")
        n_pairs = middle.select_slider(t("Training pairs"), PAIRS, key="train_pairs")
        seq_len = right.slider(
            t("Longest sequence"),
            4,
            20,
            key="train_seq_len",
            help=t("Sequences have 4 to this many symbols, out of an alphabet of 20 letters."),
        )
        st.caption(task_description(task))
        with st.spinner(t("Making the task…")):
            train, val = synthetic_corpora(task, n_pairs, seq_len, int(st.session_state["train_seed"]))
        choice = DataChoice(
            f"{task}-{n_pairs}-{seq_len}-{st.session_state['train_seed']}",
            task,
            t("{task} task", task=task),
            train,
            val,
        )
    elif source == "multi30k":
        if not multi30k_available() and not st.session_state.get("train_multi30k_ok"):
            st.info(
                t(
                    "Multi30k (29,000 English–German image captions, Elliott et al. 2016) is not on this machine "
                    "yet. It can be downloaded once (about 4 MB) into `~/.cache/attention-explorer/multi30k`."
                ),
                icon=":material/cloud_download:",
            )
            if not st.button(t("Download Multi30k"), icon=":material/download:", key="train_multi30k_download"):
                return None
        try:
            with st.spinner(t("Reading Multi30k…")):
                train, val = multi30k_corpora()
        except CorpusError as error:
            st.error(t("Multi30k is not available: {error}", error=error), icon=":material/cloud_off:")
            return None
        st.session_state["train_multi30k_ok"] = True
        choice = DataChoice("multi30k", "multi30k", "Multi30k", train, val)
    else:
        choice = upload_section()
    if choice is None:
        return None
    show_corpus(choice)
    return choice


def upload_section() -> DataChoice | None:
    mode = st.radio(
        t("Format"),
        ("two", "tsv"),
        key="train_upload_mode",
        horizontal=True,
        format_func={
            "two": t("Two files: source and target, line by line"),
            "tsv": t("One TSV file: source<TAB>target per line"),
        }.get,
    )
    limit = t("UTF-8 text, at most {mb} MB per file.", mb=UPLOAD_LIMIT_BYTES // (1024 * 1024))
    if mode == "two":
        left, right = st.columns(2)
        src = left.file_uploader(t("Source sentences"), key="train_upload_src", help=limit)
        tgt = right.file_uploader(
            t("Target sentences (line i translates line i of the source)"), key="train_upload_tgt", help=limit
        )
        uploads = [f for f in (src, tgt) if f is not None]
        needed = 2
    else:
        tsv = st.file_uploader(t("Sentence pairs (TSV)"), key="train_upload_tsv", help=limit)
        uploads = [tsv] if tsv is not None else []
        needed = 1
    st.caption(
        limit
        + " "
        + t(
            "One sentence per line; pairs with an empty side are skipped; the last 5% of "
            "pairs are held out to measure validation loss and BLEU."
        )
    )
    if len(uploads) < needed:
        st.info(
            t("Upload both files to train on your own corpus.")
            if needed == 2
            else t("Upload a TSV file to train on your own corpus."),
            icon=":material/upload_file:",
        )
        return None
    files = tuple((f.name, f.getvalue()) for f in uploads)
    try:
        with st.spinner(t("Reading the upload…")):
            train, val = upload_corpora(files)
    except CorpusError as error:
        st.error(t("Upload not usable: {error}", error=error), icon=":material/error:")
        return None
    digest = hashlib.sha256(b"\0".join(data for _, data in files)).hexdigest()[:12]
    return DataChoice(f"upload-{digest}", "upload", " + ".join(name for name, _ in files), train, val)


def show_corpus(choice: DataChoice) -> None:
    cols = st.columns(3)
    cols[0].metric(t("Training pairs"), f"{len(choice.train):,}")
    cols[1].metric(t("Validation pairs"), f"{len(choice.val):,}")
    cols[2].metric(
        t("Skipped pairs"), f"{choice.train.dropped:,}", help=t("Pairs with an empty or placeholder side, left out.")
    )
    st.dataframe([{"source": s, "target": t} for s, t in choice.train.preview(6)], hide_index=True, width="stretch")


# ----------------------------------------------------------------------------------------------- tokenizer
@st.cache_resource(show_spinner=False, max_entries=8)
def tokenizer_for(key: str, vocab: int, synthetic: bool, _train: ParallelCorpus) -> Tokenizer:
    """SentencePiece on both sides of the corpus identified by `key` (the corpus itself is not hashed)."""
    return train_tokenizer(_train, vocab, synthetic=synthetic)


def tokenizer_section(choice: DataChoice) -> Tokenizer | None:
    st.subheader(t("2 · Tokenizer"))
    vocab = st.select_slider(
        t("Vocabulary size (upper bound)"),
        VOCABS,
        key="train_vocab",
        help=t(
            "A joint SentencePiece vocabulary over source and target, as in Section 5.1 "
            "(the paper: 37,000 byte-pair pieces). A small corpus gets fewer pieces."
        ),
    )
    try:
        with st.spinner(t("Training the tokenizer…")):
            tokenizer = tokenizer_for(choice.key, vocab, choice.synthetic, choice.train)
    except ValueError as error:
        st.error(t("No tokenizer: {error}", error=error), icon=":material/error:")
        return None
    example = choice.train.source[0]
    pieces = tokenizer.pieces(tokenizer.encode(example))
    kind = t("whole symbols (a word vocabulary)") if choice.synthetic else t("subword pieces (unigram model)")
    st.markdown(
        t(
            "**{count} pieces**, {kind}, trained on this corpus in the app. The first training sentence "
            "becomes {n} pieces:",
            count=f"{tokenizer.vocab_size:,}",
            kind=kind,
            n=len(pieces),
        )
    )
    st.code(" ".join(pieces), language=None, wrap_lines=True)
    return tokenizer


# -------------------------------------------------------------------------------------------------- model
def model_section(vocab_size: int) -> ModelConfig | None:
    st.subheader(t("3 · Model"))
    presets = preset_labels()
    st.segmented_control(
        t("Preset"),
        tuple(presets),
        key="train_preset",
        required=True,
        format_func=presets.get,
        on_change=apply_preset,
        help=t("Sets the knobs below; change any of them afterwards."),
    )
    cols = st.columns(5)
    layers = cols[0].slider(t("Layers (N)"), 1, 8, key="train_layers", help=t("Encoder and decoder layers each."))
    d_model = cols[1].select_slider("d_model", D_MODELS, key="train_d_model", help=t("Width of every token vector."))
    heads = cols[2].select_slider(t("Heads (h)"), HEADS, key="train_heads", help=t("Must divide d_model."))
    d_ff = cols[3].select_slider("d_ff", D_FFS, key="train_d_ff", help=t("Inner width of the feed-forward layer."))
    dropout = cols[4].slider(t("Dropout"), 0.0, 0.5, step=0.05, key="train_dropout", help=t("Section 5.4: 0.1."))
    base = PRESETS[st.session_state["train_preset"]]
    try:
        config = base.replace(
            vocab_size=vocab_size,
            n_encoder_layers=layers,
            n_decoder_layers=layers,
            d_model=d_model,
            n_heads=heads,
            d_ff=d_ff,
            dropout=float(dropout),
        )
    except ValueError as error:
        st.error(t("Not a valid model: {error}", error=error), icon=":material/error:")
        return None
    st.metric(
        t("Parameters"),
        f"{count_parameters(config):,}",
        help=t(
            "Counted exactly from the configuration (the paper's base "
            "model: 65 million with a 37,000-piece vocabulary)."
        ),
    )
    return config


# ----------------------------------------------------------------------------------------------- training
@st.cache_data(show_spinner=False, max_entries=16)
def epoch_steps(
    key: str, vocab: int, batch_tokens: int, max_len: int, _tokenizer: Tokenizer, _train: ParallelCorpus
) -> int:
    return batches_per_epoch(_tokenizer, _train, batch_tokens, max_len)


def default_name(kind: str) -> str:
    taken = {p.name for p in runs_root().glob("*")}
    base = f"{kind}-{st.session_state['train_preset']}"
    n = 1
    while (name := base if n == 1 else f"{base}-{n}") in taken:
        n += 1
    return name


def training_section(choice: DataChoice, tokenizer: Tokenizer, config: ModelConfig) -> TrainConfig:
    st.subheader(t("4 · Training"))
    cols = st.columns(4)
    smoothing = cols[0].slider(
        t("Label smoothing"), 0.0, 0.3, step=0.05, key="train_smoothing", help=t("Section 5.4: ε = 0.1.")
    )
    warmup = cols[1].number_input(
        t("Warm-up steps"),
        1,
        50_000,
        key="train_warmup",
        help=t("The learning rate rises for this many steps, then decays (Eq. 3; the paper: 4000)."),
    )
    batch_tokens = cols[2].select_slider(
        t("Batch tokens"),
        BATCH_TOKENS,
        key="train_batch_tokens",
        help=t("Padded tokens per batch and side (the paper: about 25,000)."),
    )
    seed = cols[3].number_input(t("Seed"), 0, 1_000_000, key="train_seed")
    cols = st.columns(4)
    unit = cols[0].radio(
        t("Train for"),
        ("steps", "epochs"),
        key="train_duration",
        horizontal=True,
        format_func={"steps": t("steps"), "epochs": t("epochs")}.get,
    )
    with st.spinner(t("Counting batches…")):
        per_epoch = epoch_steps(choice.key, tokenizer.vocab_size, batch_tokens, config.max_len, tokenizer, choice.train)
    if unit == "steps":
        steps = int(cols[1].number_input(t("Steps"), 1, 1_000_000, key="train_steps"))
    else:
        epochs = int(cols[1].number_input(t("Epochs"), 1, 1000, key="train_epochs"))
        steps = epochs * per_epoch
    cols[1].caption(
        t("1 epoch = {per_epoch} steps; this run: {steps} steps.", per_epoch=f"{per_epoch:,}", steps=f"{steps:,}")
    )
    devices = available_devices()
    if st.session_state.get("train_device") not in devices:
        st.session_state["train_device"] = st.session_state.get("device", devices[0])
    device = cols[2].selectbox(
        t("Device"),
        devices,
        key="train_device",
        help=t("A GPU trains one run at a time; a second run waits for it or uses the CPU."),
    )
    eval_every = int(
        cols[3].number_input(
            t("Evaluate every (steps)"),
            1,
            1_000_000,
            key="train_eval_every",
            help=t("Validation loss, BLEU and the watched sentences' attention."),
        )
    )
    with st.expander(t("More: BLEU sentences, checkpoints")):
        cols = st.columns(2)
        bleu = int(
            cols[0].number_input(
                t("BLEU on this many validation sentences"),
                0,
                5000,
                key="train_bleu",
                help=t("Greedy decoding; 0 skips BLEU."),
            )
        )
        save_every = int(
            cols[1].number_input(
                t("Save latest/ every (steps)"),
                1,
                1_000_000,
                key="train_save_every",
                help=t("A periodic checkpoint the run can be resumed from if its process stops."),
            )
        )
    if st.session_state.get("train_samples_for") != choice.key:
        st.session_state["train_samples"] = "\n".join(choice.val.source[:2])
        st.session_state["train_samples_for"] = choice.key
    text = st.text_area(
        t("Sentences to watch (one per line, at most {n})", n=MAX_SAMPLES),
        key="train_samples",
        height=100,
        help=t("Translated at every evaluation, with their cross-attention, so you can watch it form."),
    )
    samples = tuple(line.strip() for line in text.splitlines() if line.strip())
    if len(samples) > MAX_SAMPLES:
        st.warning(t("Only the first {n} sentences are watched.", n=MAX_SAMPLES), icon=":material/warning:")
        samples = samples[:MAX_SAMPLES]
    return TrainConfig(
        steps=steps,
        batch_tokens=int(batch_tokens),
        warmup_steps=int(warmup),
        label_smoothing=float(smoothing),
        seed=int(seed),
        max_len=config.max_len,
        log_every=max(1, min(10, steps // 200)),
        eval_every=eval_every,
        save_every=save_every,
        keep_last=2,
        bleu_sentences=bleu,
        device=device,
        sample_sentences=samples,
    )


# ----------------------------------------------------------------------------------------------- estimate
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


def forget_costs(key: tuple[str, str, str, str]) -> None:
    """The "Measure again" button: drop this run's measurement and the timed process start-up, so the page
    times both at the machine's load now."""
    run_costs.clear(*key, None, None, None)
    forget_process_startup()


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
        st.caption(t("The run could not be timed: {error}", error=error))
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
    st.caption("\n".join(f"- {part}" for part in estimate.parts(current_language())))
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


def start_run(
    choice: DataChoice,
    tokenizer: Tokenizer,
    config: ModelConfig,
    train_config: TrainConfig,
    name: str,
    save: bool,
    automatic: bool,
) -> None:
    """The Start button's callback (it runs before the page, so it may switch the view to the new run).

    A name the page chose (`automatic`) moves on to the next free one when someone took it a moment ago; a
    name the user typed is refused instead.
    """
    try:
        started = manager().start_new(
            name,
            model_config=config,
            train_config=train_config,
            tokenizer=tokenizer,
            train=choice.train,
            val=choice.val,
            unique=automatic,
            save_to=checkpoint_target(name) if save else None,
            metadata={"data": choice.kind, "corpus": choice.label, "made_by": "train page"},
        )
    except JobError as error:
        st.session_state["train_start_error"] = str(error)
        return
    st.session_state.pop("train_name", None)
    st.session_state.update(train_view="watch", train_run=started)


def start_section(choice: DataChoice, tokenizer: Tokenizer, config: ModelConfig, train_config: TrainConfig) -> None:
    st.subheader(t("5 · Start"))
    auto = default_name(choice.kind)
    if st.session_state.get("train_name") in (None, "", st.session_state.get("train_name_auto")):
        st.session_state["train_name"] = auto
    st.session_state["train_name_auto"] = auto
    left, right = st.columns((2, 3))
    name = left.text_input(
        t("Run name"), key="train_name", max_chars=64, help=t("Names the run folder and the checkpoint it is saved as.")
    ).strip()
    # A short label: a checkbox label stays on one line and is cut with an ellipsis (the Korean one was, at
    # 1024 px); the where goes in the help.
    save = right.checkbox(
        t("Save the model when finished"),
        key="train_save",
        help=t("It then appears in the checkpoint list, the model picker of every page."),
    )
    problems = []
    try:
        validate_run_name(name)
    except JobError:
        problems.append(
            t(
                "Run name {name} is not usable: use 1 to 64 letters, digits, '.', '_' or '-', starting "
                "with a letter or digit.",
                name=repr(name),
            )
        )
    else:
        if (runs_root() / name).exists() and name != auto:
            problems.append(
                t(
                    "A run named {name} exists already: resume it under **Watch runs**, or choose another name.",
                    name=repr(name),
                )
            )
        replace = t("Replace the existing checkpoint {name} when this run finishes", name=repr(name))
        if save and checkpoint_target(name).exists() and not right.checkbox(replace, key="train_replace"):
            problems.append(
                t(
                    "A checkpoint named {name} exists; tick the box to replace it or choose another name.",
                    name=repr(name),
                )
            )
    for problem in problems:
        st.error(problem, icon=":material/error:")
    error = st.session_state.pop("train_start_error", None)
    if error:
        st.error(t("Not started: {error}", error=error), icon=":material/error:")
    st.button(
        t("Start training"),
        type="primary",
        icon=":material/play_arrow:",
        key="train_start",
        disabled=bool(problems),
        on_click=start_run,
        args=(choice, tokenizer, config, train_config, name, save, name == auto),
    )
    # Under the button, not above it: the estimate times real steps at the run's own low priority, which takes
    # minutes on a busy machine (two busy processes kept the button from appearing for over two minutes), and
    # nobody should wait for a figure to be allowed to start.
    estimate_section(choice, tokenizer, config, train_config, save)
