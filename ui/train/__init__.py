"""The Train page's sections (pages/train.py chains them).

Setting a run up, one module per section: `data` (1 · Data), `tokenizer` (2), `model` (3), `training` (4),
`start` (5, with the time estimate of `estimate` under its button); `state` keeps the knobs in the session.
Watching runs: `watch` (the run picker and the live view), with its `controls`, `charts` and `attention`.
`runs` is the page's handle on the runs folder, shared by both.
"""
