// Replays a fuzz target's corpus as a GoogleTest, without libFuzzer.
//
// Built together with one fuzz/fuzz_<target>.cc (CMake: fuzz_<target>_replay,
// ctest label "corpus"), it calls that target's LLVMFuzzerTestOneInput on
// every file under DCPSCHED_FUZZ_CORPUS_DIR (corpus/fuzz_<target>/, seeds and
// regressions/, recursively; dot files such as .gitkeep are skipped). A
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

TEST(CorpusReplayTest, EveryInputKeepsTheTargetsProperties) {
  const std::filesystem::path dir = DCPSCHED_FUZZ_CORPUS_DIR;
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
