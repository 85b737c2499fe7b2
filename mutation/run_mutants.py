#!/usr/bin/python3
"""Mutation testing of core/: every generated mutant, scored per layer of the suite.

    mutation/run_mutants.py                    every mutant; writes build/mutation/results.md
    mutation/run_mutants.py --sample 20 --seed 1   a reproducible sample, stratified by
                                               file and operator
    mutation/run_mutants.py --slice 2/3        the second of 3 disjoint stratified parts
    mutation/run_mutants.py --shard 1/4        the first of 4 shards of the selection
    mutation/run_mutants.py --matrix           the kill matrix (below)
    mutation/run_mutants.py -j 2               two mutants at a time
    mutation/run_mutants.py ID...              just these (ids: generate_mutants.py --list)
    mutation/run_mutants.py --ids-from FILE    just the ids FILE lists (a committed sample,
                                               e.g. mutation/cost_aware_sample.txt)
    mutation/run_mutants.py --named            also the hand-written multi-line mutants

The mutants come from mutation/generate_mutants.py (the C++ AST, libclang) as
mutant schemata: one instrumented g++ build of the tests and one clang-14
libFuzzer build (ASan+UBSan) hold them all, and DCPSCHED_MUTANT=<id> picks
the live one at run time. For each mutant the layers run one after another,
with fixed seeds, until one kills it:

  unit        every GoogleTest program of tests/ but golden_test
  properties  every RapidCheck property program (fixed seed and case count)
  corpus      every fuzz_<what>_replay program (the committed corpora)
  fuzz        only for mutants still alive: the fuzz targets for the mutated
              file, each --fuzz-seconds from the committed corpus (new inputs
              go to a scratch directory)
  fuzz-empty  only when named in --layers, only for mutants still alive: the
              same targets, each --fuzz-empty-seconds (default 60) from an EMPTY
              corpus (the target's dictionary kept), stopping at the first
              target that kills
  exhaustive  only when named in --layers: tests/exhaustive_check.cc, every
              problem of explicit finite sets through every check
              (EXHAUSTIVE_SETS, 74880 problems, one GoogleTest test per
              scheduler)
  golden      last, only for mutants still alive: golden_test

Both fuzz layers record each mutant's time to kill (as Magma and FuzzBench
report bugs): wall time from the start of the layer's first target to the
exit of the target that found the kill (every earlier target's whole run
included), with that target and libFuzzer's count of executions to the kill
(-seed= fixes the inputs tried; the seconds vary with the machine's load).
The report tabulates per fuzz layer the kills within 1, 10 and 60 s, the
median time to kill and the survivors, and ends with four lines:
  properties alone: K of N non-equivalent mutants killed
  fuzzers alone, seed corpora, S s per target: K of N
  fuzzers alone, empty corpus, S s per target: K of N, median time to kill T s
  properties + corpus + fuzz (no hand-computed expectations): K of N
each "not run" when its layers did not run (and "not measured" when a
first-kill run did not run the layer on every mutant).

A program that fails kills the mutant; one that crashes (a signal) or
outlives its timeout (a hang) kills it too, and is reported as such. The
unmutated build runs every layer first and must pass; its times set each
program's timeout (10 x its time, at least --min-timeout seconds).

--matrix runs every requested layer on every mutant, and every program of
each layer (GoogleTest programs without --gtest_fail_fast; fuzz-empty still
stops at its first killing target), with no stop at the first kill, and
records which tests killed it: GoogleTest names (the ctest names
gtest_discover_tests gives), corpus replay programs and fuzz targets
(<target>:empty in fuzz-empty); a crash or a hang is charged to the test that was running. The
report gains per file and per operator each layer's kills alone, its unique
kills, the union of properties, corpus and fuzz, and the same over the
minimal (subsuming) mutants (mutation/kill_matrix.py); a JSON report in the
mutation-testing-elements schema (version 2, what Stryker and Mull write)
goes beside it, <out>.json, with every mutant's killedBy. Matrix rows are
cached per mutant and layer in <build-root>/cache/<core hash>.matrix.jsonl
(mutation/matrix_cache.py); the control run runs only when some mutant's
rows are missing. One report over runs made on several machines (the nightly
tier's eight mutation shards):

    mutation/run_mutants.py --matrix [the shards' layers and settings] \
        --merge-cache shard-*/<core hash>.matrix.jsonl --cache-only

--merge-cache takes other caches of the same core into this one; --cache-only
builds nothing and runs no mutant: it reports the selected mutants that have
a row for every layer under the suite and settings given, and its selection
line says how many it left out.

mutation/equivalent.txt names the mutants judged equivalent (`<id> <reason>`).
A survivor listed there counts as equivalent; one listed there but killed is
reported as a stale entry.

Results are cached in <build-root>/cache/<core hash>.jsonl by mutant id: an
interrupted or repeated run resumes, and rerunning after the suite changed
reruns only the survivors (kills stand). --fresh ignores the cache.

Writes <build-root>/results.md (<build-root>/results-sample.md for a partial
selection; --out names another), which holds the line
  mutation score: K of N non-equivalent mutants killed without golden vectors (E equivalent, T generated)
and prints it; the report and the output go on with the kill matrix's figures
(with --matrix: corpus replay alone, minimal mutants) and the four lines above.

mutation/time_only.txt names the mutants that only change the running time:
not equivalent, they count like any mutant and the report lists them apart.
"""

import argparse
import atexit
import concurrent.futures
import dataclasses
import datetime
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import kill_matrix
import matrix_cache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ["unit", "properties", "corpus", "fuzz", "fuzz-empty", "exhaustive", "golden"]
PRE_GOLDEN = LAYERS[:-1]
FUZZ_LAYERS = ["fuzz", "fuzz-empty"]
# fuzz-empty (up to --fuzz-empty-seconds, 60 s, per target) and exhaustive
# run only when asked for.
DEFAULT_LAYERS = [l for l in LAYERS if l not in ("fuzz-empty", "exhaustive")]
# The sets the exhaustive layer's program checks: 74880 problems, every
# length of the test command's sets with n = 0..3, a few seconds unmutated
# (the test command's 599168 would cost about 40 s a mutant). Written out,
# not named, so a change of the named sets leaves the layer as measured.
EXHAUSTIVE_SETS = ("G=1..16 n=0..3 lens=1,m-1,m,m+1,2m-1,2m,2m+1,4m mslpr=4 min_cp=1,2 "
                   "vpp=none,2 max_num_seqs=none,1")
# Arguments a layer's program takes besides GoogleTest's.
PROGRAM_ARGS = {"exhaustive_check": [f"--sets={EXHAUSTIVE_SETS}"]}
# The unit and property tests are compiled into one executable per layer
# (CMakeLists.txt), but for the runner a program is still one test file
# (tests/checker_test.cc -> checker_test): its tests run as that executable
# with a GoogleTest filter of exactly them, so that a mutant runs only the
# files whose tests reach its point, the file named after it first, and a
# kill names the file. Two test files with 2 MB of golden vectors to read
# at start-up are executables of their own.
WHOLE_PROGRAM_TESTS = ("golden_test", "reference_oracle_test")
# A test file's name suffix -> its layer's executable.
LAYER_EXECUTABLES = {"_test": "unit_tests", "_properties": "property_tests"}


def program_executable(program):
  """The executable that holds a program's tests (see WHOLE_PROGRAM_TESTS)."""
  for suffix, executable in LAYER_EXECUTABLES.items():
    if program.endswith(suffix) and program not in WHOLE_PROGRAM_TESTS:
      return executable
  return program
# Time to kill is counted within these limits, seconds (the report's table).
TTK_LIMITS = (1, 10, 60)
# Every build here: an index past a vector's end aborts (a crash kill) instead
# of reading whatever lies there, as in the sanitized builds.
CHECKED_BUILD_FLAGS = ["-D_GLIBCXX_ASSERTIONS"]
# The g++ build also traps on undefined integer arithmetic (no runtime
# library: the trap is a crash kill), as the test command's UBSan stages would
# report it; the libFuzzer builds have UBSan itself.
GCC_TRAPPING_UB = ["-fsanitize=signed-integer-overflow,shift,integer-divide-by-zero",
                   "-fsanitize-undefined-trap-on-error"]
FUZZ_TARGETS = ["fuzz_packing_aware_differential", "fuzz_packing_aware", "fuzz_vpp_align",
                "fuzz_legacy", "fuzz_dp_balanced", "fuzz_schedule_file"]
# The targets most likely to kill a mutant of a file, first. The order
# decides the time to kill of both fuzz layers (a target's whole run counts
# before the next starts) and the cost of fuzz-empty, which stops at its
# first kill; it never decides whether a layer kills (each target runs alone,
# from its own seed). From an empty corpus fuzz_schedule_file has killed no
# mutant in the reports so far (it must first find a schedule's JSON), while
# the scheduler targets kill the checker's and the compact form's mutants
# within seconds, so those come first.
FUZZ_TARGETS_FOR = {
    "core/vpp_align.cc": ["fuzz_vpp_align", "fuzz_packing_aware_differential"],
    "core/dp_balanced.cc": ["fuzz_dp_balanced"],
    "core/legacy.cc": ["fuzz_legacy"],
    "core/group_layout.cc": ["fuzz_legacy"],
    "core/group_layout.h": ["fuzz_legacy"],
    "core/checker.cc": ["fuzz_packing_aware", "fuzz_schedule_file"],
    "core/quality.cc": ["fuzz_packing_aware"],
    "core/compact_schedule.cc": ["fuzz_packing_aware_differential", "fuzz_schedule_file"],
    "core/validate.cc": ["fuzz_packing_aware", "fuzz_dp_balanced", "fuzz_legacy"],
}
# Any other file is code of the packing-aware scheduler: the differential
# target (core == oracle, under ASan + UBSan) judges it whole.
DEFAULT_FUZZ_TARGETS = ["fuzz_packing_aware_differential"]
# Unit test programs most likely to kill a mutant of a file, first.
UNIT_FIRST = {
    "core/group_fit_index.cc": ["group_fit_index_test"],
    "core/group_fit_index.h": ["group_fit_index_test"],
    "core/remaining_samples.cc": ["remaining_samples_test"],
    "core/remaining_samples.h": ["remaining_samples_test"],
    "core/schedule_loop.cc": ["packing_aware_test"],
    "core/compact_schedule.cc": ["compact_schedule_test"],
    "core/quality.cc": ["quality_test"],
    "core/cost_profile.cc": ["cost_profile_test"],
    "core/gpu_time.cc": ["gpu_time_test"],
}


