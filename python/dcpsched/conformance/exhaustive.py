"""Every problem of explicit finite sets, through upstream and dcpsched.

    python3 -m dcpsched.conformance --megatron PATH --exhaustive SETS [--timeout SECONDS]

SETS is the one-line form of properties/problem_enumerator.h, or one of its
names ("test", "test-sanitized", "nightly"):

    G=1..16 n=0..3 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4 min_cp=1,2 vpp=none,2 max_num_seqs=none,1

The problems are enumerated here in Python, in the C++ enumerator's order
and with its rules (every field required; a length term is c, km, km+c or
km-c, evaluated per mslpr, out-of-range and repeated values dropped; every
sequence of n lengths, ids 0..n-1; the whole product, invalid combinations
included); python/tests/test_exhaustive.py checks that both list the same
problems. Each dynamic-CP problem goes through checks.run_checks
(get_groups_and_subsamples, next_hdp_group_packing_aware and, with
vpp_group > 1, align_sample_id_groups); each whose min_cp divides G also as
the dp_balanced problem of dp_size G / min_cp and cp_size min_cp
(DpBalancedScheduler), as tests/exhaustive_check.cc does.

The report counts, per check, each outcome (checks.py: equal, differ, both
reject, upstream hangs, outside, skip) by the kind of dcpsched's answer
(properties/outcome_class.h's labels: "schedule", or the kind of refusal),
prints each difference as its problem line, and closes with

    conformance --exhaustive: N problems of the sets (C checks): E equal, D differ, B both reject, H upstream hangs (dcpsched rejects), O outside, S skipped

Exit status as the tool's (cli.py): 0 when nothing differs, 1 on a
difference or an upstream parameter dcpsched does not model, 2 when the sets
cannot be read, name no problem, or the checkout lacks what the check needs.
"""

import collections
import dataclasses
import itertools
import re
import sys
import time
from typing import Dict, Iterator, List, Optional, Tuple

from dcpsched.conformance import checks
from dcpsched.conformance.problems import DpBalancedProblem, DynamicCpProblem

MAX_TOTAL_GPUS = 65536
MAX_SEQ_LEN_PER_RANK = (1 << 31) - 1
MAX_SAMPLE_LEN = 1 << 26
MAX_SAMPLES = 12
MAX_PROBLEMS = 1 << 40
FIELDS = ("G", "n", "lens", "mslpr", "min_cp", "vpp", "max_num_seqs")
# properties/problem_enumerator.h's named sets; test_exhaustive.py checks
# that the C++ driver reads each name as the same sets.
NAMED_SETS = {
    "test": "G=1..16 n=0..4 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4 min_cp=1,2 "
            "vpp=none,2 max_num_seqs=none,1",
    "test-sanitized": "G=1..16 n=0..3 lens=1,m,m+1,2m+1,4m mslpr=4 min_cp=1,2 "
                      "vpp=none,2 max_num_seqs=none,1",
    "nightly": "G=1..16 n=0..5 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4,64 min_cp=1,2,4 "
               "vpp=none,2,3 max_num_seqs=none,1,2",
}
PROGRESS_EVERY = 5000
# A difference is run again with this many times the timeout (_confirmed).
CONFIRM_FACTOR = 100
CLOSING = ("conformance --exhaustive: {problems} problems of the sets ({checked} checks): "
           "{equal} equal, {differ} differ, {both} both reject, {hangs} upstream hangs "
           "(dcpsched rejects), {outside} outside, {skip} skipped")
# properties/outcome_class.cc's kinds: (code, a part of the message, label).
_KINDS = [
    ("FAILED_PRECONDITION", "upstream returns a schedule its runtime cannot run",
     "upstream returns a schedule its runtime cannot run (invariant 11)"),
    ("FAILED_PRECONDITION", "packing-aware fill step",
     "packing-aware fill step past the last rank (upstream IndexError)"),
    ("FAILED_PRECONDITION", "legacy fill step: there should be",
     "legacy fill step finds no group (upstream AssertionError)"),
    ("FAILED_PRECONDITION", "legacy fill step: widening",
     "legacy fill step past the last rank (upstream IndexError)"),
    ("FAILED_PRECONDITION", "upstream loops forever", "VPP alignment: upstream loops forever"),
    ("FAILED_PRECONDITION", "upstream returns such a microbatch",
     "VPP alignment: upstream returns a microbatch wider than G"),
    ("FAILED_PRECONDITION", "no tail microbatch has enough ids to split",
     "VPP alignment: no microbatch left to split (upstream AssertionError)"),
    ("FAILED_PRECONDITION", "cannot be split again",
     "VPP alignment: split group not decreasing (upstream AssertionError)"),
    ("FAILED_PRECONDITION", "dp_balanced: not enough samples to move",
     "dp_balanced: not enough samples to move (upstream AssertionError)"),
    ("INVALID_ARGUMENT", "requires CP size", "a sample needs more than G ranks"),
    ("INVALID_ARGUMENT", "min_cp_size is", "min_cp_size is not a power of two <= G"),
    ("INVALID_ARGUMENT", "the legacy scheduler takes no cap", "legacy takes no max_num_seqs"),
    ("INVALID_ARGUMENT", "more than one packed sequence holds",
     "dp_balanced: a sample longer than mslpr * cp_size"),
]


