// The samples of a global batch not yet scheduled, longest first.
//
// The dynamic-CP schedule builds each microbatch from the samples left over
// by the previous one, in sorted order; leftovers keep their relative order,
// so the remaining samples are always the sorted batch minus those placed.
// This class holds the batch sorted once and answers "the first remaining
// sample at or after position p" and "... no longer than len" in near
// constant time, so a step never rescans the samples it rejects. Lookups
// shorten the skip links as they go, so they are not const.

#ifndef DCPSCHED_CORE_REMAINING_SAMPLES_H_
#define DCPSCHED_CORE_REMAINING_SAMPLES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/types.h"

namespace dcpsched {

class RemainingSamples {
 public:
  // Sorts `samples` by length, longest first; equal lengths keep their order.
  explicit RemainingSamples(absl::Span<const Sample> samples);

  // Positions index the sorted batch: 0 <= position < size().
  std::size_t size() const { return sorted_.size(); }
  const Sample& at(std::size_t position) const { return sorted_[position]; }
  bool empty() const { return remaining_ == 0; }
  std::size_t remaining() const { return remaining_; }

  // The first remaining position >= `position`, or size() if none.
  std::size_t FirstAtOrAfter(std::size_t position);

  // The first remaining position >= `position` whose sample has at most
  // `max_len` tokens, or size() if none. Logarithmic in the distance to it.
  std::size_t FirstNoLongerThan(std::int64_t max_len, std::size_t position);

  // The first remaining position >= `position` whose sample satisfies
  // `fits`, which must hold for every sample shorter than one it holds for.
  template <typename LengthPredicate>
  std::size_t FirstFitting(LengthPredicate fits, std::size_t position);

  // Marks `position` scheduled. Requires it to be remaining.
  void Remove(std::size_t position);

  // The remaining samples, in order.
  std::vector<Sample> ToVector();

 private:
  std::vector<Sample> sorted_;
  // next_[p] leads (with path halving) to the first remaining position >= p;
  // next_[size()] == size() is the end sentinel.
  std::vector<std::size_t> next_;
  std::size_t remaining_ = 0;
};

template <typename LengthPredicate>
std::size_t RemainingSamples::FirstFitting(LengthPredicate fits,
                                           std::size_t position) {
  // Lengths never increase along the batch, so the fitting positions form a
  // suffix. Its start is usually near `position`: gallop to bracket it, then
  // binary search, then skip the samples placed.
  std::size_t low = position;
  std::size_t high = sorted_.size();
  for (std::size_t step = 1; low < high; step *= 2) {
    const std::size_t probe = low + step - 1;
    if (probe >= high) break;
    if (fits(sorted_[probe].len)) {
      high = probe;
      break;
    }
    low = probe + 1;
  }
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    if (fits(sorted_[middle].len)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return FirstAtOrAfter(low);
}

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_REMAINING_SAMPLES_H_