# Process groups of the programs running now: however the runner ends, they
# are killed (a mutant's program may never end on its own).
LIVE_GROUPS = set()
STOPPING = threading.Event()  # set on SIGINT/SIGTERM: start no more programs


def kill_live_groups(*_):
  for group in list(LIVE_GROUPS):
    try:
      os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
      pass


def stop_on_signal(signum, _frame):
  STOPPING.set()
  kill_live_groups()
  raise SystemExit(128 + signum)


@dataclasses.dataclass
class Outcome:
  """What the suite did to one mutant."""
  id: str
  layer: str  # the killing layer, or "survived"
  how: str  # failed | crashed | timeout | survived
  program: str  # the program that killed it
  seconds: float
  suite: str  # hash of the suite that produced it
  # fuzz layer -> its time to kill (Suite.run_fuzz), None if it ran and did not
  # kill; only the fuzz layers that ran on the mutant (a first-kill run stops).
  ttk: dict = dataclasses.field(default_factory=dict)


def sha256_of(paths, extra=""):
  digest = hashlib.sha256(extra.encode())
  for path in sorted(paths):
    digest.update(path.encode())
    with open(os.path.join(REPO, path), "rb") as f:
      digest.update(f.read())
  return digest.hexdigest()[:16]


def tracked(*roots):
  files = subprocess.run(["git", "-C", REPO, "ls-files", *roots], capture_output=True,
                         text=True, check=True).stdout.split()
  return [f for f in files if os.path.isfile(os.path.join(REPO, f))]


def core_hash():
  """Names the cache: outcomes hold while core/ is unchanged (mutant ids are stable)."""
  return sha256_of(tracked("core"))


def schemata_hash():
  """Names the generated schemata: they change with core/ or with the generator."""
  return sha256_of(tracked("core") + ["mutation/generate_mutants.py",
                                      "mutation/schemata/runtime.h"])


def suite_hash():
  """Names what a survivor survived: the suite's sources, data and build flags
  (CMake's, and the ones the builds here add)."""
  return sha256_of(tracked("tests", "properties", "fuzz", "oracle", "io", "cli", "corpus",
                           "CMakeLists.txt", "cmake"),
                   extra=" ".join([*CHECKED_BUILD_FLAGS, *GCC_TRAPPING_UB]))


def log(message):
  print(message, flush=True)


def run_quiet(command, log_path, env=None, cwd=REPO):
  with open(log_path, "w") as out:
    return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd).returncode


class Builds:
  """The schemata sources and the two instrumented builds, made once per core hash."""

  def __init__(self, root, jobs):
    self.root = root
    self.jobs = jobs
    self.schemata = os.path.join(root, "schemata")
    self.gcc = os.path.join(root, "gcc")
    self.fuzz = os.path.join(root, "fuzz")
    self.logs = os.path.join(root, "logs")
    os.makedirs(self.logs, exist_ok=True)

  def generate(self, hash_):
    stamp = os.path.join(self.schemata, "core_hash")
    if os.path.exists(stamp) and open(stamp).read() == hash_:
      return
    log("=== generating the mutant schemata")
    os.makedirs(self.schemata, exist_ok=True)  # unchanged files stay, so builds stay warm
    if run_quiet([sys.executable, os.path.join(REPO, "mutation/generate_mutants.py"),
                  "--out", self.schemata], os.path.join(self.logs, "generate.log")):
      raise SystemExit(f"generate_mutants failed; see {self.logs}/generate.log")
    with open(stamp, "w") as f:
      f.write(hash_)

  def mutants(self):
    with open(os.path.join(self.schemata, "mutants.json")) as f:
      return json.load(f)

  def configure_and_build(self, directory, extra, targets, env=None, name="build",
                          schemata=True, cxx_flags=()):
    flags = " ".join([*CHECKED_BUILD_FLAGS, *cxx_flags])
    common = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DDCPSCHED_WERROR=OFF",
              "-DDCPSCHED_BENCH=OFF", "-DDCPSCHED_PYTHON=OFF",
              f"-DCMAKE_CXX_FLAGS={flags}",
              f"-DDCPSCHED_MUTANT_SCHEMATA={self.schemata if schemata else ''}"]
    if shutil.which("ld.lld"):
      common.append("-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld")
    configure_log = os.path.join(self.logs, f"configure-{name}.log")
    if run_quiet(["cmake", "-S", REPO, "-B", directory, *common, *extra], configure_log,
                 env=env):
      raise SystemExit(f"configuring {directory} failed; see {configure_log}")
    with open(os.path.join(directory, "CMakeCache.txt")) as f:
      cache = f.read()
    wanted = f"DCPSCHED_MUTANT_SCHEMATA:PATH={self.schemata if schemata else ''}\n"
    if wanted not in cache:
      raise SystemExit(f"{directory} is not configured as asked ({wanted.strip()}); "
                       f"delete it and run again")
    build_log = os.path.join(self.logs, f"build-{name}.log")
    if run_quiet(["cmake", "--build", directory, "-j", str(self.jobs), *targets], build_log):
      raise SystemExit(f"building {directory} failed; see {build_log}")

  def build_gcc(self, directory, extra, name, schemata=True, targets=()):
    """A g++ build of the tests, properties, corpus replay and golden programs.

    Undefined integer arithmetic traps (GCC_TRAPPING_UB), so a mutant that
    overflows a signed integer is a crash kill in the unit, properties and
    corpus layers too, not only in the fuzz builds."""
    self.configure_and_build(directory, extra, list(targets),
                             env=dict(os.environ, CC="gcc", CXX="g++"),
                             name=name, schemata=schemata, cxx_flags=GCC_TRAPPING_UB)

  def build_fuzz(self, directory, extra, name, schemata=True):
    """A clang-14 libFuzzer build (ASan+UBSan) of the fuzz targets."""
    self.configure_and_build(directory, ["-DDCPSCHED_FUZZ=ON", "-DDCPSCHED_BUILD_TESTS=OFF",
                                         *extra],
                             ["--target", *FUZZ_TARGETS],
                             env=dict(os.environ, CC="clang-14", CXX="clang++-14"), name=name,
                             schemata=schemata)

  def build_named_gcc(self, name):
    """The g++ build of one hand-written mutant (-DDCPSCHED_MUTANT); one directory
    serves them all, so each rebuilds only what its file touches."""
    gcc = os.path.join(self.root, "named-gcc")
    self.build_gcc(gcc, [f"-DDCPSCHED_MUTANT={name}"], "named-gcc", schemata=False)
    return gcc

  def build_named_fuzz(self, name):
    """Its fuzz build, made only for a mutant the earlier layers left alive."""
    fuzz = os.path.join(self.root, "named-fuzz")
    self.build_fuzz(fuzz, [f"-DDCPSCHED_MUTANT={name}"], "named-fuzz", schemata=False)
    return fuzz

  def build(self, need_fuzz, programs=None):
    """programs: the g++ programs the run's layers need (None: every target);
    a run without the unit layer need not wait for every test program."""
    if programs is None:
      log("=== building the g++ schemata build (tests, properties, corpus replay, golden)")
      self.build_gcc(self.gcc, [], "gcc")
    elif programs:
      log(f"=== building the g++ schemata build: the {len(programs)} programs of the layers "
          f"asked for")
      self.build_gcc(self.gcc, [], "gcc", targets=["--target", *programs])
    if need_fuzz:
      log("=== building the clang-14 libFuzzer schemata build (ASan+UBSan)")
      self.build_fuzz(self.fuzz, [], "fuzz")


def layer_programs():
  """layer -> the g++ programs it runs (the fuzz layers run the clang build's targets)."""
  tests = sorted(os.path.splitext(f)[0] for f in os.listdir(os.path.join(REPO, "tests"))
                 if f.endswith("_test.cc"))
  return {
      "unit": [t for t in tests if t != "golden_test"],
      "properties": sorted(os.path.splitext(f)[0] for f in
                           os.listdir(os.path.join(REPO, "properties"))
                           if f.endswith("_properties.cc")),
      "corpus": [f"{t}_replay" for t in FUZZ_TARGETS],
      "exhaustive": ["exhaustive_check"],
      "golden": ["golden_test"],
  }


