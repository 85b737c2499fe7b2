"""The drop-in dcpsched.megatron, used standalone: upstream's benchmark
batch scheduled as DefaultDynamicCPScheduler schedules it, the runtime
guard catching a broken schedule, and the error where upstream would fail.

The batch is `dcpsched schedule`'s own (dcpsched.benchmark_workload: 256
samples, seed 5154), so the microbatch count printed here is the one the
command line's report shows for dp 2 x cp 4.

In a training job the same scheduler replaces upstream's with one call,
dcpsched.megatron.install_into_megatron(); python/README.md, "The drop-in
in a training job", shows where it goes in a Megatron-LM fork.

Run: python3 python/examples/megatron_drop_in.py (with the package
installed, or PYTHONPATH=build/python).
"""

import sys

import dcpsched
from dcpsched.megatron import DcpschedDynamicCPScheduler


def main():
    batch = dcpsched.benchmark_workload(256, seed=5154)
    scheduler = DcpschedDynamicCPScheduler(
        max_seqlen_per_dp_cp_rank=2048, cp_size=4, dp_size=2,
        microbatch_group_size_per_vp_stage=None, min_cp_size=1, verify=True)
    groups = scheduler.get_groups_and_subsamples(batch)
    print(f"dcpsched {dcpsched.__version__}: {len(batch)} samples on dp 2 x cp 4, "
          f"max_seqlen_per_dp_cp_rank 2048: {len(groups)} microbatches")
    print(f"  microbatch 0, rank 0 holds ids {groups[0][0]}")

    # The runtime guard: a schedule that lost a sample on its way is caught.
    broken = [[list(rank) for rank in microbatch] for microbatch in groups]
    victim = broken[0][0][0]
    for rank in broken[0]:
        if victim in rank:
            rank.remove(victim)
    violations = dcpsched.verify(broken, batch, scheduler.total_hdp_gpus,
                                 scheduler.max_seq_len_per_rank)
    print(f"guard on a schedule that lost sample {victim}: {violations[0]}")

    # Where upstream fails, dcpsched says what to change.
    try:
        scheduler.get_groups_and_subsamples([(0, 20000)])
    except ValueError as error:
        print(f"a sample of 20000 tokens on 8 ranks: ValueError: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
