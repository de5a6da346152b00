"""The app's page list, in one place: app.py navigates over it and the tests run every page from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

APP_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PageSpec:
    file: str  # relative to the app root
    title: str
    icon: str
    group: str

    @property
    def url_path(self) -> str:
        # The file's stem: on a first visit Streamlit resolves the URL against pages/ file names, so any
        # other path briefly shows "Page not found".
        return Path(self.file).stem

    @property
    def path(self) -> Path:
        return APP_ROOT / self.file


PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/translate.py", "Translate & attention", ":material/translate:", "Look inside"),
    PageSpec("pages/compare.py", "Compare heads", ":material/compare:", "Look inside"),
    PageSpec("pages/step_by_step.py", "Attention step by step", ":material/calculate:", "Look inside"),
    PageSpec("pages/beam.py", "Beam search", ":material/account_tree:", "Look inside"),
    PageSpec("pages/positional.py", "Positional encoding", ":material/waves:", "The paper"),
    PageSpec("pages/complexity.py", "Complexity (Table 1)", ":material/speed:", "The paper"),
    PageSpec("pages/train.py", "Train", ":material/model_training:", "Train"),
)
