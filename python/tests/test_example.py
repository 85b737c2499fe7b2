"""python/examples/megatron_drop_in.py runs as a script and schedules the
command line's batch: the same generator (dcpsched.benchmark_workload), so
the same 16 microbatches the README's main job reports for dp 2 x cp 4."""

import os
import subprocess
import sys

import dcpsched
from conftest import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "megatron_drop_in.py"


def test_runs_as_a_script_on_the_command_lines_batch():
    result = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True,
                            text=True, timeout=120, env=dict(os.environ),
                            check=False)
    assert result.returncode == 0, result.stderr
    expected = len(dcpsched.schedule_dynamic_cp(dcpsched.benchmark_workload(), 8, 2048))
    assert expected == 16  # `dcpsched schedule`: "packing_aware schedule: 16 microbatches"
    assert ("256 samples on dp 2 x cp 4, max_seqlen_per_dp_cp_rank 2048: "
            "16 microbatches") in result.stdout
    assert "guard on a schedule that lost sample" in result.stdout
    assert "invariant 1 (no empty rank)" in result.stdout
    assert "ValueError: Sequence length 20000 (sample 0) requires CP size 16" in result.stdout
