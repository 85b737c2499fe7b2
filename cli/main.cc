// dcpsched: reproduce and compare Megatron-LM's dynamic context-parallel
// packing schedules from the command line.
//
//   dcpsched [flags]               same as dcpsched schedule [flags]
//   dcpsched schedule [flags]      schedule one batch and report on it
//   dcpsched compare [flags]       every scheduler on one batch, side by side
//   dcpsched verify FILE           check a schedule file against docs/specification.md
//   dcpsched check-golden FILE...  check the core against golden vectors
//
// Every error is one line on stderr; the exit status follows one contract
// for every subcommand (exit_codes.h): 0 ok, 1 the schedule or vectors are
// wrong, 2 usage or input error, 3 internal or I/O error. No exception
// leaves main.

#include <exception>
#include <new>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/check_golden_command.h"
#include "cli/compare_command.h"
#include "cli/exit_codes.h"
#include "cli/schedule_command.h"
#include "cli/verify_command.h"
#include "core/upstream_revisions.h"

namespace dcpsched {
namespace {

// The arguments with "schedule" inserted when the first one is a flag other
// than --help and --version, so that `dcpsched --format json` means
// `dcpsched schedule --format json`: schedule is the main job.
std::vector<const char*> WithDefaultSubcommand(int argc, char** argv) {
  std::vector<const char*> arguments(argv, argv + argc);
  if (argc > 1) {
    const std::string first = argv[1];
    if (first.starts_with("-") && first != "-h" && first != "--help" &&
        first != "--version") {
      arguments.insert(arguments.begin() + 1, "schedule");
    }
  }
  return arguments;
}

// What --version prints: the version, then the Megatron-LM revisions this
// build was checked against (core/upstream_revisions.h), one a line.
std::string VersionText() {
  std::string text = "dcpsched " DCPSCHED_VERSION
                     "\nchecked against Megatron-LM:";
  for (const UpstreamRevision& revision : kUpstreamChecked) {
    text += std::string("\n  ") + revision.branch + " " + revision.commit +
            ": " + revision.outcome;
  }
  return text;
}

// "dcpsched" or "dcpsched schedule": where to look for --help after a
// command-line error.
std::string HelpTarget(const CLI::App& app) {
  std::string target = "dcpsched";
  for (const CLI::App* subcommand : app.get_subcommands()) {
    target += " " + subcommand->get_name();
  }
  return target;
}

int RunDcpsched(int argc, char** argv) {
  CLI::App app(
      "Reproduces Megatron-LM's dynamic context-parallel (DCP) packing "
      "scheduler bit for bit and reports how well its schedules balance the "
      "attention work. Without a subcommand, runs `schedule`; flags given "
      "without a subcommand are schedule's.",
      "dcpsched");
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", VersionText());
  app.footer(kExitStatusHelp);
  CLI::App* schedule = app.add_subcommand(
      "schedule",
      "Schedule one global batch (a lengths file or upstream's benchmark "
      "workload) and print a report with a comparison of all schedulers");
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Run every scheduler (packing_aware, dp_balanced, legacy, and "
      "cost_aware with --cost-profile) on the same batch and print them side "
      "by side; takes schedule's problem flags");
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Check a schedule file (JSON: the problem and its schedule) against "
      "the invariants of docs/specification.md; prints each violation, exits 1 if there is one");
  CLI::App* check_golden = app.add_subcommand(
      "check-golden",
      "Check the schedulers against golden vector files; prints each failing "
      "case and \"N passed, M failed\"");
  const ScheduleCommand schedule_command(*schedule);
  const CompareCommand compare_command(*compare);
  const VerifyCommand verify_command(*verify);
  const CheckGoldenCommand check_golden_command(*check_golden);

  try {
    const std::vector<const char*> arguments =
        WithDefaultSubcommand(argc, argv);
    app.parse(static_cast<int>(arguments.size()), arguments.data());
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(error);  // --help: prints it to stdout
    }
    std::cerr << "dcpsched: " << error.what() << " (see " << HelpTarget(app)
              << " --help)\n";
    return kExitUsage;
  }
  if (compare->parsed()) return compare_command.Run(std::cout, std::cerr);
  if (verify->parsed()) return verify_command.Run(std::cout, std::cerr);
  if (check_golden->parsed()) {
    return check_golden_command.Run(std::cout, std::cerr);
  }
  return schedule_command.Run(std::cout, std::cerr);
}

}  // namespace
}  // namespace dcpsched

int main(int argc, char** argv) {
  try {
    return dcpsched::RunDcpsched(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "dcpsched: out of memory; for large G use --format json "
                 "--compact, which grows with the samples, not with G\n";
  } catch (const std::exception& error) {
    std::cerr << "dcpsched: internal error: " << error.what() << "\n";
  } catch (...) {
    std::cerr << "dcpsched: internal error (unknown exception)\n";
  }
  return dcpsched::kExitInternal;
}
