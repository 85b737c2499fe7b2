// schedule_digest: the specification's invariant 9 across builds, "the same schedule, every
// time, on every machine". ctest `schedule_digest` runs it in every build
// (g++ and clang, release, Debug and sanitized); a build whose schedules
// differ from the checked-in digest fails.
//
//   schedule_digest SOURCE_DIR DIGEST_FILE            check (exit 1 on a difference)
//   schedule_digest --update SOURCE_DIR DIGEST_FILE   rewrite DIGEST_FILE
//
// The problems, in this order:
//   - every golden case (SOURCE_DIR/tests/golden/*.jsonl), named
//     golden/<file>:<line>;
//   - every file under SOURCE_DIR/corpus/<target>/ (coverage corpus, seeds/
//     and regressions/), named <target>/<path>, that decodes to a problem:
//     the structured targets' inputs (fuzz/fuzz_input.h), the problem lines,
//     golden lines and schedule files that parse. Lengths files hold no
//     topology and are left out.
// Each problem's canonical text is its input in its one-line form
// (io/problem_text.h, fuzz/fuzz_input.h), then one line per scheduler run on
// it: a dynamic-CP problem runs the packing-aware step (ids, per-rank work
// as hexadecimal floats, so bit for bit, and leftovers), the packing-aware
// schedule, the legacy schedule and the cost-aware schedule under
// h200-llama3-8b (with whose schedule it kept); a dp_balanced problem runs dp_balanced;
// a VPP-alignment input runs AlignToVppGroup. A run that fails contributes
// its status code and message instead.
//
// The digest file holds the SHA-256 of all canonical texts in order, then,
// per problem, the first 16 hex digits of the SHA-256 of its text and its
// name. So a difference is reported as the first problem whose schedules
// differ (or that is new or gone), with its text now, and the command that
// rewrites the digest when the change is on purpose.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compact_schedule.h"
#include "core/cost_aware.h"
#include "core/cost_profile.h"
#include "core/dp_balanced.h"
#include "core/legacy.h"
#include "core/packing_aware.h"
#include "core/types.h"
#include "core/vpp_align.h"
#include "fuzz/fuzz_input.h"
#include "io/cost_profile_file.h"
#include "io/golden.h"
#include "io/problem_text.h"
#include "io/schedule_file.h"
#include "openssl/evp.h"
#include "properties/generators.h"

namespace dcpsched {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kProblemHashDigits = 16;

// One problem and its canonical text.
struct Record {
  std::string name;
  std::string text;
};

std::string Sha256Hex(absl::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), size));
}

std::string StatusText(const absl::Status& status) {
  return absl::StrCat("error ", absl::StatusCodeToString(status.code()), ": ",
                      status.message());
}

std::string ScheduleText(const absl::StatusOr<Schedule>& schedule) {
  if (!schedule.ok()) return StatusText(schedule.status());
  return absl::StrCat("ok ", fuzz::FormatSchedule(*schedule));
}

std::string StepText(const absl::StatusOr<PackedMicrobatch>& step) {
  if (!step.ok()) return StatusText(step.status());
  std::vector<std::string> work;
  for (const double w : step->rank_work) work.push_back(absl::StrFormat("%a", w));
  std::vector<SampleId> leftovers;
  for (const Sample& sample : step->leftovers) leftovers.push_back(sample.id);
  return absl::StrCat("ok ", fuzz::FormatSchedule(Schedule{{step->microbatch}}),
                      " work=", absl::StrJoin(work, ","),
                      " leftovers=", absl::StrJoin(leftovers, ","));
}

// The canonical text of one input: its one-line form, then every run.
// cost_aware's schedule (under the digest's profile) and whose it is.
std::string CostAwareText(const absl::StatusOr<CostAwareResult>& result) {
  if (!result.ok()) return ScheduleText(absl::StatusOr<Schedule>(result.status()));
  return absl::StrCat(ScheduleText(ExpandSchedule(result->schedule)), " ",
                      CostAwareSourceName(result->source));
}

struct CanonicalText {
  // cost_aware schedules by this profile (h200-llama3-8b).
  const CostProfile& profile;

  std::string operator()(const DynamicCpProblem& problem) const {
    return absl::StrCat(
        "problem ", FormatProblem(problem),
        "\npacking_aware_step ", StepText(PackingAwareStep(problem.samples, problem.options)),
        "\npacking_aware ", ScheduleText(ScheduleDynamicCp(problem.samples, problem.options)),
        "\nlegacy ", ScheduleText(ScheduleLegacy(problem.samples, problem.options)),
        "\ncost_aware ",
        CostAwareText(ScheduleCostAware(problem.samples, problem.options, profile)), "\n");
  }
  std::string operator()(const properties::DpBalancedProblem& problem) const {
    return absl::StrCat("dp_balanced_problem ", fuzz::FormatDpBalancedProblem(problem),
                        "\ndp_balanced ",
                        ScheduleText(ScheduleDpBalanced(problem.lens, problem.options)), "\n");
  }
  std::string operator()(const fuzz::VppAlignInput& input) const {
    return absl::StrCat("vpp_align_input ", fuzz::FormatVppAlignInput(input), "\nvpp_align ",
                        ScheduleText(AlignToVppGroup(input.schedule, input.vpp_group)), "\n");
  }
};

