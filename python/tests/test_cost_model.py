"""The cost model (dcpsched.cost_model), the profile format
(dcpsched.cost_profile), the shipped profiles and their converter
(scripts/make_cost_profiles.py). Standard library only: no torch, and no
compiled extension needed."""

import copy
import json
import math
import os
import subprocess
import sys

import pytest

from conftest import REPO
from dcpsched.cost_model import CostModel, interpolate, load_profile, validation_figures
from dcpsched.cost_profile import (ProfileError, Table, dump_profile, parse_profile,
                                   running_maximum, shipped_profile_names)

SHIPPED = ["h200-llama3-70b-tp8", "h200-llama3-70b-tp8-graphs", "h200-llama3-8b",
           "h200-llama3-8b-graphs"]


def document(**changes):
    """A small valid profile document: causal = 1e-9 L^2, full = 2e-9 L^2, lin = 1e-6 T."""
    doc = {
        "schema": "dcpsched.cost_profile.v1", "name": "test", "interpolation": "log-log",
        "attention": {"causal": {"lengths": [64, 128, 256], "seconds": [4.096e-6, 1.6384e-5,
                                                                       6.5536e-5]},
                      "full": {"lengths": [64, 256], "seconds": [8.192e-6, 1.31072e-4]}},
        "non_attention": {"tokens": [128, 1024], "seconds": [1e-3, 2e-3]},
        "communication": None,
    }
    doc.update(changes)
    return doc


def model(**changes):
    return CostModel(parse_profile(document(**changes)))


# --- interpolation rules ----------------------------------------------------

def test_a_measured_point_gives_its_own_time():
    m = model()
    assert m.causal(128) == 1.6384e-5
    assert m.non_attention(1024) == 2e-3


def test_between_points_the_interpolation_is_log_log():
    m = model()
    # lin: (128, 1e-3) to (1024, 2e-3): at T = 128 * 8^(1/3) = 256 the time is 1e-3 * 2^(1/3).
    assert m.non_attention(256) == pytest.approx(1e-3 * 2 ** (1 / 3), rel=1e-12)
    # A power law is interpolated exactly: full = 2e-9 L^2 between 64 and 256.
    assert m.full(100) == pytest.approx(2e-9 * 100 ** 2, rel=1e-12)
    assert m.causal(100) == pytest.approx(1e-9 * 100 ** 2, rel=1e-12)


def test_beyond_the_largest_point_attention_grows_as_the_square_and_the_rest_linearly():
    m = model()
    assert m.causal(1024) == pytest.approx(6.5536e-5 * 16, rel=1e-12)
    assert m.full(512) == pytest.approx(1.31072e-4 * 4, rel=1e-12)
    assert m.non_attention(4096) == pytest.approx(2e-3 * 4, rel=1e-12)


def test_below_the_smallest_point_a_table_gives_the_smallest_points_time():
    m = model()
    assert m.causal(1) == 4.096e-6
    assert m.causal(10.5) == 4.096e-6
    assert m.non_attention(1) == 1e-3


def test_a_rank_without_tokens_costs_nothing():
    m = model()
    assert m.non_attention(0) == 0.0
    assert m.rank_seconds([]) == 0.0
    assert m.microbatch_seconds([[], []]) == 0.0


def test_interpolate_works_on_a_single_point_table():
    table = Table((100,), (2.0,))
    assert interpolate(table, 50, 2.0) == 2.0
    assert interpolate(table, 100, 2.0) == 2.0
    assert interpolate(table, 200, 2.0) == 8.0


# --- ranks and samples ------------------------------------------------------

def test_a_rank_is_lin_of_its_tokens_plus_its_samples_attention():
    m = model()
    expected = m.non_attention(300) + m.causal(100) + m.causal(200)
    assert m.rank_seconds([(100, 1), (200, 1)]) == pytest.approx(expected, rel=1e-15)
    assert m.pack_seconds([100, 200]) == m.rank_seconds([(100, 1), (200, 1)])


def test_a_sample_on_c_ranks_runs_ring_blocks_on_zigzag_halves():
    m = model()
    length, cp = 4096, 4
    chunk = length / (2 * cp)
    assert m.sample_attention(length, cp) == pytest.approx(
        7 * m.full(chunk) + 2 * m.causal(chunk), rel=1e-15)
    assert m.rank_seconds([(length, cp)]) == pytest.approx(
        m.non_attention(length / cp) + m.sample_attention(length, cp), rel=1e-15)
    # Fractional lengths are allowed.
    assert m.sample_attention(1000, 8) == pytest.approx(
        15 * m.full(62.5) + 2 * m.causal(62.5), rel=1e-15)