class Suite:
  """The programs of each layer, and how to run them on one mutant."""

  def __init__(self, builds, seed, property_cases, fuzz_seconds, min_timeout, gcc=None,
               fuzz_empty_seconds=60, layers=None, skip_unreached=True):
    self.builds = builds
    self.skip_unreached = skip_unreached
    self.gcc_dir = gcc or builds.gcc
    self.fuzz_dir = builds.fuzz  # a hand-written mutant's run sets its own
    self.seed = seed
    self.property_cases = property_cases
    self.fuzz_seconds = fuzz_seconds
    self.fuzz_empty_seconds = fuzz_empty_seconds
    self.min_timeout = min_timeout
    gcc = self.gcc_dir
    self.programs = layer_programs()
    for layer, names in self.programs.items():
      if layers is not None and layer not in layers:
        continue  # not built unless asked for (Builds.build)
      for executable in {program_executable(name) for name in names}:
        if not os.path.exists(os.path.join(gcc, executable)):
          raise SystemExit(f"{executable} is missing from {gcc}")
    self.filters = None  # program -> its GoogleTest filter (program_command)
    self.baseline = {}  # program -> seconds
    # program -> the ids of the mutants whose points its unmutated run
    # evaluates (the control run's DCPSCHED_MUTANT_REACHED record); None for a
    # suite whose builds hold no schemata (a hand-written mutant's).
    self.reached = None
    self.kills = {}  # file -> program -> mutants of that file it killed
    self.lock = threading.Lock()

  def env(self, mutant_id, reached_dir=None):
    env = dict(os.environ)
    env["DCPSCHED_MUTANT"] = mutant_id or ""
    env.pop("DCPSCHED_MUTANT_REACHED", None)
    if reached_dir:
      env["DCPSCHED_MUTANT_REACHED"] = reached_dir
    # No shrinking: a kill needs a failing case, not the smallest one, and a
    # shrink that hangs would hide the program's later properties.
    env["RC_PARAMS"] = (f"max_success={self.property_cases} seed={self.seed} "
                        f"verbose_progress=0 noshrink=1")
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    env.pop("GTEST_FILTER", None)
    return env

  def timeout(self, program):
    return max(self.min_timeout, 10 * self.baseline.get(program, self.min_timeout))

  def run_program(self, command, program, mutant_id, log_path, timeout, reached_dir=None):
    """Returns (how, seconds): how is passed, failed, crashed or timeout."""
    start = time.monotonic()
    if STOPPING.is_set():
      raise SystemExit(1)
    with open(log_path, "w") as out:
      process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                 env=self.env(mutant_id, reached_dir), cwd=self.gcc_dir,
                                 start_new_session=True)
      with self.lock:
        LIVE_GROUPS.add(process.pid)
      try:
        code = process.wait(timeout=timeout)
      except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "timeout", time.monotonic() - start
      finally:
        with self.lock:
          LIVE_GROUPS.discard(process.pid)
    seconds = time.monotonic() - start
    if code == 0:
      return "passed", seconds
    if code < 0 or code >= 128:
      return "crashed", seconds
    return "failed", seconds

  def ordered(self, layer, file):
    """The layer's programs, likeliest killer of this file's mutants first.

    The order only saves time: a layer kills when any of its programs fails,
    so it never changes an outcome.
    """
    names = list(self.programs[layer])
    first = [n for n in UNIT_FIRST.get(file, []) if n in names] if layer == "unit" else []
    stem = os.path.basename(file).split(".")[0]
    preferred = {"unit": f"{stem}_test", "properties": f"{stem}_properties"}.get(layer)
    if preferred in names and preferred not in first:
      first.append(preferred)
    with self.lock:
      kills = dict(self.kills.get(file, {}))
    rest = sorted((n for n in names if n not in first),
                  key=lambda n: (-kills.get(n, 0), self.baseline.get(n, 0.0)))
    return first + rest

  def reaches(self, program, mutant_id):
    """Whether the program can kill the mutant: it evaluates the mutant's
    point in the unmutated run. A mutant changes nothing but its point, and
    every program of these layers is deterministic (fixed seeds, no clock in
    what it checks), so one that never evaluates the point runs exactly as
    unmutated and passes: it is skipped, as Mull skips the tests that do not
    reach a mutant. Always true without a record (a hand-written mutant) or
    when the run is told to run every program (--run-unreached)."""
    return (not self.skip_unreached or self.reached is None or
            mutant_id in self.reached[program])

  def note_kill(self, file, program):
    with self.lock:
      counts = self.kills.setdefault(file, {})
      counts[program] = counts.get(program, 0) + 1

  def test_filters(self):
    """program -> the GoogleTest filter of its tests within its executable,
    from the executables' listings (--gtest_output=json names each test's
    file)."""
    if self.filters is None:
      filters = {}
      for executable in LAYER_EXECUTABLES.values():
        path = os.path.join(self.gcc_dir, executable)
        if not os.path.exists(path):
          continue  # a layer this run does not build
        with tempfile.TemporaryDirectory() as scratch:
          listing = os.path.join(scratch, "tests.json")
          subprocess.run([path, "--gtest_list_tests", f"--gtest_output=json:{listing}"],
                         capture_output=True, env=self.env(""), cwd=self.gcc_dir, check=True)
          with open(listing) as f:
            suites = json.load(f)["testsuites"]
        for suite in suites:
          for test in suite["testsuite"]:
            program = os.path.splitext(os.path.basename(test["file"]))[0]
            filters.setdefault(program, []).append(f"{suite['name']}.{test['name']}")
      self.filters = {program: ":".join(names) for program, names in filters.items()}
    return self.filters

  def program_command(self, program):
    """The command that runs one program's tests (its own executable, or its
    file's tests in its layer's executable), without GoogleTest's output flags."""
    executable = program_executable(program)
    command = [os.path.join(self.gcc_dir, executable), *PROGRAM_ARGS.get(program, [])]
    if executable != program:
      test_filter = self.test_filters().get(program)
      if not test_filter:
        raise SystemExit(f"{executable} in {self.gcc_dir} holds no test of {program}")
      command.append(f"--gtest_filter={test_filter}")
    return command

  def gtest_command(self, program):
    return [*self.program_command(program), "--gtest_brief=1", "--gtest_fail_fast"]

  def run_layer(self, layer, mutant_id, file, scratch):
    """Returns (how, program, seconds, time to kill) for the first program that
    kills, or survived; the time to kill is a fuzz layer's (see run_fuzz), None
    for another layer."""
    total = 0.0
    if layer in FUZZ_LAYERS:
      how, target, total, ttk, _ = self.run_fuzz(layer, mutant_id, file, scratch, stop=True)
      return how, target, total, ttk
    for program in self.ordered(layer, file):
      if not self.reaches(program, mutant_id):
        continue
      how, seconds = self.run_program(self.gtest_command(program), program, mutant_id,
                                      os.path.join(scratch, f"{program}.log"),
                                      self.timeout(program))
      total += seconds
      if how != "passed":
        return how, program, total, None
    return "survived", "", total, None

  def fuzz_targets(self, file):
    return FUZZ_TARGETS_FOR.get(file, DEFAULT_FUZZ_TARGETS)

  def fuzz_target(self, target, mutant_id, scratch, empty=False):
    """One fuzz target, from its committed corpus or (empty) from an empty
    one: (how, seconds, executions). seconds is the wall time from the start
    of the target's process to its end (at a finding, the time to kill);
    executions is libFuzzer's count of inputs run (-print_final_stats=1,
    printed at a crash too), which -seed= makes the same from run to run, or
    None when the log has none."""
    seconds_cap = self.fuzz_empty_seconds if empty else self.fuzz_seconds
    new = os.path.join(scratch, f"{target}-{'empty' if empty else 'new'}")
    os.makedirs(new, exist_ok=True)
    command = [os.path.join(self.fuzz_dir, target), f"-max_total_time={seconds_cap}",
               "-timeout=10", "-rss_limit_mb=2048", f"-seed={self.seed}",
               f"-artifact_prefix={scratch}/", "-print_final_stats=1", new]
    if not empty:
      command.append(os.path.join(REPO, "corpus", target))
    # The dictionary is the target's, not a corpus: the empty-corpus run keeps it.
    dictionary = os.path.join(REPO, "corpus", f"{target}.dict")
    if os.path.exists(dictionary):
      command.insert(1, f"-dict={dictionary}")
    log_path = os.path.join(scratch, f"{target}{'-empty' if empty else ''}.log")
    how, seconds = self.run_program(command, target, mutant_id, log_path,
                                    seconds_cap * 3 + 60)
    executions = None
    with open(log_path, errors="replace") as f:
      for line in f:
        match = re.match(r"^stat::number_of_executed_units: (\d+)", line)
        if match:
          executions = int(match.group(1))
    # libFuzzer exits non-zero on any finding: the target reported it.
    return ("crashed" if how == "crashed" else how), seconds, executions

  def run_fuzz(self, layer, mutant_id, file, scratch, stop):
    """A fuzz layer's targets for the file, in order, each from the committed
    corpus (fuzz) or an empty one (fuzz-empty); stop: at the first that kills.
    Returns (how, first killing target, seconds, time to kill, kills): the
    time to kill is the wall time from the layer's start to the first kill
    (the whole run of each target before the killing one, plus the killing
    target's own wall time, start-up and seed corpus replay included), with
    that target, its own seconds and its executions; None if none killed.
    kills: {target: how} for every target that killed."""
    total, ttk, first, kills = 0.0, None, ("survived", ""), {}
    for target in self.fuzz_targets(file):
      how, seconds, executions = self.fuzz_target(target, mutant_id, scratch,
                                                  empty=layer == "fuzz-empty")
      if how != "passed":
        kills[target] = how
        if ttk is None:
          ttk = {"seconds": round(total + seconds, 2), "target": target,
                 "target_seconds": round(seconds, 2), "executions": executions}
          first = (how, target)
      total += seconds
      if kills and stop:
        break
    return first[0], first[1], total, ttk, kills

  # --- the kill matrix: every program of every layer, no stop at the first kill

  def list_tests(self, program):
    """The GoogleTest names of one program (its ctest names), from --gtest_list_tests."""
    listing = subprocess.run([*self.program_command(program), "--gtest_list_tests"],
                             capture_output=True, text=True, env=self.env(""),
                             cwd=self.gcc_dir, check=True).stdout
    names, suite = [], ""
    for line in listing.splitlines():
      if not line.strip():
        continue
      if not line.startswith(" "):
        suite = line.split("#")[0].strip()
      else:
        names.append(suite + line.split("#")[0].strip())
    return names

  def matrix_test_ids(self, layers):
    """test id -> (the file it is defined in, its layer), for every test the
    matrix can name: a GoogleTest test of a unit, property or golden program
    (its ctest name), a corpus replay program (one ctest test each) or a fuzz
    target. Sets self.test_program (GoogleTest name -> program)."""
    tests = {}
    self.test_program = {}
    for layer in layers:
      if layer in FUZZ_LAYERS:
        for target in sorted({t for ts in FUZZ_TARGETS_FOR.values() for t in ts} |
                             set(DEFAULT_FUZZ_TARGETS)):
          tests[fuzz_test_id(layer, target)] = (f"fuzz/{target}.cc", layer)
        continue
      for program in self.programs[layer]:
        if layer == "corpus":
          tests[program] = (f"fuzz/{program[:-len('_replay')]}.cc", layer)
          continue
        source = f"{'properties' if layer == 'properties' else 'tests'}/{program}.cc"
        for name in self.list_tests(program):
          if name in tests:
            raise SystemExit(f"test {name} is in two programs: its ctest name is ambiguous")
          tests[name] = (source, layer)
          self.test_program[name] = program
    return tests

  @staticmethod
  def failed_tests(log_path, how):
    """The GoogleTest tests a program's log shows failing, with how; a crash or
    a hang is charged to the test that was running (RUN with no OK or FAILED)."""
    failed, running = {}, None
    with open(log_path, errors="replace") as f:
      for line in f:
        run = re.match(r"^\[ RUN      \] (\S+)", line)
        if run:
          running = run.group(1)
          continue
        end = re.match(r"^\[(  FAILED  |       OK )\] (\S+?)(,| \(|$)", line)
        if end and "." in end.group(2):
          if end.group(1) == "  FAILED  ":
            failed[end.group(2)] = "failed"
          running = None
    if how in ("crashed", "timeout") and running:
      failed[running] = how
    return failed

  def matrix_layer(self, layer, mutant_id, file, scratch):
    """Every program of one layer on one mutant: ({test id: how}, seconds,
    time to kill). The seed-corpus fuzz layer runs every target; fuzz-empty
    stops at the first that kills (its point is the time to the first kill,
    and a target running 60 s more per mutant to name a second killer is
    more than a night affords)."""
    kills, total = {}, 0.0
    if layer in FUZZ_LAYERS:
      _, _, total, ttk, found = self.run_fuzz(layer, mutant_id, file, scratch,
                                              stop=layer == "fuzz-empty")
      return {fuzz_test_id(layer, t): h for t, h in found.items()}, total, ttk
    for program in self.programs[layer]:
      if not self.reaches(program, mutant_id):
        continue
      log_path = os.path.join(scratch, f"{program}.log")
      how, seconds = self.run_program([*self.program_command(program), "--gtest_color=no"],
                                      program, mutant_id, log_path, self.timeout(program))
      total += seconds
      if how == "passed":
        continue
      if layer == "corpus":
        kills[program] = how
        continue
      named = self.failed_tests(log_path, how)
      # A program that fails with no test named (it died before its first
      # test, or outside one) is charged to the program.
      kills.update(named or {program: how})
    return kills, total, None

  def measure_baseline(self, layers, scratch, mutants):
    """Runs the unmutated build through every layer but the fuzz layers: each
    program must pass; its time sets its timeout, and the mutants whose points
    it evaluates (self.reached) are the ones it runs on."""
    log("=== control run: the unmutated build must pass every layer")
    self.reached = {}
    for layer in layers:
      if layer in FUZZ_LAYERS:
        continue
      for program in self.programs[layer]:
        reached_dir = os.path.join(scratch, f"reached-{program}")
        os.makedirs(reached_dir)
        how, seconds = self.run_program(self.gtest_command(program), program, "",
                                        os.path.join(scratch, f"baseline-{program}.log"),
                                        3600, reached_dir=reached_dir)
        if how != "passed":
          raise SystemExit(f"the unmutated build fails {layer} program {program} ({how}); "
                           f"see {scratch}/baseline-{program}.log")
        self.baseline[program] = seconds
        self.reached[program] = read_reached(reached_dir)
      runs = sum(m["id"] in self.reached[p] for p in self.programs[layer] for m in mutants)
      log(f"    {layer:<10} passed in "
          f"{sum(self.baseline[p] for p in self.programs[layer]):.1f} s; its programs "
          f"reach the selected mutants {runs} times of "
          f"{len(self.programs[layer]) * len(mutants)}"
          f"{' (only those run)' if self.skip_unreached else ''}")

  def run_mutant(self, mutant, layers, scratch_root):
    scratch = tempfile.mkdtemp(prefix=f"{mutant['id']}-", dir=scratch_root)
    try:
      total, ttk = 0.0, {}
      for layer in layers:
        how, program, seconds, layer_ttk = self.run_layer(layer, mutant["id"], mutant["file"],
                                                          scratch)
        total += seconds
        if layer in FUZZ_LAYERS:
          ttk[layer] = layer_ttk
        if how != "survived":
          self.note_kill(mutant["file"], program)
          return Outcome(mutant["id"], layer, how, program, round(total, 2), "", ttk)
      return Outcome(mutant["id"], "survived", "survived", "", round(total, 2), "", ttk)
    finally:
      shutil.rmtree(scratch, ignore_errors=True)

  def run_matrix_mutant(self, mutant, layers, scratch_root):
    """Every given layer on one mutant: layer -> ({test id: how}, seconds,
    time to kill or None)."""
    scratch = tempfile.mkdtemp(prefix=f"{mutant['id']}-", dir=scratch_root)
    try:
      return {layer: self.matrix_layer(layer, mutant["id"], mutant["file"], scratch)
              for layer in layers}
    finally:
      shutil.rmtree(scratch, ignore_errors=True)


