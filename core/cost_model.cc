#include "core/cost_model.h"

namespace dcpsched {

double Work(std::int64_t len, std::int64_t cp_size) {
  return static_cast<double>(len * len) / static_cast<double>(cp_size);
}

std::int64_t MinCpSize(std::int64_t len, std::int64_t max_seq_len_per_rank,
                       std::int64_t min_cp_size) {
  std::int64_t c = 1;
  while (c * max_seq_len_per_rank < len) c *= 2;
  return c < min_cp_size ? min_cp_size : c;
}

double WorkCap(std::int64_t tallest_len, std::int64_t max_seq_len_per_rank) {
  return static_cast<double>(tallest_len) *
         static_cast<double>(max_seq_len_per_rank) * (1.0 + kWorkCapDelta);
}

double TokensPerRank(std::int64_t len, std::int64_t cp_size) {
  return static_cast<double>(len) / static_cast<double>(cp_size);
}

}  // namespace dcpsched
