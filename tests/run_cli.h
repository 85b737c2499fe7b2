// Runs the built dcpsched program (DCPSCHED_CLI_PATH, which CMake defines for
// every test) as a child process, for the tests that check it end to end:
// its standard input given, its standard output and error captured, its
// exit status or the signal that killed it. Files go to the test's
// temporary directory, named after the running test.

#ifndef DCPSCHED_TESTS_RUN_CLI_H_
#define DCPSCHED_TESTS_RUN_CLI_H_

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

extern char** environ;

namespace dcpsched {

struct CliResult {
  bool exited = false;  // false: killed by a signal (a crash)
  int exit_code = -1;   // -1 unless it exited
  std::string out;      // standard output
  std::string err;      // standard error
};

// A path in the test's temporary directory, unique to this process and the
// running test.
inline std::string TestTempPath(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return absl::StrCat(::testing::TempDir(), "/dcpsched_", test->test_suite_name(), "_",
                      getpid(), "_", test->name(), "_", name);
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

// Runs the program argv[0] with the rest as its arguments; standard input
// is `input`. With `stdout_full`, standard output is /dev/full, where every
// write fails (CliResult::out stays empty).
inline CliResult RunProgram(std::vector<std::string> argv, const std::string& input,
                            bool stdout_full = false) {
  const std::string in_path = TestTempPath("stdin");
  WriteFile(in_path, input);
  const std::string out_path = stdout_full ? "/dev/full" : TestTempPath("stdout");
  const std::string err_path = TestTempPath("stderr");
  std::vector<char*> pointers;
  for (std::string& argument : argv) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  CliResult result;
  const int spawned = posix_spawn(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot run " << argv[0];
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exited = WIFEXITED(status);
  if (result.exited) result.exit_code = WEXITSTATUS(status);
  if (!stdout_full) result.out = ReadWholeFile(out_path);
  result.err = ReadWholeFile(err_path);
  std::remove(in_path.c_str());
  if (!stdout_full) std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

// Runs dcpsched with `arguments` (see RunProgram).
inline CliResult RunCliWithInput(const std::vector<std::string>& arguments,
                                 const std::string& input, bool stdout_full = false) {
  std::vector<std::string> argv = {DCPSCHED_CLI_PATH};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return RunProgram(std::move(argv), input, stdout_full);
}

// Runs dcpsched with `arguments` and an empty standard input.
inline CliResult RunCli(const std::vector<std::string>& arguments) {
  return RunCliWithInput(arguments, "");
}

}  // namespace dcpsched

#endif  // DCPSCHED_TESTS_RUN_CLI_H_