def read_reached(directory):
  """The ids of the mutants whose points a program (with the children it
  spawned) evaluated: the union of the reached-<pid>.txt files the schemata
  runtime wrote there at exit (mutation/schemata/runtime.h)."""
  ids = set()
  for name in os.listdir(directory):
    with open(os.path.join(directory, name)) as f:
      ids.update(line.strip() for line in f if line.strip())
  return ids


def fuzz_test_id(layer, target):
  """A fuzz target's test id in a layer: the target's name for the seed-corpus
  layer (as before), `<target>:empty` for the empty-corpus one."""
  return target if layer == "fuzz" else f"{target}:empty"


def first_kill(mutant_id, kills, seconds):
  """The Outcome a first-kill run would credit, from a mutant's matrix row
  (layer -> {test id: how}): the first layer in LAYERS order that killed it."""
  for layer in LAYERS:
    if kills.get(layer):
      hows = set(kills[layer].values())
      how = "timeout" if hows == {"timeout"} else "crashed" if "crashed" in hows else \
          "failed" if "failed" in hows else sorted(hows)[0]
      return Outcome(mutant_id, layer, how, sorted(kills[layer])[0], round(seconds, 2), "")
  return Outcome(mutant_id, "survived", "survived", "", round(seconds, 2), "")


def layer_key(layer, suite_id, args):
  """What a layer's matrix row depends on besides core/ and the mutant: a
  program layer's rows on the timeout's floor too (a slow mutant may pass
  under one floor and hang under another), the properties' on RapidCheck's
  settings (without shrinking: see Suite.env)."""
  floor = f"timeout={args.min_timeout:g}"
  if layer == "properties":
    return f"{suite_id}:seed={args.seed}:cases={args.property_cases}:noshrink:{floor}"
  # A fuzz row holds its time to kill (ttk=wall), which the targets' order
  # decides: rows from before it was kept, or of another order, have another
  # key and run again.
  order = hashlib.sha256(json.dumps([FUZZ_TARGETS_FOR, DEFAULT_FUZZ_TARGETS],
                                    sort_keys=True).encode()).hexdigest()[:8]
  if layer == "fuzz":
    return f"{suite_id}:seed={args.seed}:seconds={args.fuzz_seconds}:ttk=wall:order={order}"
  if layer == "fuzz-empty":
    return (f"{suite_id}:seed={args.seed}:seconds={args.fuzz_empty_seconds}:ttk=wall:"
            f"order={order}")
  if layer == "exhaustive":
    return f"{suite_id}:sets={EXHAUSTIVE_SETS}:{floor}"
  return f"{suite_id}:{floor}"


def stratum(mutant):
  return (mutant["file"], mutant["operator"])


def stratified_sample(mutants, size, seed):
  """A reproducible sample of `size` mutants stratified by (file, operator):
  each stratum gets its share of `size` in proportion to its count, rounded by
  largest remainder (ties: the stratum's name), and its mutants are drawn at
  random (seeded) from those of the stratum sorted by id."""
  strata = {}
  for m in sorted(mutants, key=lambda m: m["id"]):
    strata.setdefault(stratum(m), []).append(m)
  size = min(size, len(mutants))
  quotas = {k: size * len(v) / len(mutants) for k, v in strata.items()}
  counts = {k: int(q) for k, q in quotas.items()}
  for k in sorted(strata, key=lambda k: (-(quotas[k] - counts[k]), k))[:size -
                                                                         sum(counts.values())]:
    counts[k] += 1
  rng = random.Random(seed)
  chosen = []
  for k in sorted(strata):
    chosen += rng.sample(strata[k], counts[k])
  return sorted(chosen, key=lambda m: m["id"])


def stratified_part(mutants, part, parts, seed):
  """The part-th (1-based) of `parts` disjoint parts of the mutants, stratified
  by (file, operator): each stratum, shuffled (seeded), is dealt round-robin,
  the dealing continuing from stratum to stratum, so the parts differ in size
  by at most one and together hold every mutant once."""
  strata = {}
  for m in sorted(mutants, key=lambda m: m["id"]):
    strata.setdefault(stratum(m), []).append(m)
  rng = random.Random(seed)
  chosen, dealt = [], 0
  for k in sorted(strata):
    members = list(strata[k])
    rng.shuffle(members)
    for m in members:
      if dealt % parts == part - 1:
        chosen.append(m)
      dealt += 1
  return sorted(chosen, key=lambda m: m["id"])


