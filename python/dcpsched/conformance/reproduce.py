"""A shell command that runs one conformance problem in dcpsched.

A reported problem is only useful if it runs as it is: a dynamic-CP
problem's line is io/problem_text.h's, which the C++ CLI reads whole
(`dcpsched schedule --problem 'LINE'`, for the packing-aware or the legacy
scheduler); a dp_balanced problem's lengths go through standard input as a
lengths file (ids are positions, as there); an alignment problem has no CLI
command, so its command is Python's. Every command prints dcpsched's answer
(or its refusal) for the problem the check compared.
"""

import shlex

from dcpsched.conformance.problems import DpBalancedProblem, DynamicCpProblem

# The dcpsched scheduler a check compares upstream with, for the CLI.
_SCHEDULER = {"BalancedCPScheduler": "legacy"}


def command(problem, check: str) -> str:
    """The command that runs `problem` in dcpsched for `check`."""
    if isinstance(problem, DynamicCpProblem):
        scheduler = _SCHEDULER.get(check, "packing_aware")
        return (f"dcpsched schedule --scheduler {scheduler} --problem "
                f"{shlex.quote(problem.line())}")
    if isinstance(problem, DpBalancedProblem):
        lengths = "\\n".join(str(length) for length in problem.lens)
        flags = [f"--dp {problem.dp_size}", f"--cp {problem.cp_size}",
                 f"--mslpr {problem.max_seq_len_per_rank}"]
        if problem.max_num_seqs is not None:
            flags.append(f"--max-num-seqs {problem.max_num_seqs}")
        if problem.vpp_group is not None:
            flags.append(f"--vpp {problem.vpp_group}")
        return (f"printf '{lengths}\\n' | dcpsched schedule --scheduler dp_balanced "
                f"{' '.join(flags)} --lengths -")
    schedule = [[list(rank) for rank in microbatch] for microbatch in problem.schedule]
    return shlex.join(["python3", "-c", "import dcpsched; print(dcpsched.align_to_vpp_group("
                       f"{schedule!r}, {problem.vpp_group}))"])


def step_command(problem: DynamicCpProblem) -> str:
    """The Python command that runs one packing-aware step of `problem`."""
    return shlex.join(["python3", "-c", "import dcpsched; print(dcpsched.next_group_packing_aware("
                       f"{[list(s) for s in problem.samples]!r}, {problem.total_gpus}, "
                       f"{problem.max_seq_len_per_rank}, {problem.min_cp_size}, "
                       f"{problem.max_num_seqs!r}))"])
