"""Head numbering on the Heads page: names (`cross.1.0`, in links, tables and on the command line) count
layers and heads from 0; labels and figures count from 1, as on every other page. Where both appear, these
say which is which."""

from __future__ import annotations

from explorer.config import ModelConfig
from explorer.model.head_mask import head_name
from ui.i18n import t


def shown_name(name: str) -> str:
    """A head's 0-based name (`cross.1.0`, as in links and on the command line) with its 1-based place on the
    page: "cross.1.0 (layer 2, head 1)"."""
    _family, layer, head = name.split(".")
    return t("{name} (layer {layer}, head {head})", name=name, layer=int(layer) + 1, head=int(head) + 1)


def numbering_note(config: ModelConfig) -> str:
    """The caption wherever 0-based head names meet the page's 1-based labels."""
    layer = config.n_decoder_layers - 1
    return t(
        "Head names such as `{name}` (links, the command line, tables) count layers and heads from 0; the page's "
        "labels and figures count from 1, so `{name}` is layer {layer}, head {head}.",
        name=head_name("cross", layer, 0),
        layer=layer + 1,
        head=1,
    )