def parse_part(text, flag):
  match = re.fullmatch(r"(\d+)/(\d+)", text or "")
  if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
    raise SystemExit(f"{flag} takes K/N with 1 <= K <= N, not {text!r}")
  return int(match.group(1)), int(match.group(2))


class Cache:
  """Outcomes by mutant id for one core hash, as JSON lines."""

  def __init__(self, root, core, suite, fresh):
    os.makedirs(os.path.join(root, "cache"), exist_ok=True)
    self.path = os.path.join(root, "cache", f"{core}.jsonl")
    self.suite = suite
    self.outcomes = {}
    if fresh and os.path.exists(self.path):
      os.remove(self.path)
    if os.path.exists(self.path):
      with open(self.path) as f:
        for line in f:
          outcome = Outcome(**json.loads(line))
          self.outcomes[outcome.id] = outcome

  def usable(self, mutant_id, layers):
    """A cached kill stands; a cached survivor only for the same suite and layers."""
    outcome = self.outcomes.get(mutant_id)
    if outcome is None:
      return None
    if outcome.layer != "survived":
      return outcome if outcome.layer in layers else None
    return outcome if outcome.suite == self.suite + "/" + ",".join(layers) else None

  def add(self, outcome, layers):
    if outcome.layer == "survived":
      outcome.suite = self.suite + "/" + ",".join(layers)
    self.outcomes[outcome.id] = outcome
    with open(self.path, "a") as f:
      f.write(json.dumps(dataclasses.asdict(outcome)) + "\n")


def named_mutants():
  """The hand-written mutants of mutation/mutants/*.mutant: name, file, description."""
  directory = os.path.join(REPO, "mutation", "mutants")
  result = []
  for entry in sorted(os.listdir(directory)):
    if not entry.endswith(".mutant"):
      continue
    fields = {}
    with open(os.path.join(directory, entry)) as f:
      for line in f:
        if line.startswith("<<<<<<<"):
          break
        key, _, value = line.partition(":")
        if key in ("file", "description"):
          fields[key] = value.strip()
    result.append({"id": f"named:{entry[:-len('.mutant')]}", "name": entry[:-len(".mutant")],
                   "file": fields.get("file", "?"), "description": fields.get("description", "")})
  return result


def read_equivalents(path):
  """id -> reason, from lines `<id> <reason>` (# comments)."""
  equivalents = {}
  if not os.path.exists(path):
    return equivalents
  with open(path) as f:
    for number, line in enumerate(f, 1):
      line = line.strip()
      if not line or line.startswith("#"):
        continue
      mutant_id, _, reason = line.partition(" ")
      if not reason.strip():
        raise SystemExit(f"{path}:{number}: {mutant_id} has no reason")
      equivalents[mutant_id] = reason.strip()
  return equivalents


def read_time_only():
  """The time-only mutants (mutation/time_only.txt, `<id> <reason>`): same
  results, longer running time. They are not equivalent (cost is behaviour),
  so they count like any mutant; the report lists them apart."""
  time_only = read_equivalents(os.path.join(REPO, "mutation", "time_only.txt"))
  both = set(time_only) & set(read_equivalents(os.path.join(REPO, "mutation",
                                                            "equivalent.txt")))
  if both:
    raise SystemExit(f"listed as both equivalent and time-only: {', '.join(sorted(both))}")
  return time_only


def duration(seconds):
  seconds = int(seconds)
  return f"{seconds // 3600} h {seconds % 3600 // 60} min {seconds % 60} s"


def score_line(killed, non_equivalent, equivalent, generated):
  return (f"mutation score: {killed} of {non_equivalent} non-equivalent mutants killed without "
          f"golden vectors ({equivalent} equivalent, {generated} generated)")


def named_section(named, outcomes, skipped):
  if skipped:
    return ["## Hand-written multi-line mutants", "",
            "Not run in this invocation (`--no-named`, or only some mutants asked for).", ""]
  if not named:
    return []
  out = ["## Hand-written multi-line mutants", "",
         "Faults no single operator makes (mutation/mutants/*.mutant, built one at a time "
         "with -DDCPSCHED_MUTANT=<name>; docs/mutation.md says why each stays).", "",
         "| mutant | file | what | killed by |", "| --- | --- | --- | --- |"]
  for m in named:
    o = outcomes[m["id"]]
    verdict = "**survived**" if o.layer == "survived" else f"{o.layer} ({o.how}: {o.program})"
    out.append(f"| `{m['name']}` | {m['file']} | {m['description']} | {verdict} |")
  killed = sum(outcomes[m["id"]].layer in PRE_GOLDEN for m in named)
  return out + ["", f"Killed without golden vectors: {killed} of {len(named)}.", ""]


def cost_sentence(context, fuzz_ran, named):
  """What the run cost: its wall time and builds, or, for a report made from
  cached rows alone, which caches it merged and what the rows recorded."""
  if context.get("cache_only") is not None:
    merged = context["cache_only"]
    return (f"Made from cached kill-matrix rows alone (`--cache-only`: no build, no control "
            f"run, no mutant ran; {context['wall']})" +
            (f", after merging {len(merged)} cache file{'s' if len(merged) > 1 else ''} "
             f"({', '.join(merged)})" if merged
             else "") +
            f". The mutants' own run times, as their rows recorded them on the machines "
            f"that ran them, add up to {duration(context['mutant_seconds'])}.")
  return (f"Wall time {context['wall']}, of which the builds (the g++ schemata build"
          f"{', the clang-14 fuzz schemata build' if fuzz_ran else ''}"
          f"{' and those of each hand-written mutant' if named else ''}; an up-to-date "
          f"build takes seconds) took {context['builds']}; "
          f"{context['cached']} mutants came from the cache of an earlier run. Every mutant's "
          f"own run time, cached or not, adds up to {duration(context['mutant_seconds'])}: "
          f"at {context['jobs']} at a time, a run from nothing costs about "
          f"{duration(context['mutant_seconds'] / context['jobs'])} plus the builds.")


