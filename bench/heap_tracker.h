// Heap accounting for the benchmarks: how many bytes one call allocates at
// its peak.
//
// heap_tracker.cc replaces the global operator new and delete of the
// benchmark binary (and of nothing else: the libraries stay untouched). The
// replacements always forward to malloc and free; only while a
// HeapMeasurement is alive do they also count. Bytes are counted as the
// allocator reserves them (malloc_usable_size), so a block is charged the
// same size when it is allocated and when it is freed, whichever operator
// delete frees it.
//
// Counting is meant for one thread at a time: the benchmarks measure one
// scheduling call outside the timed loop, so counting never slows the timed
// iterations down.

#ifndef DCPSCHED_BENCH_HEAP_TRACKER_H_
#define DCPSCHED_BENCH_HEAP_TRACKER_H_

#include <cstdint>

namespace dcpsched::bench {

// What the heap saw while a HeapMeasurement was alive.
struct HeapUsage {
  // Highest net growth of the heap (bytes allocated minus bytes freed since
  // the measurement began), i.e. the peak extra memory the measured code
  // needed, its result included while it was alive.
  std::int64_t peak_bytes = 0;
  // Calls to operator new.
  std::int64_t allocations = 0;
};

// Counts operator new and delete from construction to Finish(). At most one
// may be alive at a time.
class HeapMeasurement {
 public:
  HeapMeasurement();
  ~HeapMeasurement();
  HeapMeasurement(const HeapMeasurement&) = delete;
  HeapMeasurement& operator=(const HeapMeasurement&) = delete;

  // Stops counting and returns what was counted.
  HeapUsage Finish();

 private:
  bool finished_ = false;
};

// Runs `call` once under a HeapMeasurement.
template <typename Call>
HeapUsage MeasureHeapUsage(Call&& call) {
  HeapMeasurement measurement;
  call();
  return measurement.Finish();
}

}  // namespace dcpsched::bench

#endif  // DCPSCHED_BENCH_HEAP_TRACKER_H_
