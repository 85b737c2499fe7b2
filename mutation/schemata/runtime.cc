#include "mutation/schemata/runtime.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// Written by mutation/generate_mutants.py into the schemata directory: the
// stable id of every mutant in the build, indexed by its number.
extern const char* const kDcpschedMutantIds[];
extern const int kDcpschedMutantCount;

namespace dcpsched_mutation {
namespace {

int ReadActiveMutant() {
  const char* id = std::getenv("DCPSCHED_MUTANT");
  if (id == nullptr || *id == '\0') return -1;
  for (int i = 0; i < kDcpschedMutantCount; ++i) {
    if (std::strcmp(kDcpschedMutantIds[i], id) == 0) return i;
  }
  std::fprintf(stderr,
               "DCPSCHED_MUTANT=%s: no such mutant in this schemata build; "
               "list them with mutation/generate_mutants.py --list\n",
               id);
  std::abort();
}

// The flags of the record, and where it goes at exit; set once, by ReadSwitch.
bool* reached_flags = nullptr;
std::string* reached_path = nullptr;

void WriteReached() {
  std::FILE* out = std::fopen(reached_path->c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "DCPSCHED_MUTANT_REACHED: cannot write %s\n", reached_path->c_str());
    std::_Exit(3);  // a lost record would let the runner skip a program that can kill
  }
  for (int i = 0; i < kDcpschedMutantCount; ++i) {
    if (__atomic_load_n(&reached_flags[i], __ATOMIC_RELAXED)) {
      std::fprintf(out, "%s\n", kDcpschedMutantIds[i]);
    }
  }
  if (std::fclose(out) != 0) std::_Exit(3);
}

bool* ReadReachedFlags() {
  const char* dir = std::getenv("DCPSCHED_MUTANT_REACHED");
  if (dir == nullptr || *dir == '\0') return nullptr;
  reached_path = new std::string(std::string(dir) + "/reached-" +
                                 std::to_string(static_cast<long>(getpid())) + ".txt");
  reached_flags = new bool[kDcpschedMutantCount]();
  std::atexit(WriteReached);
  return reached_flags;
}

}  // namespace

Switch ReadSwitch() { return Switch{ReadActiveMutant(), ReadReachedFlags()}; }

}  // namespace dcpsched_mutation
