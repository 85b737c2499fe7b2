"""The kill matrix's cache: what each layer's tests did to each mutant of one core.

mutation/run_mutants.py --matrix keeps one JSON line per mutant and layer in
<build-root>/cache/<core hash>.matrix.jsonl:

  {"id": mutant, "layer": layer, "key": key, "kills": {test: how}, "seconds": s}
      (a fuzz layer's row adds "ttk", its time to kill, or null)

and one line per layer listing every test the layer can name, so a report made
from the cache alone (no build) can list the tests that killed nothing too:

  {"listing": layer, "key": key, "tests": {test: the file it is defined in}}

A row stands while its key (the suite hash and the settings the layer depends
on, run_mutants.layer_key) is the one asked for; rows of other keys stay in the
file and are ignored. The file only grows: a run appends, a later row of the
same mutant, layer and key replaces an earlier one when the file is read.

Why a separate cache for the matrix: the nightly tier runs the night's mutants
in eight shards on eight machines, and one report over all of them is made
from their eight files. merge() takes another machine's file, and refuses one
written for another core: a mutant id names a mutation of one version of
core/, so rows of another core describe other mutants.
"""

import json
import os

FUZZ_LAYERS = ("fuzz", "fuzz-empty")


def file_name(core):
  """The cache file's name for a core hash."""
  return f"{core}.matrix.jsonl"


class MatrixCache:
  """Kill-matrix rows and test listings for one core hash."""

  def __init__(self, root, core, fresh=False):
    os.makedirs(os.path.join(root, "cache"), exist_ok=True)
    self.core = core
    self.path = os.path.join(root, "cache", file_name(core))
    self.rows = {}  # (mutant id, layer, key) -> record
    self.listings = {}  # (layer, key) -> {test id: source file}
    if fresh and os.path.exists(self.path):
      os.remove(self.path)
    if os.path.exists(self.path):
      for record in self._read(self.path):
        self._keep(record)

  @staticmethod
  def _read(path):
    with open(path, encoding="utf-8") as f:
      for number, line in enumerate(f, 1):
        if not line.strip():
          continue
        try:
          record = json.loads(line)
        except json.JSONDecodeError as error:
          raise ValueError(f"{path}:{number}: not a JSON line ({error.msg})") from None
        if not isinstance(record, dict) or "key" not in record or not (
            "listing" in record and isinstance(record.get("tests"), dict) or
            {"id", "layer", "kills", "seconds"} <= record.keys()):
          raise ValueError(f"{path}:{number}: neither a kill-matrix row nor a test listing")
        yield record

  def _keep(self, record):
    if "listing" in record:
      self.listings[(record["listing"], record["key"])] = record["tests"]
    else:
      self.rows[(record["id"], record["layer"], record["key"])] = record

  def _append(self, record):
    self._keep(record)
    with open(self.path, "a", encoding="utf-8") as f:
      f.write(json.dumps(record) + "\n")

  def get(self, mutant_id, layer, key):
    """The mutant's row for the layer under this key, or None."""
    return self.rows.get((mutant_id, layer, key))

  def add(self, mutant_id, layer, key, kills, seconds, ttk=None):
    record = {"id": mutant_id, "layer": layer, "key": key, "kills": kills,
              "seconds": round(seconds, 2)}
    if layer in FUZZ_LAYERS:
      record["ttk"] = ttk
    self._append(record)
    return record

  def listing(self, layer, key):
    """Every test id the layer can name under this key -> its source, or None."""
    return self.listings.get((layer, key))

  def add_listing(self, layer, key, tests):
    if self.listings.get((layer, key)) != tests:
      self._append({"listing": layer, "key": key, "tests": dict(sorted(tests.items()))})

  def merge(self, path):
    """Takes the rows and listings of another cache file of this core into this
    one (appended to its file, so later runs have them too). Returns (rows
    taken, rows that replaced a different row of the same mutant, layer and
    key: a flaky kill, the merged file's row standing). Raises ValueError for a
    file of another core, or one that is not a cache file."""
    name = os.path.basename(path)
    if name != file_name(self.core):
      other = name[:-len(".matrix.jsonl")] if name.endswith(".matrix.jsonl") else None
      raise ValueError(f"{path}: " + (f"the kill matrix of core {other}, not of this "
                                      f"core {self.core}: its mutants are other mutations"
                                      if other else
                                      f"not a kill-matrix cache (<core hash>.matrix.jsonl)"))
    if os.path.abspath(path) == os.path.abspath(self.path):
      return 0, 0
    taken = replaced = 0
    for record in list(self._read(path)):
      if "listing" in record:
        self.add_listing(record["listing"], record["key"], record["tests"])
        continue
      mine = self.get(record["id"], record["layer"], record["key"])
      if mine == record:
        continue
      replaced += mine is not None
      taken += 1
      self._append(record)
    return taken, replaced
