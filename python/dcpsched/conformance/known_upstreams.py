"""The upstream files dcpsched was checked against, by SHA-256.

A conformance run prints the SHA-256 of each upstream file it loads and says
whether the pair is one of the pairs below: the Megatron-LM commits whose
scheduling code dcpsched was last shown to match (conformance runs with
`0 differ`, golden vectors in tests/golden/; for main, every difference in
a named upstream-failure class, docs in README.md). Files that match none are
another upstream version: a difference there may be upstream's new
behaviour rather than a bug, and a clean run there is news worth recording
here (with the commit it came from).
"""

import hashlib
import pathlib
from typing import Dict, Optional

# name -> {file name: SHA-256 of the file at that commit}
KNOWN_UPSTREAMS: Dict[str, Dict[str, str]] = {
    "Megatron-LM dev 66d54b474b": {
        "data_schedule.py":
            "fa62cf70c63c812a5c59bfce8fb35b98151c72901773eb3654e146d26a627029",
        "data_schedule_utils.py":
            "0cc5e417a6492542e542feff3d2b33045976134137e01f39da71b7360239bf78",
        # pipeline_parallel/hybrid_cp_schedule.py: the legacy scheduler, the
        # same file as main's and PR #6479's.
        "hybrid_cp_schedule.py":
            "e22cfc31782e9ab497d8f102dd3edf9bf2582f5adc1796bfb701af207e304ba3",
    },
    # Main's own DpBalancedScheduler (no max_num_seqs, asserts i > 0) and the
    # legacy BalancedCPScheduler; no packing-aware scheduler.
    "Megatron-LM main a9381be598": {
        "data_schedule.py":
            "2193495d0c0ac720299581919a6d243c31ec6f5af5e3a061809a6b3b02d83f65",
        "data_schedule_utils.py":
            "9adf0fa2fe008c9ba567aad9b36572b0ac0e7e9d0ca75ad944f423de950a77d8",
        "hybrid_cp_schedule.py":
            "e22cfc31782e9ab497d8f102dd3edf9bf2582f5adc1796bfb701af207e304ba3",
    },
    "Megatron-LM PR #6479 head 986bf45787": {
        "data_schedule.py":
            "3be64122f0ea88f5c28e2cfc8eeaf13c355d941c9428fdd68fdbd81ba97b5880",
        "data_schedule_utils.py":
            "d927d72c11b3ec87bbde488b59208f038d0f2a9ee84e75c4f48c52787045d530",
        "hybrid_cp_schedule.py":
            "e22cfc31782e9ab497d8f102dd3edf9bf2582f5adc1796bfb701af207e304ba3",
    },
}


def sha256_of(path: pathlib.Path) -> str:
    """The SHA-256 of the file's bytes, in hex."""
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def known_upstream(hashes: Dict[str, str]) -> Optional[str]:
    """The name of the known upstream whose files have these hashes ({file
    name: SHA-256}), or None: both datasets files must be there and match,
    and hybrid_cp_schedule.py must match where it was loaded (a checkout of
    megatron/core/datasets/ alone has none)."""
    for name, known in KNOWN_UPSTREAMS.items():
        if ({"data_schedule.py", "data_schedule_utils.py"} <= hashes.keys()
                and all(known.get(file) == digest for file, digest in hashes.items())):
            return name
    return None


def report_lines(files) -> list:
    """The report's first lines: each file's SHA-256, then whether they are
    files dcpsched was checked against (and which), said plainly if not."""
    hashes = {pathlib.Path(path).name: sha256_of(path) for path in files}
    lines = [f"upstream file: {path} sha256 {hashes[pathlib.Path(path).name]}"
             for path in files]
    name = known_upstream(hashes)
    if name is not None:
        lines.append(f"upstream files: the files dcpsched was checked against ({name})")
    else:
        lines.append("upstream files: NOT the files dcpsched was checked against (known: "
                     f"{'; '.join(KNOWN_UPSTREAMS)}): this is another upstream version, "
                     "so read any difference as possibly new upstream behaviour")
    return lines


# The files of Megatron-LM's pipeline schedules whose op order dcpsched's
# (core/pipeline_order.h) was checked against by the pipeline-order check
# (pipeline_order.py: 0 differ), by SHA-256: name -> {file name: SHA-256}.
KNOWN_PIPELINE_ORDERS: Dict[str, Dict[str, str]] = {
    "Megatron-LM dev d48bd6be0a": {
        "schedules.py":
            "968b3c2ab8e80b5d30992bb572bae8aa7cbc6b2fba7137d851bb71ee51bf489f",
    },
    # Main's schedules.py has no convert_schedule_table_to_order; the check
    # takes cuda_graphs.py's.
    "Megatron-LM main a9381be598": {
        "schedules.py":
            "18829700a9c92a940f5a70e6d186aac753950d9cd90bf3021fe65dd0231c83a0",
        "cuda_graphs.py":
            "c46b02e042f6c4fcbf6d1769e86b4724a261a78c9e390d75d5d36a938a573765",
    },
}


def pipeline_report_lines(files) -> list:
    """The pipeline-order check's report lines on the files it loaded: each
    file's SHA-256, then whether they are files dcpsched's op order was
    checked against (and which), said plainly if not."""
    hashes = {pathlib.Path(path).name: sha256_of(path) for path in files}
    lines = [f"upstream file: {path} sha256 {hashes[pathlib.Path(path).name]}"
             for path in files]
    name = next((name for name, known in KNOWN_PIPELINE_ORDERS.items() if known == hashes),
                None)
    if name is not None:
        lines.append(f"upstream files: the files dcpsched's op order was checked against "
                     f"({name})")
    else:
        lines.append("upstream files: NOT the files dcpsched's op order was checked against "
                     f"(known: {'; '.join(KNOWN_PIPELINE_ORDERS) or 'none'}): this is another "
                     "upstream version, so read any difference as possibly new upstream "
                     "behaviour")
    return lines
