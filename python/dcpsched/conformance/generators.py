"""Random scheduling problems for the conformance check.

The families mirror the C++ property generators (properties/generators.h,
RapidCheck), written again here because the check runs in Python without
RapidCheck: realistic lognormal lengths (mean 1024, sigma 1.5, clipped to
[128, 8192]), lengths at k * mslpr - 1, k * mslpr and k * mslpr + 1, runs of
equal lengths, tiny lengths and budgets, fewer samples than ranks, G that is
not a power of two (3, 5, 6, 7, 10, 12, 14, 24, any G up to 64), min_cp_size > 1,
VPP groups 2-4, large G (up to 4096) with few samples, sparse 64-bit ids; the
tie-prone family (runs of equal lengths at one or two budgets), dp_balanced
problems, and the runtime-groups family: an even G that is not a power of
two (6, 10, 12, 14, 24), one sample long enough for a CP group of the
largest power of two below G, which Megatron-LM's runtime never creates
there (runtime_groups.py), and shorter ones after it. Half the dynamic-CP problems, tie-prone ones included,
set max_num_seqs (Megatron-LM PR #6479's cap), mostly to 1..4, where it
binds, sometimes to more. Lengths are clamped to what G ranks hold, so every
problem is inside the specification's limits. The same seed gives the same problems.
"""

import math
import random
import statistics
from typing import Iterator, List, Union

from dcpsched.conformance.problems import DpBalancedProblem, DynamicCpProblem

MAX_SAMPLE_LEN = 1 << 26
_MASK64 = (1 << 64) - 1
_GOLDEN_GAMMA = 0x9E3779B97F4A7C15
_NORMAL = statistics.NormalDist()

# (weight, value) tables, as in properties/generators.cc.
_TOPOLOGIES = [(2, 1), (3, 2), (3, 3), (4, 4), (2, 5), (3, 6), (2, 7), (5, 8), (3, 10),
               (3, 12), (3, 14), (4, 16), (3, 24), (3, 32), (2, 64)]
# Even G that are not powers of two: the runtime's CP groups there lack the
# largest power of two below G.
_RUNTIME_GROUP_TOPOLOGIES = [(1, 6), (1, 10), (2, 12), (1, 14), (1, 24)]
_LARGE_TOPOLOGIES = [(1, 128), (1, 512), (1, 1024), (1, 4096)]
_BUDGETS = [(1, 1), (1, 2), (1, 3), (1, 8), (1, 37), (2, 100), (2, 1024), (6, 2048), (2, 4096)]
_TINY_TOPOLOGIES = [(2 if g >= 5 and g % 2 else 1, g) for g in range(1, 17)]
_TINY_BUDGETS = [(1, 2), (1, 3), (1, 8), (1, 10), (1, 100)]
_VPP_GROUPS = [(6, None), (1, 1), (2, 2), (2, 3), (2, 4)]
_MIN_CP_EXPONENTS = [(6, 0), (2, 1), (1, 2), (1, 3)]
# max_num_seqs of dynamic-CP problems: none, small caps that bind, larger ones.
_DYNAMIC_CP_CAPS = [(8, None), (2, 1), (2, 2), (2, 3), (1, 4), (1, 6), (1, 17)]
# Length recipes: tiny, lognormal, boundary (k * mslpr + {-1, 0, 1}), repeat.
_RECIPES = [(2, "tiny"), (5, "lognormal"), (2, "boundary"), (2, "repeat")]
_TINY_RECIPES = [(1, "tiny"), (3, "boundary"), (3, "repeat")]
# Most samples in one problem: RapidCheck's default container sizes.
MAX_SAMPLES = 100

Problem = Union[DynamicCpProblem, DpBalancedProblem]


def _weighted(rng: random.Random, table):
    return rng.choices([value for _, value in table], weights=[w for w, _ in table])[0]


def _largest_power_of_two_at_most(value: int) -> int:
    return 1 << (value.bit_length() - 1)


def lognormal_length(p: float) -> int:
    """The p-quantile of upstream's DCP benchmark workload, clipped to [128, 8192]."""
    sigma = 1.5
    mu = math.log(1024.0) - sigma * sigma / 2.0
    length = math.exp(mu + sigma * _NORMAL.inv_cdf(p))
    return min(max(round(min(length, 1e9)), 128), 8192)


def _recipe_length(rng, recipe, mslpr, previous, tiny_values=False):
    value = rng.choice((0, 1, 2)) if tiny_values else rng.randrange(10000)
    if recipe == "lognormal":
        return lognormal_length((value + 0.5) / 10000.0)
    if recipe == "boundary":
        multiple = rng.choice((1, 2)) if tiny_values else rng.randrange(1, 9)
        return multiple * mslpr + value % 3 - 1
    if recipe == "repeat":
        return previous
    return 1 + value % 16


def _id_of(index: int, scramble: bool, salt: int) -> int:
    """Positions, or a bijective scramble of them over all of int64."""
    if not scramble:
        return index
    unsigned = (index * _GOLDEN_GAMMA + salt) & _MASK64
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned


def _assemble(rng, total_gpus, mslpr, recipes, count, tiny_values=False):
    widest = _largest_power_of_two_at_most(total_gpus)
    min_cp = min(1 << _weighted(rng, _MIN_CP_EXPONENTS), widest)
    vpp = _weighted(rng, _VPP_GROUPS)
    scramble = rng.random() < 0.5
    salt = rng.getrandbits(64)
    longest = min(MAX_SAMPLE_LEN, widest * mslpr)
    samples: List = []
    previous = 1
    for index in range(count):
        length = _recipe_length(rng, _weighted(rng, recipes), mslpr, previous, tiny_values)
        length = min(max(length, 1), longest)
        samples.append((_id_of(index, scramble, salt), length))
        previous = length
    return DynamicCpProblem(tuple(samples), total_gpus, mslpr, min_cp, vpp,
                            _weighted(rng, _DYNAMIC_CP_CAPS))


def valid_problem(rng: random.Random) -> DynamicCpProblem:
    """GenValidProblem: common, tiny and large topologies."""
    family = _weighted(rng, [(8, "common"), (2, "tiny"), (1, "large")])
    if family == "tiny":
        return _assemble(rng, _weighted(rng, _TINY_TOPOLOGIES), _weighted(rng, _TINY_BUDGETS),
                         _TINY_RECIPES, rng.randint(0, 8), tiny_values=True)
    if family == "large":
        return _assemble(rng, _weighted(rng, _LARGE_TOPOLOGIES), _weighted(rng, _BUDGETS),
                         _RECIPES, rng.randint(0, 12))
    topology = (_weighted(rng, _TOPOLOGIES) if rng.random() < 5 / 6 else rng.randint(1, 64))
    return _assemble(rng, topology, _weighted(rng, _BUDGETS), _RECIPES,
                     rng.randint(0, MAX_SAMPLES))


def tie_prone_problem(rng: random.Random) -> DynamicCpProblem:
    """GenTieProneProblem: one to three runs of equal lengths at one or two budgets."""
    total_gpus = _weighted(rng, _TINY_TOPOLOGIES)
    mslpr = rng.choice((3, 8, 10, 100))
    longest = min(MAX_SAMPLE_LEN, _largest_power_of_two_at_most(total_gpus) * mslpr)
    samples: List = []
    for _ in range(rng.randint(1, 3)):
        multiple = _weighted(rng, [(3, 1), (1, 2)])
        length = min(max(multiple * mslpr + rng.choice((-1, 0, 1)), 1), longest)
        for _ in range(rng.randint(1, 4)):
            samples.append((len(samples), length))
    return DynamicCpProblem(tuple(samples), total_gpus, mslpr,
                            max_num_seqs=_weighted(rng, _DYNAMIC_CP_CAPS))


def runtime_groups_problem(rng: random.Random) -> DynamicCpProblem:
    """An even G that is not a power of two; first one sample that needs the
    widest power of two p < G (longer than p/2 budgets, at most p), then up
    to 20 shorter ones (lognormal or tiny), the whole batch shuffled."""
    total_gpus = _weighted(rng, _RUNTIME_GROUP_TOPOLOGIES)
    widest = _largest_power_of_two_at_most(total_gpus)
    mslpr = rng.choice((8, 100, 1024, 2048))
    samples = [(0, rng.randint(widest // 2 * mslpr + 1, widest * mslpr))]
    for index in range(1, rng.randint(1, 21)):
        length = (lognormal_length(rng.random()) if rng.random() < 0.5
                  else rng.randint(1, mslpr))
        samples.append((index, min(length, widest * mslpr)))
    rng.shuffle(samples)
    return DynamicCpProblem(tuple(samples), total_gpus, mslpr,
                            min(1 << _weighted(rng, _MIN_CP_EXPONENTS), widest),
                            _weighted(rng, _VPP_GROUPS), _weighted(rng, _DYNAMIC_CP_CAPS))


def dp_balanced_problem(rng: random.Random) -> DpBalancedProblem:
    """GenDpBalancedProblem: small dp and cp sizes, lengths within mslpr * cp."""
    dp = _weighted(rng, [(3, 1), (3, 2), (2, 3), (2, 4), (1, 7), (1, 8)])
    cp = _weighted(rng, [(3, 1), (3, 2), (1, 3), (2, 4), (1, 8)])
    mslpr = _weighted(rng, _BUDGETS)
    max_num_seqs = _weighted(rng, [(4, None), (1, 1), (1, 2), (1, 3), (1, 5)])
    vpp = _weighted(rng, _VPP_GROUPS)
    longest = min(MAX_SAMPLE_LEN, mslpr * cp)
    lens: List[int] = []
    previous = 1
    for _ in range(rng.randint(0, MAX_SAMPLES)):
        previous = min(max(_recipe_length(rng, _weighted(rng, _RECIPES), mslpr, previous), 1),
                       longest)
        lens.append(previous)
    return DpBalancedProblem(tuple(lens), dp, cp, mslpr, max_num_seqs, vpp)


def generate(cases: int, seed: int) -> Iterator[Problem]:
    """`cases` problems: 6 in 11 valid, 2 tie-prone, 2 dp_balanced, 1 runtime-groups."""
    rng = random.Random(seed)
    for _ in range(cases):
        family = _weighted(rng, [(6, valid_problem), (2, tie_prone_problem),
                                 (2, dp_balanced_problem), (1, runtime_groups_problem)])
        yield family(rng)