class SetsError(ValueError):
    """The sets' text cannot be read; the message says which field and why."""


@dataclasses.dataclass(frozen=True)
class Sets:
    """The explicit finite sets (properties/problem_enumerator.h's EnumerationSets)."""

    total_gpus: Tuple[int, ...]
    sample_counts: Tuple[int, ...]
    lengths: Tuple[Tuple[int, int], ...]  # (per_mslpr, offset)
    max_seq_len_per_rank: Tuple[int, ...]
    min_cp_sizes: Tuple[int, ...]
    vpp_groups: Tuple[Optional[int], ...]
    max_num_seqs: Tuple[Optional[int], ...]


def _invalid(field: str, why: str) -> SetsError:
    return SetsError(f"enumeration sets: {field}: {why}")


def _values(field: str, text: str, none_allowed: bool) -> List[Optional[int]]:
    values: List[Optional[int]] = []
    for item in text.split(","):
        if item == "none":
            if not none_allowed:
                raise _invalid(field, "'none' is not allowed here")
            values.append(None)
            continue
        ends = item.split("..")
        if len(ends) > 2 or not all(re.fullmatch(r"[+-]?\d+", e) for e in ends):
            raise _invalid(field, f"'{item}' is not an integer or a range a..b")
        low, high = int(ends[0]), int(ends[-1])
        if high < low or high - low >= 1 << 20:
            raise _invalid(field, f"the range {item} is empty or longer than {1 << 20}")
        values.extend(range(low, high + 1))
    for index, value in enumerate(values):
        if value in values[:index]:
            raise _invalid(field, f"{'none' if value is None else value} is listed twice")
    return values


def _term(text: str) -> Tuple[int, int]:
    match = re.fullmatch(r"(?:(-?\d*)m([+-]\d+)?|([+-]?\d+))", text)
    if not match or match.group(1) == "-":
        raise _invalid("lens", f"'{text}' is not c, km, km+c or km-c")
    if match.group(3) is not None:
        per_mslpr, offset = 0, int(match.group(3))
    else:
        per_mslpr = 1 if match.group(1) == "" else int(match.group(1))
        offset = int(match.group(2) or 0)
    if abs(per_mslpr) > 1 << 26 or abs(offset) > 1 << 26:
        raise _invalid("lens", f"'{text}': k and c must be within +-2^26")
    return per_mslpr, offset


def _in_range(field, values, low, high, power_of_two=False):
    for value in values:
        if value < low or value > high or (power_of_two and value & (value - 1)):
            raise _invalid(field, f"{value} is outside [{low}, {high}]"
                           + (" or not a power of two" if power_of_two else ""))
    return tuple(values)


def parse_sets(text: str) -> Sets:
    """The sets of the one-line form or a name (NAMED_SETS); SetsError if unreadable."""
    text = NAMED_SETS.get(text, text)
    fields: Dict[str, str] = {}
    for field in text.split():
        key, equals, value = field.partition("=")
        if not equals or key not in FIELDS:
            raise _invalid(key, f"unknown field '{field}'; the fields are "
                           f"{', '.join(FIELDS)}, each key=list")
        if key in fields:
            raise _invalid(key, "given twice")
        if not value:
            raise _invalid(key, "an empty list")
        fields[key] = value
    for key in FIELDS:
        if key not in fields:
            raise _invalid(key, "missing; every field is required")
    terms: List[Tuple[int, int]] = []
    for item in fields["lens"].split(","):
        term = _term(item)
        if term in terms:
            raise _invalid("lens", f"{item} is listed twice")
        terms.append(term)
    optional = {}
    for key in ("vpp", "max_num_seqs"):
        optional[key] = tuple(_values(key, fields[key], True))
        for value in optional[key]:
            if value is not None and value < 1:
                raise _invalid(key, f"{value} is not 'none' or at least 1")
    sets = Sets(
        total_gpus=_in_range("G", _values("G", fields["G"], False), 1, MAX_TOTAL_GPUS),
        sample_counts=_in_range("n", _values("n", fields["n"], False), 0, MAX_SAMPLES),
        lengths=tuple(terms),
        max_seq_len_per_rank=_in_range("mslpr", _values("mslpr", fields["mslpr"], False), 1,
                                       MAX_SEQ_LEN_PER_RANK),
        min_cp_sizes=_in_range("min_cp", _values("min_cp", fields["min_cp"], False), 1,
                               MAX_TOTAL_GPUS, power_of_two=True),
        vpp_groups=optional["vpp"], max_num_seqs=optional["max_num_seqs"])
    if count_problems(sets) > MAX_PROBLEMS:
        raise _invalid("all", f"the sets name more than {MAX_PROBLEMS} problems; narrow them")
    return sets


