"""dcpsched.conformance.runtime_groups, the runtime-group rule read from how
Megatron-LM runs a dynamic-CP schedule, and how the conformance check
classifies a schedule upstream returns and dcpsched refuses with invariant
11 (checks.classify): counted apart only where the rule confirms that the
runtime cannot run upstream's schedule, else a difference. No upstream code
here; the distributed check runs the rule against upstream's own group code
(test_distributed.py, and --distributed W with a Megatron-LM checkout)."""

import pytest

from dcpsched.conformance import checks, runtime_groups
from dcpsched.conformance.checks import Answer

# The issue's example: G = 12, mslpr 2048, lengths 10000 and five of 500.
# Upstream puts sample 0 on ranks 0-7, a CP group of 8 that the runtime never
# creates at G = 12 (it creates 1, 2, 4 and the whole 12).
EXAMPLE = [[[0]] * 8 + [[1, 2, 3, 4]] * 2 + [[5]] * 2]
REFUSAL = ("UnschedulableError: " + runtime_groups.REFUSAL_PREFIX +
           "microbatch 0 ranks 0-7: ...")


@pytest.mark.parametrize("total_gpus, min_cp_size, sizes", [
    (1, 1, []), (2, 1, [1]), (4, 1, [1, 2]), (6, 1, [1, 2]), (8, 1, [1, 2, 4]),
    (12, 1, [1, 2, 4]), (14, 1, [1, 2, 4]), (16, 1, [1, 2, 4, 8]), (24, 1, [1, 2, 4, 8]),
    (12, 2, [2, 4]), (12, 4, [4]), (12, 8, []), (3, 1, [1]),
])
def test_start_up_creates_the_powers_of_two_below_log2_g(total_gpus, min_cp_size, sizes):
    assert runtime_groups.created_sizes(total_gpus, min_cp_size) == sizes


def test_the_lookup_gives_the_aligned_block_or_the_whole_group_or_none():
    assert runtime_groups.group_of(5, 2, 12) == range(4, 6)
    assert runtime_groups.group_of(9, 4, 12) == range(8, 12)
    assert runtime_groups.group_of(9, 4, 10) == range(8, 10)  # the short last block
    assert runtime_groups.group_of(5, 4, 6) is None  # 4 is not below int(log2(6)) = 2
    assert runtime_groups.group_of(3, 12, 12) == range(12)
    assert runtime_groups.group_of(3, 8, 12) is None        # never created: KeyError
    assert runtime_groups.group_of(3, 1, 12, min_cp_size=2) is None
    assert runtime_groups.group_of(3, 16, 16) == range(16)


def test_the_issue_example_cannot_run():
    found = runtime_groups.violations(EXAMPLE, 12)
    assert found == ["microbatch 0 ranks 0-7: sample 0 has CP size 8, and the runtime has no "
                     "CP group of 8 ranks at G=12, min_cp_size=1 (it creates 1, 2, 4, the "
                     "whole 12): the lookup raises KeyError"]
    # On 16 ranks the same layout, widened by 4 ranks of one sample, runs.
    assert runtime_groups.violations([EXAMPLE[0] + [[6]] * 4], 16) == []


def test_runnable_schedules_have_no_findings():
    assert runtime_groups.violations([], 6) == []
    assert runtime_groups.violations([[[0], [1], [2, 3], [2, 3], [4], [5]]], 6) == []
    assert runtime_groups.violations([[[0]] * 6, [[1, 2]] * 6], 6) == []  # the whole group
    # A sample on the short last block of 4 ranks at G = 6 cannot exist (4 is
    # not created there), but a block of 2 there can.
    assert runtime_groups.violations([[[0], [0], [1], [1], [2], [2]]], 6) == []


