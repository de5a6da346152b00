"""Smoke tests of benchmarks/: every benchmark runs at a tiny size and prints its ratios.

Not timed pass/fail tests — speed goals are judged by `python -m benchmarks` on a quiet machine. What is
checked here: the reference model really computes the same function as explorer's, the analytic FLOP count
agrees with torch's own counter, each benchmark produces its rows and ratios, the GPU part says clearly
that it skipped, and the command line writes a markdown report that describes the machine.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from benchmarks import BENCHMARKS, load
from benchmarks.common import Options, Result, paired_ratio, percentile
from benchmarks.decoding import RecomputeScorer
from benchmarks.models import TorchTransformer, copy_weights, forward_flops, training_flops
from benchmarks.report import cpu_model, markdown_report
from explorer.config import ModelConfig
from explorer.decoding.search import beam_search
from explorer.inference import ModelScorer
from explorer.model import Transformer

REPO = Path(__file__).resolve().parents[2]
QUICK = Options(quick=True, threads=1, memory=False)
RATIO = re.compile(r"\d+\.\d\d×")


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models gain nothing from threads, and on a busy machine spare threads only wait; restore after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _config(**changes) -> ModelConfig:
    base = ModelConfig(
        vocab_size=60, d_model=32, n_heads=4, d_ff=48, n_encoder_layers=2, n_decoder_layers=3, dropout=0.0, max_len=64
    )
    return base.replace(**changes)


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    src = torch.randint(4, 60, (3, 7), generator=generator)
    tgt = torch.randint(4, 60, (3, 5), generator=generator)
    src[0, 5:] = 0  # padding, which the reference must mask like explorer does
    tgt[1, 3:] = 0
    return src, tgt


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_reference_model_computes_the_same_function(norm):
    config = _config(norm_position=norm)
    torch.manual_seed(0)
    ours = Transformer(config).eval()
    theirs = TorchTransformer(config).eval()
    src, tgt = _batch()
    with torch.no_grad():
        before = (ours(src, tgt).logits - theirs(src, tgt)).abs().max().item()
        copy_weights(ours, theirs)
        after = (ours(src, tgt).logits - theirs(src, tgt)).abs().max().item()
    assert before > 1e-2  # different random weights really differ…
    assert after < 1e-4  # …and the same weights give the same logits: a like-for-like comparison
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())


def test_flop_count_matches_torch_counter():
    config = _config(dropout=0.1)
    src, tgt = _batch()
    # torch's counter has no formula for the fused CPU attention kernel; the math backend spells it out.
    with sdpa_kernel(SDPBackend.MATH):
        for model in (Transformer(config).train(), TorchTransformer(config).train()):
            with FlopCounterMode(display=False) as counter:
                out = model(src, tgt)
            assert counter.get_total_flops() == forward_flops(config, 3, 7, 5)
            logits = out.logits if hasattr(out, "logits") else out
            with FlopCounterMode(display=False) as counter:
                logits.sum().backward()
            assert counter.get_total_flops() == training_flops(config, 3, 7, 5) - forward_flops(config, 3, 7, 5)


def test_recompute_scorer_agrees_with_the_cache():
    torch.manual_seed(1)
    config = _config(vocab_size=30)
    model = Transformer(config).eval()
    src = torch.randint(4, 30, (2, 6))
    with torch.inference_mode():
        encoded = model.encode(src)
        cached = beam_search(ModelScorer(model, model.start_decoding(encoded)), 2, 3, config.bos_id, config.eos_id, 9)
        recomputed = beam_search(RecomputeScorer(model, encoded), 2, 3, config.bos_id, config.eos_id, 9)
    for a, b in zip(cached, recomputed, strict=True):
        assert [h.tokens for h in a.hypotheses] == [h.tokens for h in b.hypotheses]
        assert [h.log_prob for h in a.hypotheses] == pytest.approx([h.log_prob for h in b.hypotheses], abs=1e-4)


def test_helpers():
    assert paired_ratio([2.0, 4.0, 9.0], [1.0, 1.0, 3.0]) == 3.0
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([0, 10], 95) == pytest.approx(9.5)
    report = markdown_report([Result("x", "X", skipped="no CUDA")], {"cpu": "Some CPU"}, "python -m benchmarks")
    assert "| cpu | Some CPU |" in report and "| X | skipped | no CUDA |" in report


@pytest.mark.parametrize("name", ["training", "attention", "decoding", "latency"])
def test_benchmark_runs_at_tiny_size_and_prints_ratios(name, capsys):
    result = load(name).run(QUICK)
    printed = capsys.readouterr().out
    assert result.skipped is None
    assert result.rows, "a benchmark must report something"
    ratios = [row for row in result.rows if RATIO.search(row.value)]
    assert ratios, f"{name} reported no ratio: {[r.value for r in result.rows]}"
    assert RATIO.search(printed), "ratios must be printed, not only returned"
    for row in ratios:
        assert float(RATIO.search(row.value).group(0)[:-1]) > 0
    if name == "decoding":
        same = {row.measure: row.value for row in result.rows if "identical outputs" in row.measure}
        assert len(same) == 2
        for value in same.values():  # the cache must not change what is found (allow one numerical near-tie)
            found, total = map(int, value.split("/"))
            assert total == 8 and found >= total - 1
    if name == "training":
        measures = " ".join(row.measure for row in result.rows)
        assert "explorer ÷ nn.Transformer" in measures and "matmul" in measures
        # The round count, not a Python object's repr (an H200 printed "median of <zip object …>").
        assert "median of 3 paired rounds" in printed and "<zip object" not in printed + " ".join(result.notes)


@pytest.mark.slow
def test_threads_benchmark_runs_the_entry_points_in_fresh_processes(capsys, multi30k_root):
    result = load("threads").run(Options(quick=True, memory=False))
    printed = capsys.readouterr().out
    assert result.skipped is None, result.skipped
    verdicts = [row for row in result.rows if "as shipped ÷ best" in row.measure]
    assert len(verdicts) == 3, [r.measure for r in result.rows]  # cli beam 4, cli greedy, app
    assert all(RATIO.fullmatch(row.value) for row in verdicts)
    for config in ("OpenMP default", "OMP_WAIT_POLICY=PASSIVE", "OMP_WAIT_POLICY=ACTIVE", "1 thread"):
        assert config in printed
    assert "n/a" not in " ".join(row.value for row in result.rows)


def test_gpu_benchmark_skips_clearly_without_cuda(capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the GPU benchmark would really run")
    result = load("gpu").run(QUICK)
    assert result.skipped and "CUDA is not available" in result.skipped
    assert "CUDA is not available" in capsys.readouterr().out


def test_command_line_writes_markdown_report(tmp_path):
    out = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--quick",
            "--threads",
            "1",
            "--only",
            "latency",
            "gpu",
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = out.read_text(encoding="utf-8")
    assert cpu_model() in text
    assert torch.__version__ in text
    assert re.search(r"\| date \| \d{4}-\d\d-\d\d", text)
    assert "| Latency, one sentence | translate + all attention (greedy): median |" in text
    assert RATIO.search(text)
    assert "peak memory, greedy + attention" in text and "MiB" in text  # the probe ran in its own process
    assert "GPU (CUDA, bf16)" in text
    assert "Summary" in done.stdout
    assert "| device | cpu |" in text  # no --device cuda: every benchmark ran on the CPU


def test_the_report_names_the_device_the_gpu_benchmark_was_asked_for(tmp_path):
    out = tmp_path / "RESULTS.md"
    command = [sys.executable, "-m", "benchmarks", "--quick", "--only", "gpu", "--device", "cuda", "--no-memory"]
    done = subprocess.run([*command, "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    device_row = next(line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("| device |"))
    if torch.cuda.is_available():
        assert torch.cuda.get_device_name(0) in device_row
    else:
        assert "CUDA was asked for and is not available" in device_row


def test_every_benchmark_is_listed():
    """Every module of benchmarks/ that is a benchmark (a `run` and a `TITLE`) is in the run order, and every name
    listed loads one: a new benchmark left out of `python -m benchmarks` fails here."""
    import importlib

    found = set()
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        module = importlib.import_module(f"benchmarks.{path.stem}")
        if callable(getattr(module, "run", None)) and getattr(module, "TITLE", None):
            found.add(module.__name__)
    assert found == set(BENCHMARKS.values()), found ^ set(BENCHMARKS.values())
    for name in BENCHMARKS:
        module = load(name)
        assert callable(module.run) and module.TITLE


def test_gpu_training_probe_runs_every_lever_and_restores_the_kernels(monkeypatch, capsys):
    """The GPU training probe (run on a GPU) at a tiny size on the CPU: a row per lever, and the kernel
    choice it overrides per row comes back as the engine had it."""
    import explorer.model.attention as attention
    from benchmarks.probes import profile_gpu_training as probe

    before = list(attention.CUDA_SDPA_BACKENDS)
    assert SDPBackend.CUDNN_ATTENTION not in before, "cuDNN builds a plan per new shape; the engine leaves it out"
    probe.main(["--cpu-smoke", "--no-compile", "--steps", "2", "--warmup", "1", "--budget", "400"])
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("| ") and "variant" not in line]
    assert len(table) == 7, out
    assert all(float(row.split("|")[2].replace(",", "")) > 0 for row in table), "every lever gives a rate"
    assert before == attention.CUDA_SDPA_BACKENDS, "the probe puts the engine's kernel choice back"
    # The engine's kernels serve both kinds of call it makes: is_causal (no mask) and a padding mask.
    q = torch.randn(2, 4, 5, 8)
    with sdpa_kernel(before):
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(2, 1, 1, 5, dtype=torch.bool))


def test_the_browser_benchmark_knows_every_pages_main_figure():
    """Every page in the app's navigation has its main figure named for the browser benchmark (a page without
    one stopped the whole run with a KeyError)."""
    from benchmarks.browser_pages import PAGE_FIGURES
    from ui.pages import PAGES

    assert {spec.url_path for spec in PAGES} <= set(PAGE_FIGURES), {s.url_path for s in PAGES} - set(PAGE_FIGURES)
