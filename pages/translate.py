"""Translate & attention: translate a sentence (or a file of them) and look at every layer and head of the
three attention families the paper's Transformer uses (Section 3.2.3)."""

from __future__ import annotations

import streamlit as st

from explorer.analysis.heads import head_summary
from explorer.analysis.words import average_heads
from explorer.figures.attention import attention_grid, attention_heatmap, head_view
from explorer.inference import Translation
from ui.attention_view import (MAX_UPLOAD_BYTES, MAX_UPLOAD_LINES, UNITS, attention_view, head_title,
                               result_rows, rows_to_delimited)
from ui.figures import file_stem, show_figure
from ui.state import require_model, translate_for
from ui.translate_view import (PERSIST, family_picker, number_picker, read_upload, sentence_input, show_translation,
                               translate_batch, warn_truncated)
from ui.frame import ensure_frame
from ui.urlstate import sync_to_url, url_default

ensure_frame()

INPUTS = {"type": "Type a sentence", "file": "Upload a text file"}
MODES = {"head": "One head", "grid": "All layers and heads", "mean": "Mean over heads", "lines": "Head view"}
BEAM_SIZES = list(range(1, 11))
ALPHA = 0.6  # Section 6.1: beam size 4, length penalty alpha = 0.6

selection, checkpoint = require_model()
config = checkpoint.config

st.title("Translate & attention")
st.markdown(
    "Type a sentence and the model translates it; then look inside. Every layer has several attention "
    "**heads**, each a matrix of weights: row *i* says how much the token at position *i* (the **query**) "
    "looks at every other token (the **keys**); each row sums to 1 (Eq. 1, softmax(QKᵀ/√dₖ)V)."
)

url_default("input", "type", allowed=tuple(INPUTS))
url_default("beam", 1, int, allowed=BEAM_SIZES)
left, right = st.columns((3, 2), gap="large")
source = left.segmented_control("Input", tuple(INPUTS), key="input", required=True, format_func=INPUTS.get,
                                persist_state=PERSIST)
beam = right.select_slider("Beam size", BEAM_SIZES, key="beam", persist_state=PERSIST,
                           help=f"1 is greedy decoding. The paper uses beam search with 4 beams and length "
                                f"penalty \u03b1 = {ALPHA} (Section 6.1).")
options = dict(beam_size=beam, alpha=ALPHA)
how = "greedy decoding" if beam == 1 else f"beam search, {beam} beams, \u03b1 = {ALPHA}"

if source == "type":
    sentence = sentence_input("sentence", checkpoint.metadata)
    sync_to_url("input", "beam", "sentence")
    if not sentence:
        st.info("Type a sentence above, or click an example, to see its translation and its attention.",
                icon=":material/keyboard:")
        st.stop()
else:
    sync_to_url("input", "beam")
    upload = st.file_uploader("A text file, one sentence per line (UTF-8)", key="upload")
    st.caption(f"At most {MAX_UPLOAD_LINES} sentences and {MAX_UPLOAD_BYTES // 1024} KB. Blank lines are "
               f"skipped; sentences longer than the model reads ({config.max_len} tokens) are cut.")
    if upload is None:
        st.info("Upload a .txt file to translate it as a batch.", icon=":material/upload_file:")
        st.stop()
    sentences, problem = read_upload(upload.getvalue(), upload.name)
    if sentences is None:
        st.error(f"Not translated: {problem}", icon=":material/error:")
        st.stop()
    batch = translate_batch(selection, sentences, with_attention=False, **options)
    warn_truncated(batch, config.max_len)
    rows = result_rows(batch)
    st.dataframe(rows, hide_index=True, width="stretch", height=min(420, 38 * len(rows) + 40),
                 column_config={"#": st.column_config.NumberColumn(width="small")})
    stem = file_stem(upload.name.rsplit(".", 1)[0] + "-translated")
    csv_col, tsv_col, _ = st.columns((1, 1, 3))
    csv_col.download_button("Download CSV", rows_to_delimited(rows, ","), file_name=f"{stem}.csv",
                            mime="text/csv", icon=":material/download:", on_click="ignore", width="stretch")
    tsv_col.download_button("Download TSV", rows_to_delimited(rows, "\t"), file_name=f"{stem}.tsv",
                            mime="text/tab-separated-values", icon=":material/download:", on_click="ignore",
                            width="stretch")
    if st.session_state.get("row", 0) >= len(sentences):
        st.session_state["row"] = 0
    pick = st.selectbox("Sentence to look at", range(len(sentences)), key="row",
                        format_func=lambda i: f"{i + 1}. {sentences[i][:100]}")
    sentence = sentences[pick]

translation = translate_for(selection, [sentence], with_attention=True, **options)[0]
show_translation(translation, config.max_len, how=how)


