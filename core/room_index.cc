#include "core/room_index.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dcpsched {

RoomIndex::RoomIndex(double budget)
    : scale_(budget > 0.0 ? static_cast<double>(kRoomBuckets - 1) / budget : 0.0),
      head_(kRoomBuckets, kNone),
      occupied_(kRoomBuckets / 64, 0) {}

std::size_t RoomIndex::Bucket(double room) const {
  const double scaled = std::clamp(room * scale_, 0.0, static_cast<double>(kRoomBuckets - 1));
  return static_cast<std::size_t>(scaled);
}

std::size_t RoomIndex::NextBucket(std::size_t b) const {
  if (b >= kRoomBuckets) return kRoomBuckets;
  std::size_t word = b / 64;
  std::uint64_t bits = occupied_[word] & (~std::uint64_t{0} << (b % 64));
  while (bits == 0) {
    if (++word == occupied_.size()) return kRoomBuckets;
    bits = occupied_[word];
  }
  return word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
}

void RoomIndex::Insert(std::size_t g, double room) {
  if (g >= bucket_of_.size()) {
    bucket_of_.resize(g + 1, kNone);
    next_.resize(g + 1, kNone);
    previous_.resize(g + 1, kNone);
  }
  const std::size_t b = Bucket(room);
  bucket_of_[g] = b;
  previous_[g] = kNone;
  next_[g] = head_[b];
  if (head_[b] != kNone) previous_[head_[b]] = g;
  head_[b] = g;
  occupied_[b / 64] |= std::uint64_t{1} << (b % 64);
  ++size_;
}

void RoomIndex::Erase(std::size_t g) {
  if (g >= bucket_of_.size() || bucket_of_[g] == kNone) return;
  const std::size_t b = bucket_of_[g];
  if (previous_[g] != kNone) {
    next_[previous_[g]] = next_[g];
  } else {
    head_[b] = next_[g];
  }
  if (next_[g] != kNone) previous_[next_[g]] = previous_[g];
  if (head_[b] == kNone) occupied_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  bucket_of_[g] = kNone;
  --size_;
}

}  // namespace dcpsched
