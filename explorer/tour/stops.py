"""The ten stops of the guided tour, in the order of the paper.

Each stop names the paper's section, its formula (LaTeX, where the paper has one) and a short text. The
English text is the catalogue msgid: the page shows it through `ui.i18n.t`, Korean comes from tour.po. Which
app page shows a stop in full is the app's business (ui/tour/links.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stop:
    number: int  # 1-based, as in the URL (?stop=3)
    key: str  # stable name, used for widget keys and file names
    title: str
    section: str  # where in the paper
    text: str  # 3-6 sentences
    formulas: tuple[str, ...] = ()  # LaTeX


STOPS: tuple[Stop, ...] = (
    Stop(
        1,
        "architecture",
        "Figure 1, live",
        "Section 3.1, Figure 1",
        "The Transformer is an encoder and a decoder, each a stack of N identical layers. "
        "An encoder layer has two sub-layers: self-attention and a feed-forward network. "
        "A decoder layer adds a third: attention over the encoder's output. "
        "Every sub-layer is wrapped in a residual connection followed by layer normalization. "
        "Click a block to see the tensor that flows there for this sentence.",
        (r"\mathrm{LayerNorm}(x + \mathrm{Sublayer}(x))",),
    ),
    Stop(
        2,
        "scaled_dot_product",
        "Scaled dot-product attention",
        "Section 3.2.1, Eq. 1, Figure 2 (left)",
        "Each query is compared with every key by a dot product. "
        "The scores are divided by the square root of d_k and a softmax turns each row into weights that sum to one. "
        "The output is the weighted sum of the values. "
        "Without the division the dot products grow with d_k and the softmax saturates: one weight takes almost "
        "everything and the gradients vanish. "
        "Footnote 4: if the components of q and k are independent, with mean 0 and variance 1, their dot product "
        "has mean 0 and variance d_k.",
        (
            r"\begin{aligned}&\mathrm{Attention}(Q, K, V) \\ "
            r"&\quad = \mathrm{softmax}\!\left(\frac{QK^{\mathsf{T}}}{\sqrt{d_k}}\right) V\end{aligned}",
            # Footnote 4's assumption stays beside its result (the text adds that the components are independent).
            r"\begin{aligned}&\mathrm{E}[q_i] = \mathrm{E}[k_i] = 0, \\ &\mathrm{Var}[q_i] = \mathrm{Var}[k_i] = 1 "
            r"\\ &\Rightarrow \mathrm{Var}\!\left(\textstyle\sum_{i=1}^{d_k} q_i k_i\right) = d_k\end{aligned}",
        ),
    ),
    Stop(
        3,
        "multi_head",
        "Multi-head attention and its three uses",
        "Section 3.2.2, 3.2.3, Figure 2 (right)",
        "Instead of one attention, the model runs h heads in parallel, each with its own projections of Q, K and V. "
        "Their outputs are concatenated and projected again. "
        "The Transformer uses attention in three places: encoder self-attention, masked decoder self-attention and "
        "encoder-decoder attention. "
        "The mask stops a decoder position from looking at later positions.",
        (
            r"\begin{aligned}&\mathrm{MultiHead}(Q, K, V) \\ &\quad = \mathrm{Concat}(\mathrm{head}_1, \dots, "
            r"\mathrm{head}_h) W^O\end{aligned}",
            r"\begin{aligned}&\mathrm{head}_i \\ &\quad = \mathrm{Attention}(Q W_i^Q, K W_i^K, V W_i^V)"
            r"\end{aligned}",
        ),
    ),
    Stop(
        4,
        "ffn_embeddings",
        "Feed-forward network and embeddings",
        "Sections 3.3 and 3.4, Eq. 2",
        "After attention, every position goes through the same two-layer network with a ReLU in between. "
        "The inner layer is wider (d_ff) and the ReLU sets many of its units to zero. "
        "Tokens become vectors through an embedding matrix, multiplied by the square root of d_model. "
        "The same matrix is shared by both embeddings and the output projection before the softmax.",
        (
            r"\begin{aligned}&\mathrm{FFN}(x) \\ &\quad = \max(0, x W_1 + b_1) W_2 + b_2\end{aligned}",
            r"\begin{aligned}&x = E[\mathrm{token}] \cdot \sqrt{d_{\mathrm{model}}} \\ "
            r"&\quad + PE(\mathrm{pos})\end{aligned}",
        ),
    ),
    Stop(
        5,
        "positional",
        "Positional encoding",
        "Section 3.5",
        "Attention itself ignores word order, so a positional encoding is added to each embedding. "
        "Each pair of dimensions is a sine and a cosine with its own wavelength, from 2π to 10000·2π. "
        "For any fixed offset k, PE(pos+k) is a linear function of PE(pos): a rotation of each pair. "
        "The paper hoped this would let the model attend by relative position.",
        (
            r"PE_{(pos, 2i)} = \sin\!\left(pos / 10000^{2i/d_{\mathrm{model}}}\right)",
            r"PE_{(pos, 2i+1)} = \cos\!\left(pos / 10000^{2i/d_{\mathrm{model}}}\right)",
            r"PE(pos + k) = PE(pos)\, M_k",
        ),
    ),
    Stop(
        6,
        "why_self_attention",
        "Why self-attention (Table 1)",
        "Section 4, Table 1",
        "Table 1 compares a self-attention layer with recurrent and convolutional layers. "
        "Self-attention costs n²·d operations per layer, a recurrent layer n·d². "
        "Self-attention needs no sequential steps and connects any two positions in one step. "
        "It is cheaper than recurrence while n is smaller than d, which holds for most sentences.",
        (
            r"\begin{aligned}&\text{per layer, sequential, path:} \\ \text{Self-attn.}&: O(n^2 d),\ O(1),\ O(1) \\ "
            r"\text{RNN}&: O(n d^2),\ O(n),\ O(n) \\ \text{CNN}&: O(k n d^2),\ O(1),\ O(\log_k n)\end{aligned}",
        ),
    ),
    Stop(
        7,
        "training",
        "Training: schedule and label smoothing",
        "Section 5.3, 5.4, Eq. 3",
        "The learning rate rises linearly for warmup_steps steps and then decays with the inverse square root of "
        "the step. "
        "Label smoothing trains the model towards a target that keeps ε_ls of the probability for other words "
        "(the paper: ε_ls = 0.1). "
        "The paper notes that this hurts perplexity, because the model learns to be more unsure, but improves "
        "BLEU.",
        (
            r"\begin{aligned}&lrate = d_{\mathrm{model}}^{-0.5} \cdot \min\bigl(step^{-0.5}, \\ "
            r"&\qquad step \cdot warmup\_steps^{-1.5}\bigr)\end{aligned}",
            r"y_{\mathrm{smooth}} = (1 - \varepsilon_{ls})\, y + \varepsilon_{ls} / V",
        ),
    ),
    Stop(
        8,
        "beam_search",
        "Beam search and Table 2",
        "Section 6.1, Table 2",
        "To translate, the model keeps the best few partial translations (the beam) at every step. "
        "A length penalty with α stops the search from preferring short outputs. "
        "The paper uses a beam of 4 and α = 0.6. "
        "Our model is trained on Multi30k, short image captions, while the paper's scores are on WMT 2014 news: "
        "the BLEU numbers cannot be compared directly.",
        (r"lp(Y) = \frac{(5 + |Y|)^\alpha}{(5 + 1)^\alpha}", r"s(Y) = \frac{\log P(Y \mid X)}{lp(Y)}"),
    ),
    Stop(
        9,
        "variations",
        "Model variations (Table 3)",
        "Section 6.2, Table 3",
        "Table 3 changes one thing at a time in the base model and measures BLEU on the development set. "
        "Row (A) varies the number of heads while keeping the computation constant. "
        "Rows (B) and (C) change d_k, the depth and the width; (D) dropout and label smoothing; (E) learned "
        "positions. "
        "The parameter counts in the figure and the table are computed by the engine for each row's "
        "configuration.",
        (r"d_k = d_v = d_{\mathrm{model}} / h",),
    ),
    Stop(
        10,
        "beyond",
        "Beyond the paper: encoder-only and decoder-only",
        "After the paper",
        "The same attention with a different mask gives the two families that followed the paper. "
        "With only the padding mask, every token sees the whole sentence: this is an encoder like BERT. "
        "With only the causal mask, every token sees itself and what came before: this is a decoder like GPT. "
        "The figure runs the same encoder layer of this model on this sentence under both masks.",
        (
            r"\mathrm{softmax}\!\left(\frac{QK^{\mathsf{T}}}{\sqrt{d_k}} + M\right) V",
            r"M_{ij} = \begin{cases} -\infty & j > i \text{ (causal)} \\ 0 & \text{else} \end{cases}",
        ),
    ),
)

BY_KEY: dict[str, Stop] = {stop.key: stop for stop in STOPS}
assert [s.number for s in STOPS] == list(range(1, len(STOPS) + 1)), "stops are numbered 1..N in order"


def stop(number: int) -> Stop:
    if not 1 <= number <= len(STOPS):
        raise ValueError(f"stop must be in 1..{len(STOPS)}, got {number}")
    return STOPS[number - 1]
