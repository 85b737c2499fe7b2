#include "properties/problem_enumerator.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/validate.h"

namespace dcpsched::properties {
namespace {

constexpr absl::string_view kFields[] = {"G",      "n",   "lens",        "mslpr",
                                         "min_cp", "vpp", "max_num_seqs"};
// Largest |k| or |c| of a length term: keeps k * mslpr + c within int64.
constexpr std::int64_t kMaxTermPart = std::int64_t{1} << 26;
// Longest range a..b one field may name.
constexpr std::int64_t kMaxRange = 1 << 20;

absl::Status Invalid(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("enumeration sets: ", field, ": ", why));
}

absl::StatusOr<std::int64_t> ParseNumber(absl::string_view field, absl::string_view text) {
  std::int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return Invalid(field, absl::StrCat("'", text, "' is not an integer"));
  }
  return value;
}

// A list of integers and ranges a..b; "none" (std::nullopt) where allowed.
absl::StatusOr<std::vector<std::optional<std::int64_t>>> ParseValues(absl::string_view field,
                                                                     absl::string_view text,
                                                                     bool none_allowed) {
  std::vector<std::optional<std::int64_t>> values;
  for (const absl::string_view item : absl::StrSplit(text, ',')) {
    if (item == "none") {
      if (!none_allowed) return Invalid(field, "'none' is not allowed here");
      values.push_back(std::nullopt);
      continue;
    }
    const std::vector<absl::string_view> ends = absl::StrSplit(item, "..");
    if (ends.size() > 2) return Invalid(field, absl::StrCat("'", item, "' is not a range a..b"));
    absl::StatusOr<std::int64_t> low = ParseNumber(field, ends.front());
    if (!low.ok()) return low.status();
    absl::StatusOr<std::int64_t> high = ParseNumber(field, ends.back());
    if (!high.ok()) return high.status();
    if (*high < *low || *high - *low >= kMaxRange) {
      return Invalid(field, absl::StrCat("the range ", item, " is empty or longer than ",
                                         kMaxRange));
    }
    for (std::int64_t v = *low; v <= *high; ++v) values.push_back(v);
  }
  return values;
}

std::string ValueText(const std::optional<std::int64_t>& value) {
  return value ? absl::StrCat(*value) : "none";
}

// No value twice: it would enumerate the same problems twice.
absl::Status CheckDistinct(absl::string_view field,
                           const std::vector<std::optional<std::int64_t>>& values) {
  // A set, not a search of the values before each: a range such as
  // G=1..60000 is 60000 values.
  absl::flat_hash_set<std::optional<std::int64_t>> seen;
  for (const std::optional<std::int64_t>& value : values) {
    if (!seen.insert(value).second) {
      return Invalid(field, absl::StrCat(ValueText(value), " is listed twice"));
    }
  }
  return absl::OkStatus();
}

// Every value in [low, high], and (power_of_two) a power of two.
absl::StatusOr<std::vector<std::int64_t>> Integers(
    absl::string_view field, const std::vector<std::optional<std::int64_t>>& values,
    std::int64_t low, std::int64_t high, bool power_of_two = false) {
  std::vector<std::int64_t> integers;
  for (const std::optional<std::int64_t>& value : values) {
    if (*value < low || *value > high || (power_of_two && (*value & (*value - 1)) != 0)) {
      return Invalid(field, absl::StrCat(*value, " is outside [", low, ", ", high, "]",
                                         power_of_two ? " or not a power of two" : ""));
    }
    integers.push_back(*value);
  }
  return integers;
}

absl::Status CheckAtLeastOne(absl::string_view field,
                             const std::vector<std::optional<std::int64_t>>& values) {
  for (const std::optional<std::int64_t>& value : values) {
    if (value && *value < 1) {
      return Invalid(field, absl::StrCat(*value, " is not 'none' or at least 1"));
    }
  }
  return absl::OkStatus();
}

// `c`, `km`, `km+c`, `km-c` (`m` alone is k = 1; k and c signed integers).
absl::StatusOr<LengthTerm> ParseTerm(absl::string_view text) {
  const absl::Status malformed =
      Invalid("lens", absl::StrCat("'", text, "' is not c, km, km+c or km-c"));
  const std::size_t m = text.find('m');
  LengthTerm term;
  absl::string_view rest = text;
  if (m != absl::string_view::npos) {
    const absl::string_view k = text.substr(0, m);
    if (k.empty()) {
      term.per_mslpr = 1;
    } else if (k.front() == '+' || !absl::SimpleAtoi(k, &term.per_mslpr)) {
      return malformed;
    }
    rest = text.substr(m + 1);
    // After `m`: nothing, or a sign and digits.
    if (!rest.empty() && (rest.size() < 2 || (rest[0] != '+' && rest[0] != '-') ||
                          !absl::ascii_isdigit(static_cast<unsigned char>(rest[1])))) {
      return malformed;
    }
  } else if (rest.empty()) {
    return malformed;
  }
  if (!rest.empty() && !absl::SimpleAtoi(rest, &term.offset)) return malformed;
  if (std::max(term.per_mslpr, -term.per_mslpr) > kMaxTermPart ||
      std::max(term.offset, -term.offset) > kMaxTermPart) {
    return Invalid("lens", absl::StrCat("'", text, "': k and c must be within +-2^26"));
  }
  return term;
}

