"""The kill matrix of a mutation run: which tests of which layer killed which mutant.

mutation/run_mutants.py --matrix runs every requested layer on every mutant
without stopping at the first kill and hands the result here as a
KillMatrix. This module computes, with no I/O:

  - per bucket (a file, an operator, or everything), each layer's kills
    alone, its unique kills (mutants no other requested layer kills), and the
    union of the layers that need no hand-computed expectation (properties,
    corpus replay and fuzz: NO_EXPECTATION);
  - the minimal (subsuming) mutants (Ammann, Delamaro and Offutt, "Establishing
    theoretical minimal sets of mutants", ICST 2014): mutant A subsumes B when
    A is killed by some test and every test that kills A kills B. Mutants with
    the same set of killing tests are indistinguishable; one representative
    (the least id) stands for each such group. The minimal set is the
    representatives of the groups whose killing set contains no other group's
    killing set strictly. A test set kills every killed mutant exactly when it
    kills every minimal one, and no smaller set of mutants has that property;
    tests/kill_matrix_test.py checks both by brute force;
  - the same layer figures over the minimal mutants of each bucket (the
    bucket's own mutants only: a file's minimal set is computed from that
    file's mutants);
  - the report of the mutation-testing-elements schema (version 2, the JSON
    that Stryker and Mull write and its HTML viewer reads);
  - the fuzz layers' time to kill (time_to_kill: kills within 1, 10 and 60 s,
    the median, the survivors) and the four lines every report ends with
    (end_lines: properties alone, fuzzers alone from the seed corpora and
    from an empty corpus, properties + corpus + fuzz), each "not run" when
    its layers did not run.

Golden vectors are not a scoring layer (a mutant only they kill is a gap):
their kills are kept in the matrix but left out of every figure here but the
golden column.
"""

import collections
import dataclasses

SCORING_LAYERS = ["unit", "properties", "corpus", "fuzz", "fuzz-empty", "exhaustive"]
# The union the closing line "properties + corpus + fuzz" counts: the layers
# with no hand-computed expectation that the earlier reports counted too
# (fuzz-empty and exhaustive have none either, and have their own columns).
NO_EXPECTATION = ["properties", "corpus", "fuzz"]
FUZZ_LAYERS = ["fuzz", "fuzz-empty"]


@dataclasses.dataclass
class MutantKills:
  """One mutant's row of the matrix: per layer that ran, the ids of the tests
  that killed it (empty: the layer ran and it survived) and how (failed,
  crashed, timeout) per test id."""
  id: str
  file: str
  operator: str
  kills: dict  # layer -> list of test ids
  how: dict = dataclasses.field(default_factory=dict)  # test id -> failed | crashed | timeout

  def killed_by(self, layers):
    return {t for layer in layers for t in self.kills.get(layer, [])}

  def killed_in(self, layer):
    return bool(self.kills.get(layer))


def scoring(layers):
  return [l for l in SCORING_LAYERS if l in layers]


def kill_set(row, layers):
  return frozenset(row.killed_by(scoring(layers)))


def non_equivalent(rows, equivalents, layers):
  """The rows that count: every mutant but an equivalent one that no scoring
  layer killed (a killed mutant listed as equivalent is a stale entry and
  counts as killed)."""
  return [r for r in rows if not (r.id in equivalents and not kill_set(r, layers))]


def minimal_mutants(rows, layers):
  """The minimal mutant set of `rows`: a sorted list of representative ids.

  Groups the killed mutants by their set of killing tests (scoring layers),
  keeps the groups whose set has no other group's set as a strict subset,
  and returns each kept group's least id.
  """
  groups = collections.defaultdict(list)
  for r in rows:
    killers = kill_set(r, layers)
    if killers:
      groups[killers].append(r.id)
  sets = list(groups)
  minimal = []
  for s in sets:
    if not any(other < s for other in sets):
      minimal.append(min(groups[s]))
  return sorted(minimal)


def subsumed_by(rows, layers):
  """mutant id -> the ids of the mutants that strictly subsume it (killing set a
  strict subset of its own), for the killed mutants."""
  sets = {r.id: kill_set(r, layers) for r in rows}
  return {a: sorted(b for b, sb in sets.items() if sb and sb < sa)
          for a, sa in sets.items() if sa}


@dataclasses.dataclass
class Figures:
  """A bucket's figures over some mutants."""
  mutants: int  # non-equivalent mutants (or minimal mutants)
  alone: dict  # layer -> killed by that layer
  unique: dict  # layer -> killed by that layer and no other requested scoring layer
  no_expectation: int  # killed by any of the NO_EXPECTATION layers that ran
  any: int  # killed by any scoring layer
  golden: int  # killed by golden (not scored)


