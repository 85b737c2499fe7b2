"""The problems of fuzz corpora, decoded by the fuzz targets' own decoder.

A corpus directory is named after its fuzz target (corpus/fuzz_<what>/); its
files, regressions/ included, are decoded by dcpsched._fuzz_corpus, the C++
decoder of fuzz/fuzz_input.h, so Python reads them exactly as the fuzzers
do. Targets whose inputs are scheduling problems: fuzz_packing_aware,
fuzz_packing_aware_differential and fuzz_legacy (dynamic-CP problems),
fuzz_dp_balanced and fuzz_vpp_align.
"""

import pathlib
from typing import Iterator, List, Tuple

from dcpsched.conformance.problems import (DpBalancedProblem, DynamicCpProblem,
                                           VppAlignProblem, freeze_schedule)

PROBLEM_TARGETS = ("fuzz_packing_aware", "fuzz_packing_aware_differential", "fuzz_legacy",
                   "fuzz_dp_balanced", "fuzz_vpp_align")


class CorpusError(Exception):
    """A corpus cannot be read: no decoder, or not a problem corpus."""


def _decoder():
    try:
        from dcpsched import _fuzz_corpus  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise CorpusError(
            "reading fuzz corpora needs dcpsched._fuzz_corpus, the fuzz input decoder, "
            "which only a CMake build with the tests has (PYTHONPATH=<build>/python); "
            "the pip package leaves it out") from error
    return _fuzz_corpus.decode


def committed_corpora(source_dir: pathlib.Path) -> List[pathlib.Path]:
    """The corpus directories of a source tree that hold scheduling problems."""
    return [source_dir / "corpus" / target for target in PROBLEM_TARGETS
            if (source_dir / "corpus" / target).is_dir()]


def _problem(decoded):
    kind = decoded["kind"]
    if kind == "dynamic_cp":
        return DynamicCpProblem(tuple(decoded["samples"]), decoded["total_gpus"],
                                decoded["max_seq_len_per_rank"], decoded["min_cp_size"],
                                decoded["vpp_group"], decoded["max_num_seqs"])
    if kind == "dp_balanced":
        return DpBalancedProblem(tuple(decoded["lens"]), decoded["dp_size"], decoded["cp_size"],
                                 decoded["max_seq_len_per_rank"], decoded["max_num_seqs"],
                                 decoded["vpp_group"])
    return VppAlignProblem(freeze_schedule(decoded["schedule"]), decoded["vpp_group"])


def read(directory: pathlib.Path) -> Iterator[Tuple[str, object]]:
    """(file, problem) for every file under `directory`, sorted by path."""
    directory = pathlib.Path(directory)
    target = directory.name
    if target not in PROBLEM_TARGETS:
        raise CorpusError(f"{directory}: not a corpus of scheduling problems; its name must be "
                          f"one of {', '.join(PROBLEM_TARGETS)}")
    if not directory.is_dir():
        raise CorpusError(f"{directory}: no such directory")
    decode = _decoder()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        yield str(path), _problem(decode(target, path.read_bytes()))
