"""`explorer import`: a Marian folder becomes a checkpoint the normal loader reads (safetensors, or a `.bin` through
`torch.load(weights_only=True)`); unsupported models are refused by name before any tensor is read; a hub id
without network says so in one sentence; and a round trip ours -> Marian -> ours is bit-identical."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.cli import main
from explorer.inference import translate
from explorer.marian import importer
from explorer.marian.importer import CARD_FILE, ImportFailure, export_marian, import_marian
from explorer.tokenizer import Tokenizer
from tests.fixture_models import COMMITTED
from tests.marian.models import build_marian, marian_tokenizer, sentences, transformers


@pytest.fixture(scope="module")
def marian_folder(tmp_path_factory, one_torch_thread) -> Path:
    return build_marian(tmp_path_factory.mktemp("marian") / "hf").path


def test_command_imports_a_folder_with_a_card(marian_folder, tmp_path, capsys):
    out = tmp_path / "opus-tiny"
    assert main(["import", str(marian_folder), "--out", str(out)]) == 0
    checkpoint = load_checkpoint(out)
    assert checkpoint.config.activation == "swish" and checkpoint.config.output_bias
    assert checkpoint.metadata["licence"] == "cc-by-4.0"
    assert checkpoint.metadata["decoding"] == {"beam": 4, "alpha": 1.0}
    card = (out / CARD_FILE).read_text(encoding="utf-8")
    assert "cc-by-4.0" in card and "2+2 layers" in card
    assert str(out) in capsys.readouterr().out


def test_pickled_weights_load_through_weights_only(marian_folder, tmp_path):
    pickled = build_marian(tmp_path / "bin", bin_weights=True).path
    assert not (pickled / "model.safetensors").exists()
    import_marian(pickled, tmp_path / "from-bin")
    import_marian(marian_folder, tmp_path / "from-safetensors")
    # The oldest uploads use torch's legacy (pre-zip) format, which cannot be memory-mapped: read all the same.
    state = torch.load(pickled / "pytorch_model.bin", weights_only=True)
    torch.save(state, pickled / "pytorch_model.bin", _use_new_zipfile_serialization=False)
    import_marian(pickled, tmp_path / "from-legacy-bin")
    b = load_checkpoint(tmp_path / "from-safetensors").model
    for imported in ("from-bin", "from-legacy-bin"):
        a = load_checkpoint(tmp_path / imported).model
        for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
            assert torch.equal(x, y), (imported, name)


class _Code:
    def __reduce__(self):
        return (print, ("pickled code ran",))


def test_pickled_code_is_refused(marian_folder, tmp_path, capsys):
    folder = tmp_path / "evil"
    folder.mkdir()
    for item in marian_folder.iterdir():
        if item.name != "model.safetensors":
            (folder / item.name).write_bytes(item.read_bytes())
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"weights": _Code()}))
    with pytest.raises(ImportFailure, match="plain tensors"):
        import_marian(folder, tmp_path / "out")
    assert "pickled code ran" not in capsys.readouterr().out


def _with_config(source: Path, folder: Path, **changes) -> Path:
    folder.mkdir()
    for item in source.iterdir():
        (folder / item.name).write_bytes(item.read_bytes())
    config = json.loads((source / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"normalize_before": True}, "normalize_before is set"),
        ({"position_embedding_type": "relative_key"}, "relative attention"),
        ({"activation_function": "tanh"}, "activation_function 'tanh'"),
        ({"scale_embedding": False}, "scale_embedding is false"),
        ({"model_type": "bart"}, "model_type is 'bart'"),
        ({"decoder_attention_heads": 4}, "encoder_attention_heads and decoder_attention_heads differ"),
        ({"d_model": 1_000_000}, "sizes do not make a model"),
    ],
)
def test_unsupported_configurations_are_refused_by_name_before_any_tensor(
    marian_folder, tmp_path, monkeypatch, changes, named
):
    def no_tensors(*args, **kwargs):
        raise AssertionError("a tensor was read for a model that is refused")

    monkeypatch.setattr(importer, "_read_tensors", no_tensors)
    monkeypatch.setattr(importer, "Transformer", no_tensors)
    with pytest.raises(ImportFailure, match=named):
        import_marian(_with_config(marian_folder, tmp_path / "variant", **changes), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_learned_positions_are_refused(marian_folder, tmp_path):
    from safetensors.torch import load_file, save_file

    folder = _with_config(marian_folder, tmp_path / "learned")
    tensors = load_file(str(folder / "model.safetensors"))
    tensors["model.encoder.embed_positions.weight"] = torch.randn(64, 16)
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(ImportFailure, match="positions are learned"):
        import_marian(folder, tmp_path / "out")


def test_weights_in_another_format_are_refused(marian_folder, tmp_path):
    folder = _with_config(marian_folder, tmp_path / "tf")
    (folder / "model.safetensors").rename(folder / "tf_model.h5")
    with pytest.raises(ImportFailure, match=r"neither model.safetensors nor pytorch_model.bin \(found tf_model.h5"):
        import_marian(folder, tmp_path / "out")


def test_hub_id_offline_says_so_in_one_sentence(tmp_path, monkeypatch, capsys):
    import huggingface_hub

    def offline(*args, **kwargs):
        raise ConnectionError("Failed to resolve 'huggingface.co'")

    monkeypatch.setattr(huggingface_hub, "list_repo_files", offline)
    assert main(["import", "Helsinki-NLP/opus-mt-en-de", "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "offline" in error and "explorer import FOLDER --out DIR" in error


def test_round_trip_ours_to_marian_to_ours_is_bit_identical(tmp_path):
    ours = load_checkpoint(COMMITTED / "reverse-fixture")
    marian = export_marian(ours, tmp_path / "hf")
    # transformers reads the export and computes our logits (its residual stream permuted to its position table)
    model = transformers.MarianMTModel.from_pretrained(str(marian)).eval()
    src = torch.tensor([ours.tokenizer.encode("a b c d") + [ours.config.eos_id]])
    tgt = torch.tensor([[ours.config.bos_id, 5, 6, 7]])
    with torch.no_grad():
        assert (model(input_ids=src, decoder_input_ids=tgt).logits - ours.model(src, tgt).logits).abs().max() < 1e-5
    assert marian_tokenizer(marian)("a b c d")["input_ids"] == src[0].tolist()
    back = load_checkpoint(import_marian(marian, tmp_path / "back"))
    assert back.config == ours.config
    assert isinstance(back.tokenizer, Tokenizer) and back.tokenizer.to_bytes() == ours.tokenizer.to_bytes()
    for (name, mine), (_, theirs) in zip(back.model.state_dict().items(), ours.model.state_dict().items(), strict=True):
        assert torch.equal(mine, theirs), name
    texts = sentences(20, seed=2)
    assert [t.output_ids for t in translate(back.model, back.tokenizer, texts, beam_size=2)] == [
        t.output_ids for t in translate(ours.model, ours.tokenizer, texts, beam_size=2)
    ]


def test_a_vocabulary_file_larger_than_a_config_is_read(tmp_path, one_torch_thread):
    """opus-mt-en-de's vocab.json is about 1.5 MB (58,101 pieces), more than a config.json may be: it imports."""
    built = build_marian(tmp_path / "hf", seed=6)
    vocab = json.loads((built.path / "vocab.json").read_text(encoding="utf-8"))
    (built.path / "vocab.json").write_text(json.dumps(vocab, indent=30_000), encoding="utf-8")
    assert (built.path / "vocab.json").stat().st_size > 1024 * 1024
    ck = load_checkpoint(import_marian(built.path, tmp_path / "big-vocab"))
    assert ck.tokenizer.source_vocab == list(vocab)


def test_the_readme_import_path_parses():
    """The README's path for a user with network access: each `explorer` line is a command the parser accepts."""
    import re
    import shlex

    from explorer.cli import build_parser

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Real translators: OPUS-MT models\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block
    lines = [line for line in block.group(1).replace("\\\n", " ").splitlines() if line.strip()]
    commands = [shlex.split(line.split("|")[-1], comments=True) for line in lines]
    commands = [words[1:] for words in commands if words and words[0] == "explorer"]
    assert ["import", "Helsinki-NLP/opus-mt-ko-en", "--out", "checkpoints/opus-mt-ko-en"] in commands
    for words in commands:
        build_parser().parse_args(words)  # a wrong flag exits with status 2
