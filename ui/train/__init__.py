"""The Train page's sections (pages/train.py chains them).

Setting a run up, one module per section: `data` (1 · Data), `tokenizer` (2), `model` (3), `training` (4),
`start` (5, with the time estimate of `estimate` under its button). Each section reads its widgets and returns
what the next one needs (a corpus, a tokenizer, a model config, a training config), or None after a message
saying why it cannot go on, so the page stays a short chain. `state` keeps the knobs in `st.session_state`
under "train_*" keys, so they survive a visit to the live view. `prepared` waits, with a progress bar, on a
large upload read and tokenized outside the server (explorer.data.prepare).

Watching runs: `watch` (the run picker and the live view), with its `controls`, `charts` and `attention`.
`runs` is the page's handle on the runs folder, shared by both.
"""
