"""Complexity (Table 1): self-attention vs recurrent vs convolutional layers, by formula and by stopwatch."""

from __future__ import annotations

from ui.complexity.sections import intro, measured_section, path_length_section, sizes_section, table1_section

intro()
sizes = sizes_section()
table1_section(sizes)
measured_section(sizes.k)
path_length_section(sizes.n, sizes.k, sizes.r)