def write_report(path, context, mutants, outcomes, equivalents, dropped, named=(),
                 named_skipped=False, matrix=None):
  by_id = {m["id"]: m for m in mutants}
  rows = {}

  def bucket(key):
    return rows.setdefault(key, {"generated": 0, **{l: 0 for l in LAYERS}, "timeouts": 0,
                                 "crashes": 0, "survived": 0, "equivalent": 0})

  survivors, equivalent_rows, stale = [], [], []
  for m in mutants:
    outcome = outcomes[m["id"]]
    for key in (("file", m["file"]), ("operator", m["operator"]), ("all", "all")):
      row = bucket(key)
      row["generated"] += 1
      if outcome.layer in LAYERS and outcome.layer != "golden":
        row[outcome.layer] += 1
        row["timeouts"] += outcome.how == "timeout"
        row["crashes"] += outcome.how == "crashed"
      elif m["id"] in equivalents:
        row["equivalent"] += 1
      else:
        row["survived"] += 1
        if outcome.layer == "golden":
          row["golden"] += 1
    if outcome.layer in PRE_GOLDEN:
      if m["id"] in equivalents:
        stale.append(m)
    elif m["id"] in equivalents:
      equivalent_rows.append(m)
    else:
      survivors.append(m)
  total = rows.get(("all", "all"), bucket(("all", "all")))
  killed = sum(total[l] for l in PRE_GOLDEN)
  generated = total["generated"]
  equivalent = total["equivalent"]
  line = score_line(killed, generated - equivalent, equivalent, generated)

  # The fuzz-empty and exhaustive columns only when they ran: reports without
  # them keep their columns.
  columns = ["unit", "properties", "corpus", "fuzz"] + \
      [l for l in ("fuzz-empty", "exhaustive") if l in context["layers"]]

  def table(kind, title):
    out = [f"### {title}", "",
           "| " + kind + " | generated | " + " | ".join(columns) + " | of which timeouts "
           "| of which crashes | survived | of which golden kills | equivalent |",
           "| --- | ---: | " + " | ".join("---:" for _ in columns) +
           " | ---: | ---: | ---: | ---: | ---: |"]
    keys = sorted(key for key in rows if key[0] == kind) + [("all", "all")]
    for k, name in keys:
      row = rows[(k, name)]
      label = "**all**" if k == "all" else f"`{name}`"
      out.append(f"| {label} | {row['generated']} | " +
                 " | ".join(str(row[c]) for c in columns) +
                 f" | {row['timeouts']} | {row['crashes']} | "
                 f"{row['survived']} | {row['golden']} | {row['equivalent']} |")
    return out + [""]

  fuzz_ran = any(l in context["layers"] for l in FUZZ_LAYERS)
  text = ["# Mutation testing results", "",
          f"Written by `mutation/run_mutants.py {context['arguments']}` on {context['date']}.",
          f"Core hash {context['core']} (commit {context['commit']}), suite hash "
          f"{context['suite']}; " +
          ("" if context.get("cache_only") is not None else
           f"{context['cores']} cores, {context['jobs']} mutants at a time; ") +
          f"seed {context['seed']}; layers run: {', '.join(context['layers'])} "
          f"({layer_settings(context)}).",
          f"Mutants: {context['selection']}.",
          cost_sentence(context, fuzz_ran, named), "",
          (f"A kill matrix (`--matrix`): every layer that ran ran on every mutant, with "
           f"every program of each that evaluates the mutant's point in the unmutated run "
           f"(one that does not cannot kill it; `--run-unreached` runs those too), and no "
           f"stop at the first kill; the tables below credit each "
           f"kill to the first layer, in the order {', '.join(context['layers'])}, that "
           f"killed it, and the kill-matrix tables after them count each layer on its own. "
           if matrix else
           f"A mutant is killed by the first layer that fails on it, in the order "
           f"{', '.join(context['layers'])}"
           f"{' (fuzz layers only for mutants still alive)' if fuzz_ran else ''}"
           f"; the rest do not run on it. ") +
          f"A crash or a hang (past 10 x the program's unmutated time, at least "
          f"{context['min_timeout']:g} s) kills too, and is counted in its layer's column and "
          f"again under timeouts or crashes. " +
          ("The golden layer does not count towards the score: a mutant only the golden "
           "vectors kill is a gap in the suite, listed with the survivors. "
           if "golden" in context["layers"] else "") +
          "How the mutants are made: [docs/mutation.md](../docs/mutation.md).", ""]
  text += table("file", "Per file")
  text += table("operator", "Per operator")
  if dropped:
    text += ["Mutation points dropped because their rewrite does not compile: " +
             ", ".join(f"`{f}` {n}" for f, n in sorted(dropped.items())) + ".", ""]
  text += [f"## Survivors ({len(survivors)})", ""]
  if survivors:
    text += ["Not killed before the golden vectors, and not judged equivalent: gaps in the "
             "suite.", ""]
    for m in survivors:
      o = outcomes[m["id"]]
      tag = " (killed by golden only)" if o.layer == "golden" else ""
      text.append(f"- `{m['id']}` {m['file']}:{m['line']}: {m['operator']}: "
                  f"`{m['before']}` -> `{m['after']}`{tag}")
  else:
    text.append("None.")
  text += ["", f"## Equivalent mutants ({len(equivalent_rows)})", "",
           "Survivors judged equivalent to the original, each with its reason "
           "(mutation/equivalent.txt).", ""]
  for m in equivalent_rows:
    text.append(f"- `{m['id']}` {m['file']}:{m['line']}: `{m['before']}` -> `{m['after']}`: "
                f"{equivalents[m['id']]}")
  if stale:
    text += ["", "Listed as equivalent but killed (stale entries in mutation/equivalent.txt):",
             ""] + [f"- `{m['id']}` {m['file']}:{m['line']}" for m in stale]
  time_only = read_time_only()
  listed = [m for m in mutants if m["id"] in time_only]
  if listed:
    text += ["", f"## Time-only mutants ({len(listed)})", "",
             "Mutants that give the same results more slowly (mutation/time_only.txt). They "
             "are not equivalent: each has an input built so that its slowdown passes the "
             "runner's timeout. Counted like any other mutant.", ""]
    for m in listed:
      o = outcomes[m["id"]]
      verdict = "**survived**" if o.layer not in PRE_GOLDEN else \
          f"killed by {o.layer} ({o.how}: {o.program})"
      text.append(f"- `{m['id']}` {m['file']}:{m['line']}: `{m['before']}` -> "
                  f"`{m['after']}`: {verdict}. {time_only[m['id']]}")
  text += [""] + named_section(named, outcomes, named_skipped)
  closing = []
  if matrix:
    tables, _ = kill_matrix.markdown_tables(matrix["rows"], equivalents, context["layers"])
    text += ["", "## Kill matrix", "",
             "Each layer alone: the non-equivalent mutants at least one of its tests killed. "
             "Unique: those it killed and no other scoring layer that ran did. The tests "
             "that killed each mutant (GoogleTest and ctest names, corpus replay programs, "
             "fuzz targets) are in the JSON report beside this one "
             f"(`{os.path.basename(os.path.splitext(path)[0])}.json`, the "
             "mutation-testing-elements schema, version 2). A crash or a hang ends its "
             "program, so the tests after it in that program are not seen; a fuzz target "
             "stops at its first finding. Time spent per layer, summed over the mutants: " +
             ", ".join(f"{l} {duration(t)}" for l, t in matrix["layer_seconds"].items()) +
             ".", ""] + tables
  counted = {m["id"] for m in mutants
             if not (m["id"] in equivalents and outcomes[m["id"]].layer not in PRE_GOLDEN)}
  times = {l: {m["id"]: time_of(outcomes[m["id"]].ttk[l]) for m in mutants
               if l in outcomes[m["id"]].ttk} for l in FUZZ_LAYERS if l in context["layers"]}
  text += time_to_kill_section(context, mutants, outcomes, counted, times, matrix)
  if matrix:
    closing = kill_matrix.summary_lines(matrix["rows"], equivalents, context["layers"],
                                        context["fuzz_seconds"],
                                        context["fuzz_empty_seconds"], times)
  else:
    closing = first_kill_end_lines(context, mutants, outcomes, counted, times)
  text += ["", line] + closing
  with open(path, "w") as f:
    f.write("\n".join(text) + "\n")
  return line, closing


def time_of(ttk):
  """A time-to-kill record's seconds; None for a layer that ran and did not kill."""
  return None if ttk is None else ttk["seconds"]


def time_to_kill_section(context, mutants, outcomes, counted, times, matrix):
  """The report's time-to-kill tables, one row per fuzz layer that ran."""
  if not times:
    return []
  seconds = {"fuzz": context["fuzz_seconds"], "fuzz-empty": context["fuzz_empty_seconds"]}
  corpus = {"fuzz": "committed corpora", "fuzz-empty": "empty corpus"}
  limits = " | ".join(f"killed within {limit} s" for limit in TTK_LIMITS)
  out = ["", "## Time to kill of the fuzzers", "",
         "As Magma and FuzzBench report bugs: per fuzz layer, over the non-equivalent "
         "mutants it ran on, how many it killed within 1, 10 and 60 s, and the median time "
         "to kill over those it killed. The time to kill is wall time, not libFuzzer's: "
         "from the start of the layer's first target for the mutated file, the whole run "
         "of each target before the killing one plus the killing target's own time from "
         "the start of its process (start-up, and for the seed-corpus layer the replay of "
         "the committed corpus, included) to its exit at the finding. Every target runs "
         f"with `-seed={context['seed']}`, so the inputs it tries are the same from run to "
         "run; the executions to the kill (libFuzzer's `stat::number_of_executed_units`) "
         "are in the per-mutant table, and the seconds vary with the machine's load. "
         + ("The empty-corpus layer (fuzz-empty) starts each target from an empty "
            "directory, with the target's dictionary, and stops at the first target that "
            "kills. " if "fuzz-empty" in times else "") +
         ("" if matrix else "A first-kill run runs a fuzz layer only on the mutants the "
          "earlier layers left alive, so these rows count those only. "), "",
         f"| layer | corpus | seconds per target | mutants it ran on | {limits} | killed | "
         "median time to kill | survived |",
         "| --- | --- | ---: | ---: | " + " | ".join("---:" for _ in TTK_LIMITS) +
         " | ---: | ---: | ---: |"]
  survivors = {}
  for layer, layer_times in times.items():
    ran, within, killed, median, alive = kill_matrix.time_to_kill(layer_times, counted,
                                                                  TTK_LIMITS)
    survivors[layer] = alive
    out.append(f"| {layer} | {corpus[layer]} | {seconds[layer]} | {ran} | " +
               " | ".join(str(within[limit]) for limit in TTK_LIMITS) +
               f" | {killed} | "
               f"{'-' if median is None else kill_matrix.seconds_text(median) + ' s'} | "
               f"{len(alive)} |")
  by_id = {m["id"]: m for m in mutants}
  for layer, alive in survivors.items():
    out += ["", f"Survivors of {layer} ({len(alive)}): " +
            (", ".join(f"`{m}` ({by_id[m]['file']}:{by_id[m]['line']} "
                       f"{by_id[m]['operator']})" for m in alive) if alive else "none") + "."]
  out += ["", "Per mutant (non-equivalent, and equivalent ones a fuzz layer ran on, marked): "
          "the killing target, the time to kill, of it the killing target's own seconds, "
          "and its executions; - where the layer ran and did not kill.", "",
          "| mutant | " + " | ".join(times) + " |", "| --- | " +
          " | ".join("---" for _ in times) + " |"]
  for m in mutants:
    cells = []
    for layer in times:
      if m["id"] not in times[layer]:
        cells.append("not run")
        continue
      ttk = outcomes[m["id"]].ttk[layer]
      cells.append("-" if ttk is None else
                   f"`{ttk['target']}` {kill_matrix.seconds_text(ttk['seconds'])} s "
                   f"(own {kill_matrix.seconds_text(ttk['target_seconds'])} s, "
                   f"{ttk['executions'] if ttk['executions'] is not None else '?'} "
                   f"executions)")
    if all(c == "not run" for c in cells):
      continue
    mark = "" if m["id"] in counted else " (equivalent)"
    out.append(f"| `{m['id']}`{mark} | " + " | ".join(cells) + " |")
  return out + [""]


def first_kill_end_lines(context, mutants, outcomes, counted, times):
  """The four end lines of a first-kill run: a layer's kills alone are known
  only for the first scoring layer that ran (it ran on every mutant); the
  properties + corpus + fuzz union only when no unit layer ran before them."""
  ran = [l for l in context["layers"] if l in kill_matrix.SCORING_LAYERS]
  kills = {l: sum(outcomes[m].layer == l for m in counted) for l in ran}
  alone = {l: (kills[l] if i == 0 else None) for i, l in enumerate(ran)}
  union = None
  if "unit" not in ran and all(l in ran for l in kill_matrix.NO_EXPECTATION):
    union = sum(outcomes[m].layer in kill_matrix.NO_EXPECTATION for m in counted)
  return kill_matrix.end_lines(len(counted), alone, union, context["fuzz_seconds"],
                               context["fuzz_empty_seconds"],
                               kill_matrix.median_time(times.get("fuzz-empty", {}), counted))


