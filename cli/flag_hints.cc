#include "cli/flag_hints.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "io/schedule_run.h"

namespace dcpsched {
namespace {

bool IsWordCharacter(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Where `word` first occurs in `text` as a whole word (not inside
// min_cp_size, say), or npos.
std::size_t FindWord(absl::string_view text, absl::string_view word) {
  for (std::size_t at = text.find(word); at != absl::string_view::npos;
       at = text.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    const bool starts = at == 0 || !IsWordCharacter(text[at - 1]);
    const bool ends = end == text.size() || !IsWordCharacter(text[end]);
    if (starts && ends) return at;
  }
  return absl::string_view::npos;
}

}  // namespace

std::string WithFlagHint(absl::string_view message,
                         const RunParameters& parameters) {
  const std::string cp_flag =
      parameters.cp_size_implied
          ? "--cp (--total-gpus G runs dp_balanced as dp G x cp 1: give "
            "--dp D --cp C instead of --total-gpus)"
          : "--cp";
  const std::vector<std::pair<absl::string_view, std::string>> flags = {
      {"max_seq_len_per_rank", "--mslpr"},
      {"min_cp_size", "--min-cp"},
      {"vpp_group", "--vpp"},
      {"max_num_seqs", "--max-num-seqs"},
      {"cp_size", cp_flag},
      {"dp_size", "--dp"},
      {"total_gpus", "--total-gpus G (or --dp D --cp C)"},
      {"the number of ranks", "--total-gpus G (or --dp D --cp C)"},
  };
  std::vector<std::pair<std::size_t, std::string>> named;
  for (const auto& [parameter, flag] : flags) {
    const std::size_t at = FindWord(message, parameter);
    if (at != absl::string_view::npos) {
      named.emplace_back(at, absl::StrCat(parameter, " is ", flag));
    }
  }
  if (named.empty()) return std::string(message);
  std::sort(named.begin(), named.end());
  std::vector<std::string> parts;
  for (auto& [at, part] : named) parts.push_back(std::move(part));
  return absl::StrCat(message, "; on the command line, ",
                      absl::StrJoin(parts, " and "));
}

}  // namespace dcpsched
