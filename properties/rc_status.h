// RC_ASSERT_OK: a RapidCheck assertion on an absl::Status, failing the
// property with the status message (and so with RapidCheck's shrunk
// counterexample and its RC_PARAMS="reproduce=..." line).

#ifndef DCPSCHED_PROPERTIES_RC_STATUS_H_
#define DCPSCHED_PROPERTIES_RC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "rapidcheck.h"

#define RC_ASSERT_OK(expression)                               \
  do {                                                         \
    const absl::Status rc_assert_ok_status = (expression);     \
    if (!rc_assert_ok_status.ok()) {                           \
      RC_FAIL(std::string(rc_assert_ok_status.message()));     \
    }                                                          \
  } while (false)

#endif  // DCPSCHED_PROPERTIES_RC_STATUS_H_