def layer_settings(context):
  """The settings of the layers that ran, for the report's header: a layer
  left out has none, so the header never names a setting that played no part."""
  settings = []
  if "properties" in context["layers"]:
    settings.append(f"{context['property_cases']} cases per property")
  if "fuzz" in context["layers"]:
    settings.append(f"{context['fuzz_seconds']} s per fuzz target, from the committed "
                    f"corpora, the targets for the mutated file only")
  if "fuzz-empty" in context["layers"]:
    settings.append(f"fuzz-empty {context['fuzz_empty_seconds']} s per fuzz target, from an "
                    f"empty corpus, the targets for the mutated file only, stopping at the "
                    f"first kill")
  if not any(l in context["layers"] for l in FUZZ_LAYERS):
    settings.append("no fuzz layer")
  if "exhaustive" in context["layers"]:
    settings.append(f"exhaustive at the sets {EXHAUSTIVE_SETS} "
                    f"(properties/problem_enumerator.h)")
  return ", ".join(settings)


def write_elements_json(path, context, mutants, matrix, equivalents):
  """The kill matrix as a mutation-testing-elements report (schemaVersion 2)."""
  by_id = {m["id"]: m for m in mutants}
  sources = {}
  for m in mutants:
    if m["file"] not in sources:
      with open(os.path.join(REPO, m["file"]), encoding="utf-8") as f:
        sources[m["file"]] = f.read()
  tests = {t: (source, f"{layer}: {t}") for t, (source, layer) in matrix["tests"].items()}
  config = {k: context[k] for k in ("arguments", "core", "suite", "commit", "date", "seed",
                                    "layers", "selection", "min_timeout")}
  if "properties" in context["layers"]:
    config["property_cases"] = context["property_cases"]
  if "fuzz" in context["layers"]:
    config["fuzz_seconds"] = context["fuzz_seconds"]
  if "fuzz-empty" in context["layers"]:
    config["fuzz_empty_seconds"] = context["fuzz_empty_seconds"]
  if "exhaustive" in context["layers"]:
    config["exhaustive_sets"] = EXHAUSTIVE_SETS
  # Each fuzz layer's time to kill per mutant (Suite.run_fuzz; null: it ran
  # and did not kill): the schema has no place for it, its config is free.
  ttk = {l: {m["id"]: matrix["ttk"][m["id"]].get(l) for m in mutants}
         for l in FUZZ_LAYERS if l in context["layers"]}
  if ttk:
    config["time_to_kill"] = {
        "what": "wall seconds from the start of the layer's first target to the exit of "
                "the target that found the kill; target, its own seconds, libFuzzer's "
                "executions to the kill",
        "layers": ttk}
  report = kill_matrix.elements_report(matrix["rows"], by_id, sources, tests, equivalents,
                                       context["layers"], config)
  with open(path, "w") as f:
    json.dump(report, f, indent=1, sort_keys=True)
    f.write("\n")


def matrix_tests(suite, cache, layers, suite_id):
  """test id -> (the file it is defined in, its layer), for every test the
  layers can name: listed from the build, and kept in the cache, when there is
  a suite to run; from the cache's listings otherwise (--cache-only)."""
  if suite is not None:
    tests = suite.matrix_test_ids(layers)
    for layer in layers:
      cache.add_listing(layer, suite_id, {t: s for t, (s, l) in tests.items() if l == layer})
    return tests
  tests = {}
  for layer in layers:
    listed = cache.listing(layer, suite_id)
    if listed is None:
      raise SystemExit(f"--cache-only: the cache lists no tests of layer {layer} for suite "
                       f"{suite_id}: merge the cache of a --matrix run of this suite")
    tests.update({t: (source, layer) for t, source in listed.items()})
  return tests


def run_matrix(suite, mutants, layers, suite_id, args, scratch_root, cache):
  """The kill matrix of `mutants`: returns (first-kill outcomes by id, the
  matrix for the report, how many mutants came whole from the cache). The
  control run (the unmutated suite) runs only when a mutant has to; suite is
  None when none may (--cache-only: every mutant's rows are in the cache)."""
  tests = matrix_tests(suite, cache, layers, suite_id)
  keys = {layer: layer_key(layer, suite_id, args) for layer in layers}
  todo, cached_count = [], 0
  for m in mutants:
    missing = [l for l in layers if not cache.get(m["id"], l, keys[l])]
    cached_count += not missing
    if missing:
      todo.append((m, missing))
  log(f"=== kill matrix: {len(mutants)} mutants ({cached_count} wholly from the cache), "
      f"{args.jobs} at a time, layers {', '.join(layers)}")
  if todo:
    suite.measure_baseline(layers, scratch_root, [m for m, _ in todo])
  done = 0
  with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
    futures = {pool.submit(suite.run_matrix_mutant, m, missing, scratch_root): m
               for m, missing in todo}
    for future in concurrent.futures.as_completed(futures):
      m = futures[future]
      for layer, (kills, seconds, ttk) in future.result().items():
        cache.add(m["id"], layer, keys[layer], kills, seconds, ttk)
      done += 1
      row = {l: cache.get(m["id"], l, keys[l])["kills"] for l in layers}
      verdict = "; ".join(f"{l} {len(k)}" for l, k in row.items() if k) or "survived"
      log(f"[{done}/{len(todo)}] {m['id']} {m['file']}:{m['line']} {m['operator']}: "
          f"killing tests per layer: {verdict}")
  outcomes, rows = {}, []
  for m in mutants:
    records = {l: cache.get(m["id"], l, keys[l]) for l in layers}
    kills = {l: r["kills"] for l, r in records.items()}
    outcomes[m["id"]] = first_kill(m["id"], kills, sum(r["seconds"] for r in records.values()))
    outcomes[m["id"]].ttk = {l: r.get("ttk") for l, r in records.items() if l in FUZZ_LAYERS}
    how = {t: h for k in kills.values() for t, h in k.items()}
    rows.append(kill_matrix.MutantKills(m["id"], m["file"], m["operator"],
                                        {l: sorted(k) for l, k in kills.items()}, how))
  return outcomes, {"rows": rows, "tests": tests, "ttk": {i: o.ttk for i, o in outcomes.items()},
                    "layer_seconds": {l: sum(cache.get(m["id"], l, keys[l])["seconds"]
                                             for m in mutants) for l in layers}}, cached_count


