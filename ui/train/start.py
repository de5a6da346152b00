"""5 · Start: the run's name, whether to save it to the checkpoint list, and the Start button; the time
estimate below it."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.config import ModelConfig
from explorer.tokenizer import Tokenizer
from explorer.training.launcher import JobError
from explorer.training.run_folder import validate_run_name
from explorer.training.train_config import TrainConfig
from ui.i18n import t
from ui.markdown import ERROR_CHARS, shown_value
from ui.model_picker import checkpoint_root
from ui.train.continued import continued
from ui.train.data import DataChoice
from ui.train.estimate import estimate_section
from ui.train.runs import checkpoint_target, manager, runs_root, session_owner


def default_name(kind: str) -> str:
    taken = {p.name for p in runs_root().glob("*")}
    base = f"{kind}-{st.session_state['train_preset']}"
    n = 1
    while (name := base if n == 1 else f"{base}-{n}") in taken:
        n += 1
    return name


def start_run(
    choice: DataChoice,
    tokenizer: Tokenizer,
    config: ModelConfig,
    train_config: TrainConfig,
    name: str,
    save: bool,
    replace: bool,
    automatic: bool,
    init_from: str | None = None,
) -> None:
    """The Start button's callback (it runs before the page, so it may switch the view to the new run).

    A name the page chose (`automatic`) moves on to the next free one when someone took it a moment ago; a
    name the user typed is refused instead. The model is saved under the run's final name (the manager
    decides it), replacing a checkpoint of that name only when the user ticked `replace` for it. `init_from`: the
    loaded checkpoint whose weights the run continues (ui/train/continued.py).
    """
    metadata: dict[str, Any] = {"data": choice.kind, "corpus": choice.label, "made_by": "train page"}
    going_on = continued() if init_from is not None else None
    if going_on is not None:  # as `explorer train --init-from` records it: the model keeps its origin
        metadata["initialised_from"] = {"path": init_from, "metadata": going_on.checkpoint.metadata}
    try:
        started = manager().start_new(
            name,
            model_config=config,
            train_config=train_config,
            tokenizer=tokenizer,
            train=choice.train,
            val=choice.val,
            unique=automatic,
            save_in=checkpoint_root() if save else None,
            replace=replace,
            metadata=metadata,
            owner=session_owner(),
            init_from=init_from,
        )
    except JobError as error:
        st.session_state["train_start_error"] = str(error)
        return
    st.session_state.pop("train_name", None)
    st.session_state.update(train_view="watch", train_run=started)


def start_section(choice: DataChoice, tokenizer: Tokenizer, config: ModelConfig, train_config: TrainConfig) -> None:
    st.subheader(t("5 · Start"))
    going_on = continued()
    source = None if going_on is None else going_on.path
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
    replace = False
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
        if save and checkpoint_target(name).exists():
            replace = right.checkbox(
                t("Replace the existing checkpoint {name} when this run finishes", name=repr(name)),
                key="train_replace",
            )
            if not replace:
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
        st.error(t("Not started: {error}", error=shown_value(error, ERROR_CHARS)), icon=":material/error:")
    st.button(
        t("Start training"),
        type="primary",
        icon=":material/play_arrow:",
        key="train_start",
        disabled=bool(problems),
        on_click=start_run,
        args=(choice, tokenizer, config, train_config, name, save, replace, name == auto, source),
    )
    # Under the button, not above it: the estimate times real steps at the run's own low priority, which takes
    # minutes on a busy machine (two busy processes kept the button from appearing for over two minutes), and
    # nobody should wait for a figure to be allowed to start.
    estimate_section(choice, tokenizer, config, train_config, save)
