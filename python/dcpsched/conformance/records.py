"""What one rank received from upstream's pipeline, as plain data, and the
comparison of two such records.

of_result() takes wrap_data_iterator's 4-tuple (data iterator(s), microbatch
count, FLOPs sums) and drains the iterator(s): each microbatch is its keys in
order and, per tensor, dtype, shape and SHA-256 of its bytes (the values too
for small tensors: cu_seqlens, max_seqlen, local_cp_size), so two records
are equal only if every tensor is equal bit for bit. Scalars keep their
type and exact value (floats by repr). of_error() is the exception's type
and message. difference() names the first place two records differ, or
returns None.
"""

import hashlib
from typing import Optional

import torch

# Tensors up to this many elements are recorded with their values.
SMALL = 64
# Fields of a record that are measurements, or the harness's own checks of
# the run (did the scheduler get the generated batch?), not results: never
# compared.
NOT_COMPARED = ("seconds", "run_seconds", "scheduler_seconds", "scheduler_calls",
                "batch_as_generated")


def value(value):  # pylint: disable=redefined-outer-name
    """The record of one value: a tensor's dtype, shape and SHA-256 (its
    values too when small), a scalar's type and exact value."""
    return _value(value)


def _value(value):
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        record = {"tensor": str(t.dtype), "shape": list(t.shape),
                  "sha256": hashlib.sha256(t.numpy().tobytes()).hexdigest()}
        if t.numel() <= SMALL:
            record["values"] = t.tolist()
        return record
    if isinstance(value, float):
        return {"type": "float", "repr": repr(value)}
    return {"type": type(value).__name__, "repr": repr(value)}


def _drain(iterator, kept=None):
    """The records of what `iterator` yields; the items themselves are
    appended to `kept` (a list) when given."""
    if iterator is None:
        return None
    microbatches = []
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return microbatches
        if kept is not None:
            kept.append(item)
        if isinstance(item, dict):
            microbatches.append({"keys": list(item), "values": {k: _value(v)
                                                                for k, v in item.items()}})
        else:
            microbatches.append({"item": _value(item)})


def of_result(result, kept=None) -> dict:
    """The record of wrap_data_iterator's (iterator, count, sum, squared sum).
    With `kept` (a list), the microbatches drained are appended to it, one
    list per VPP stage (one list without VPP; nothing where the iterator is
    None), as they were yielded: records are made as each is drained, so
    later changes to them do not reach the record."""
    iterator, count, seqlen_sum, squared_sum = result
    def drain(stage):
        if kept is None or stage is None:
            return _drain(stage)
        kept.append([])
        return _drain(stage, kept[-1])
    if isinstance(iterator, list):
        stages = [drain(stage) for stage in iterator]
    else:
        stages = None
    return {"iterator": "list" if isinstance(iterator, list) else type(iterator).__name__,
            "stages": stages,
            "microbatches": None if isinstance(iterator, list) else drain(iterator),
            "num_micro_batches": _value(count), "seqlen_sum": _value(seqlen_sum),
            "seqlen_squared_sum": _value(squared_sum)}


def of_error(error) -> dict:
    """The record of a raised exception."""
    return {"error": type(error).__name__, "message": str(error)}


def _first_difference(a, b, path) -> Optional[str]:
    if type(a) is not type(b):
        return f"{path}: {_short(a)} vs {_short(b)}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} vs {list(b)}"
        for key in a:
            if key in NOT_COMPARED:
                continue
            found = _first_difference(a[key], b[key], f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries vs {len(b)}"
        for index, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {_short(a)} vs {_short(b)}"


def _short(value, limit=120):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def difference(upstream: dict, drop_in: dict) -> Optional[str]:
    """Where the records differ (upstream's value first), or None if equal."""
    if set(upstream) - set(NOT_COMPARED) != set(drop_in) - set(NOT_COMPARED):
        return (f"upstream {_short(upstream.get('error', 'answered'))} vs drop-in "
                f"{_short(drop_in.get('error', 'answered'))}: "
                f"{_short(upstream.get('message', ''))} / {_short(drop_in.get('message', ''))}")
    keys = [k for k in upstream if k not in NOT_COMPARED]
    return _first_difference({k: upstream[k] for k in keys}, {k: drop_in[k] for k in keys}, "")
