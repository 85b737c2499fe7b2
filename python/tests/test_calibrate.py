"""python3 -m dcpsched.calibrate on tiny layer shapes, on the CPU, without a
GPU: the real torch layer runs (math attention, float32), and a synthetic
timer (conftest.SyntheticTimer) stands in for CUDA events, so the profile's
tables and validation figures are known in advance."""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, SyntheticTimer

torch = pytest.importorskip("torch")

from dcpsched import calibrate  # noqa: E402
from dcpsched.cost_profile import parse_profile  # noqa: E402
from dcpsched.layer import _RingPlan, rank_tokens, zigzag_chunk  # noqa: E402

TINY = ["--hidden", "32", "--q-heads", "4", "--kv-heads", "2", "--head-dim", "8", "--ffn", "64",
        "--min-length", "8", "--max-length", "128", "--min-tokens", "8", "--max-tokens", "256",
        "--token-budget", "256", "--pack-budgets", "64,128", "--packs-per-budget", "3",
        "--device", "cpu"]
CAUSAL, FULL, LIN, PACK_FACTOR = 1e-9, 3e-9, 2e-6, 1.25


def power_laws(what):
    """Power laws, which log-log interpolation reproduces exactly; packs run 25% slow."""
    if what.kind == "attention":
        return what.batch * (CAUSAL if what.mask == "causal" else FULL) * what.length ** 2
    if what.kind == "non_attention":
        return LIN * what.tokens
    assert what.kind == "layer"
    exact = LIN * sum(length for length, _ in what.samples) + sum(
        CAUSAL * length ** 2 for length, _ in what.samples)
    return PACK_FACTOR * exact


def run_calibrate(tmp_path, capsys, formula=power_laws, extra=()):
    output = tmp_path / "profile.json"
    timer = SyntheticTimer(formula)
    assert calibrate.main([*TINY, "--output", str(output), *extra], timer=timer) == 0
    return json.loads(output.read_text()), timer, capsys.readouterr().out


def test_the_profile_has_the_schema_and_the_synthetic_tables(tmp_path, capsys):
    doc, timer, out = run_calibrate(tmp_path, capsys)
    parse_profile(doc)
    assert doc["schema"] == "dcpsched.cost_profile.v1"
    assert doc["interpolation"] == "log-log" and doc["passes"] == "forward+backward"
    assert doc["model"] == {"name": "custom-h32-q4-kv2-d8-f64", "hidden": 32, "q_heads": 4,
                            "kv_heads": 2, "head_dim": 8, "ffn": 64, "tensor_parallel": 1}
    lengths = [8, 16, 32, 64, 128]
    assert doc["attention"]["causal"]["lengths"] == lengths
    assert doc["attention"]["causal"]["seconds"] == pytest.approx(
        [CAUSAL * x ** 2 for x in lengths], rel=1e-12)
    assert doc["attention"]["full"]["seconds"] == pytest.approx(
        [FULL * x ** 2 for x in lengths], rel=1e-12)
    assert doc["non_attention"]["tokens"] == [8, 16, 32, 64, 128, 256]
    assert doc["non_attention"]["seconds"] == pytest.approx(
        [LIN * t for t in doc["non_attention"]["tokens"]], rel=1e-12)
    assert doc["provenance"]["raised_points"] == []
    assert doc["device"]["name"].startswith("cpu")
    # Attention batches fill the token budget: 256 // L sequences.
    batches = {w.length: w.batch for w in timer.calls if w.kind == "attention"}
    assert batches == {8: 32, 16: 16, 32: 8, 64: 4, 128: 2}
    assert "real figures need CUDA" in out


def test_the_validation_error_is_what_the_formula_implies(tmp_path, capsys):
    doc, timer, out = run_calibrate(tmp_path, capsys)
    packs = [w for w in timer.calls if w.kind == "layer"]
    assert len(packs) == doc["validation"]["cases"] == 6
    assert all(c == 1 for w in packs for _, c in w.samples)
    assert {sum(l for l, _ in w.samples) for w in packs} >= {64, 128}
    # Measured = 1.25 x what the model predicts exactly: every error is 0.25 / 1.25.
    implied = round((PACK_FACTOR - 1) / PACK_FACTOR, 6)
    assert doc["validation"]["max_relative_error"] == implied
    assert doc["validation"]["mean_relative_error"] == implied
    assert "(-20.0%)" in out
    assert f"max relative error {implied}" in out


def test_a_dip_in_a_measured_table_is_raised_and_recorded(tmp_path, capsys):
    def dip(what):
        time = power_laws(what)
        return time / 4 if what.kind == "non_attention" and what.tokens == 32 else time
    doc, _, out = run_calibrate(tmp_path, capsys, dip)
    assert doc["non_attention"]["seconds"][2] == doc["non_attention"]["seconds"][1]
    assert doc["provenance"]["raised_points"] == [
        {"table": "non_attention", "at": 32, "measured": pytest.approx(LIN * 32 / 4),
         "raised_to": pytest.approx(LIN * 16)}]
    assert "raised non_attention at 32" in out


def test_the_cpu_pipeline_runs_with_the_wall_clock(tmp_path, capsys):
    output = tmp_path / "wall.json"
    args = [*TINY, "--max-length", "32", "--max-tokens", "64", "--pack-budgets", "64",
            "--packs-per-budget", "2", "--output", str(output)]
    assert calibrate.main(args) == 0
    doc = json.loads(output.read_text())
    parse_profile(doc)
    assert doc["validation"]["cases"] == 2
    assert doc["software"]["varlen_kernel"].startswith(("per-segment loop",
                                                         "torch.nn.attention"))


def test_without_cuda_the_cli_says_it_needs_cuda_and_exits_2(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run([sys.executable, "-m", "dcpsched.calibrate", "--model", "llama3-8b",
                             "--output", str(tmp_path / "p.json")], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "no CUDA device" in result.stderr and "real figures" in result.stderr
    assert not (tmp_path / "p.json").exists()


def test_the_command_line_needs_a_whole_shape(capsys):
    with pytest.raises(SystemExit) as raised:
        calibrate.main(["--hidden", "32", "--output", "x.json"])
    assert raised.value.code == 2
    assert "--model NAME or all of" in capsys.readouterr().err


def test_random_packs_fill_their_budgets_and_end_with_one_whole_sequence():
    packs = calibrate.random_packs([4096, 16384, 65536], 4, 64, seed=1)
    assert len(packs) == 12
    for i, budget in enumerate([4096, 16384, 65536]):
        group = packs[4 * i:4 * i + 4]
        assert group[-1] == [budget]
        assert all(sum(p) <= budget and min(p) >= 64 for p in group)
    assert packs == calibrate.random_packs([4096, 16384, 65536], 4, 64, seed=1)


@pytest.mark.parametrize("length, cp", [(100, 2), (4096, 4), (1000, 8), (17, 1)])
def test_a_ranks_ring_blocks_are_2c_minus_1_full_and_2_causal(length, cp):
    plan = _RingPlan([(length, cp)], torch.device("cpu"))
    full_blocks = sum(len(call.cu) - 1 for call in plan.full_calls)
    causal_blocks = len(plan.causal_cu) - 1
    if cp == 1:
        assert (full_blocks, causal_blocks, plan.tokens) == (0, 1, length)
    else:
        chunk = zigzag_chunk(length, cp)
        assert (full_blocks, causal_blocks) == (2 * cp - 1, 2)
        assert plan.tokens == rank_tokens([(length, cp)]) == 2 * chunk
        for call in plan.full_calls:
            assert len(call.q_rows) == len(call.k_rows) == call.cu[-1].item()
            assert call.max_len == chunk