def test_communication_hides_under_attention_unless_longer():
    slow = {"gpus_per_node": 8, "intra_node_gb_per_s": 1e-3, "inter_node_gb_per_s": 1e-4,
            "kv_bytes_per_token": 2048}
    m = model(communication=slow)
    # c = 4 fits a node: 3 * 3 * (4096 / 4) * 2048 bytes at 1e6 bytes/s.
    assert m.sample_communication(4096, 4) == pytest.approx(3 * 3 * 1024 * 2048 / 1e6)
    assert m.sample_seconds(4096, 4) == m.sample_communication(4096, 4)
    # c = 16 does not: inter-node bandwidth.
    assert m.sample_communication(4096, 16) == pytest.approx(3 * 15 * 256 * 2048 / 1e5)
    assert m.sample_communication(4096, 1) == 0.0
    fast = dict(slow, intra_node_gb_per_s=1e6, inter_node_gb_per_s=1e6)
    m = model(communication=fast)
    assert m.sample_seconds(4096, 4) == m.sample_attention(4096, 4)
    assert model().sample_communication(4096, 4) == 0.0


def test_a_microbatch_costs_its_slowest_rank():
    m = model()
    ranks = [[(100, 1)], [(1000, 2)], [(1000, 2)], [(50, 1), (60, 1)]]
    assert m.microbatch_seconds(ranks) == max(m.rank_seconds(r) for r in ranks)


def test_validation_figures_are_relative_errors_of_the_pack_model():
    m = model()
    exact = m.pack_seconds([100, 200])
    figures = validation_figures(m, [([100, 200], exact), ([300], m.pack_seconds([300]) / 1.25)])
    assert figures == {"cases": 2, "max_relative_error": 0.25, "mean_relative_error": 0.125}


# --- the shipped profiles ---------------------------------------------------

def test_every_shipped_profile_loads_by_name_and_by_path():
    assert shipped_profile_names() == SHIPPED
    for name in SHIPPED:
        profile = load_profile(name)
        assert profile.name == name
        assert load_profile(REPO / "profiles" / f"{name}.json").document == profile.document


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_profiles_never_get_cheaper_with_more_tokens(name):
    m = CostModel(load_profile(name))
    points = sorted({round(1.07 ** i) for i in range(200)} | {64, 128, 65536, 131072, 300000})
    for price in (m.causal, m.full, m.non_attention):
        times = [price(x) for x in points]
        assert all(a <= b for a, b in zip(times, times[1:])), (name, price.__name__)
    for c in (1, 2, 4, 8, 16):
        times = [m.rank_seconds([(x, c)]) for x in points]
        assert all(a <= b for a, b in zip(times, times[1:])), (name, c)


def test_the_shipped_validation_figures_are_the_readmes():
    # profiles/calibration/README.md: within 4.3% for 8B, 10.6% for 70B tp8.
    assert load_profile("h200-llama3-8b").document["validation"]["max_relative_error"] == \
        pytest.approx(0.043, abs=0.0005)
    assert load_profile("h200-llama3-70b-tp8").document["validation"]["max_relative_error"] == \
        pytest.approx(0.106, abs=0.0005)


def test_the_dip_in_70b_eager_lin_is_raised_and_recorded():
    raised = load_profile("h200-llama3-70b-tp8").document["provenance"]["raised_points"]
    assert raised == [{"table": "non_attention", "at": 512, "measured": 0.0013957760334014893,
                       "raised_to": 0.0014831680059432984}]
    assert load_profile("h200-llama3-8b").document["provenance"]["raised_points"] == []


def test_running_maximum_raises_dips_only():
    seconds, raised = running_maximum("t", [1, 2, 3, 4], [1.0, 3.0, 2.0, 4.0])
    assert seconds == [1.0, 3.0, 3.0, 4.0]
    assert raised == [{"table": "t", "at": 3, "measured": 2.0, "raised_to": 3.0}]


