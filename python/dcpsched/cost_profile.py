"""Cost profiles: one measured transformer layer, as JSON (dcpsched.cost_profile.v1).

A cost profile holds what one GPU spends on one layer, forward plus
backward, so that a schedule's step can be priced in seconds instead of
dcpsched's abstract work (sum of len^2 / cp). The model that prices a rank
from it is dcpsched.cost_model; this module is the file format only:
reading, checking, finding shipped profiles by name, and writing them with
stable bytes. It needs nothing but the standard library.

    {
      "schema": "dcpsched.cost_profile.v1",
      "name": "h200-llama3-8b",
      "description": "one line",
      "device": {"name": "NVIDIA H200", "sms": 132, "memory_gib": 139.8},
      "software": {"torch": "2.11.0+cu130", "cuda": "13.0"},
      "model": {"name": "llama3-8b", "hidden": 4096, "q_heads": 32, "kv_heads": 8,
                "head_dim": 128, "ffn": 14336, "tensor_parallel": 1},
      "dtype": "bf16",
      "passes": "forward+backward",
      "interpolation": "log-log",
      "attention": {"causal": {"lengths": [64, ...], "seconds": [...]},
                    "full":   {"lengths": [64, ...], "seconds": [...]}},
      "non_attention": {"tokens": [128, ...], "seconds": [...]},
      "communication": null | {"gpus_per_node": 8, "intra_node_gb_per_s": 400.0,
                               "inter_node_gb_per_s": 50.0, "kv_bytes_per_token": 2048},
      "validation": {"method": "...", "cases": 12, "max_relative_error": ...,
                     "mean_relative_error": ...},
      "provenance": {"source": "...", "measured": "2026-12-04",
                     "raised_points": [{"table": ..., "at": ..., "measured": ...,
                                        "raised_to": ...}], "note": "..."}
    }

What a reader must check (load_profile and parse_profile do, and raise
ProfileError naming the field): `schema` is exactly dcpsched.cost_profile.v1;
`name` is a non-empty string; `interpolation` is "log-log"; the three tables
(attention.causal, attention.full, non_attention) each have points
(`lengths`, or `tokens` for non_attention) that are strictly increasing
positive integers and as many `seconds`, each finite and > 0;
`communication` is absent, null, or has a positive integer `gpus_per_node`
and positive finite bandwidths (GB/s, 1e9 bytes) and bytes per token. Every
other key is information for people (device, software, model, dtype,
passes, validation, provenance) and is not interpreted; readers ignore keys
they do not know. The model's heads and FFN are per GPU, after the
tensor-parallel split. `communication` is a model, never a measurement.

Shipped profiles live in profiles/<name>.json at the top of the source tree
(made by scripts/make_cost_profiles.py) and in the installed package as
dcpsched/profiles/<name>.json (package data); load_profile finds them by
name, or reads any path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

SCHEMA = "dcpsched.cost_profile.v1"
INTERPOLATION = "log-log"

# Where shipped profiles are looked for, in order: next to this module (the
# installed package, a wheel, a CMake build tree) and the source tree's
# profiles/ (PYTHONPATH=python).
_PACKAGE_PROFILES = pathlib.Path(__file__).resolve().parent / "profiles"
_SOURCE_PROFILES = pathlib.Path(__file__).resolve().parents[2] / "profiles"


class ProfileError(ValueError):
    """A cost profile that cannot be used; the message names the field."""


@dataclasses.dataclass(frozen=True)
class Table:
    """Measured seconds at strictly increasing positive integer points."""

    points: Tuple[int, ...]
    seconds: Tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class Communication:
    """The modelled interconnect: ring attention's KV exchange (not measured)."""

    gpus_per_node: int
    intra_node_gb_per_s: float
    inter_node_gb_per_s: float
    kv_bytes_per_token: float


@dataclasses.dataclass(frozen=True)
class Profile:
    """A checked cost profile: the three tables, the interconnect, the document."""

    name: str
    causal: Table
    full: Table
    non_attention: Table
    communication: Optional[Communication]
    document: Dict[str, Any]


def _field(source: str, field: str, problem: str) -> ProfileError:
    return ProfileError(f'{source}: field "{field}": {problem}')


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _object(document: Any, field: str, source: str) -> Dict[str, Any]:
    if not isinstance(document, dict):
        raise _field(source, field, f"must be an object, got {type(document).__name__}")
    return document


def _member(parent: Dict[str, Any], key: str, field: str, source: str) -> Any:
    if key not in parent:
        raise _field(source, field, "missing; see docs/cost_model_python.md for the format")
    return parent[key]


