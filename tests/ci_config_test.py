"""Checks the CI configuration users copy: .github/workflows/*.yml and
.clusterfuzzlite/ (project.yaml, Dockerfile, build.sh).

GitHub and Docker cannot run here, so this checks what can go wrong before
they ever see the files: every file parses as YAML (Debian's python3-yaml);
every ClusterFuzzLite step uses only the inputs the actions document (v1,
google/clusterfuzzlite actions/*/action.yml) and sets the ones they need;
each workflow has the trigger, mode, fuzz time and sanitizers it is for;
and every script and path the files name exists in the repository.

Run: /usr/bin/python3 tests/ci_config_test.py [SOURCE_DIR] (ctest ci_config).
"""

import os
import re
import shlex
import sys
import unittest

import yaml

SOURCE_DIR = os.path.abspath(
    sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

BUILD_FUZZERS = "google/clusterfuzzlite/actions/build_fuzzers@v1"
RUN_FUZZERS = "google/clusterfuzzlite/actions/run_fuzzers@v1"

# The inputs google/clusterfuzzlite documents in actions/build_fuzzers/action.yml
# and actions/run_fuzzers/action.yml (v1), and those without a default.
DOCUMENTED_INPUTS = {
    BUILD_FUZZERS: {
        "language", "dry-run", "allowed-broken-targets-percentage", "sanitizer",
        "project-src-path", "bad-build-check", "keep-unaffected-fuzz-targets",
        "storage-repo", "storage-repo-branch", "storage-repo-branch-coverage",
        "upload-build", "github-token",
    },
    RUN_FUZZERS: {
        "language", "fuzz-seconds", "dry-run", "sanitizer", "mode", "github-token",
        "storage-repo", "storage-repo-branch", "storage-repo-branch-coverage",
        "report-unreproducible-crashes", "minimize-crashes", "parallel-fuzzing",
        "output-sarif", "report-timeouts", "report-ooms",
    },
}
REQUIRED_INPUTS = {BUILD_FUZZERS: set(), RUN_FUZZERS: {"fuzz-seconds", "github-token"}}
SANITIZERS = {"address", "undefined", "memory", "coverage"}
MODES = {"code-change", "batch", "prune", "coverage"}
# What scripts/test.sh --nightly writes new inputs to (default build root).
NIGHTLY_NEW_INPUTS = "build/nightly/new"
# What a mutation shard of scripts/test.sh --nightly --shard K/N writes.
NIGHTLY_MUTATION_REPORTS = "build/mutation-results-shard-*"
# Its kill-matrix cache (mutation/matrix_cache.py under run_mutants.py's
# default build root).
NIGHTLY_MUTATION_CACHES = "build/mutation/cache/*.matrix.jsonl"
# What scripts/test.sh --nightly --report DIR writes: the merged report.
NIGHTLY_MERGED_REPORT = "build/mutation-results.*"
# The stages' logs a shard of scripts/test.sh --nightly leaves in the build root.
NIGHTLY_LOGS = "build/*.log"
# The page the nightly's coverage stages (shard 2) rewrite.
NIGHTLY_COVERAGE_PAGE = "docs/coverage.md"
# What writes each of those: the command an earlier step of the job runs,
# and the source lines that put the files at that path.
BUILD_ROOT = "root=${DCPSCHED_BUILD_ROOT:-build}"
NIGHTLY_WRITERS = {
    NIGHTLY_NEW_INPUTS: ("scripts/test.sh --nightly", {
        ("scripts", "test.sh"): [BUILD_ROOT, "scratch=$root/nightly", '"$scratch/new"']}),
    NIGHTLY_MUTATION_REPORTS: ("scripts/test.sh --nightly --shard", {
        ("scripts", "test.sh"): [BUILD_ROOT, "out=$root/mutation-results-shard-$1.md"],
        # The JSON report goes beside the markdown one, same stem.
        ("mutation", "run_mutants.py"): ['json_path = os.path.splitext(out)[0] + ".json"']}),
    NIGHTLY_MUTATION_CACHES: ("scripts/test.sh --nightly --shard", {
        ("mutation", "run_mutants.py"): ['default=os.path.join(REPO, "build", "mutation")'],
        ("mutation", "matrix_cache.py"): ['os.path.join(root, "cache", file_name(core))',
                                          'return f"{core}.matrix.jsonl"']}),
    NIGHTLY_LOGS: ("scripts/test.sh --nightly --shard", {
        ("scripts", "test.sh"): [BUILD_ROOT, '>"$root/nightly-properties-$index.log"',
                                 '| tee "$root/nightly-fuzz.log"',
                                 '>"$root/exhaustive-$part.log"']}),
    NIGHTLY_COVERAGE_PAGE: ("scripts/test.sh --nightly --shard", {
        ("scripts", "test.sh"): ["in_shard 2 && stage coverage optional_tool scripts/coverage.sh"],
        ("scripts", "coverage.sh"): ["docs_args=(--docs docs/coverage.md)"]}),
    NIGHTLY_MERGED_REPORT: ("scripts/test.sh --nightly --report", {
        ("scripts", "test.sh"): [BUILD_ROOT, '--cache-only --out "$root/mutation-results.md"'],
        ("mutation", "run_mutants.py"): ['json_path = os.path.splitext(out)[0] + ".json"']}),
}


def source_path(*parts):
    return os.path.join(SOURCE_DIR, *parts)


def load_yaml(*parts):
    with open(source_path(*parts), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def triggers(workflow):
    # YAML 1.1 reads the key `on` as the boolean True.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {name: None for name in on}
    return on or {}


def steps_using(workflow, action):
    """(job name, job, step) for every step that uses `action`."""
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            if step.get("uses") == action:
                yield job_name, job, step


def matrix_sanitizers(job):
    return set(job.get("strategy", {}).get("matrix", {}).get("sanitizer", []))


def resolved(value, job):
    """The sanitizers an input may take: its value, or the job's matrix."""
    if isinstance(value, str) and "matrix.sanitizer" in value:
        return matrix_sanitizers(job)
    return {value}


def repository_paths(command):
    """Words of a shell command that name files in the repository."""
    for word in shlex.split(command.replace("\n", " ")):
        word = re.sub(r"^\$\{\{ github\.workspace \}\}/", "", word)
        if re.match(r"^(\./)?(dcpsched/)?(scripts|fuzz|tests|\.ci|\.clusterfuzzlite)/", word):
            yield re.sub(r"^(\./)?(dcpsched/)?", "", word)


WORKFLOWS = sorted(name for name in os.listdir(source_path(".github", "workflows"))
                   if name.endswith((".yml", ".yaml")))


class WorkflowFilesTest(unittest.TestCase):
    def test_the_expected_workflows_exist(self):
        for name in ("ci.yml", "cflite_pr.yml", "cflite_batch.yml", "cflite_cron.yml",
                     "nightly.yml"):
            self.assertIn(name, WORKFLOWS)

    def test_every_workflow_parses_and_has_name_triggers_and_jobs(self):
        for name in WORKFLOWS:
            with self.subTest(workflow=name):
                workflow = load_yaml(".github", "workflows", name)
                self.assertIsInstance(workflow.get("name"), str)
                self.assertTrue(triggers(workflow), "no trigger (on:)")
                self.assertTrue(workflow.get("jobs"), "no jobs")
                for job_name, job in workflow["jobs"].items():
                    self.assertIn("runs-on", job, job_name)
                    self.assertTrue(job.get("steps"), job_name)
                    for step in job["steps"]:
                        self.assertTrue(("uses" in step) != ("run" in step),
                                        f"{job_name}: a step needs exactly one of uses/run")

    def test_clusterfuzzlite_steps_use_only_documented_inputs(self):
        for name in WORKFLOWS:
            workflow = load_yaml(".github", "workflows", name)
            for action in (BUILD_FUZZERS, RUN_FUZZERS):
                for job_name, job, step in steps_using(workflow, action):
                    with self.subTest(workflow=name, job=job_name, action=action):
                        inputs = set(step.get("with", {}))
                        self.assertLessEqual(inputs, DOCUMENTED_INPUTS[action])
                        self.assertLessEqual(REQUIRED_INPUTS[action], inputs)
                        settings = step.get("with", {})
                        self.assertEqual(settings.get("language", "c++"), "c++")
                        for sanitizer in resolved(settings.get("sanitizer", "address"), job):
                            self.assertIn(sanitizer, SANITIZERS)
                        if action == RUN_FUZZERS:
                            self.assertIn(settings.get("mode", "code-change"), MODES)
                            self.assertIsInstance(settings["fuzz-seconds"], int)

    def test_every_run_fuzzers_step_follows_a_build_with_the_same_sanitizer(self):
        for name in WORKFLOWS:
            workflow = load_yaml(".github", "workflows", name)
            for job_name, job in workflow["jobs"].items():
                uses = [step.get("uses") for step in job["steps"]]
                if RUN_FUZZERS not in uses:
                    continue
                with self.subTest(workflow=name, job=job_name):
                    self.assertIn(BUILD_FUZZERS, uses)
                    self.assertLess(uses.index(BUILD_FUZZERS), uses.index(RUN_FUZZERS))
                    build = job["steps"][uses.index(BUILD_FUZZERS)].get("with", {})
                    run = job["steps"][uses.index(RUN_FUZZERS)].get("with", {})
                    self.assertEqual(build.get("sanitizer", "address"),
                                     run.get("sanitizer", "address"))

    def run_fuzzers_settings(self, name):
        workflow = load_yaml(".github", "workflows", name)
        return workflow, [(job, step["with"]) for _, job, step in
                          steps_using(workflow, RUN_FUZZERS)]

    def test_pr_workflow_fuzzes_code_changes_600_s_with_asan_and_ubsan(self):
        workflow, runs = self.run_fuzzers_settings("cflite_pr.yml")
        self.assertIn("pull_request", triggers(workflow))
        self.assertEqual(len(runs), 1)
        job, settings = runs[0]
        self.assertEqual(settings["mode"], "code-change")
        self.assertEqual(settings["fuzz-seconds"], 600)
        self.assertEqual(resolved(settings["sanitizer"], job), {"address", "undefined"})

    def test_batch_workflow_fuzzes_3600_s_on_a_schedule_and_uploads_the_corpus_layout(self):
        workflow, runs = self.run_fuzzers_settings("cflite_batch.yml")
        schedule = triggers(workflow).get("schedule")
        self.assertTrue(schedule and all("cron" in entry for entry in schedule))
        self.assertEqual(len(runs), 1)
        job, settings = runs[0]
        self.assertEqual(settings["mode"], "batch")
        self.assertEqual(settings["fuzz-seconds"], 3600)
        self.assertEqual(resolved(settings["sanitizer"], job), {"address", "undefined"})
        commands = " ".join(step.get("run", "") for step in job["steps"])
        self.assertIn("fuzz/collect_new_inputs.sh", commands)
        uploads = [step for step in job["steps"]
                   if step.get("uses", "").startswith("actions/upload-artifact@")]
        self.assertEqual([step["with"]["path"] for step in uploads], ["new-inputs"])

    def test_cron_workflow_prunes_and_reports_coverage_daily(self):
        workflow, runs = self.run_fuzzers_settings("cflite_cron.yml")
        schedule = triggers(workflow).get("schedule")
        self.assertTrue(schedule and all("cron" in entry for entry in schedule))
        modes = {settings["mode"]: (job, settings) for job, settings in runs}
        self.assertEqual(set(modes), {"prune", "coverage"})
        job, settings = modes["coverage"]
        self.assertEqual(settings.get("sanitizer"), "coverage")
        build = next(step["with"] for step in job["steps"] if step.get("uses") == BUILD_FUZZERS)
        self.assertEqual(build.get("sanitizer"), "coverage")

    def test_ci_workflow_runs_the_readme_test_command_on_push_and_pull_request(self):
        workflow = load_yaml(".github", "workflows", "ci.yml")
        self.assertLessEqual({"push", "pull_request"}, set(triggers(workflow)))
        commands = [step["run"].strip() for job in workflow["jobs"].values()
                    for step in job["steps"] if "run" in step]
        command = "scripts/install_deps.sh && scripts/test.sh"
        self.assertIn(command, commands)
        with open(source_path("README.md"), encoding="utf-8") as handle:
            self.assertIn(command, handle.read())
        with open(source_path(".ci", "run"), encoding="utf-8") as handle:
            self.assertIn(command, handle.read())

    def test_every_script_and_path_a_workflow_names_exists(self):
        for name in WORKFLOWS:
            workflow = load_yaml(".github", "workflows", name)
            for job_name, job in workflow["jobs"].items():
                for step in job["steps"]:
                    for path in repository_paths(step.get("run", "")):
                        with self.subTest(workflow=name, job=job_name, path=path):
                            self.assertTrue(os.path.isfile(source_path(path)), path)
                            if path.endswith((".sh", "/run")):
                                self.assertTrue(os.access(source_path(path), os.X_OK))
                    uses = step.get("uses", "")
                    if uses.startswith("./"):
                        self.assertTrue(os.path.exists(source_path(uses)), uses)
                    upload_path = step.get("with", {}).get("path")
                    if upload_path and "upload-artifact" in uses:
                        self.assert_written_before(job, step, upload_path)

    def assert_written_before(self, job, upload, path):
        """An uploaded path is what an earlier step of the job writes."""
        earlier = job["steps"][:job["steps"].index(upload)]
        commands = " ".join(step.get("run", "") for step in earlier)
        if path in NIGHTLY_WRITERS:
            command, sources = NIGHTLY_WRITERS[path]
            self.assertIn(command, commands)
            for parts, lines in sources.items():
                with open(source_path(*parts), encoding="utf-8") as handle:
                    text = handle.read()
                for line in lines:
                    self.assertIn(line, text)
        else:
            self.assertRegex(commands, r"\b" + re.escape(path) + r'"?\s*$')

    def nightly_shards(self):
        """The shard count scripts/test.sh lays the nightly tier out for."""
        with open(source_path("scripts", "test.sh"), encoding="utf-8") as handle:
            script = handle.read()
        count = int(re.search(r"^NIGHTLY_SHARDS=(\d+)$", script, re.M).group(1))
        # Its help names the same count, and says what each shard runs.
        self.assertIn(f"--shard K/{count}", script)
        self.assertIn(f"(N = {count}, the only count defined)", script)
        return count

    def test_nightly_workflow_runs_every_shard_of_the_nightly_tier_on_a_schedule(self):
        workflow = load_yaml(".github", "workflows", "nightly.yml")
        self.assertIn("schedule", triggers(workflow))
        count = self.nightly_shards()
        # The shards' job, and the report job that merges their caches.
        self.assertEqual(sorted(workflow["jobs"]), ["mutation-report", "nightly"])
        job = workflow["jobs"]["nightly"]
        strategy = job.get("strategy", {})
        # Every shard runs, each once, and one failing shard stops no other.
        self.assertEqual(strategy.get("matrix", {}).get("shard"), list(range(1, count + 1)))
        self.assertIs(strategy.get("fail-fast"), False)
        commands = [step["run"].strip() for step in job["steps"] if "run" in step]
        self.assertIn("scripts/install_deps.sh && scripts/test.sh --nightly --shard "
                      f"${{{{ matrix.shard }}}}/{count}", commands)
        # A shard is laid out for at most 60 minutes; the job leaves room for
        # installing the dependencies and a slow runner, and no more.
        self.assertGreaterEqual(job["timeout-minutes"], 60)
        self.assertLessEqual(job["timeout-minutes"], 180)
        # upload-artifact@v4 refuses two artifacts of one name in a run.
        names = [step["with"]["name"] for step in job["steps"]
                 if step.get("uses", "").startswith("actions/upload-artifact@")]
        self.assertTrue(names)
        for name in names:
            self.assertIn("${{ matrix.shard }}", name)
        self.assertEqual(len(set(names)), len(names))

    def test_nightly_workflow_uploads_everything_the_nightly_tier_writes(self):
        # The nightly's output stays out of the repository: every path it
        # writes (NIGHTLY_WRITERS) goes up as an artifact of some job.
        workflow = load_yaml(".github", "workflows", "nightly.yml")
        uploaded = {step["with"]["path"] for job in workflow["jobs"].values()
                    for step in job["steps"]
                    if step.get("uses", "").startswith("actions/upload-artifact@")}
        self.assertEqual(uploaded, set(NIGHTLY_WRITERS))

    def test_nightly_report_merges_the_caches_every_mutation_shard_uploads(self):
        import fnmatch
        workflow = load_yaml(".github", "workflows", "nightly.yml")
        shards, report = workflow["jobs"]["nightly"], workflow["jobs"]["mutation-report"]
        # After every shard, even when one failed: the others' rows still count.
        self.assertEqual(report["needs"], "nightly")
        self.assertEqual(report["if"], "always()")
        uploads = [step["with"] for step in shards["steps"]
                   if step.get("uses", "").startswith("actions/upload-artifact@")
                   and step["with"]["path"] == NIGHTLY_MUTATION_CACHES]
        self.assertEqual(len(uploads), 1)
        downloads = [step["with"] for step in report["steps"]
                     if step.get("uses", "").startswith("actions/download-artifact@")]
        self.assertEqual(len(downloads), 1)
        # Every shard's artifact, by name, and no other artifact of the run.
        for shard in shards["strategy"]["matrix"]["shard"]:
            name = uploads[0]["name"].replace("${{ matrix.shard }}", str(shard))
            self.assertTrue(fnmatch.fnmatchcase(name, downloads[0]["pattern"]), name)
        other_names = [step["with"]["name"] for step in shards["steps"]
                       if step.get("uses", "").startswith("actions/upload-artifact@")
                       and step["with"]["path"] != NIGHTLY_MUTATION_CACHES]
        for other in other_names:
            self.assertFalse(fnmatch.fnmatchcase(other.replace("${{ matrix.shard }}", "5"),
                                                 downloads[0]["pattern"]), other)
        commands = [step["run"].strip() for step in report["steps"] if "run" in step]
        self.assertEqual(commands, ["scripts/install_deps.sh && scripts/test.sh --nightly "
                                    f"--report {downloads[0]['path']}"])

    def test_test_sh_rejects_a_shard_layout_it_does_not_define(self):
        import subprocess
        count = self.nightly_shards()
        for argv in (["--nightly", "--shard", f"0/{count}"],
                     ["--nightly", "--shard", f"{count + 1}/{count}"],
                     ["--nightly", "--shard", f"1/{count + 1}"],
                     ["--shard", f"1/{count}"], ["--nightly", "--shard", "x"],
                     ["--report", "."], ["--nightly", "--report"],
                     ["--nightly", "--report", os.devnull],
                     ["--nightly", "--shard", f"5/{count}", "--report", "."]):
            with self.subTest(argv=argv):
                result = subprocess.run([source_path("scripts", "test.sh"), *argv],
                                        capture_output=True, text=True,
                                        env=dict(os.environ, DCPSCHED_BUILD_ROOT=os.devnull))
                self.assertEqual(result.returncode, 2, result.stderr)

    def test_nightly_workflow_keeps_the_mutation_cache_by_core_hash(self):
        workflow = load_yaml(".github", "workflows", "nightly.yml")
        steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
        caches = [step for step in steps if step.get("uses", "").startswith("actions/cache@")]
        self.assertEqual(len(caches), 1)
        settings = caches[0]["with"]
        # Where mutation/run_mutants.py keeps outcomes under its default build root.
        self.assertEqual(settings["path"], "build/mutation/cache")
        with open(source_path("mutation", "run_mutants.py"), encoding="utf-8") as handle:
            runner = handle.read()
        self.assertIn('default=os.path.join(REPO, "build", "mutation")', runner)
        self.assertIn('os.path.join(root, "cache", f"{core}.jsonl")', runner)
        self.assertIn("hashFiles('core/**')", settings["key"])
        self.assertTrue(settings["key"].startswith(settings["restore-keys"]))
        self.assertLess(steps.index(caches[0]),
                        next(i for i, step in enumerate(steps)
                             if "scripts/test.sh --nightly" in step.get("run", "")))


class ClusterFuzzLiteFilesTest(unittest.TestCase):
    def test_project_yaml_says_cpp_on_a_builder_image_that_exists(self):
        project = load_yaml(".clusterfuzzlite", "project.yaml")
        self.assertEqual(project["language"], "c++")
        self.assertIn(project.get("base_os_version", "legacy"),
                      {"legacy", "ubuntu-20-04", "ubuntu-24-04"})

    def dockerfile(self):
        with open(source_path(".clusterfuzzlite", "Dockerfile"), encoding="utf-8") as handle:
            lines = [line.strip() for line in handle if line.strip()
                     and not line.lstrip().startswith("#")]
        # Join continuation lines.
        return re.sub(r"\\\n\s*", " ", "\n".join(lines)).split("\n")

    def test_dockerfile_starts_from_the_cpp_builder_matching_project_yaml(self):
        project = load_yaml(".clusterfuzzlite", "project.yaml")
        tag = project.get("base_os_version", "legacy")
        image = "gcr.io/oss-fuzz-base/base-builder" + ("" if tag == "legacy" else ":" + tag)
        self.assertEqual(self.dockerfile()[0], "FROM " + image)

    def test_dockerfile_installs_what_fuzz_build_sh_needs(self):
        with open(source_path("fuzz", "build.sh"), encoding="utf-8") as handle:
            needs = re.search(r"needs the Debian/Ubuntu packages ([^.]*)\.", " ".join(
                line.lstrip("# ").strip() for line in handle)).group(1)
        packages = set(re.findall(r"[a-z0-9][a-z0-9+.-]+(?=[ ,(]|$)",
                                  re.sub(r"\([^)]*\)| and ", " ", needs)))
        installs = " ".join(line for line in self.dockerfile() if line.startswith("RUN "))
        installed = set(re.search(r"apt-get install (.*)", installs).group(1).split())
        self.assertTrue(packages, needs)
        self.assertLessEqual(packages, installed)

    def test_dockerfile_copies_the_repository_and_build_sh_into_src(self):
        lines = self.dockerfile()
        self.assertIn("COPY . $SRC/dcpsched", lines)
        self.assertIn("WORKDIR $SRC/dcpsched", lines)
        self.assertIn("COPY .clusterfuzzlite/build.sh $SRC/", lines)
        for line in lines:
            if line.startswith("COPY "):
                self.assertTrue(os.path.exists(source_path(line.split()[1])), line)

    def test_build_sh_calls_fuzz_build_sh(self):
        path = source_path(".clusterfuzzlite", "build.sh")
        self.assertTrue(os.access(path, os.X_OK))
        with open(path, encoding="utf-8") as handle:
            commands = [line.strip() for line in handle
                        if line.strip() and not line.startswith("#")]
        self.assertEqual(commands, ['"$SRC/dcpsched/fuzz/build.sh"'])
        self.assertTrue(os.access(source_path("fuzz", "build.sh"), os.X_OK))

    def test_build_dirs_stay_out_of_the_image(self):
        with open(source_path(".dockerignore"), encoding="utf-8") as handle:
            self.assertIn("build*/", handle.read().split())


if __name__ == "__main__":
    unittest.main(verbosity=2)