// The problem a golden case poses to the scheduler it names.
fuzz::TargetInput GoldenInput(const GoldenCase& golden_case) {
  if (golden_case.scheduler == "dp_balanced") {
    properties::DpBalancedProblem problem{{}, DpBalancedOptionsOf(golden_case)};
    for (const Sample& sample : golden_case.samples) problem.lens.push_back(sample.len);
    return problem;
  }
  return DynamicCpProblem{golden_case.samples, DynamicCpOptionsOf(golden_case)};
}

// What one corpus file of `target` poses, if anything.
std::optional<fuzz::TargetInput> CorpusInput(absl::string_view target, const std::string& bytes) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  if (std::optional<fuzz::TargetInput> decoded =
          fuzz::DecodeTargetInput(target, absl::MakeConstSpan(data, bytes.size()))) {
    return decoded;
  }
  if (target == "fuzz_problem_text") {
    absl::StatusOr<DynamicCpProblem> problem = ParseProblem(bytes);
    if (problem.ok()) return *std::move(problem);
  } else if (target == "fuzz_golden") {
    absl::StatusOr<GoldenCase> golden_case = ParseGoldenCase(std::string_view(bytes));
    if (golden_case.ok()) return GoldenInput(*golden_case);
  } else if (target == "fuzz_schedule_file") {
    absl::StatusOr<ScheduleFile> file = ParseScheduleFile(bytes);
    if (file.ok()) return DynamicCpProblem{file->samples, file->options};
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// Regular files under `dir` (recursively), sorted by path, without .gitkeep.
std::vector<fs::path> SortedFiles(const fs::path& dir, const std::string& extension = "") {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == ".gitkeep") continue;
    if (!extension.empty() && entry.path().extension() != extension) continue;
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<std::vector<Record>> GoldenRecords(const fs::path& golden_dir,
                                                   const CostProfile& profile) {
  std::vector<Record> records;
  for (const fs::path& path : SortedFiles(golden_dir, ".jsonl")) {
    absl::StatusOr<std::string> contents = ReadFile(path);
    if (!contents.ok()) return contents.status();
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(*contents, '\n')) {
      ++line_number;
      if (line.empty()) continue;
      absl::StatusOr<GoldenCase> golden_case =
          ParseGoldenCase(std::string_view(line.data(), line.size()));
      if (!golden_case.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(path.string(), ":", line_number, ": ",
                                                       golden_case.status().message()));
      }
      records.push_back({absl::StrCat("golden/", path.filename().string(), ":", line_number),
                         std::visit(CanonicalText{profile}, GoldenInput(*golden_case))});
    }
  }
  return records;
}

absl::StatusOr<std::vector<Record>> CorpusRecords(const fs::path& corpus_dir,
                                                   const CostProfile& profile) {
  std::vector<fs::path> targets;
  for (const fs::directory_entry& entry : fs::directory_iterator(corpus_dir)) {
    if (entry.is_directory()) targets.push_back(entry.path());
  }
  std::sort(targets.begin(), targets.end());
  std::vector<Record> records;
  for (const fs::path& target_dir : targets) {
    const std::string target = target_dir.filename().string();
    for (const fs::path& path : SortedFiles(target_dir)) {
      absl::StatusOr<std::string> bytes = ReadFile(path);
      if (!bytes.ok()) return bytes.status();
      const std::optional<fuzz::TargetInput> input = CorpusInput(target, *bytes);
      if (!input.has_value()) continue;
      records.push_back({absl::StrCat(target, "/", path.lexically_relative(target_dir).string()),
                         std::visit(CanonicalText{profile}, *input)});
    }
  }
  return records;
}

absl::StatusOr<std::vector<Record>> AllRecords(const fs::path& source_dir) {
  const absl::StatusOr<CostProfile> profile = LoadCostProfile("h200-llama3-8b");
  if (!profile.ok()) return profile.status();
  absl::StatusOr<std::vector<Record>> records =
      GoldenRecords(source_dir / "tests" / "golden", *profile);
  if (!records.ok()) return records.status();
  absl::StatusOr<std::vector<Record>> corpus = CorpusRecords(source_dir / "corpus", *profile);
  if (!corpus.ok()) return corpus.status();
  records->insert(records->end(), corpus->begin(), corpus->end());
  return records;
}