def _parse_table(document: Any, field: str, points_key: str, source: str) -> Table:
    table = _object(document, field, source)
    points = _member(table, points_key, f"{field}.{points_key}", source)
    seconds = _member(table, "seconds", f"{field}.seconds", source)
    for key, values in ((points_key, points), ("seconds", seconds)):
        if not isinstance(values, list) or not values:
            raise _field(source, f"{field}.{key}", "must be a non-empty list")
    if len(points) != len(seconds):
        raise _field(source, f"{field}.seconds",
                     f"has {len(seconds)} values for {len(points)} {points_key}; "
                     "give one per point")
    for i, point in enumerate(points):
        where = f"{field}.{points_key}[{i}]"
        if not _is_int(point) or point <= 0:
            raise _field(source, where, f"{point!r} is not a positive integer")
        if i and point <= points[i - 1]:
            raise _field(source, where, f"{point} does not exceed {points[i - 1]} before it; "
                         f"{points_key} must be strictly increasing")
    for i, value in enumerate(seconds):
        where = f"{field}.seconds[{i}]"
        if not _is_number(value) or not math.isfinite(value) or value <= 0:
            raise _field(source, where, f"{value!r} is not a finite number > 0")
    return Table(tuple(points), tuple(float(s) for s in seconds))


def _parse_communication(document: Any, source: str) -> Optional[Communication]:
    if document is None:
        return None
    block = _object(document, "communication", source)
    values = {}
    for key in ("gpus_per_node", "intra_node_gb_per_s", "inter_node_gb_per_s",
                "kv_bytes_per_token"):
        value = _member(block, key, f"communication.{key}", source)
        valid = _is_int(value) if key == "gpus_per_node" else _is_number(value)
        if not valid or not math.isfinite(value) or value <= 0:
            kind = "a positive integer" if key == "gpus_per_node" else "a finite number > 0"
            raise _field(source, f"communication.{key}", f"{value!r} is not {kind}")
        values[key] = value
    return Communication(**values)


def parse_profile(document: Any, source: str = "profile") -> Profile:
    """Checks a decoded profile document; ProfileError names the bad field."""
    document = _object(document, "(document)", source)
    schema = _member(document, "schema", "schema", source)
    if schema != SCHEMA:
        raise _field(source, "schema", f"unknown schema {schema!r}; expected {SCHEMA!r}")
    name = _member(document, "name", "name", source)
    if not isinstance(name, str) or not name:
        raise _field(source, "name", "must be a non-empty string")
    interpolation = _member(document, "interpolation", "interpolation", source)
    if interpolation != INTERPOLATION:
        raise _field(source, "interpolation",
                     f"{interpolation!r} is not supported; only {INTERPOLATION!r}")
    attention = _object(_member(document, "attention", "attention", source), "attention", source)
    causal = _parse_table(_member(attention, "causal", "attention.causal", source),
                          "attention.causal", "lengths", source)
    full = _parse_table(_member(attention, "full", "attention.full", source),
                        "attention.full", "lengths", source)
    non_attention = _parse_table(_member(document, "non_attention", "non_attention", source),
                                 "non_attention", "tokens", source)
    communication = _parse_communication(document.get("communication"), source)
    return Profile(name, causal, full, non_attention, communication, document)


def shipped_profile_names() -> List[str]:
    """Names of the profiles shipped with the package (or in the source tree)."""
    for directory in (_PACKAGE_PROFILES, _SOURCE_PROFILES):
        names = sorted(path.stem for path in directory.glob("*.json"))
        if names:
            return names
    return []


def profile_path(name_or_path: Union[str, pathlib.Path]) -> pathlib.Path:
    """The file of a shipped profile's name, or the path itself if it is a file."""
    path = pathlib.Path(name_or_path)
    if path.is_file():
        return path
    text = str(name_or_path)
    if "/" not in text and not text.endswith(".json"):
        for directory in (_PACKAGE_PROFILES, _SOURCE_PROFILES):
            candidate = directory / f"{text}.json"
            if candidate.is_file():
                return candidate
    known = ", ".join(shipped_profile_names()) or "none found"
    raise ProfileError(f"{text}: no such profile file, and not the name of a shipped "
                       f"profile (shipped: {known})")


def load_profile(name_or_path: Union[str, pathlib.Path]) -> Profile:
    """Reads and checks a profile, by shipped name ("h200-llama3-8b") or path."""
    path = profile_path(name_or_path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ProfileError(f"{path}: not valid JSON: {error}") from None
    return parse_profile(document, str(path))


def running_maximum(table: str, points: Sequence[int], seconds: Sequence[float]
                    ) -> Tuple[List[float], List[Dict[str, Any]]]:
    """The table made non-decreasing, and a record of every point raised.

    A measured time below an earlier one (noise, a kernel change between
    sizes) would make a longer sample cheaper than a shorter one; each such
    point is raised to the running maximum and recorded as
    {"table", "at", "measured", "raised_to"} for provenance.raised_points.
    """
    raised_seconds, raised = [], []
    highest = 0.0
    for point, value in zip(points, seconds):
        if value < highest:
            raised.append({"table": table, "at": point, "measured": value, "raised_to": highest})
            value = highest
        highest = value
        raised_seconds.append(value)
    return raised_seconds, raised


def _format(value: Any, indent: int) -> str:
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(key)}: {_format(item, indent + 2)}"
                 for key, item in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        items = [inner + _format(item, indent + 2) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(item) for item in value) + "]"
    return json.dumps(value)


def dump_profile(document: Dict[str, Any]) -> str:
    """The profile as text: checked first, keys in the document's order,
    objects indented, lists of numbers on one line, floats shortest
    round-trip (so they read back bit for bit), a final newline."""
    parse_profile(document, str(document.get("name", "profile")))
    return _format(document, 0) + "\n"
