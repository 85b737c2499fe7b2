// Properties of the group fit index (core/group_fit_index.h): after any
// sequence of appends and updates, its answers equal a scan of every group.

#include <cstdint>
#include <optional>
#include <vector>

#include "core/group_fit_index.h"
#include "properties/generators.h"
#include "gtest/gtest.h"
#include "rapidcheck/gtest.h"

namespace dcpsched::group_fit_index_properties {
namespace {

struct ScannedGroup {
  std::int64_t tokens = 0;
  double work = 0.0;
};

std::optional<double> ScanLeastWork(const std::vector<ScannedGroup>& groups,
                                    std::int64_t max_tokens) {
  std::optional<double> least;
  for (const ScannedGroup& group : groups) {
    if (group.tokens <= max_tokens && (!least || group.work < *least)) least = group.work;
  }
  return least;
}

std::optional<std::size_t> ScanOldest(const std::vector<ScannedGroup>& groups,
                                      std::int64_t max_tokens, double max_work) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].tokens <= max_tokens && groups[i].work <= max_work) return i;
  }
  return std::nullopt;
}

RC_GTEST_PROP(GroupFitIndexProperties, AnswersEqualAScanOfEveryGroup, ()) {
  const auto capacity = *rc::gen::inRange<std::size_t>(1, 40);
  GroupFitIndex index(capacity);
  std::vector<ScannedGroup> groups;
  // Small value ranges make ties and near misses common.
  const auto gen_tokens = rc::gen::inRange<std::int64_t>(0, 30);
  const auto gen_work = rc::gen::map(rc::gen::inRange(0, 30), [](int w) { return w * 0.5; });
  const int operations = *rc::gen::inRange(1, 120);
  for (int op = 0; op < operations; ++op) {
    const int kind = *properties::GenCase(4);
    if (kind == 0 && groups.size() < capacity) {
      const ScannedGroup group{*gen_tokens, *gen_work};
      RC_ASSERT(index.Append(group.tokens, group.work) == groups.size());
      groups.push_back(group);
    } else if (kind == 1 && !groups.empty()) {
      const auto which = *rc::gen::inRange<std::size_t>(0, groups.size());
      groups[which] = ScannedGroup{*gen_tokens, *gen_work};
      index.Update(which, groups[which].tokens, groups[which].work);
    } else if (kind == 2 && *rc::gen::inRange(0, 20) == 0) {
      index.Clear();
      groups.clear();
    }
    const std::int64_t max_tokens = *gen_tokens;
    const double max_work = *gen_work;
    RC_ASSERT(index.size() == groups.size());
    RC_ASSERT(index.LeastWork(max_tokens) == ScanLeastWork(groups, max_tokens));
    RC_ASSERT(index.Oldest(max_tokens, [max_work](double work) { return work <= max_work; }) ==
              ScanOldest(groups, max_tokens, max_work));
  }
}

}  // namespace
}  // namespace dcpsched::group_fit_index_properties