def test_rerunning_the_converter_reproduces_the_committed_profiles_byte_for_byte(tmp_path):
    converter = REPO / "scripts" / "make_cost_profiles.py"
    subprocess.run([sys.executable, converter, "--output", tmp_path], check=True,
                   capture_output=True)
    made = sorted(p.name for p in tmp_path.glob("*.json"))
    assert made == sorted(f"{name}.json" for name in SHIPPED)
    for name in made:
        assert (tmp_path / name).read_bytes() == (REPO / "profiles" / name).read_bytes(), name
    check = subprocess.run([sys.executable, converter, "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    (tmp_path / made[0]).write_text((tmp_path / made[0]).read_text().replace("0.0", "0.1", 1))
    drift = subprocess.run([sys.executable, converter, "--check", "--output", tmp_path],
                           capture_output=True, text=True)
    assert drift.returncode == 1 and made[0] in drift.stderr


def test_dump_profile_round_trips_bit_for_bit():
    doc = load_profile("h200-llama3-8b").document
    text = dump_profile(doc)
    assert json.loads(text) == doc
    assert text == (REPO / "profiles" / "h200-llama3-8b.json").read_text()


def test_the_cost_modules_import_from_the_source_tree_without_the_extension():
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), PYTHONDONTWRITEBYTECODE="1")
    code = ("import dcpsched, dcpsched.cost_model as m\n"
            "print(m.CostModel(m.load_profile('h200-llama3-8b')).causal(4096))\n"
            "try:\n    dcpsched.schedule_dynamic_cp\nexcept ImportError as e:\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, cwd=REPO / "python")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert float(lines[0]) == 0.0017918299436569215
    if len(lines) > 1:  # the source tree has no _core unless one was built in place
        assert "needs the compiled extension dcpsched._core" in lines[1]


# --- the loader rejects malformed profiles, naming the field -----------------

def drop(path):
    doc = document()
    *parents, last = path.split(".")
    target = doc
    for key in parents:
        target = target[key]
    del target[last]
    return doc


def with_value(path, value):
    doc = copy.deepcopy(document())
    *parents, last = path.split(".")
    target = doc
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[int(last) if isinstance(target, list) else last] = value
    return doc


MALFORMED = [
    (drop("attention.full"), 'field "attention.full": missing'),
    (drop("non_attention"), 'field "non_attention": missing'),
    (drop("attention"), 'field "attention": missing'),
    (drop("non_attention.seconds"), 'field "non_attention.seconds": missing'),
    (with_value("attention.causal.lengths", [64, 256, 128]),
     'field "attention.causal.lengths[2]": 128 does not exceed 256'),
    (with_value("attention.causal.lengths", [64, 64, 128]),
     'field "attention.causal.lengths[1]"'),
    (with_value("attention.full.lengths", [0, 256]), 'field "attention.full.lengths[0]"'),
    (with_value("attention.full.lengths", [64.0, 256]), 'field "attention.full.lengths[0]"'),
    (with_value("non_attention.seconds", [1e-3, float("nan")]),
     'field "non_attention.seconds[1]": nan is not a finite number > 0'),
    (with_value("non_attention.seconds", [1e-3, float("inf")]), 'field "non_attention.seconds[1]"'),
    (with_value("attention.causal.seconds", [1e-6, 0.0, 1e-5]),
     'field "attention.causal.seconds[1]": 0.0 is not a finite number > 0'),
    (with_value("attention.causal.seconds", [1e-6, -1e-6, 1e-5]),
     'field "attention.causal.seconds[1]"'),
    (with_value("attention.causal.seconds", [1e-6, 1e-5]),
     'field "attention.causal.seconds": has 2'),
    (with_value("non_attention.tokens", []), 'field "non_attention.tokens": must be a non-empty'),
    (with_value("schema", "dcpsched.cost_profile.v2"), 'field "schema": unknown schema'),
    (drop("schema"), 'field "schema": missing'),
    (with_value("interpolation", "linear"), 'field "interpolation"'),
    (with_value("name", ""), 'field "name"'),
    (with_value("communication", {"gpus_per_node": 8, "intra_node_gb_per_s": 400.0,
                                  "inter_node_gb_per_s": 0, "kv_bytes_per_token": 2048}),
     'field "communication.inter_node_gb_per_s"'),
    (with_value("communication", {"gpus_per_node": 8}),
     'field "communication.intra_node_gb_per_s": missing'),
]


@pytest.mark.parametrize("doc, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_the_loader_rejects_a_malformed_profile_naming_the_field(doc, message):
    with pytest.raises(ProfileError, match=None) as raised:
        parse_profile(doc, "bad.json")
    assert message in str(raised.value)
    assert str(raised.value).startswith("bad.json: ")


def test_load_profile_rejects_nan_in_a_file_and_unknown_names(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(document()).replace("0.002", "NaN"))
    with pytest.raises(ProfileError, match=r'non_attention.seconds\[1\]": nan'):
        load_profile(path)
    with pytest.raises(ProfileError, match="not the name of a shipped profile"):
        load_profile("no-such-profile")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ProfileError, match="not valid JSON"):
        load_profile(tmp_path / "broken.json")


def test_a_valid_profile_with_communication_and_extra_keys_loads():
    doc = document(communication={"gpus_per_node": 8, "intra_node_gb_per_s": 400.0,
                                  "inter_node_gb_per_s": 50.0, "kv_bytes_per_token": 2048},
                   future_key={"anything": 1})
    profile = parse_profile(doc)
    assert profile.communication.gpus_per_node == 8
    assert math.isclose(profile.communication.kv_bytes_per_token, 2048)
