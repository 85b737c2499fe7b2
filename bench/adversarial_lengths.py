#!/usr/bin/env python3
"""Writes a lengths file (one length per line) of an adversarial batch.

The batch of issue 14: 4096 samples of up to 2^26 tokens, which at
G = 65536 and max_seq_len_per_rank 2048 needs about one microbatch per
sample, so a per-rank schedule of it has 4096 x 65536 rank lists:

    bench/adversarial_lengths.py huge > /tmp/huge.txt
    build/dcpsched schedule --lengths /tmp/huge.txt --total-gpus 65536 \\
        --mslpr 2048 --compact --format json > /tmp/huge.json
    build/dcpsched verify /tmp/huge.json

The other distributions are those of the adversarial table in
docs/performance.md (bench/packing_aware_bench.cc draws its own batches of
the same definitions in C++). The same arguments always give the same file.
"""

import argparse
import random
import sys

MAX_LEN = 1 << 26  # docs/specification.md: a sample has 1 to 2^26 tokens


def draw(distribution, samples, mslpr, rng):
    """`samples` lengths of `distribution`, each in [1, 2^26]."""
    if distribution == "huge":  # uniform up to 2^26
        return [rng.randint(1, MAX_LEN) for _ in range(samples)]
    if distribution == "equal":
        return [mslpr] * samples
    if distribution == "ones":
        return [1] * samples
    if distribution == "bimodal":  # 16 or 8192, even odds
        return [rng.choice((16, 8192)) for _ in range(samples)]
    if distribution == "uniform":  # 1..16384
        return [rng.randint(1, 16384) for _ in range(samples)]
    if distribution == "pareto":  # shape 1.1, scale 64, clipped to 2^26
        return [min(MAX_LEN, int(64 * rng.paretovariate(1.1)))
                for _ in range(samples)]
    if distribution == "over_mslpr":  # each one token over the budget
        return [mslpr + 1] * samples
    raise ValueError(distribution)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("distribution",
                        choices=("huge", "equal", "ones", "bimodal", "uniform",
                                 "pareto", "over_mslpr"))
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--mslpr", type=int, default=2048,
                        help="max_seq_len_per_rank, for equal and over_mslpr")
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lengths = draw(args.distribution, args.samples, args.mslpr, rng)
    sys.stdout.write("".join(f"{length}\n" for length in lengths))


if __name__ == "__main__":
    main()
