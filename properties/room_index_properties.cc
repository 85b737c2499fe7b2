// Properties of RoomIndex (core/room_index.h), against a model of what its
// header says: rooms in [0, budget] fall into kRoomBuckets equal buckets,
// and Find offers the groups whose bucket is at or above need's, tightest
// bucket first, within a bucket the most recently inserted first, until
// visit accepts one or `limit` were offered. Rooms are drawn often at the
// ends (0 and the budget: the first and the last bucket), and groups are
// erased again, some twice, some never inserted.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "core/room_index.h"
#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::room_index_properties {
namespace {

constexpr std::size_t kMaxGroups = 48;

// The header's bucket of `room`: kRoomBuckets equal parts of [0, budget].
std::size_t ModelBucket(double room, double budget) {
  const auto last = static_cast<double>(RoomIndex::kRoomBuckets - 1);
  return static_cast<std::size_t>(std::clamp(room * (last / budget), 0.0, last));
}

rc::Gen<double> GenRoom(double budget) {
  return rc::gen::oneOf(rc::gen::just(0.0), rc::gen::just(budget),
                        rc::gen::map(rc::gen::inRange(0, 1 << 20), [budget](int part) {
                          return budget * static_cast<double>(part) / (1 << 20);
                        }));
}

RC_GTEST_PROP(RoomIndexProperties, FindOffersTheTightestBucketFirstNewestFirst, ()) {
  const auto budget = static_cast<double>(*rc::gen::inRange<std::int64_t>(1, 1 << 24));
  RoomIndex index(budget);
  // The model: per group its room and when it was inserted, while present.
  struct Entry {
    double room;
    std::size_t stamp;
  };
  std::vector<std::optional<Entry>> model(kMaxGroups);
  const std::size_t steps = *rc::gen::inRange<std::size_t>(0, 3 * kMaxGroups);
  for (std::size_t step = 0; step < steps; ++step) {
    const auto g = *rc::gen::inRange<std::size_t>(0, kMaxGroups);
    if (!model[g].has_value() && *rc::gen::inRange(0, 4) != 0) {
      const double room = *GenRoom(budget);
      index.Insert(g, room);
      model[g] = Entry{room, step};
    } else {
      index.Erase(g);
      model[g].reset();
    }
  }
  const auto present = static_cast<std::size_t>(
      std::count_if(model.begin(), model.end(), [](const auto& e) { return e.has_value(); }));
  RC_ASSERT(index.empty() == (present == 0));

  const double need = *GenRoom(budget);
  const auto limit = *rc::gen::inRange<std::size_t>(1, kMaxGroups + 2);
  const auto accept = *rc::gen::inRange<std::size_t>(0, kMaxGroups + 1);  // kMaxGroups: none
  std::vector<std::size_t> expected;
  for (std::size_t g = 0; g < kMaxGroups; ++g) {
    if (model[g].has_value() && ModelBucket(model[g]->room, budget) >= ModelBucket(need, budget)) {
      expected.push_back(g);
    }
  }
  std::sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) {
    return std::make_tuple(ModelBucket(model[a]->room, budget), model[b]->stamp) <
           std::make_tuple(ModelBucket(model[b]->room, budget), model[a]->stamp);
  });
  std::optional<std::size_t> expected_found;
  for (std::size_t c = 0; c < expected.size(); ++c) {
    if (expected[c] == accept) {
      expected.resize(c + 1);
      expected_found = accept;
      break;
    }
  }
  if (!expected_found.has_value() || expected.size() > limit) {
    if (expected.size() > limit) expected_found.reset();
    expected.resize(std::min(expected.size(), limit));
  }

  std::vector<std::size_t> offered;
  const std::size_t found = index.Find(need, limit, [&](std::size_t g) {
    offered.push_back(g);
    return g == accept;
  });
  RC_ASSERT(offered == expected);
  RC_ASSERT(found == expected_found.value_or(RoomIndex::kNone));
}

}  // namespace
}  // namespace dcpsched::room_index_properties
