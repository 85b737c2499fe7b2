#include "core/remaining_samples.h"

#include <numeric>

#include "core/schedule_loop.h"

namespace dcpsched {

RemainingSamples::RemainingSamples(absl::Span<const Sample> samples)
    : sorted_(SortedLongestFirst(samples)),
      next_(sorted_.size() + 1),
      remaining_(sorted_.size()) {
  std::iota(next_.begin(), next_.end(), std::size_t{0});
}

std::size_t RemainingSamples::FirstAtOrAfter(std::size_t position) {
  if (position >= sorted_.size()) return sorted_.size();
  while (next_[position] != position) {
    next_[position] = next_[next_[position]];
    position = next_[position];
  }
  return position;
}

std::size_t RemainingSamples::FirstNoLongerThan(std::int64_t max_len,
                                                std::size_t position) {
  return FirstFitting([max_len](std::int64_t len) { return len <= max_len; },
                      position);
}

void RemainingSamples::Remove(std::size_t position) {
  next_[position] = position + 1;
  --remaining_;
}

std::vector<Sample> RemainingSamples::ToVector() {
  std::vector<Sample> result;
  result.reserve(remaining_);
  for (std::size_t p = FirstAtOrAfter(0); p < sorted_.size();
       p = FirstAtOrAfter(p + 1)) {
    result.push_back(sorted_[p]);
  }
  return result;
}

}  // namespace dcpsched