def figures(rows, layers):
  ran = scoring(layers)
  alone = {l: sum(r.killed_in(l) for r in rows) for l in ran}
  unique = {l: sum(r.killed_in(l) and not any(r.killed_in(o) for o in ran if o != l)
                   for r in rows) for l in ran}
  free = [l for l in NO_EXPECTATION if l in ran]
  return Figures(
      mutants=len(rows), alone=alone, unique=unique,
      no_expectation=sum(any(r.killed_in(l) for l in free) for r in rows),
      any=sum(any(r.killed_in(l) for l in ran) for r in rows),
      golden=sum(r.killed_in("golden") for r in rows))


def buckets(rows):
  """(kind, name) -> rows, for kind file and operator, and ("all", "all")."""
  out = collections.defaultdict(list)
  for r in rows:
    out[("file", r.file)].append(r)
    out[("operator", r.operator)].append(r)
    out[("all", "all")].append(r)
  return out


def analyse(rows, equivalents, layers):
  """(kind, name) -> (figures over the non-equivalent mutants, figures over the
  bucket's minimal mutants, the minimal ids)."""
  counted = non_equivalent(rows, equivalents, layers)
  result = {}
  groups = buckets(counted)
  groups.setdefault(("all", "all"), [])  # present even with no mutant left to count
  for key, members in groups.items():
    minimal_ids = set(minimal_mutants(members, layers))
    minimal_rows = [r for r in members if r.id in minimal_ids]
    result[key] = (figures(members, layers), figures(minimal_rows, layers),
                   sorted(minimal_ids))
  return result


def markdown_tables(rows, equivalents, layers):
  """The report's matrix section: per file and per operator, over all
  non-equivalent mutants and over the minimal ones."""
  ran = scoring(layers)
  free = [l for l in NO_EXPECTATION if l in ran]
  analysis = analyse(rows, equivalents, layers)
  free_name = " + ".join(free) if free else "none ran"
  head = (["mutants"] + [f"{l} alone" for l in ran] + [f"{l} unique" for l in ran] +
          [f"{free_name} (no hand-computed expectation)", "any layer"] +
          (["golden"] if "golden" in layers else []))

  def table(kind, title, which):
    out = [f"#### {title}", "", f"| {kind} | " + " | ".join(head) + " |",
           "| --- | " + " | ".join("---:" for _ in head) + " |"]
    keys = sorted(k for k in analysis if k[0] == kind) + [("all", "all")]
    for k in keys:
      f = analysis[k][which]
      cells = ([f.mutants] + [f.alone[l] for l in ran] + [f.unique[l] for l in ran] +
               [f.no_expectation, f.any] + ([f.golden] if "golden" in layers else []))
      label = "**all**" if k[0] == "all" else f"`{k[1]}`"
      out.append(f"| {label} | " + " | ".join(str(c) for c in cells) + " |")
    return out + [""]

  text = []
  for which, what in ((0, "non-equivalent mutants"), (1, "minimal (subsuming) mutants")):
    text += [f"### Kill matrix over the {what}", ""]
    if which == 1:
      text += ["A mutant A subsumes B when some test kills A and every test that kills A "
               "kills B (Ammann, Delamaro, Offutt 2014); mutants killed by the same tests "
               "count once. The minimal set keeps one mutant per group that no other group "
               "subsumes strictly; each bucket's minimal set is computed from that bucket's "
               "mutants alone, so the rows do not add up to the total. Survivors of every "
               "layer are outside it (nothing kills them).", ""]
    text += table("file", "Per file", which)
    text += table("operator", "Per operator", which)
  return text, analysis


def summary_lines(rows, equivalents, layers, fuzz_seconds, fuzz_empty_seconds=60,
                  times=None):
  """The closing figures of a matrix run, one line each; the last four are
  end_lines' (times: layer -> {mutant id: seconds to its first kill, or None})."""
  ran = scoring(layers)
  counted = non_equivalent(rows, equivalents, layers)
  f = figures(counted, layers)
  minimal_ids = set(minimal_mutants(counted, layers))
  fm = figures([r for r in counted if r.id in minimal_ids], layers)
  n = f.mutants
  lines = []
  if "corpus" in ran:
    lines.append(f"corpus replay alone: {f.alone['corpus']} of {n}")
  free = [l for l in NO_EXPECTATION if l in ran]
  lines.append(f"minimal mutants: {fm.mutants} (of the {f.any} killed); of them "
               + ", ".join(f"{l} alone killed {fm.alone[l]}" for l in ran)
               + (f", {' + '.join(free)} {fm.no_expectation}" if len(free) > 1 else ""))
  union = f.no_expectation if all(l in ran for l in NO_EXPECTATION) else None
  times = times or {}
  return lines + end_lines(
      n, {l: f.alone[l] for l in ran}, union, fuzz_seconds, fuzz_empty_seconds,
      median_time(times.get("fuzz-empty", {}), {r.id for r in counted}))


def median_time(times, counted):
  """The median time to kill (seconds) over the counted mutants killed, or None."""
  killed = sorted(t for m, t in times.items() if m in counted and t is not None)
  if not killed:
    return None
  middle = len(killed) // 2
  return killed[middle] if len(killed) % 2 else (killed[middle - 1] + killed[middle]) / 2