std::string TermText(const LengthTerm& term) {
  if (term.per_mslpr == 0) return absl::StrCat(term.offset);
  std::string text = term.per_mslpr == 1 ? "m" : absl::StrCat(term.per_mslpr, "m");
  if (term.offset > 0) absl::StrAppend(&text, "+", term.offset);
  if (term.offset < 0) absl::StrAppend(&text, term.offset);
  return text;
}

absl::StatusOr<std::vector<LengthTerm>> ParseTerms(absl::string_view text) {
  std::vector<LengthTerm> terms;
  for (const absl::string_view item : absl::StrSplit(text, ',')) {
    absl::StatusOr<LengthTerm> term = ParseTerm(item);
    if (!term.ok()) return term.status();
    if (std::find(terms.begin(), terms.end(), *term) != terms.end()) {
      return Invalid("lens", absl::StrCat(item, " is listed twice"));
    }
    terms.push_back(*term);
  }
  return terms;
}

// base^exponent, or `cap` if that is more.
std::int64_t PowerUpTo(std::int64_t base, std::int64_t exponent, std::int64_t cap) {
  std::int64_t power = 1;
  for (std::int64_t i = 0; i < exponent; ++i) {
    if (base != 0 && power > cap / base) return cap;
    power *= base;
  }
  return power;
}

// Problems for one choice of every option: the sum over n of L^n, at most
// `cap`.
std::int64_t SequencesUpTo(const EnumerationSets& sets, std::int64_t lengths, std::int64_t cap) {
  std::int64_t total = 0;
  for (const std::int64_t n : sets.sample_counts) {
    total = std::min(cap, total + PowerUpTo(lengths, n, cap));
  }
  return total;
}

std::int64_t CountUpTo(const EnumerationSets& sets, std::int64_t cap) {
  const auto options = static_cast<std::int64_t>(sets.total_gpus.size() *
                                                 sets.min_cp_sizes.size() *
                                                 sets.vpp_groups.size() *
                                                 sets.max_num_seqs.size());
  std::int64_t total = 0;
  for (const std::int64_t mslpr : sets.max_seq_len_per_rank) {
    const auto lengths = static_cast<std::int64_t>(LengthsFor(sets, mslpr).size());
    const std::int64_t sequences = SequencesUpTo(sets, lengths, cap);
    if (sequences > 0 && options > (cap - total) / sequences) return cap;
    total += options * sequences;
  }
  return total;
}