@st.fragment
def attention_section(translation: Translation) -> None:
    """Pickers and the chosen view; a fragment, so changing a head reruns only this part."""
    st.subheader("Attention")
    url_default("mode", "head", allowed=tuple(MODES))
    url_default("units", "pieces", allowed=UNITS)
    family = family_picker("family")
    left, right = st.columns((5, 2), gap="large")
    mode = left.segmented_control("View", tuple(MODES), key="mode", required=True, format_func=MODES.get,
                                  persist_state=PERSIST)
    units = right.segmented_control(
        "Tokens", UNITS, key="units", required=True, format_func=str.capitalize, persist_state=PERSIST,
        help="Sub-word pieces as the model reads them, or whole words: a word's attention is summed over "
             "its pieces on the key side and averaged over them on the query side.")
    view = attention_view(translation, family, units)
    summary = head_summary(view.weights)

    if mode == "grid":
        sync_to_url("family", "units", "mode")
        st.caption(f"Every head of every layer ({view.n_layers} \u00d7 {view.n_heads}), all on the same colour "
                   "scale 0\u20131. Hover a cell for the exact weight.")
        show_figure(attention_grid(view.weights, view.query_labels, view.key_labels,
                                   title=f"{view.title}: all layers and heads"),
                    f"{view.title} all heads", key="translate_grid")
        with st.expander("What each head does", expanded=True):
            st.dataframe([{"Layer": s["layer"], "Head": s["head"], "Pattern": s["pattern"],
                           "Entropy (nats)": round(s["entropy"], 2), "Caption": s["caption"]} for s in summary],
                         hide_index=True, width="stretch")
        return

    left, right = st.columns((1, 2), gap="large")
    with left:
        # The top layer first: there cross-attention aligns words most clearly (see the model card).
        layer = number_picker("Layer", "layer", view.n_layers, default=view.n_layers)
    zmax = 1.0
    if mode in ("head", "mean"):
        url_default("stretch", False, lambda raw: raw == "True", allowed=(True, False))
        if st.toggle("Stretch the colours to this view's largest weight", key="stretch", persist_state=PERSIST,
                     help="Off: 0 to 1, the same scale for every head. On: 0 to the largest weight shown, "
                          "which brings out the structure of heads that spread their attention."):
            zmax = None
        sync_to_url("stretch")
    if mode == "head":
        with right:
            head = number_picker("Head", "head", view.n_heads)
        sync_to_url("family", "units", "mode", "layer", "head")
        info = summary[(layer - 1) * view.n_heads + head - 1]
        st.markdown(f"**{info['caption']}**")
        show_figure(attention_heatmap(view.weights[layer - 1, head - 1], view.query_labels, view.key_labels,
                                      title=head_title(family, layer, head), x_title=view.key_title,
                                      y_title=view.query_title, zmax=zmax, show_values=len(view.key_labels) <= 12),
                    head_title(family, layer, head), key="translate_head")
        st.caption(f"Entropy {info['entropy']:.2f} nats \u00b7 mean distance {info['mean_distance']:.1f} tokens "
                   f"\u00b7 mean peak weight {info['max_weight']:.2f}. Rows are queries, columns are keys.")
    elif mode == "mean":
        sync_to_url("family", "units", "mode", "layer")
        show_figure(attention_heatmap(average_heads(view.weights)[layer - 1], view.query_labels, view.key_labels,
                                      title=head_title(family, layer, None), x_title=view.key_title,
                                      y_title=view.query_title, zmax=zmax),
                    head_title(family, layer, None), key="translate_mean")
        st.caption(f"The mean of the {view.n_heads} heads of layer {layer}; each row is still a distribution.")
    else:
        all_heads = list(range(1, view.n_heads + 1))
        url_default("heads", all_heads, lambda raw: [int(h) for h in raw.split(",") if h.strip()])
        st.session_state["heads"] = [h for h in st.session_state["heads"] if h in all_heads]
        with right:
            heads = st.pills("Heads", all_heads, selection_mode="multi", key="heads", persist_state=PERSIST,
                             format_func=lambda h: f"Head {h}", help="Toggle heads on and off.")
        sync_to_url("family", "units", "mode", "layer")
        st.query_params["heads"] = ",".join(map(str, sorted(heads)))
        if not heads:
            st.info("Switch on at least one head above.", icon=":material/toggle_on:")
            return
        show_figure(head_view(view.weights[layer - 1], view.query_labels, view.key_labels,
                              heads=[h - 1 for h in sorted(heads)], title=f"{view.title} \u00b7 layer {layer}",
                              query_title=view.query_title, key_title=view.key_title),
                    f"{view.title} layer {layer} head view", key="translate_lines")
        st.caption("Lines join each query (left) to the keys it attends to (right); thicker and more opaque "
                   "means more weight. Hover a token on the left for its strongest keys; click a head in the "
                   "legend to hide it.")


attention_section(translation)