std::string TotalDigest(absl::Span<const Record> records) {
  std::string all;
  for (const Record& record : records) absl::StrAppend(&all, record.text);
  return Sha256Hex(all);
}

std::string DigestFileText(absl::Span<const Record> records) {
  std::string text = absl::StrCat(
      "# SHA-256 of the canonical schedules of every golden case and every corpus\n"
      "# problem (tests/schedule_digest.cc); per problem, the first ",
      kProblemHashDigits,
      " hex digits of\n# its own SHA-256 and its name. Rewrite with schedule_digest --update.\n",
      "total ", TotalDigest(records), " problems ", records.size(), "\n");
  for (const Record& record : records) {
    absl::StrAppend(&text, Sha256Hex(record.text).substr(0, kProblemHashDigits), " ",
                    record.name, "\n");
  }
  return text;
}

// The checked-in digest: its total and its per-problem hashes in order.
struct Digest {
  std::string total;
  std::vector<std::pair<std::string, std::string>> problems;  // name, hash
};

absl::StatusOr<Digest> ParseDigest(absl::string_view text) {
  Digest digest;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("malformed digest line \"", line, "\""));
    }
    if (fields[0] == "total") {
      digest.total = std::string(fields[1].substr(0, fields[1].find(' ')));
    } else {
      digest.problems.emplace_back(std::string(fields[1]), std::string(fields[0]));
    }
  }
  if (digest.total.empty()) return absl::InvalidArgumentError("the digest has no total line");
  return digest;
}

// The first difference between `records` and `digest`, as a message.
std::string FirstDifference(absl::Span<const Record> records, const Digest& digest) {
  absl::flat_hash_map<std::string, std::string> expected(digest.problems.begin(),
                                                         digest.problems.end());
  absl::flat_hash_set<std::string> seen;
  for (const Record& record : records) {
    seen.insert(record.name);
    const auto it = expected.find(record.name);
    const std::string hash = Sha256Hex(record.text).substr(0, kProblemHashDigits);
    if (it == expected.end()) {
      return absl::StrCat("first difference: ", record.name,
                          " is not in the digest (a new problem); its schedules now:\n",
                          record.text);
    }
    if (it->second != hash) {
      return absl::StrCat("first difference: ", record.name, ": schedules differ (digest ",
                          it->second, ", this build ", hash, "); its schedules now:\n",
                          record.text);
    }
  }
  for (const auto& [name, hash] : digest.problems) {
    if (!seen.contains(name)) {
      return absl::StrCat("first difference: ", name, " is in the digest but gone\n");
    }
  }
  return "every problem's hash matches but the total does not: the order changed\n";
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool update = !args.empty() && args[0] == "--update";
  if (update) args.erase(args.begin());
  if (args.size() != 2) {
    std::cerr << "usage: schedule_digest [--update] SOURCE_DIR DIGEST_FILE\n";
    return 2;
  }
  const fs::path source_dir = args[0];
  const fs::path digest_path = args[1];
  absl::StatusOr<std::vector<Record>> records = AllRecords(source_dir);
  if (!records.ok()) {
    std::cerr << "schedule_digest: " << records.status().message() << "\n";
    return 2;
  }
  if (update) {
    std::ofstream(digest_path, std::ios::trunc) << DigestFileText(*records);
    std::cout << "schedule_digest: wrote " << digest_path.string() << ": " << records->size()
              << " problems, sha256 " << TotalDigest(*records) << "\n";
    return 0;
  }
  absl::StatusOr<std::string> text = ReadFile(digest_path);
  absl::StatusOr<Digest> digest =
      text.ok() ? ParseDigest(*text) : absl::StatusOr<Digest>(text.status());
  if (!digest.ok()) {
    std::cerr << "schedule_digest: " << digest_path.string() << ": " << digest.status().message()
              << "\n";
    return 2;
  }
  const std::string total = TotalDigest(*records);
  if (total == digest->total) {
    std::cout << "schedule_digest: " << records->size() << " problems, sha256 " << total
              << ": equal to " << digest_path.string() << "\n";
    return 0;
  }
  std::cerr << "schedule_digest: this build's schedules differ from " << digest_path.string()
            << " (sha256 " << total << ", digest " << digest->total << ")\n"
            << FirstDifference(*records, *digest)
            << "If the change is on purpose, update the digest and commit it:\n  " << argv[0]
            << " --update " << source_dir.string() << " " << digest_path.string() << "\n";
  return 1;
}

}  // namespace
}  // namespace dcpsched

int main(int argc, char** argv) { return dcpsched::Main(argc, argv); }
