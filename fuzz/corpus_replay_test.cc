// Replays a fuzz target's corpus as a GoogleTest, without libFuzzer.
//
// Linked with one fuzz/fuzz_<target>.cc (CMake: fuzz_<target>_replay, ctest
// label "corpus"; this file is compiled once for all of them), it calls that
// target's LLVMFuzzerTestOneInput on every file under
// DCPSCHED_CORPUS_ROOT/fuzz_<target>/ (seeds and regressions/, recursively;
// dot files such as .gitkeep are skipped), the target named by the program's
// own name, fuzz_<target>_replay. A
// target aborts on a broken property, so the file name is printed to stderr
// before each run: a crash names its input. An empty corpus fails the test.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace dcpsched::fuzz {
namespace {

// Regular files under `dir`, recursively, without dot files, sorted.
std::vector<std::filesystem::path> CorpusFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && !entry.path().filename().string().starts_with(".")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> ReadBytes(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(file),
                                   std::istreambuf_iterator<char>());
}

// corpus/fuzz_<target>/ of this program, fuzz_<target>_replay; empty if the
// program's name does not end in _replay.
std::filesystem::path CorpusOfThisProgram() {
  const std::string program =
      std::filesystem::read_symlink("/proc/self/exe").filename().string();
  absl::string_view target = program;
  if (!absl::ConsumeSuffix(&target, "_replay")) return {};
  return std::filesystem::path(DCPSCHED_CORPUS_ROOT) / std::string(target);
}

TEST(CorpusReplayTest, EveryInputKeepsTheTargetsProperties) {
  const std::filesystem::path dir = CorpusOfThisProgram();
  ASSERT_FALSE(dir.empty()) << "the replay program's name must be fuzz_<target>_replay";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir << " is not a directory";
  const std::vector<std::filesystem::path> files = CorpusFiles(dir);
  ASSERT_FALSE(files.empty()) << dir << " holds no corpus file";
  for (const std::filesystem::path& path : files) {
    std::cerr << "replaying " << path.string() << std::endl;
    const std::vector<std::uint8_t> bytes = ReadBytes(path);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::cerr << files.size() << " inputs replayed from " << dir.string() << std::endl;
}

}  // namespace
}  // namespace dcpsched::fuzz
