"""Is attention explanation? The evidence beside the attention weights, computed from the loaded model.

- value_weighted: what a head moves from each token, ‖α_ij · f(x_j)‖ (Kobayashi et al., 2020), every family;
- sinks: heads whose weight piles on end or punctuation tokens but moves little from them;
- attribution: gradient × input and integrated gradients (Sundararajan et al., 2017) of an output token's
  log-probability with respect to the source embeddings, through Captum;
- agreement: Spearman rank correlation between attribution and each kind of attention;
- minimal_pairs: two sentences that differ in one word, and which heads change most;
- report: one translation's attribution beside its attention (the page's and `explorer attribute`'s);
- alignment: cross-attention as word alignment, scored by alignment error rate (Och & Ney, 2003);
- head_alignment: every head's AER against a reference, and the project's reference for Multi30k test2016;
- ibm1: the reference aligner (IBM Model 1, both directions, symmetrised).

Everything comes back as typed frozen values with numpy arrays; nothing is kept on the model, which every
browser session shares. No streamlit here.
"""
