#include "cli/exit_codes.h"

#include <ostream>

namespace dcpsched {

int FinishOutput(std::ostream& out, std::ostream& err, int status) {
  out.flush();
  if (out) return status;
  err << "dcpsched: cannot write the output (standard output closed or "
         "full?); nothing or only part of it was written\n";
  return kExitInternal;
}

}  // namespace dcpsched
