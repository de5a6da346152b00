"""The engine on a CUDA GPU: the same translations and attention maps as on the CPU, head masks, training in
bf16 autocast, and the GPU benchmarks. Skipped, with the reason, on a machine without CUDA (CI's); run on a
GPU machine with `python -m pytest tests/engine/test_cuda.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.checkpoint import load_checkpoint
from explorer.inference import translate
from explorer.model.head_mask import HeadMask
from tests.engine.test_training import _setup, _train_config

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "multi30k-en-de"
SENTENCES = json.loads((SHIPPED / "examples.json").read_text())["en"] + [
    "A little girl in a pink dress is climbing the stairs.",
    "Three men are working on a roof under a blue sky.",
    "A dog jumps into the lake to catch a stick.",
    "",
]


@pytest.fixture(scope="module", autouse=True)
def _exact_float32():
    # TF32 would change float32 products in their last bits, and with them a close argmax.
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


@pytest.fixture(scope="module")
def models():
    return load_checkpoint(SHIPPED), load_checkpoint(SHIPPED, device="cuda")


def test_loaded_on_the_gpu(models):
    _, gpu = models
    assert {p.device.type for p in gpu.model.parameters()} == {"cuda"}


@pytest.mark.parametrize("beam", [1, 4])
def test_translations_match_the_cpu(models, beam):
    cpu, gpu = models
    on_cpu = translate(cpu.model, cpu.tokenizer, SENTENCES, beam_size=beam, alpha=1.2)
    on_gpu = translate(gpu.model, gpu.tokenizer, SENTENCES, beam_size=beam, alpha=1.2)
    assert [t.output for t in on_gpu] == [t.output for t in on_cpu]
    for a, b in zip(on_cpu, on_gpu, strict=True):
        assert b.score == pytest.approx(a.score, abs=1e-3)


def test_one_sentence_paths_match_the_cpu(models):
    cpu, gpu = models
    for beam in (1, 4):
        a = translate(cpu.model, cpu.tokenizer, SENTENCES[:1], beam_size=beam)[0]
        b = translate(gpu.model, gpu.tokenizer, SENTENCES[:1], beam_size=beam)[0]
        assert b.output == a.output


def test_attention_maps_match_the_cpu_and_come_back_as_arrays(models):
    cpu, gpu = models
    a = translate(cpu.model, cpu.tokenizer, SENTENCES[:3], with_attention=True)
    b = translate(gpu.model, gpu.tokenizer, SENTENCES[:3], with_attention=True)
    for x, y in zip(a, b, strict=True):
        for family in ("encoder_self", "decoder_self", "cross"):
            mine, theirs = np.asarray(getattr(y.attention, family)), np.asarray(getattr(x.attention, family))
            assert mine.shape == theirs.shape
            np.testing.assert_allclose(mine, theirs, atol=2e-4)
            np.testing.assert_allclose(mine.sum(-1), 1.0, atol=1e-4)


def test_a_head_mask_works_on_the_gpu(models):
    cpu, gpu = models
    mask_cpu = HeadMask.from_names(["cross.0.0", "cross.0.1", "enc.0.2"], cpu.config)
    mask_gpu = HeadMask.from_names(["cross.0.0", "cross.0.1", "enc.0.2"], gpu.config)
    a = translate(cpu.model, cpu.tokenizer, SENTENCES[:3], with_attention=True, head_mask=mask_cpu)
    b = translate(gpu.model, gpu.tokenizer, SENTENCES[:3], with_attention=True, head_mask=mask_gpu)
    assert [t.output for t in b] == [t.output for t in a]
    np.testing.assert_allclose(np.asarray(b[0].attention.cross), np.asarray(a[0].attention.cross), atol=2e-4)


def test_adam_is_fused_on_the_gpu_and_batches_copy_from_pinned_memory():
    """Adam is fused on CUDA (a `base` step on an H200: 48.5 ms against 90.3 ms with torch's default update),
    and training batches go to the GPU from page-locked memory, so the copy does not make the host wait."""
    from explorer.data.batching import collate
    from explorer.training.schedule import make_optimizer

    gpu = torch.nn.Linear(4, 4).cuda()
    assert make_optimizer(gpu.parameters()).defaults["fused"] is True
    assert not make_optimizer(torch.nn.Linear(4, 4).parameters()).defaults["fused"]
    batch = collate([[5, 6, 3]], [[7, 8]]).pinned()
    assert batch.src.is_pinned() and batch.tgt_in.is_pinned() and batch.tgt_out.is_pinned()
    on_gpu = batch.to("cuda")
    assert torch.equal(on_gpu.tgt_out.cpu(), batch.tgt_out)


def test_training_in_bf16_autocast_follows_the_cpu_run_and_saves(tmp_path):
    train, val, tokenizer, config = _setup()
    on_cpu = trainer_for(config, tokenizer, train, val, None, "cpu").run().history["loss"]
    trainer = trainer_for(config, tokenizer, train, val, tmp_path, "cuda")
    result = trainer.run()
    losses = result.history["loss"]
    assert result.step == 200 and np.isfinite(losses).all()
    # Same seed, same batches: bf16 autocast may round differently, but it must learn as fast as float32 does.
    assert np.mean(losses[-20:]) < 0.95 * np.mean(losses[:5]), "the loss must fall on the GPU"
    assert np.mean(losses[-20:]) == pytest.approx(np.mean(on_cpu[-20:]), rel=0.1)
    back = load_checkpoint(tmp_path / "latest")  # saved from the GPU, loaded on the CPU
    assert {p.device.type for p in back.model.parameters()} == {"cpu"}
    trained = {name: tensor.detach().cpu() for name, tensor in trainer.model.state_dict().items()}
    for name, tensor in back.model.state_dict().items():
        torch.testing.assert_close(tensor, trained[name].float(), msg=f"{name} changed between the GPU and the file")
    translate(back.model, back.tokenizer, ["a b c d"])  # and the loaded model runs on the CPU


def trainer_for(config, tokenizer, train, val, out, device):
    from explorer.training.trainer import Trainer

    overrides = dict(steps=200, device=device, save_every=100, eval_every=100, bleu_sentences=20, lr_scale=1.0)
    return Trainer(config, _train_config(**overrides), tokenizer, train, val, out)


def test_gpu_benchmarks_run_and_report_rows(tmp_path):
    out = tmp_path / "gpu.md"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "gpu", "--device", "cuda", "--no-memory"]
        + ["--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = out.read_text()
    assert "not available" not in report and "tokens/s" in report
