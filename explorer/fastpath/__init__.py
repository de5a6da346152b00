"""The CPU decoding fast path: the paper's model (`explorer.model`) computed again in fewer, larger operations,
for searches that ask for no attention weights.

A decoder step of a small model on a CPU costs more in per-operation overhead and in reading weights than in
arithmetic, so translation (`explorer.inference.scorer_for`) runs these modules wherever the model allows
(`packed_decoding.supports_packed`: imported Marian models included, with their swish or GELU, logits bias and
banned `<pad>`) and the paper's `Transformer` everywhere else: when attention maps, internals or gradients are
asked for, and in training. Each module mirrors paper code; a change to the paper's
layers (`explorer/model/attention.py`, `layers.py`, `transformer.py`) must be made here too, and the tests named
below fail until it is:

- `packed_encoding`: `Transformer.encode` without weights or dropout
  (tests/fastpath/test_packed_encoding.py);
- `packed_decoding`: `Transformer.start_decoding` and `decode_step`, head masks included
  (tests/fastpath/test_packed_decoding.py, test_packed_head_mask.py);
- `packed_cache`: `DecoderCache`, reorderable by beam row (tests/fastpath/test_packed_decoding.py);
- `folded_cross`: `decode_step`'s cross-attention, Eq. 1 and W^O multiplied out with the encoder memory
  (tests/fastpath/test_folded_cross.py);
- `scripted_decoding`: `PackedDecoder.step`, the greedy loop (`explorer.decoding.search._greedy_one`) and one
  sentence's beam search (`search._beam_one`) run by TorchScript, to the bit (tests/fastpath/test_scripted_decoding.py,
  test_scripted_beam.py);
- `packing`: the weights of `MultiHeadAttention`, `PositionwiseFeedForward` (Eq. 2), LayerNorm and the residual
  sum, read once per model (tests/fastpath/test_linear_kernels.py and the tests above);
- `linear_kernels`: `F.linear` on MKL or oneDNN, measured per machine (tests/fastpath/test_linear_kernels.py).

The searches' outputs as a whole are held to the ones the paper's path gave, on 200 test2016 sentences, by
tests/fastpath/test_search_identical.py. Log-probabilities agree with the paper's path to float32 rounding (the
kernels sum in other orders); the scripted functions agree with the Python fast path to the bit.

Imports run one way: `packed_decoding` -> `scripted_decoding` -> `packed_cache`, `packing`, `folded_cross`,
`linear_kernels` -> `explorer.model`; nothing in `explorer.model` imports this package.
"""
