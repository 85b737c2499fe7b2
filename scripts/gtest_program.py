#!/usr/bin/env python3
"""Runs the tests of one GoogleTest program in a few processes, not one each.

ctest runs every test that gtest_discover_tests found as a process of its
own. Under AddressSanitizer with clang's coverage (the test command's asan
stage, scripts/coverage.sh) a process costs about 0.3 s to start and to
merge its profile, which for the hundreds of short unit tests is most of
their time (unit_tests: 199 s as 558 processes, 33 s as one). This runs the
program as SHARDS processes at once (GoogleTest's GTEST_TOTAL_SHARDS and
GTEST_SHARD_INDEX), each under a time limit, and prints:

  - each shard's own output, whole;
  - per test, a line in ctest's format
    ("  3/558 Test   #3: Suite.Name ......   Passed    0.12 sec");
  - ctest's summary line ("100% tests passed, 0 tests failed out of 558"),

so that what reads ctest logs (scripts/test.sh's counts and slowest tests,
scripts/coverage.sh's layers) reads this log the same. A test the program
lists but no shard reported (the shard crashed or ran out of time) counts
as failed, and so does a shard that exits non-zero with every test passed.

With --others-in BUILD_DIR it runs nothing: it prints a ctest -R regex of
the tests of the ctest selection ARGS (e.g. -L '^unit$') in BUILD_DIR that
are not PROGRAM's (ctest --show-only=json-v1: whose command is not the
program), for the caller to run those through ctest; a regex that matches
no test where there are none.

Usage: gtest_program.py [--shards N] [--timeout SECONDS] PROGRAM [ARGS...]
       gtest_program.py --others-in BUILD_DIR PROGRAM [CTEST ARGS...]
Exit status 0 when every test passed, 1 otherwise, 2 for bad usage.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

RESULT = re.compile(r"^\[ +(OK|FAILED) +\] (\S+) \((\d+) ms\)$")


def listed_tests(program, args):
    """The tests the program would run with `args`, in its order."""
    out = subprocess.run([program, *args, "--gtest_list_tests"], check=True,
                         capture_output=True, text=True).stdout
    tests, suite = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        name = line.split()[0]
        if not line.startswith(" "):
            suite = name
        elif not (suite + name).startswith("DISABLED_") and "DISABLED_" not in name:
            tests.append(suite + name)
    return tests


def run_shards(program, args, shards, timeout):
    """Starts every shard, waits for all; (exit codes, outputs)."""
    running = []
    for index in range(shards):
        env = dict(os.environ, GTEST_TOTAL_SHARDS=str(shards), GTEST_SHARD_INDEX=str(index))
        output = tempfile.TemporaryFile(mode="w+")
        process = subprocess.Popen(["timeout", str(timeout), program, *args], env=env,
                                   stdout=output, stderr=subprocess.STDOUT, text=True)
        running.append((process, output))
    codes, outputs = [], []
    for process, output in running:
        codes.append(process.wait())
        output.seek(0)
        outputs.append(output.read())
        output.close()
    return codes, outputs


def others_regex(build_dir, program, selection):
    """A ctest -R regex of the selected tests whose command is not `program`."""
    shown = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1", *selection],
                           check=True, capture_output=True, text=True).stdout
    program = os.path.realpath(program)
    names = [test["name"] for test in json.loads(shown)["tests"]
             if os.path.realpath(test["command"][0]) != program]
    if not names:
        return "^$"
    return "^(" + "|".join(re.escape(name) for name in names) + ")$"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--others-in", metavar="BUILD_DIR")
    parser.add_argument("program")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv[1:])
    if options.others_in:
        print(others_regex(options.others_in, options.program, options.args))
        return 0
    if options.shards < 1 or options.timeout < 1:
        parser.error("--shards and --timeout must be at least 1")
    tests = listed_tests(options.program, options.args)
    codes, outputs = run_shards(options.program, options.args, options.shards,
                                options.timeout)
    results = {}
    for output in outputs:
        sys.stdout.write(output)
        for line in output.splitlines():
            match = RESULT.match(line)
            if match:
                results[match.group(2)] = (match.group(1) == "OK", int(match.group(3)))
    failures = 0
    width = len(str(len(tests)))
    for number, test in enumerate(tests, 1):
        passed, ms = results.get(test, (False, 0))
        if test not in results:
            print(f"{test}: no result (its shard crashed or ran out of time)")
        failures += not passed
        status = "Passed" if passed else "***Failed"
        print(f"{number:>{width}}/{len(tests)} Test #{number}: {test} .....   {status}"
              f"    {ms / 1000:.2f} sec")
    if failures == 0 and any(codes):
        print(f"every test passed, but a shard exited with {max(codes)}")
        failures = 1
    share = 100 * (len(tests) - min(failures, len(tests))) // max(len(tests), 1)
    print(f"\n{share}% tests passed, {failures} tests failed out of {len(tests)}")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