absl::Status Assign(absl::string_view key, absl::string_view value, EnumerationSets& sets) {
  if (key == "lens") {
    absl::StatusOr<std::vector<LengthTerm>> terms = ParseTerms(value);
    if (!terms.ok()) return terms.status();
    sets.lengths = *std::move(terms);
    return absl::OkStatus();
  }
  const bool none_allowed = key == "vpp" || key == "max_num_seqs";
  absl::StatusOr<std::vector<std::optional<std::int64_t>>> values =
      ParseValues(key, value, none_allowed);
  if (!values.ok()) return values.status();
  if (absl::Status distinct = CheckDistinct(key, *values); !distinct.ok()) return distinct;
  if (none_allowed) {
    if (absl::Status positive = CheckAtLeastOne(key, *values); !positive.ok()) return positive;
    (key == "vpp" ? sets.vpp_groups : sets.max_num_seqs) = *std::move(values);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::int64_t>> integers =
      key == "G"        ? Integers(key, *values, 1, kMaxTotalGpus)
      : key == "n"      ? Integers(key, *values, 0, kMaxEnumeratedSamples)
      : key == "mslpr"  ? Integers(key, *values, 1, kMaxSeqLenPerRank)
                        : Integers(key, *values, 1, kMaxTotalGpus, /*power_of_two=*/true);
  if (!integers.ok()) return integers.status();
  (key == "G"       ? sets.total_gpus
   : key == "n"     ? sets.sample_counts
   : key == "mslpr" ? sets.max_seq_len_per_rank
                    : sets.min_cp_sizes) = *std::move(integers);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EnumerationSets> ParseEnumerationSets(absl::string_view text) {
  if (text == "test") return ParseEnumerationSets(kTestCommandSets);
  if (text == "test-sanitized") return ParseEnumerationSets(kSanitizedTestCommandSets);
  if (text == "nightly") return ParseEnumerationSets(kNightlySets);
  EnumerationSets sets;
  absl::flat_hash_map<std::string, bool> seen;
  for (const absl::string_view field :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    const std::size_t equals = field.find('=');
    const absl::string_view key = field.substr(0, equals);
    if (equals == absl::string_view::npos ||
        std::find(std::begin(kFields), std::end(kFields), key) == std::end(kFields)) {
      return Invalid(key, absl::StrCat("unknown field '", field, "'; the fields are ",
                                       absl::StrJoin(kFields, ", "), ", each key=list"));
    }
    if (!seen.emplace(std::string(key), true).second) return Invalid(key, "given twice");
    const absl::string_view value = field.substr(equals + 1);
    if (value.empty()) return Invalid(key, "an empty list");
    if (absl::Status assigned = Assign(key, value, sets); !assigned.ok()) return assigned;
  }
  for (const absl::string_view field : kFields) {
    if (!seen.contains(field)) return Invalid(field, "missing; every field is required");
  }
  if (CountUpTo(sets, kMaxEnumeratedProblems + 1) > kMaxEnumeratedProblems) {
    return Invalid("all", absl::StrCat("the sets name more than ", kMaxEnumeratedProblems,
                                       " problems; narrow them"));
  }
  return sets;
}

std::string FormatEnumerationSets(const EnumerationSets& sets) {
  const auto values = [](const auto& list) {
    return absl::StrJoin(list, ",", [](std::string* out, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::int64_t>) {
        absl::StrAppend(out, value);
      } else {
        absl::StrAppend(out, ValueText(value));
      }
    });
  };
  return absl::StrCat(
      "G=", values(sets.total_gpus), " n=", values(sets.sample_counts), " lens=",
      absl::StrJoin(sets.lengths, ",",
                    [](std::string* out, const LengthTerm& term) {
                      absl::StrAppend(out, TermText(term));
                    }),
      " mslpr=", values(sets.max_seq_len_per_rank), " min_cp=", values(sets.min_cp_sizes),
      " vpp=", values(sets.vpp_groups), " max_num_seqs=", values(sets.max_num_seqs));
}

std::vector<std::int64_t> LengthsFor(const EnumerationSets& sets, std::int64_t mslpr) {
  std::vector<std::int64_t> lengths;
  for (const LengthTerm& term : sets.lengths) {
    const std::int64_t len = term.per_mslpr * mslpr + term.offset;
    if (len < 1 || len > kMaxSampleLen ||
        std::find(lengths.begin(), lengths.end(), len) != lengths.end()) {
      continue;
    }
    lengths.push_back(len);
  }
  return lengths;
}

std::int64_t CountProblems(const EnumerationSets& sets) {
  return CountUpTo(sets, kMaxEnumeratedProblems + 1);
}

void ForEachProblem(const EnumerationSets& sets, std::int64_t part, std::int64_t parts,
                    absl::FunctionRef<void(std::int64_t index, const DynamicCpProblem&)> visit) {
  std::int64_t index = 0;
  DynamicCpProblem problem;
  for (const std::int64_t g : sets.total_gpus) {
    for (const std::int64_t mslpr : sets.max_seq_len_per_rank) {
      const std::vector<std::int64_t> lengths = LengthsFor(sets, mslpr);
      for (const std::int64_t min_cp : sets.min_cp_sizes) {
        for (const std::optional<std::int64_t>& vpp : sets.vpp_groups) {
          for (const std::optional<std::int64_t>& cap : sets.max_num_seqs) {
            problem.options = {g, mslpr, min_cp, vpp, cap};
            for (const std::int64_t n : sets.sample_counts) {
              // positions[i]: the index into `lengths` of sample i, an
              // odometer with sample n-1 turning fastest.
              std::vector<std::size_t> positions(static_cast<std::size_t>(n), 0);
              problem.samples.assign(static_cast<std::size_t>(n), Sample{});
              for (std::int64_t i = 0; i < n; ++i) {
                problem.samples[static_cast<std::size_t>(i)] = Sample{i, 0};
              }
              if (n > 0 && lengths.empty()) continue;
              while (true) {
                if (index % parts == part - 1) {
                  for (std::size_t i = 0; i < positions.size(); ++i) {
                    problem.samples[i].len = lengths[positions[i]];
                  }
                  visit(index, problem);
                }
                ++index;
                std::size_t digit = positions.size();
                while (digit > 0 && ++positions[digit - 1] == lengths.size()) {
                  positions[--digit] = 0;
                }
                if (digit == 0) break;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace dcpsched::properties