def _term_text(term: Tuple[int, int]) -> str:
    per_mslpr, offset = term
    if per_mslpr == 0:
        return str(offset)
    text = "m" if per_mslpr == 1 else f"{per_mslpr}m"
    return text + (f"+{offset}" if offset > 0 else str(offset) if offset < 0 else "")


def format_sets(sets: Sets) -> str:
    """The one-line form, ranges written out (FormatEnumerationSets)."""
    def values(items):
        return ",".join("none" if v is None else str(v) for v in items)
    return (f"G={values(sets.total_gpus)} n={values(sets.sample_counts)} "
            f"lens={','.join(_term_text(t) for t in sets.lengths)} "
            f"mslpr={values(sets.max_seq_len_per_rank)} min_cp={values(sets.min_cp_sizes)} "
            f"vpp={values(sets.vpp_groups)} max_num_seqs={values(sets.max_num_seqs)}")


def lengths_for(sets: Sets, mslpr: int) -> List[int]:
    """The distinct term values in [1, 2^26], in the order written (LengthsFor)."""
    lengths: List[int] = []
    for per_mslpr, offset in sets.lengths:
        length = per_mslpr * mslpr + offset
        if 1 <= length <= MAX_SAMPLE_LEN and length not in lengths:
            lengths.append(length)
    return lengths


def count_problems(sets: Sets) -> int:
    """How many problems problems() yields (CountProblems)."""
    options = (len(sets.total_gpus) * len(sets.min_cp_sizes) * len(sets.vpp_groups)
               * len(sets.max_num_seqs))
    return sum(options * sum(len(lengths_for(sets, mslpr)) ** n for n in sets.sample_counts)
               for mslpr in sets.max_seq_len_per_rank)


def problems(sets: Sets) -> Iterator[DynamicCpProblem]:
    """Every problem of the sets, in ForEachProblem's order."""
    for g in sets.total_gpus:
        for mslpr in sets.max_seq_len_per_rank:
            lengths = lengths_for(sets, mslpr)
            for min_cp in sets.min_cp_sizes:
                for vpp in sets.vpp_groups:
                    for cap in sets.max_num_seqs:
                        for n in sets.sample_counts:
                            for sequence in itertools.product(lengths, repeat=n):
                                yield DynamicCpProblem(tuple(enumerate(sequence)), g, mslpr,
                                                       min_cp, vpp, cap)


def dp_balanced_problem(problem: DynamicCpProblem) -> Optional[DpBalancedProblem]:
    """The dp_balanced problem of dp_size G / min_cp and cp_size min_cp, or None
    when min_cp does not divide G (tests/exhaustive_check.cc's CheckDpBalanced)."""
    g, cp = problem.total_gpus, problem.min_cp_size
    if cp > g or g % cp:
        return None
    return DpBalancedProblem(tuple(length for _, length in problem.samples), g // cp, cp,
                             problem.max_seq_len_per_rank, problem.max_num_seqs,
                             problem.vpp_group)


def outcome_class(answer: checks.Answer) -> str:
    """properties/outcome_class.h's label of dcpsched's answer."""
    if answer.ok:
        return "schedule"
    if answer.hung:
        return "hangs"
    code = "INVALID_ARGUMENT" if answer.invalid_input else "FAILED_PRECONDITION"
    for kind_code, part, label in _KINDS:
        if code == kind_code and part in answer.error:
            return f"{code}: {label}"
    return f"{code}: other"


# What an upstream answer that counts as a refusal breaks (checks.py's
# upstream_broken), by its text: (pattern, label).
_BROKEN = [
    (r"invariant (\d+)", "returns a schedule breaking invariant {0}"),
    (r"unreadable or for an invalid problem", "returns a schedule of input dcpsched refuses"),
    (r"ranks \[.*\] empty", "returns a schedule with an empty rank"),
    (r"has \d+ ranks, expected", "returns a microbatch of the wrong width"),
    (r"tokens \d+ > ", "returns a schedule over the token budget"),
    (r"not a 4-tuple", "returns no 4-tuple"),
]


