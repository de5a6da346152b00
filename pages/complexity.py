"""Complexity (Table 1): self-attention vs recurrent vs convolutional layers, by formula and by stopwatch; the
sizes in the controls, then one tab each for Table 1, the measurement and the path length."""

from __future__ import annotations

from ui.complexity.sections import intro, measured_section, path_length_section, sizes_section, table1_section
from ui.part_tabs import part_tabs

intro()
sizes = sizes_section()
parts = part_tabs("complexity_part")
if parts["table"].open:
    with parts["table"]:
        table1_section(sizes)
if parts["measured"].open:
    with parts["measured"]:
        measured_section(sizes.k)
if parts["path"].open:
    with parts["path"]:
        path_length_section(sizes.n, sizes.k, sizes.r)