def seconds_text(seconds):
  return f"{seconds:.1f}" if seconds < 100 else f"{seconds:.0f}"


def end_lines(n, alone, union, fuzz_seconds, fuzz_empty_seconds, empty_median):
  """The four lines a report ends with. alone: layer -> its kills alone, for
  the layers that ran on every mutant of the run (None: it ran, but only on
  the mutants earlier layers left alive); a layer missing did not run.
  union: the properties + corpus + fuzz kills, None when not measured."""
  def figure(layer, text):
    if layer not in alone:
      return "not run"
    if alone[layer] is None:
      return ("not measured alone (it ran only on the mutants earlier layers left "
              "alive; --matrix runs it on all)")
    return text.format(k=alone[layer])

  if empty_median is None:
    median = "n/a (none killed)"
  else:
    median = f"{seconds_text(empty_median)} s"
  if all(l in alone for l in NO_EXPECTATION):
    union_text = (f"{union} of {n}" if union is not None else
                  "not measured (a first-kill run with the unit layer before them; "
                  "--matrix measures it)")
  else:
    union_text = "not run (" + ", ".join(l for l in NO_EXPECTATION if l not in alone) + \
        " did not run)"
  return [
      "properties alone: " + figure("properties",
                                    f"{{k}} of {n} non-equivalent mutants killed"),
      f"fuzzers alone, seed corpora, {fuzz_seconds} s per target: " +
      figure("fuzz", f"{{k}} of {n}"),
      f"fuzzers alone, empty corpus, {fuzz_empty_seconds} s per target: " +
      figure("fuzz-empty", f"{{k}} of {n}, median time to kill {median}"),
      f"properties + corpus + fuzz (no hand-computed expectations): {union_text}",
  ]


def time_to_kill(times, counted, limits=(1, 10, 60)):
  """A fuzz layer's time-to-kill figures over the counted mutant ids it ran
  on: times is {mutant id: seconds to the first kill, or None (survived)}.
  Returns (mutants, {limit: killed within limit s}, killed, median or None,
  sorted survivor ids)."""
  ran = {m: t for m, t in times.items() if m in counted}
  kills = [t for t in ran.values() if t is not None]
  return (len(ran), {limit: sum(t <= limit for t in kills) for limit in limits}, len(kills),
          median_time(ran, counted), sorted(m for m, t in ran.items() if t is None))


# --- the mutation-testing-elements report -------------------------------------

def status_of(row, equivalents, layers):
  """Killed, Timeout (every kill a hang) or Survived; Ignored for an
  equivalent survivor."""
  killers = kill_set(row, layers)
  if not killers:
    return "Ignored" if row.id in equivalents else "Survived"
  if all(row.how.get(t) == "timeout" for t in killers):
    return "Timeout"
  return "Killed"


def elements_report(rows, mutants, sources, tests, equivalents, layers, config):
  """The mutation-testing-elements report (schemaVersion 2) as a dict.

  rows: MutantKills; mutants: id -> the generator's record (line, column,
  operator, before, after, description); sources: file -> its text;
  tests: test id -> (test file, display name), every test that may appear in
  killedBy; config: the run's settings (free-format).
  """
  files = collections.defaultdict(list)
  for r in rows:
    m = mutants[r.id]
    killers = sorted(kill_set(r, layers))
    # A mutant spans its original text: the generator records where it starts
    # and the text, with runs of whitespace squeezed, so the end is exact on
    # one line and approximate when the text spans lines.
    end_column = m["column"] + max(1, len(m["before"]))
    entry = {
        "id": r.id, "mutatorName": m["operator"], "replacement": m["after"],
        "description": m["description"],
        "location": {"start": {"line": m["line"], "column": m["column"]},
                     "end": {"line": m["line"], "column": end_column}},
        "status": status_of(r, equivalents, layers),
        "killedBy": killers,
    }
    if entry["status"] == "Ignored":
      entry["statusReason"] = "equivalent: " + equivalents[r.id]
    elif r.kills.get("golden") and not killers:
      entry["statusReason"] = "killed by the golden vectors only: " + \
          ", ".join(sorted(r.kills["golden"]))
    elif killers:
      entry["statusReason"] = "; ".join(
          f"{layer}: " + ", ".join(f"{t} ({r.how.get(t, 'failed')})" for t in sorted(ids))
          for layer, ids in r.kills.items() if ids)
    files[r.file].append(entry)
  test_files = collections.defaultdict(list)
  for test_id, (test_file, name) in sorted(tests.items()):
    test_files[test_file].append({"id": test_id, "name": name})
  return {
      "schemaVersion": "2",
      "thresholds": {"high": 90, "low": 80},
      "projectRoot": ".",
      "config": config,
      "framework": {"name": "dcpsched mutation/run_mutants.py"},
      "files": {f: {"language": "cpp", "source": sources[f], "mutants": ms}
                for f, ms in sorted(files.items())},
      "testFiles": {f: {"tests": ts} for f, ts in sorted(test_files.items())},
  }