def read_id_file(path):
  """The mutant ids a sample file lists: the first word of each line that is
  neither blank nor a # comment."""
  ids = []
  with open(path, encoding="utf-8") as handle:
    for line in handle:
      words = line.split()
      if words and not words[0].startswith("#"):
        ids.append(words[0])
  return ids


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog=__doc__.split("\n", 2)[2])
  parser.add_argument("ids", nargs="*", help="run only these mutants")
  parser.add_argument("--ids-from", metavar="FILE",
                      help="run only the mutants this file lists, with any named on the "
                      "command line: one id a line, the first word of it; blank lines and "
                      "lines starting with # are skipped")
  parser.add_argument("--sample", type=int,
                      help="a sample of K mutants, stratified by file and operator (--seed)")
  parser.add_argument("--simple-random", action="store_true",
                      help="--sample draws a simple random sample instead (how the reports "
                      "before the kill matrix were sampled)")
  parser.add_argument("--slice", metavar="K/N",
                      help="the K-th of N disjoint stratified parts of the mutants (--seed); "
                      "the N parts hold every mutant once")
  parser.add_argument("--shard", metavar="K/N",
                      help="after the other selections, the K-th of N disjoint stratified "
                      "parts of what is left (a CI shard)")
  parser.add_argument("--matrix", action="store_true",
                      help="the kill matrix: every layer on every mutant, every program of "
                      "each layer, no stop at the first kill; also writes the report as "
                      "mutation-testing-elements JSON beside the markdown")
  parser.add_argument("--seed", type=int, default=1,
                      help="sample, RapidCheck and libFuzzer seed (default 1)")
  parser.add_argument("-j", "--jobs", type=int, default=2, help="mutants at a time (default 2)")
  parser.add_argument("--layers", default=",".join(DEFAULT_LAYERS),
                      help=f"comma-separated layers, of {','.join(LAYERS)} (default "
                      f"{','.join(DEFAULT_LAYERS)}: fuzz-empty only when named)")
  parser.add_argument("--fuzz-seconds", type=int, default=10,
                      help="per fuzz target of the fuzz layer, from the committed corpora "
                      "(default 10)")
  parser.add_argument("--fuzz-empty-seconds", type=int, default=60,
                      help="per fuzz target of the fuzz-empty layer, from an empty corpus "
                      "(default 60)")
  parser.add_argument("--property-cases", type=int, default=1000)
  parser.add_argument("--min-timeout", type=float, default=5.0,
                      help="least timeout of one program, seconds (default 5; a program's "
                      "timeout is 10 x its unmutated time, at least this)")
  parser.add_argument("--build-root", default=os.path.join(REPO, "build", "mutation"))
  parser.add_argument("--out", help="the report (default <build-root>/results.md; "
                      "<build-root>/results-sample.md for a partial selection: --sample, "
                      "--slice, --shard, ids); generated output, kept out of the source tree")
  parser.add_argument("--fresh", action="store_true", help="ignore cached outcomes")
  parser.add_argument("--run-unreached", action="store_true",
                      help="run every unit, property, corpus and golden program on every "
                      "mutant, also those whose unmutated run never evaluates the mutant's "
                      "point (by default they are skipped: they cannot kill it); to check "
                      "that skip")
  parser.add_argument("--named", action=argparse.BooleanOptionalAction, default=None,
                      help="also the hand-written mutants (default: in a full run only)")
  parser.add_argument("--list", action="store_true", help="list the mutants and exit")
  parser.add_argument("--merge-cache", nargs="+", metavar="FILE", default=[],
                      help="with --matrix: first take the rows of these kill-matrix caches "
                      "(<core hash>.matrix.jsonl of other runs or machines, this core "
                      "only) into this build root's cache")
  parser.add_argument("--cache-only", action="store_true",
                      help="with --matrix: run no mutant and build nothing; report the "
                      "selected mutants that have a cached row for every layer (the "
                      "selection line says how many were left out)")
  args = parser.parse_args()
  atexit.register(kill_live_groups)
  signal.signal(signal.SIGTERM, stop_on_signal)
  signal.signal(signal.SIGINT, stop_on_signal)
  layers = args.layers.split(",")
  for layer in layers:
    if layer not in LAYERS:
      parser.error(f"unknown layer {layer} (layers: {', '.join(LAYERS)})")
  layers = [l for l in LAYERS if l in layers]
  if args.ids_from:
    try:
      args.ids += read_id_file(args.ids_from)
    except OSError as error:
      parser.error(f"--ids-from: {error}")
    if not args.ids:
      parser.error(f"--ids-from: {args.ids_from} lists no mutant")
  if (args.merge_cache or args.cache_only) and not args.matrix:
    parser.error("--merge-cache and --cache-only take the kill matrix's cache (--matrix)")
  start = time.monotonic()

  args.build_root = os.path.abspath(args.build_root)  # CMake records absolute paths
  builds = Builds(args.build_root, os.cpu_count() or 2)
  core = core_hash()
  builds.generate(schemata_hash())
  listing = builds.mutants()
  mutants = listing["mutants"]
  if args.list:
    for m in mutants:
      print(f"{m['id']}  {m['description']}")
    return 0
  if args.ids:
    known = {m["id"] for m in mutants}
    for mutant_id in args.ids:
      if mutant_id not in known:
        parser.error(f"no mutant {mutant_id} (see --list)")
    mutants = [m for m in mutants if m["id"] in set(args.ids)]
  generated = len(mutants)
  selection = []
  if args.slice:
    part, parts = parse_part(args.slice, "--slice")
    mutants = stratified_part(mutants, part, parts, args.seed)
    selection.append(f"part {part} of {parts} of the {generated} generated mutants, "
                     f"stratified by file and operator (seed {args.seed}): {len(mutants)}")
  if args.sample:
    before = len(mutants)
    if args.simple_random:
      mutants = sorted(random.Random(args.seed).sample(mutants, min(args.sample, before)),
                       key=lambda m: m["id"])
      selection.append(f"a simple random sample of {len(mutants)} of {before} (seed "
                       f"{args.seed})")
    else:
      mutants = stratified_sample(mutants, args.sample, args.seed)
      selection.append(f"a sample of {len(mutants)} of {before} stratified by file and "
                       f"operator (seed {args.seed})")
  if args.shard:
    part, parts = parse_part(args.shard, "--shard")
    before = len(mutants)
    mutants = stratified_part(mutants, part, parts, args.seed)
    selection.append(f"shard {part} of {parts} of those {before}: {len(mutants)}")
  if args.ids:
    selection.append(f"{len(mutants)} mutants named "
                     f"{'in ' + args.ids_from if args.ids_from else 'on the command line'}")
  if args.matrix and args.named:
    parser.error("--matrix runs the generated mutants only (not --named)")
  suite_id = suite_hash()
  cache = None
  if args.matrix:
    cache = matrix_cache.MatrixCache(args.build_root, core, args.fresh)
    for path in args.merge_cache:
      try:
        taken, replaced = cache.merge(path)
      except (OSError, ValueError) as error:
        raise SystemExit(f"--merge-cache: {error}")
      log(f"=== merged {path}: {taken} rows taken"
          f"{f', {replaced} of them replacing a different row (the merged one stands)' if replaced else ''}")
  if args.cache_only:
    keys = {l: layer_key(l, suite_id, args) for l in layers}
    whole = [m for m in mutants if all(cache.get(m["id"], l, keys[l]) for l in layers)]
    selection.append(f"{len(whole)} of these {len(mutants)} {'' if selection else 'generated '}"
                     f"have a cached row for every layer and make this report (--cache-only; "
                     f"{len(mutants) - len(whole)} left out)")
    if not whole:
      raise SystemExit(f"--cache-only: none of the {len(mutants)} selected mutants has a "
                       f"cached row for every layer ({', '.join(layers)}) of suite {suite_id} "
                       f"with these settings; merge (--merge-cache) the caches of --matrix "
                       f"runs with the same layers, seed and seconds")
    mutants = whole
  partial = bool(args.ids or args.sample or args.slice or args.shard or args.cache_only)
  build_start = time.monotonic()
  # Every g++ target when the hand-written mutants run (their builds are whole).
  named_run = args.named if args.named is not None else not partial and not args.matrix
  suite = None
  if not args.cache_only:
    builds.build(any(l in FUZZ_LAYERS for l in layers),
                 None if named_run else sorted({program_executable(p)
                                                for l, ps in layer_programs().items()
                                                if l in layers for p in ps}))
    suite = Suite(builds, args.seed, args.property_cases, args.fuzz_seconds, args.min_timeout,
                  fuzz_empty_seconds=args.fuzz_empty_seconds, layers=layers,
                  skip_unreached=not args.run_unreached)
  build_seconds = time.monotonic() - build_start
  scratch_root = tempfile.mkdtemp(prefix="dcpsched-mutants-")
  try:
    matrix = None
    if args.matrix:
      outcomes, matrix, cached_count = run_matrix(suite, mutants, layers, suite_id, args,
                                                  scratch_root, cache)
    else:
      suite.measure_baseline(layers, scratch_root, mutants)
      cache = Cache(args.build_root, core, f"{suite_id}:{args.seed}:{args.property_cases}:"
                    f"{args.fuzz_seconds}:{args.fuzz_empty_seconds}:"
                    f"timeout={args.min_timeout:g}:noshrink", args.fresh)
      outcomes, todo = {}, []
      for m in mutants:
        cached = cache.usable(m["id"], layers)
        if cached:
          outcomes[m["id"]] = cached
        else:
          todo.append(m)
      cached_count = len(outcomes)
      log(f"=== {len(mutants)} mutants ({cached_count} from the cache), {args.jobs} at a time")
      done = 0
      with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(suite.run_mutant, m, layers, scratch_root): m for m in todo}
        for future in concurrent.futures.as_completed(futures):
          m = futures[future]
          outcome = future.result()
          cache.add(outcome, layers)
          outcomes[m["id"]] = outcome
          done += 1
          verdict = outcome.layer if outcome.layer == "survived" else \
              f"killed by {outcome.layer} ({outcome.how}: {outcome.program})"
          log(f"[{done}/{len(todo)}] {m['id']} {m['file']}:{m['line']} {m['operator']}: "
              f"{verdict}, {outcome.seconds:.1f} s")
    named = named_mutants() if (args.named if args.named is not None else
                                not partial and not args.matrix) else []
    for m in named:
      cached = cache.usable(m["id"], layers)
      if cached:
        outcomes[m["id"]] = cached
        continue
      log(f"=== hand-written mutant {m['name']} ({m['file']}): building")
      build_start = time.monotonic()
      gcc = builds.build_named_gcc(m["name"])
      build_seconds += time.monotonic() - build_start
      fuzz_at = [i for i, l in enumerate(layers) if l in FUZZ_LAYERS]
      before_fuzz = layers[:fuzz_at[0]] if fuzz_at else layers
      named_suite = Suite(builds, args.seed, args.property_cases, args.fuzz_seconds,
                          args.min_timeout, gcc=gcc,
                          fuzz_empty_seconds=args.fuzz_empty_seconds)
      named_suite.baseline = suite.baseline
      outcome = named_suite.run_mutant(m, before_fuzz, scratch_root)
      if outcome.layer == "survived" and before_fuzz != layers:
        build_start = time.monotonic()
        named_suite.fuzz_dir = builds.build_named_fuzz(m["name"])
        build_seconds += time.monotonic() - build_start
        rest = named_suite.run_mutant(m, layers[len(before_fuzz):], scratch_root)
        outcome = dataclasses.replace(rest, seconds=round(outcome.seconds + rest.seconds, 2),
                                      ttk={**outcome.ttk, **rest.ttk})
      cache.add(outcome, layers)
      outcomes[m["id"]] = outcome
      log(f"    {outcome.layer} ({outcome.how}: {outcome.program}), {outcome.seconds:.1f} s")
  finally:
    shutil.rmtree(scratch_root, ignore_errors=True)
  wall = time.monotonic() - start
  commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "unknown"
  context = {
      "arguments": " ".join(sys.argv[1:]), "core": core, "suite": suite_id, "commit": commit,
      "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
      "cores": os.cpu_count(), "jobs": args.jobs, "seed": args.seed,
      "property_cases": args.property_cases, "fuzz_seconds": args.fuzz_seconds,
      "fuzz_empty_seconds": args.fuzz_empty_seconds,
      "layers": layers, "min_timeout": args.min_timeout,
      "selection": "; ".join(selection) if selection else
                   f"every one of the {generated} generated",
      "wall": duration(wall), "builds": duration(build_seconds),
      "mutant_seconds": sum(outcomes[m["id"]].seconds for m in mutants + list(named)),
      "cached": cached_count,
      "cache_only": list(args.merge_cache) if args.cache_only else None}
  out = args.out or os.path.join(args.build_root,
                                 "results-sample.md" if partial else "results.md")
  line, closing_lines = write_report(out, context, mutants, outcomes,
                      read_equivalents(os.path.join(REPO, "mutation", "equivalent.txt")),
                      listing.get("dropped_not_compiling", {}), named,
                      named_skipped=not named and not partial, matrix=matrix)
  log(f"=== report: {os.path.relpath(out, REPO)}")
  if matrix:
    json_path = os.path.splitext(out)[0] + ".json"
    write_elements_json(json_path, context, mutants, matrix,
                        read_equivalents(os.path.join(REPO, "mutation", "equivalent.txt")))
    log(f"=== kill matrix, mutation-testing-elements JSON: {os.path.relpath(json_path, REPO)}")
  print(line)
  for closing in closing_lines:
    print(closing)
  return 0


if __name__ == "__main__":
  sys.exit(main())