def _upstream_class(outcome: checks.Outcome) -> str:
    """What upstream did, in a few words: returned, returned an answer that
    breaks what (counted as a refusal), raised (the exception's type), hung."""
    if outcome.upstream.hung:
        return "hangs"
    if outcome.upstream.error is not None:
        return "raises " + outcome.upstream.error.split(":", 1)[0]
    if outcome.upstream_broken:
        for pattern, label in _BROKEN:
            match = re.search(pattern, outcome.upstream_broken)
            if match:
                return label.format(*match.groups())
        return "returns an answer that breaks the invariants"
    return "returns"


def _check_problem(worker, problem, timeout) -> List[checks.Outcome]:
    outcomes = list(checks.run_checks(worker, problem, timeout))
    dp_balanced = dp_balanced_problem(problem)
    if dp_balanced is not None:
        outcomes += checks.run_checks(worker, dp_balanced, timeout)
    return outcomes


def _confirmed(worker, outcome: checks.Outcome, timeout: float) -> checks.Outcome:
    """A difference, run once more with CONFIRM_FACTOR times the timeout.

    With the short timeout tiny problems allow, a loaded machine can make an
    upstream call that returns in microseconds miss even its retry (a fresh
    worker after a hang, on a machine with ten processes per core): a hang
    where dcpsched answers, counted as a difference. A real difference is
    deterministic and comes back; one that does not is the rerun's outcome."""
    again = checks.run_checks(worker, outcome.problem, timeout * CONFIRM_FACTOR,
                              outcome.check)
    return again[0] if again else outcome


def run(worker, sets_text: str, timeout: float, out, closing_suffix: str = "") -> int:
    """Runs every problem of the sets through `worker` (an UpstreamWorker) and
    dcpsched; prints the report; returns the exit status."""
    try:
        sets = parse_sets(sets_text)
    except SetsError as error:
        print(f"conformance: --exhaustive: {error}", file=sys.stderr)
        return 2
    total = count_problems(sets)
    print(f"exhaustive: sets {format_sets(sets)}: {total} problems", file=out)
    if total == 0:
        print("conformance: --exhaustive: the sets name no problem; nothing was checked",
              file=sys.stderr)
        return 2
    table = collections.Counter()  # (check, kind, dcpsched's, upstream's) -> count
    kinds = collections.Counter()
    checked = 0
    unconfirmed = 0  # differences that did not come back when run again
    start = time.monotonic()
    for index, problem in enumerate(problems(sets)):
        if index and index % PROGRESS_EVERY == 0:
            print(f"conformance --exhaustive: {index} of {total} problems so far",
                  file=sys.stderr, flush=True)
        for outcome in _check_problem(worker, problem, timeout):
            if outcome.kind == checks.DIFFER:
                rerun = _confirmed(worker, outcome, timeout)
                if rerun.kind != checks.DIFFER:
                    unconfirmed += 1
                    print(f"not reproduced: {outcome.check}: {outcome.problem.line()}: "
                          f"{outcome.describe()}; run again with a {CONFIRM_FACTOR} times "
                          f"longer timeout: {rerun.kind}", file=out)
                outcome = rerun
            checked += 1
            kinds[outcome.kind] += 1
            table[(outcome.check, outcome.kind, outcome_class(outcome.dcpsched),
                   _upstream_class(outcome))] += 1
            if outcome.kind == checks.DIFFER:
                print(f"differ: {outcome.check}: {outcome.problem.line()}", file=out)
                print(f"  {outcome.describe()}", file=out)
    print(f"exhaustive: {total} problems, {checked} checks in {time.monotonic() - start:.0f} s "
          f"({unconfirmed} differences did not reproduce when run again and count as their "
          "rerun); per check, outcome, dcpsched's answer and upstream's:", file=out)
    for (check, kind, ours, theirs), count in sorted(table.items()):
        print(f"  {check}: {kind}: dcpsched {ours}; upstream {theirs}: {count}", file=out)
    print(CLOSING.format(problems=total, checked=checked, equal=kinds[checks.EQUAL],
                         differ=kinds[checks.DIFFER], both=kinds[checks.BOTH_REJECT],
                         hangs=kinds[checks.UPSTREAM_HANGS], outside=kinds[checks.OUTSIDE],
                         skip=kinds[checks.SKIP]) + closing_suffix, file=out)
    if checked == 0:
        print("conformance: --exhaustive: no check ran; nothing was checked", file=sys.stderr)
        return 2
    return 1 if kinds[checks.DIFFER] or closing_suffix else 0
