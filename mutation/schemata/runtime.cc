#include "mutation/schemata/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

// Written by mutation/generate_mutants.py into the schemata directory: the
// stable id of every mutant in the build, indexed by its number.
extern const char* const kDcpschedMutantIds[];
extern const int kDcpschedMutantCount;

namespace dcpsched_mutation {

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

}  // namespace dcpsched_mutation
