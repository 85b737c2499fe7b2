#!/usr/bin/python3
"""Runs every shell command the README and docs/ show, as a user would.

    tests/doc_commands_test.py SOURCE_DIR BUILD_DIR

What it reads, in README.md, */README.md and docs/*.md:
  - a ```sh block: each command runs (in bash, with pipefail) and must exit
    0; a comment line `# prints: TEXT` right after a command is its expected
    standard output, line by line;
  - a ``` block of a terminal session: each `$ COMMAND` line runs, and the
    lines after it, up to the next `$`, are its expected output (standard
    output and error together; its exit status is not checked, as `verify`
    exits 1 on a violation);
  - a ``` block right after `<!-- docs-test: output-of: COMMAND -->` is the
    expected output of COMMAND;
  - a ```python block runs as a program with the built module on its path
    and must exit 0 (a fragment that needs your training loop's variables
    says so with a skip).
(Whole C++ programs are built and run as ctest doc_example_*.)
In expected output a line `...` stands for any lines. Just before a block,
an HTML comment (invisible on the rendered page) may say
  <!-- docs-test: skip: REASON -->    the block is not run, and why;
  <!-- docs-test: setup              commands run first (the files the
  COMMANDS                            session reads)
  -->
  <!-- docs-test: varies: REGEX -->   text that differs between runs (a
                                      timing): masked in both outputs.

Commands run in a scratch directory that mirrors the source tree, where
`build` is BUILD_DIR and BUILD_DIR is first on PATH (so `dcpsched` is the
program under test). Two steps are not re-run, since the test command has
just done them: `scripts/install_deps.sh` runs as `--check` (every package
present), and `cmake -S . -B build ...` is satisfied by BUILD_DIR being a
build of SOURCE_DIR. Prints one line per block; exits 1 if any fails.
"""

import os
import pathlib
import re
import subprocess
import sys
import tempfile

BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# The last docs-test comment of a text (no "-->" inside it).
DIRECTIVE = re.compile(
    r"<!-- docs-test: (\w[\w-]*)(?::\s*((?:(?!-->).)*?))?\s*-->\s*\Z",
    re.DOTALL)
COMMAND_TIMEOUT_SECONDS = 300


class Block:
    def __init__(self, path, line, language, body, directives):
        self.path, self.line, self.language = path, line, language
        self.body, self.directives = body, directives

    def where(self):
        return f"{self.path}:{self.line}"


def directives_before(text, start):
    """The docs-test comments directly above offset `start`, in order."""
    found = []
    head = text[:start].rstrip()
    while True:
        match = DIRECTIVE.search(head)
        if match is None:
            return list(reversed(found))
        found.append((match.group(1), (match.group(2) or "").strip()))
        head = head[:match.start()].rstrip()


