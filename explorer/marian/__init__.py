"""Marian models (Helsinki-NLP's OPUS-MT, in the Hugging Face layout) to and from explorer checkpoints.

- `tokenizer`: `VocabTokenizer`, the two SentencePiece models over a vocabulary that such a model reads.
- `convert`: weights and config, Marian -> explorer and explorer -> Marian, checked name by name.
- `importer`: `import_marian`, a local folder or a hub id turned into a checkpoint (`explorer import`).
"""
