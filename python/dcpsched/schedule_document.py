"""Reads a schedule document into what each rank holds (docs/schedule_json.md).

Reads dcpsched.schedule_run.v1 (`dcpsched schedule --format json`: samples
and `groups`, microbatch -> rank -> ids), dcpsched.schedule_run.v2
(`--compact`: samples and each microbatch's `cp_groups`, first_rank, size,
ids) and dcpsched.schedule.v1 (a hand-written schedule: samples and
groups). Pure Python, standard library only.

Each microbatch becomes its CP groups, RankGroup(first_rank, ranks, load):
`ranks` consecutive ranks that hold the same samples, and `load` those
samples as sorted (length, cp) pairs, cp being the number of ranks of the
microbatch that hold the sample. v2 groups are read as they are (never
expanded to G lists); v1 rank lists are merged into runs of equal lists.
Two ranks with equal loads cost the same, which is what lets replay time
each distinct load once. A document that is not one of these (a v1 with
"ok": false, an unknown format, a microbatch naming an unknown id) raises
ScheduleError saying what is wrong.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import pathlib
from typing import Any, Dict, List, Tuple

Load = Tuple[Tuple[int, int], ...]


class ScheduleError(ValueError):
    """A schedule document replay cannot read; the message says why."""


@dataclasses.dataclass(frozen=True)
class RankGroup:
    """Consecutive ranks holding the same samples in one microbatch."""

    first_rank: int
    ranks: int
    load: Load


@dataclasses.dataclass
class Schedule:
    """A schedule as replay needs it."""

    format: str
    total_gpus: int
    lengths: Dict[int, int]
    microbatches: List[List[RankGroup]]


def _lengths(document: Dict[str, Any], source: str) -> Dict[int, int]:
    samples = document.get("samples")
    if not isinstance(samples, list):
        raise ScheduleError(f'{source}: field "samples": missing or not a list of [id, len]')
    return {int(sample_id): int(length) for sample_id, length in samples}


def _load(ids, cp_of: Dict[int, int], lengths: Dict[int, int], where: str) -> Load:
    try:
        return tuple(sorted((lengths[i], cp_of[i]) for i in ids))
    except KeyError as error:
        raise ScheduleError(f"{where}: id {error.args[0]} is not among the samples") from None


def _from_rank_lists(groups: List[List[List[int]]], lengths, source) -> List[List[RankGroup]]:
    microbatches = []
    for m, ranks in enumerate(groups):
        cp_of = collections.Counter(i for rank in ranks for i in rank)
        runs: List[RankGroup] = []
        for r, ids in enumerate(ranks):
            key = sorted(ids)
            if runs and r > 0 and sorted(ranks[r - 1]) == key:
                last = runs[-1]
                runs[-1] = RankGroup(last.first_rank, last.ranks + 1, last.load)
            else:
                runs.append(RankGroup(r, 1, _load(ids, cp_of, lengths,
                                                  f'{source}: field "groups[{m}][{r}]"')))
        microbatches.append(runs)
    return microbatches


def _from_cp_groups(microbatches_json, lengths, source) -> List[List[RankGroup]]:
    microbatches = []
    for m, microbatch in enumerate(microbatches_json):
        groups = microbatch.get("cp_groups")
        if not isinstance(groups, list):
            raise ScheduleError(f'{source}: field "microbatches[{m}].cp_groups": missing')
        runs = []
        for g, group in enumerate(groups):
            size = int(group["size"])
            cp_of = {i: size for i in group["ids"]}
            runs.append(RankGroup(int(group["first_rank"]), size, _load(
                group["ids"], cp_of, lengths,
                f'{source}: field "microbatches[{m}].cp_groups[{g}]"')))
        microbatches.append(runs)
    return microbatches


def parse_schedule(document: Any, source: str = "schedule") -> Schedule:
    """The Schedule of a decoded document (any of the three formats)."""
    if not isinstance(document, dict):
        raise ScheduleError(f"{source}: not a JSON object")
    form = document.get("format")
    if form in ("dcpsched.schedule_run.v1", "dcpsched.schedule_run.v2") and \
            document.get("ok") is not True:
        raise ScheduleError(f"{source}: the scheduler failed (ok is not true): "
                            f"{document.get('error', 'no error given')}; no schedule to replay")
    lengths = _lengths(document, source)
    if form == "dcpsched.schedule_run.v2":
        microbatches = _from_cp_groups(document.get("microbatches") or [], lengths, source)
        total_gpus = int(document["parameters"]["total_gpus"])
    elif form in ("dcpsched.schedule_run.v1", "dcpsched.schedule.v1"):
        groups = document.get("groups")
        if not isinstance(groups, list):
            raise ScheduleError(f'{source}: field "groups": missing or not a list')
        microbatches = _from_rank_lists(groups, lengths, source)
        total_gpus = int(document["parameters"]["total_gpus"] if "parameters" in document
                         else document["total_gpus"])
    else:
        raise ScheduleError(f'{source}: field "format": {form!r} is not a schedule replay reads; '
                            'use dcpsched.schedule_run.v1 or .v2 (dcpsched schedule --format '
                            'json [--compact]) or dcpsched.schedule.v1')
    return Schedule(form, total_gpus, lengths, microbatches)


def read_schedule(path: pathlib.Path) -> Schedule:
    """Reads and parses a schedule file."""
    try:
        document = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ScheduleError(f"{path}: not valid JSON: {error}") from None
    return parse_schedule(document, str(path))
