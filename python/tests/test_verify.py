"""dcpsched.verify: the schedule checker as a runtime guard.

verify returns one message per broken invariant ("invariant N (name): ..."),
and an empty list for a schedule that keeps them all. Tampering with a
correct schedule in any way a buggy scheduler or transport could must be
caught.
"""

import copy
import random

import pytest

import dcpsched

G = 8
MSLPR = 2048


def workload(count=64, seed=5154):
    """A deterministic batch shaped like upstream's DCP benchmark."""
    rng = random.Random(seed)
    return [(1000 + i, min(8192, max(128, int(rng.lognormvariate(6.5, 1.2)))))
            for i in range(count)]


BATCH = workload()
SCHEDULE = dcpsched.schedule_dynamic_cp(BATCH, G, MSLPR)


def invariants(messages):
    """The invariant numbers the messages report, in order, deduplicated."""
    numbers = []
    for message in messages:
        assert message.startswith("invariant ")
        number = int(message.split()[1])
        if number not in numbers:
            numbers.append(number)
    return numbers


def tampered(change):
    schedule = copy.deepcopy(SCHEDULE)
    change(schedule)
    return dcpsched.verify(schedule, BATCH, G, MSLPR)


def test_the_schedulers_output_passes():
    assert len(SCHEDULE) > 1
    assert dcpsched.verify(SCHEDULE, BATCH, G, MSLPR) == []
    aligned = dcpsched.schedule_dynamic_cp(BATCH, G, MSLPR, vpp_group=4)
    assert len(aligned) % 4 == 0
    assert dcpsched.verify(aligned, BATCH, G, MSLPR, vpp_group=4) == []


def test_a_dropped_sample_is_caught():
    def drop(schedule):
        victim = schedule[1][0][0]
        for rank in schedule[1]:
            if victim in rank:
                rank.remove(victim)
    messages = tampered(drop)
    assert 2 in invariants(messages)
    assert any("in no microbatch" in message for message in messages)


def test_a_sample_in_two_microbatches_is_caught():
    def duplicate(schedule):
        schedule[1][0].append(schedule[0][0][0])
    messages = tampered(duplicate)
    assert invariants(messages)[0] == 2
    assert f"sample {SCHEDULE[0][0][0]} is in microbatch 0 and again" in messages[0]


def test_an_unknown_id_is_caught():
    messages = tampered(lambda schedule: schedule[0][3].append(424242))
    assert invariants(messages) == [2]
    assert "424242" in messages[0]


def test_a_rank_removed_from_a_cp_group_is_caught():
    # The first sample's group loses a rank: a rank empties, the group
    # shrinks below the sample's minimum CP size and over the token budget.
    messages = tampered(lambda schedule: schedule[0][0].pop())
    assert {1, 4, 6} <= set(invariants(messages))


def test_a_missing_rank_is_caught():
    messages = tampered(lambda schedule: schedule[0].pop())
    assert invariants(messages)[0] == 1
    assert f"expected total_gpus={G}" in messages[0]


def test_swapped_ranks_are_caught():
    def swap(schedule):
        ranks = schedule[0]
        ranks[0], ranks[-1] = ranks[-1], ranks[0]
    assert tampered(swap) != []


def test_over_budget_is_caught():
    batch = [(1, 3000), (2, 5)]
    messages = dcpsched.verify([[[1], [2]]], batch, 2, MSLPR)
    assert invariants(messages) == [4, 5, 6]
    assert messages[0] == ("invariant 4 (token budget): microbatch 0 rank 0 "
                           "holds 3000 tokens > max_seq_len_per_rank 2048 (ids 1)")


def test_a_vpp_count_mismatch_is_caught():
    messages = dcpsched.verify(SCHEDULE, BATCH, G, MSLPR, vpp_group=len(SCHEDULE) + 1)
    assert messages == [f"invariant 8 (VPP multiple): {len(SCHEDULE)} microbatches "
                        f"is not a multiple of vpp_group={len(SCHEDULE) + 1}"]


def test_random_tampering_is_always_caught():
    # (Taking a sample off one rank of its CP group only can leave a valid
    # schedule: a sample of 2 ranks may fit on 1.)
    rng = random.Random(7)
    for _ in range(200):
        schedule = copy.deepcopy(SCHEDULE)
        microbatch = rng.randrange(len(schedule))
        rank = rng.randrange(G)
        ids = schedule[microbatch][rank]
        action = rng.choice(["drop", "move", "stranger"])
        if action == "drop":  # from every rank: taken out of the schedule
            victim = ids[rng.randrange(len(ids))]
            for holder in schedule[microbatch]:
                if victim in holder:
                    holder.remove(victim)
        elif action == "move":
            other = (microbatch + 1) % len(schedule)
            schedule[other][rng.randrange(G)].append(ids.pop(rng.randrange(len(ids))))
        else:
            ids.append(-1)
        assert dcpsched.verify(schedule, BATCH, G, MSLPR) != [], (action, schedule)


def test_an_invalid_problem_raises_value_error():
    with pytest.raises(ValueError, match="total_gpus is 0"):
        dcpsched.verify(SCHEDULE, BATCH, 0, MSLPR)
    with pytest.raises(ValueError, match="appears twice"):
        dcpsched.verify(SCHEDULE, BATCH + BATCH[:1], G, MSLPR)
