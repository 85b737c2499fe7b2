#include "bench/heap_tracker.h"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace dcpsched::bench {
namespace {

// Constant-initialized, so they are ready before any static constructor
// allocates.
constinit std::atomic<bool> counting{false};
constinit std::atomic<std::int64_t> current_bytes{0};
constinit std::atomic<std::int64_t> peak_bytes{0};
constinit std::atomic<std::int64_t> allocation_count{0};

std::int64_t BlockSize(void* block) {
  return static_cast<std::int64_t>(malloc_usable_size(block));
}

void RaisePeakTo(std::int64_t bytes) {
  std::int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (bytes > peak && !peak_bytes.compare_exchange_weak(
                             peak, bytes, std::memory_order_relaxed)) {
  }
}

void CountAllocation(void* block) {
  if (!counting.load(std::memory_order_relaxed)) return;
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t bytes = BlockSize(block);
  RaisePeakTo(current_bytes.fetch_add(bytes, std::memory_order_relaxed) +
              bytes);
}

void CountRelease(void* block) {
  if (!counting.load(std::memory_order_relaxed)) return;
  current_bytes.fetch_sub(BlockSize(block), std::memory_order_relaxed);
}

void* AllocateCounted(std::size_t size) noexcept {
  void* block = std::malloc(size == 0 ? 1 : size);
  if (block != nullptr) CountAllocation(block);
  return block;
}

void FreeCounted(void* block) noexcept {
  if (block == nullptr) return;
  CountRelease(block);
  std::free(block);
}

}  // namespace

HeapMeasurement::HeapMeasurement() {
  current_bytes.store(0, std::memory_order_relaxed);
  peak_bytes.store(0, std::memory_order_relaxed);
  allocation_count.store(0, std::memory_order_relaxed);
  counting.store(true, std::memory_order_seq_cst);
}

HeapMeasurement::~HeapMeasurement() {
  if (!finished_) Finish();
}

HeapUsage HeapMeasurement::Finish() {
  counting.store(false, std::memory_order_seq_cst);
  finished_ = true;
  return {peak_bytes.load(std::memory_order_relaxed),
          allocation_count.load(std::memory_order_relaxed)};
}

}  // namespace dcpsched::bench

// --- Replacement global allocation functions ---------------------------------
// The plain and nothrow forms; the align_val_t forms keep the standard
// library's definitions (nothing measured here is over-aligned), which
// allocate and free on their own, uncounted.

void* operator new(std::size_t size) {
  void* block = dcpsched::bench::AllocateCounted(size);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

void* operator new[](std::size_t size) { return ::operator new(size); }

void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return dcpsched::bench::AllocateCounted(size);
}

void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return dcpsched::bench::AllocateCounted(size);
}

void operator delete(void* block) noexcept {
  dcpsched::bench::FreeCounted(block);
}

void operator delete[](void* block) noexcept {
  dcpsched::bench::FreeCounted(block);
}

void operator delete(void* block, std::size_t) noexcept {
  dcpsched::bench::FreeCounted(block);
}

void operator delete[](void* block, std::size_t) noexcept {
  dcpsched::bench::FreeCounted(block);
}

void operator delete(void* block, const std::nothrow_t&) noexcept {
  dcpsched::bench::FreeCounted(block);
}

void operator delete[](void* block, const std::nothrow_t&) noexcept {
  dcpsched::bench::FreeCounted(block);
}
