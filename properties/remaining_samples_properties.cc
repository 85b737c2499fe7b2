// Properties of the remaining samples (core/remaining_samples.h): after any
// sequence of removals, each lookup equals a scan of the sorted batch, and
// FirstFitting asks its predicate a number of times logarithmic in the
// distance it covers. The count is the cost the header promises: a lookup
// that scans gives the same answers, and only the count tells it apart.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/remaining_samples.h"
#include "core/types.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::remaining_samples_properties {
namespace {

// The batch as RemainingSamples sorts it, with a flag per position.
struct ScannedBatch {
  std::vector<Sample> sorted;
  std::vector<bool> removed;
};

ScannedBatch SortLikeTheBatch(std::vector<Sample> samples) {
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.len > b.len; });
  return ScannedBatch{samples, std::vector<bool>(samples.size(), false)};
}

std::size_t ScanFirstNoLongerThan(const ScannedBatch& batch, std::int64_t max_len,
                                  std::size_t position) {
  for (std::size_t p = position; p < batch.sorted.size(); ++p) {
    if (!batch.removed[p] && batch.sorted[p].len <= max_len) return p;
  }
  return batch.sorted.size();
}

// Few distinct lengths make long runs of equal and longer samples, the
// distances a gallop must cover.
rc::Gen<std::vector<Sample>> GenBatch() {
  return rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 3000), [](std::size_t count) {
    return rc::gen::map(
        rc::gen::container<std::vector<std::int64_t>>(count, rc::gen::inRange<std::int64_t>(1, 6)),
        [](const std::vector<std::int64_t>& lens) {
          std::vector<Sample> samples;
          for (std::size_t i = 0; i < lens.size(); ++i) {
            samples.push_back({static_cast<SampleId>(i), lens[i]});
          }
          return samples;
        });
  });
}

RC_GTEST_PROP(RemainingSamplesProperties, LookupsEqualAScanOfTheSortedBatch, ()) {
  const std::vector<Sample> samples = *GenBatch();
  RemainingSamples remaining(samples);
  ScannedBatch batch = SortLikeTheBatch(samples);
  RC_ASSERT(remaining.size() == batch.sorted.size());
  for (std::size_t p = 0; p < batch.sorted.size(); ++p) {
    RC_ASSERT(remaining.at(p) == batch.sorted[p]);
  }
  const int lookups = *rc::gen::inRange(1, 60);
  for (int step = 0; step < lookups && !remaining.empty(); ++step) {
    const auto position = *rc::gen::inRange<std::size_t>(0, batch.sorted.size());
    const auto max_len = *rc::gen::inRange<std::int64_t>(0, 7);
    const std::size_t found = remaining.FirstNoLongerThan(max_len, position);
    RC_ASSERT(found == ScanFirstNoLongerThan(batch, max_len, position));
    RC_ASSERT(remaining.FirstAtOrAfter(position) == ScanFirstNoLongerThan(batch, 6, position));
    if (found < batch.sorted.size()) {
      remaining.Remove(found);
      batch.removed[found] = true;
    }
  }
  std::vector<Sample> left;
  for (std::size_t p = 0; p < batch.sorted.size(); ++p) {
    if (!batch.removed[p]) left.push_back(batch.sorted[p]);
  }
  RC_ASSERT(remaining.remaining() == left.size());
  RC_ASSERT(remaining.ToVector() == left);
}

// A gallop of doubling steps brackets the first fitting position within
// about log2(d) probes, d the distance from `position` to it (or to the end),
// and a binary search of the bracket takes about as many again. So at most
// 2 * bit_width(d + 1) + 2 questions, whatever was removed before.
RC_GTEST_PROP(RemainingSamplesProperties, FirstFittingAsksLogarithmicallyOften, ()) {
  const std::vector<Sample> samples = *GenBatch();
  RC_PRE(!samples.empty());
  RemainingSamples remaining(samples);
  const ScannedBatch batch = SortLikeTheBatch(samples);
  const auto removals = *rc::gen::inRange<std::size_t>(0, samples.size());
  for (std::size_t p = 0; p < removals; ++p) remaining.Remove(p);
  const auto position = *rc::gen::inRange<std::size_t>(0, samples.size());
  const auto max_len = *rc::gen::inRange<std::int64_t>(0, 7);
  std::size_t questions = 0;
  const std::size_t found = remaining.FirstFitting(
      [&questions, max_len](std::int64_t len) {
        ++questions;
        return len <= max_len;
      },
      position);
  ScannedBatch removed = batch;
  std::fill(removed.removed.begin(), removed.removed.begin() + removals, true);
  RC_ASSERT(found == ScanFirstNoLongerThan(removed, max_len, position));
  // `batch` has nothing removed: the distance counts the removed samples too.
  const std::size_t first_fitting = ScanFirstNoLongerThan(batch, max_len, position);
  const std::size_t distance = first_fitting - position;
  RC_ASSERT(questions <= 2 * static_cast<std::size_t>(std::bit_width(distance + 1)) + 2);
}

}  // namespace
}  // namespace dcpsched::remaining_samples_properties
