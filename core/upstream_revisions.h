// The Megatron-LM revisions this build of dcpsched was checked against.
//
// dcpsched reproduces a scheduler that keeps moving on Megatron-LM's `dev`
// branch, so "bit for bit" only means something next to the upstream
// revision it was shown on. This is the one list of them: `dcpsched
// --version` prints it, and the Python package exposes it as
// dcpsched.UPSTREAM_CHECKED. The SHA-256 of each revision's scheduling files
// lives beside the conformance check
// (python/dcpsched/conformance/known_upstreams.py), and its tests keep the two
// lists naming the same revisions.

#ifndef DCPSCHED_CORE_UPSTREAM_REVISIONS_H_
#define DCPSCHED_CORE_UPSTREAM_REVISIONS_H_

namespace dcpsched {

struct UpstreamRevision {
  const char* branch;   // "dev", "PR #6479 head", "main"
  const char* commit;   // abbreviated Megatron-LM commit hash
  const char* outcome;  // what checking against it found
};

inline constexpr UpstreamRevision kUpstreamChecked[] = {
    {"dev", "66d54b474b",
     "equal: golden vectors, conformance check 0 differ"},
    {"PR #6479 head", "986bf45787",
     "equal: golden vectors, conformance check 0 differ (max_num_seqs)"},
    {"main", "a9381be598",
     "dp_balanced equal where main schedules; main's i > 0 assertion fails "
     "where dcpsched schedules; no dynamic-CP scheduler yet"},
};

}  // namespace dcpsched

#endif  // DCPSCHED_CORE_UPSTREAM_REVISIONS_H_
