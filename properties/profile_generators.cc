#include "properties/profile_generators.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/cost_profile.h"
#include "io/cost_profile_file.h"
#include "oracle/reference_gpu_time.h"
#include "rapidcheck.h"

namespace dcpsched::properties {
namespace {

oracle::ReferenceTable ToReference(const MeasuredCurve& curve) {
  return {.sizes = curve.sizes, .seconds = curve.seconds};
}

}  // namespace

rc::Gen<MeasuredCurve> GenCurve() {
  return rc::gen::exec([] {
    MeasuredCurve curve;
    const int points = *rc::gen::inRange(1, 9);
    std::int64_t size = *rc::gen::inRange<std::int64_t>(1, 512);
    for (int i = 0; i < points; ++i) {
      curve.sizes.push_back(size);
      curve.seconds.push_back(std::pow(10.0, *rc::gen::inRange(-70, 1) / 10.0));
      size += *rc::gen::inRange<std::int64_t>(1, 1 << 14);
    }
    return curve;
  });
}

rc::Gen<CostProfile> GenCostProfile() {
  return rc::gen::exec([] {
    CostProfile profile;
    profile.name = "generated";
    profile.causal_attention = *GenCurve();
    profile.full_attention = *GenCurve();
    profile.non_attention = *GenCurve();
    if (*rc::gen::arbitrary<bool>()) {
      profile.communication = CommunicationModel{
          .gpus_per_node = *rc::gen::inRange<std::int64_t>(1, 17),
          .intra_node_gb_per_s = std::pow(10.0, *rc::gen::inRange(0, 30) / 10.0),
          .inter_node_gb_per_s = std::pow(10.0, *rc::gen::inRange(-10, 20) / 10.0),
          .kv_bytes_per_token = static_cast<double>(*rc::gen::inRange(1, 1 << 16))};
    }
    return profile;
  });
}

CostProfile ShippedProfile() {
  const std::vector<std::string> names = ShippedCostProfileNames();
  RC_PRE(!names.empty());
  const absl::StatusOr<CostProfile> profile =
      LoadCostProfile(*rc::gen::elementOf(names));
  RC_ASSERT(profile.ok());
  return *profile;
}

oracle::ReferenceCostTables ToReference(const CostProfile& profile) {
  oracle::ReferenceCostTables tables{
      .causal = ToReference(profile.causal_attention),
      .full = ToReference(profile.full_attention),
      .non_attention = ToReference(profile.non_attention)};
  if (profile.communication.has_value()) {
    tables.communication = true;
    tables.gpus_per_node = profile.communication->gpus_per_node;
    tables.intra_node_gb_per_s = profile.communication->intra_node_gb_per_s;
    tables.inter_node_gb_per_s = profile.communication->inter_node_gb_per_s;
    tables.kv_bytes_per_token = profile.communication->kv_bytes_per_token;
  }
  return tables;
}

}  // namespace dcpsched::properties
