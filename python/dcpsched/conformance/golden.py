"""Writes upstream's answers as golden vectors, in the format of tests/golden/.

One JSON object per line (docs/specification.md "Golden vectors"), into
packing_aware_schedule.jsonl (DefaultDynamicCPScheduler without VPP),
vpp_align.jsonl (with vpp_group > 1), packing_aware_step.jsonl
(next_hdp_group_packing_aware) and dp_balanced_schedule.jsonl (with a tag,
e.g. pr6479: packing_aware_step_pr6479.jsonl, case names pa-step-pr6479-0001,
so vectors of several upstream commits sit side by side; with max_gpus,
cases of more ranks are left out, a schedule of thousands of ranks taking
megabytes). A packing-aware
case's "max_num_seqs" is the cap dcpsched was compared under: the problem's
where the checkout's next_hdp_group_packing_aware takes one, else null (the
cap plays no part there). Where upstream
raised, "expect" is {"ok": false, "error": "Type: message"}; where it
returned an answer that breaks an invariant, the error is
"UpstreamInvariantViolation: ...", a schedule Megatron-LM's runtime cannot
run included ("UpstreamInvariantViolation: invariant 11 (runtime groups):
...", where dcpsched refuses it and the check confirmed it). Inputs on which upstream hangs, problems
outside dcpsched's limits that upstream accepts, and problems with a number
outside int64 (the format's integers; the fuzz corpora hold such dp_size *
cp_size products) are not written. So the project can
regenerate its vectors from any upstream commit:
`dcpsched check-golden DIR/*.jsonl` then runs them through the core.
"""

import json
import pathlib

from dcpsched.conformance import checks
from dcpsched.conformance.problems import DpBalancedProblem

# check -> (file prefix of the case names, kind)
_KINDS = {
    "get_groups_and_subsamples": "schedule",
    "next_hdp_group_packing_aware": "step",
    "DpBalancedScheduler": "schedule",
}


def _stem_and_prefix(outcome):
    if outcome.check == "DpBalancedScheduler":
        return "dp_balanced_schedule", "dpb"
    if outcome.check == "next_hdp_group_packing_aware":
        return "packing_aware_step", "pa-step"
    if outcome.problem.vpp_group is not None and outcome.problem.vpp_group > 1:
        return "vpp_align", "vpp"
    return "packing_aware_schedule", "pa-sched"


def _file_and_prefix(outcome, tag):
    stem, prefix = _stem_and_prefix(outcome)
    if tag:
        return f"{stem}_{tag}.jsonl", f"{prefix}-{tag}"
    return f"{stem}.jsonl", prefix


def _expect(outcome):
    upstream = outcome.upstream
    if upstream.error is not None:
        return {"ok": False, "error": upstream.error}
    if outcome.upstream_broken:
        return {"ok": False, "error": f"UpstreamInvariantViolation: {outcome.upstream_broken}"}
    if outcome.kind == checks.RUNTIME_CANNOT_RUN:
        return {"ok": False, "error": "UpstreamInvariantViolation: invariant 11 (runtime "
                                      f"groups): {outcome.runtime_broken}"}
    if outcome.check == "next_hdp_group_packing_aware":
        micro_batches, leftovers, exec_times, sample_ids = upstream.value
        return {"ok": True, "micro_batches": micro_batches,
                "leftovers": [list(pair) for pair in leftovers],
                "exec_times": exec_times, "sample_ids": sample_ids}
    return {"ok": True, "groups": upstream.value}


def _case(name, outcome):
    problem = outcome.problem
    if isinstance(problem, DpBalancedProblem):
        fields = {"total_gpus": problem.dp_size * problem.cp_size, "dp_size": problem.dp_size,
                  "cp_size": problem.cp_size, "max_seq_len_per_rank": problem.max_seq_len_per_rank,
                  "min_cp_size": 1, "vpp_group": problem.vpp_group,
                  "max_num_seqs": problem.max_num_seqs,
                  "samples": [list(pair) for pair in problem.samples()]}
        scheduler = "dp_balanced"
    else:
        fields = {"total_gpus": problem.total_gpus, "dp_size": problem.total_gpus, "cp_size": 1,
                  "max_seq_len_per_rank": problem.max_seq_len_per_rank,
                  "min_cp_size": problem.min_cp_size,
                  "vpp_group": (None if outcome.check == "next_hdp_group_packing_aware"
                                else problem.vpp_group),
                  "max_num_seqs": outcome.max_num_seqs,
                  "samples": [list(pair) for pair in problem.samples]}
        scheduler = "packing_aware"
    return {"name": name, "kind": _KINDS[outcome.check], "scheduler": scheduler, **fields,
            "expect": _expect(outcome)}


_INT64 = range(-(1 << 63), 1 << 63)


def _fits_int64(case) -> bool:
    numbers = [case[field] for field in ("total_gpus", "dp_size", "cp_size",
                                         "max_seq_len_per_rank", "min_cp_size", "vpp_group",
                                         "max_num_seqs") if case[field] is not None]
    numbers += [value for pair in case["samples"] for value in pair]
    return all(value in _INT64 for value in numbers)


class GoldenWriter:
    """Collects outcomes; write() puts their upstream answers into DIR/*.jsonl."""

    def __init__(self, directory, tag=None, max_gpus=None):
        self._directory = pathlib.Path(directory)
        self._tag = tag
        self._max_gpus = max_gpus  # None: every G
        self._lines = {}
        self.left_out = 0  # cases with a number outside int64
        self.left_out_large = 0  # cases with total_gpus above max_gpus

    def add(self, outcome) -> None:
        """Keeps `outcome` if it holds an upstream answer the format can say."""
        if outcome.check not in _KINDS or outcome.kind not in (
                checks.EQUAL, checks.DIFFER, checks.BOTH_REJECT, checks.RUNTIME_CANNOT_RUN):
            return
        if outcome.upstream.hung:
            return
        file_name, prefix = _file_and_prefix(outcome, self._tag)
        lines = self._lines.setdefault(file_name, [])
        case = _case(f"{prefix}-{len(lines) + 1:04d}", outcome)
        if not _fits_int64(case):
            self.left_out += 1
            return
        if self._max_gpus is not None and case["total_gpus"] > self._max_gpus:
            self.left_out_large += 1  # thousands of ranks: megabytes a case
            return
        lines.append(json.dumps(case, separators=(",", ":")))

    def write(self):
        """Writes the files; returns {file name: number of cases}."""
        self._directory.mkdir(parents=True, exist_ok=True)
        for file_name, lines in sorted(self._lines.items()):
            (self._directory / file_name).write_text("\n".join(lines) + "\n")
        return {file_name: len(lines) for file_name, lines in sorted(self._lines.items())}