def test_a_group_that_exists_but_is_not_the_samples_ranks():
    # Ranks 1-2 hold sample 1 (CP 2); the block of 2 holding rank 1 is 0-1.
    found = runtime_groups.violations([[[0], [1], [1], [2]]], 4)
    assert found == ["microbatch 0 rank 1: local_cp_size 2 gives the CP group of ranks 0-1, "
                     "but sample 1 is held by ranks 1-2"]
    # A rank whose other samples are spread differently from its first.
    found = runtime_groups.violations([[[0, 1], [0], [2], [3]]], 4)
    assert found == ["microbatch 0 rank 0: local_cp_size 2 gives the CP group of ranks 0-1, "
                     "but sample 1 is held by rank 0"]


def test_min_cp_size_removes_the_small_groups():
    assert runtime_groups.violations([[[0], [1], [2, 3], [2, 3]]], 4, min_cp_size=2)[0] \
        .startswith("microbatch 0 rank 0: sample 0 has CP size 1, and the runtime has no CP "
                    "group of 1 ranks at G=4, min_cp_size=2 (it creates 2, the whole 4)")


def test_findings_are_capped_and_one_per_group():
    schedule = [[[m]] * 8 + [[100 + m]] * 4 for m in range(20)]
    found = runtime_groups.violations(schedule, 12)
    assert len(found) == runtime_groups.MAX_FINDINGS
    assert [f.split(":")[0] for f in found[:2]] == ["microbatch 0 ranks 0-7",
                                                    "microbatch 1 ranks 0-7"]


def test_odd_sizes_are_refused_at_start_up():
    assert [g for g in range(1, 12) if runtime_groups.odd_group_refused(g)] == [1, 3, 5, 7, 9, 11]


def test_the_refusal_is_recognized_by_its_prefix():
    assert runtime_groups.names_runtime_groups(REFUSAL)
    assert runtime_groups.names_runtime_groups(REFUSAL[len("UnschedulableError: "):])
    assert not runtime_groups.names_runtime_groups("UnschedulableError: VPP alignment: ...")
    assert not runtime_groups.names_runtime_groups(None)


def never_broken(_):
    return None


def test_a_confirmed_refusal_is_counted_apart_with_upstreams_schedule():
    upstream = Answer(value=EXAMPLE)
    refused = Answer(error=REFUSAL)
    kind, why, runtime = checks.classify(
        upstream, refused, never_broken,
        lambda groups: "; ".join(runtime_groups.violations(groups, 12)))
    assert kind == checks.RUNTIME_CANNOT_RUN and why is None
    assert runtime.startswith("microbatch 0 ranks 0-7: sample 0 has CP size 8")


def test_an_unconfirmed_refusal_is_a_difference():
    runnable = [[[0], [1], [2, 3], [2, 3], [4], [5]]]
    kind, _, runtime = checks.classify(
        Answer(value=runnable), Answer(error=REFUSAL), never_broken,
        lambda groups: "; ".join(runtime_groups.violations(groups, 6)) or None)
    assert kind == checks.DIFFER and runtime is None
    # A check whose answers are no dynamic-CP schedule: never confirmed.
    kind, _, _ = checks.classify(Answer(value=EXAMPLE), Answer(error=REFUSAL), never_broken)
    assert kind == checks.DIFFER


def test_other_refusals_keep_their_classes():
    other = Answer(error="UnschedulableError: VPP alignment: no tail microbatch ...")
    assert checks.classify(Answer(value=EXAMPLE), other, lambda _: "broken")[0] == \
        checks.BOTH_REJECT
    assert checks.classify(Answer(value=EXAMPLE), other, never_broken)[0] == checks.DIFFER
    assert checks.classify(Answer(hung=True), Answer(error=REFUSAL), never_broken)[0] == \
        checks.UPSTREAM_HANGS
    assert checks.classify(Answer(error="IndexError: x"), Answer(error=REFUSAL),
                           never_broken)[0] == checks.BOTH_REJECT
    assert checks.classify(Answer(value=EXAMPLE), Answer(value=EXAMPLE), never_broken)[0] == \
        checks.EQUAL