def blocks(root):
    pages = [root / "README.md", *sorted(root.glob("*/README.md")),
             *sorted(root.glob("docs/*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            language, body = match.group(1), match.group(2)
            directives = directives_before(text, match.start())
            session = language == "" and any(
                line.startswith("$ ") for line in body.splitlines())
            output_of = any(name == "output-of" for name, _ in directives)
            if language in ("sh", "python") or session or output_of:
                line = text.count("\n", 0, match.start()) + 1
                yield Block(page.relative_to(root), line, language, body,
                            directives)


def logical_lines(body):
    """Lines with backslash continuations joined."""
    lines, pending = [], ""
    for line in body.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


class Sandbox:
    """A scratch mirror of the source tree with `build` -> BUILD_DIR."""

    def __init__(self, source, build):
        self.source, self.build = source, build
        self.directory = tempfile.TemporaryDirectory(prefix="doc_commands_")
        self.path = pathlib.Path(self.directory.name)
        for entry in source.iterdir():
            if entry.name not in ("build", ".git"):
                (self.path / entry.name).symlink_to(entry)
        (self.path / "build").symlink_to(build)
        self.env = dict(os.environ)
        self.env["PATH"] = f"{build}{os.pathsep}{self.env.get('PATH', '')}"

    def rewrite(self, command):
        """The command as run here, or None when it needs no run (with the
        reason it is already satisfied), as (command, note)."""
        parts = [part.strip() for part in command.split("&&")]
        kept, notes = [], []
        for part in parts:
            if part.startswith("cmake -S . -B build"):
                notes.append(self.check_configured())
            elif part == "scripts/install_deps.sh":
                kept.append("scripts/install_deps.sh --check")
            else:
                kept.append(part)
        return " && ".join(kept), notes

    def check_configured(self):
        cache = self.build / "CMakeCache.txt"
        home = ""
        if cache.exists():
            for line in cache.read_text(errors="replace").splitlines():
                if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                    home = line.split("=", 1)[1]
        if pathlib.Path(home).resolve() != self.source.resolve():
            return (f"FAIL: {self.build} is not a build of {self.source} "
                    f"(its source is {home or 'unknown'})")
        return "configure: the build under test"

    def run(self, command):
        """(exit status, stdout, stderr) of `command` in bash."""
        try:
            result = subprocess.run(
                ["bash", "-c", f"set -o pipefail\n{command}"], cwd=self.path,
                env=self.env, capture_output=True, text=True,
                errors="replace", timeout=COMMAND_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            return -1, "", f"timed out after {COMMAND_TIMEOUT_SECONDS} s"
        return result.returncode, result.stdout, result.stderr


def matches(expected, actual):
    """Whether the lines `actual` fit `expected`, where '...' is any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:])
                   for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(
        expected[1:], actual[1:])


def masked(lines, patterns):
    out = []
    for line in lines:
        for pattern in patterns:
            line = re.sub(pattern, "<varies>", line)
        out.append(line.rstrip())
    return out


def compare(command, expected, actual, patterns):
    expected = masked(expected, patterns)
    actual = masked(actual.splitlines(), patterns)
    if matches(expected, actual):
        return None
    return (f"output of `{command}` differs:\n  expected:\n    "
            + "\n    ".join(expected) + "\n  got:\n    "
            + "\n    ".join(actual[:60]))


def run_command(sandbox, command):
    """Runs one doc command; (stdout, problems)."""
    problems = []
    runnable, notes = sandbox.rewrite(command)
    problems += [note[6:] for note in notes if note.startswith("FAIL: ")]
    if not runnable:
        return "", problems
    status, out, err = sandbox.run(runnable)
    if status != 0:
        problems.append(f"`{command}` exited {status}:\n{err[-2000:]}")
    return out, problems


def run_sh(sandbox, block, patterns):
    problems, last_command, last_out = [], None, ""
    expected = []

    def finish():
        if last_command is not None and expected:
            problem = compare(last_command, expected, last_out, patterns)
            if problem:
                problems.append(problem)

    for line in logical_lines(block.body):
        stripped = line.strip()
        if stripped.startswith("# prints:"):
            expected.append(stripped[len("# prints:"):].strip())
            continue
        if not stripped or stripped.startswith("#"):
            continue
        finish()
        expected = []
        last_command = stripped
        last_out, command_problems = run_command(sandbox, stripped)
        problems += command_problems
    finish()
    return problems


def run_python(sandbox, block):
    script = sandbox.path / "doc_program.py"
    script.write_text(block.body)
    status, _, err = sandbox.run(
        f"PYTHONPATH=build/python /usr/bin/python3 {script.name}")
    if status != 0:
        return [f"the program exited {status}:\n{err[-2000:]}"]
    return []


def run_session(sandbox, block, patterns):
    problems, command, expected = [], None, []

    def finish():
        if command is None:
            return
        runnable, _ = sandbox.rewrite(command)
        _, out, err = sandbox.run(runnable)
        problem = compare(command, expected, out + err, patterns)
        if problem:
            problems.append(problem)

    for line in block.body.splitlines():
        if line.startswith("$ "):
            finish()
            command, expected = line[2:], []
        elif command is not None:
            expected.append(line)
    finish()
    return problems


def main(argv):
    source = pathlib.Path(argv[1]).resolve()
    build = pathlib.Path(argv[2]).resolve()
    sandbox = Sandbox(source, build)
    failures = 0
    count = 0
    for block in blocks(source):
        count += 1
        directives = dict()
        setups, patterns = [], []
        for name, value in block.directives:
            if name == "setup":
                setups.append(value)
            elif name == "varies":
                patterns.append(value)
            else:
                directives[name] = value
        unknown = set(directives) - {"skip", "output-of"}
        problems = [f"unknown docs-test directive {name!r}" for name in unknown]
        if "skip" in directives:
            if not directives["skip"]:
                problems.append("a skip must give its reason")
            else:
                print(f"skip {block.where()}: {directives['skip']}", flush=True)
                continue
        for setup in setups:
            status, _, err = sandbox.run(setup)
            if status != 0:
                problems.append(f"setup exited {status}: {err[-2000:]}")
        if "output-of" in directives:
            command = directives["output-of"]
            out, command_problems = run_command(sandbox, command)
            problems += command_problems
            problem = compare(command, block.body.splitlines(), out, patterns)
            if problem:
                problems.append(problem)
        elif block.language == "sh":
            problems += run_sh(sandbox, block, patterns)
        elif block.language == "python":
            problems += run_python(sandbox, block)
        else:
            problems += run_session(sandbox, block, patterns)
        if problems:
            failures += 1
            print(f"FAIL {block.where()}:")
            for problem in problems:
                print("  " + problem.replace("\n", "\n  "))
        else:
            print(f"ok   {block.where()}", flush=True)
    print(f"doc_commands: {count} blocks, {failures} failed")
    if count == 0:
        print("doc_commands: no command blocks found; the docs moved?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
