"""Conformance check: dcpsched against the scheduler of a Megatron-LM checkout.

    python3 -m dcpsched.conformance --megatron PATH [--cases N] [--seed S]
        [--corpus DIR]... [--no-corpora]
        [--write-golden DIR [--golden-tag TAG] [--golden-max-gpus G]]
        [--timeout SECONDS]

loads megatron/core/datasets/data_schedule.py and data_schedule_utils.py from
the checkout at PATH as they are (upstream.py), runs upstream's functions and
dcpsched's side by side on generated problems (generators.py) and on every
problem of fuzz corpora (corpus.py), compares the answers exactly, exec times
bit for bit (checks.py; upstream runs in a worker process under a timeout
and a memory limit, worker.py), shrinks every difference to a small problem
(shrink.py), and prints a closing line

    conformance: N equal, M differ, K both reject, H upstream hangs (dcpsched rejects),
        R upstream returns a schedule its runtime cannot run (dcpsched refuses: invariant 11)

(one line). R counts the problems where upstream returns a schedule that
Megatron-LM's own runtime cannot run (a CP group it never creates, or one
that holds other ranks than the samples: runtime_groups.py) and dcpsched
refuses it naming invariant 11; the check confirms each with its own reading
of the runtime's group rule, else counts a difference, and shows the
smallest such problem it found (shrunk), upstream's schedule and where the
runtime fails ("runtime cannot run: ...").

The report opens with the SHA-256 of each upstream file loaded and whether
they are files dcpsched was checked against (known_upstreams.py), and with
every parameter of an upstream function or class the check calls that
dcpsched does not model (signatures.py): a check cannot compare what it
never sets, so then the closing line ends "NOT CONFORMANT: dcpsched does not
model upstream's f(p) yet" and the run fails. It counts the problems that
set max_num_seqs, the cap Megatron-LM PR #6479 gives the packing-aware step.

Exit status: 0 when everything agrees; 1 when something differs (M > 0,
which includes problems exactly one side rejects) or upstream has a
parameter dcpsched does not model; 2 when the checkout lacks a file or a
function the check needs, or the command line is wrong; 3 when the check
itself failed (an internal error, with its traceback: NOT CHECKED).
--write-golden DIR writes upstream's answers as golden vectors in the format
of tests/golden/ (golden.py).

    python3 -m dcpsched.conformance --megatron PATH --exhaustive SETS [--timeout SECONDS]

runs, instead of generated and corpus problems, every problem of explicit
finite sets (the exhaustive check's, properties/problem_enumerator.h; e.g.
SETS "test") and closes with "conformance --exhaustive: N problems of the
sets (C checks): ..." (exhaustive.py; docs/exhaustive.md).

    python3 -m dcpsched.conformance --megatron PATH --distributed W [--batches N]
        [--drop-in FILE] [--distributed-timeout SECONDS]

runs upstream's data pipeline (wrap_data_iterator, DpBalancedScheduler.run)
on W gloo processes with upstream's scheduler and with the drop-in, and
compares every rank's microbatches bit for bit (distributed.py and the
modules it names), and sends every microbatch of every rank through the
checkout's own CP group lookup and get_batch_on_this_rank_for_sequence_packing
(distributed_lookup.py, runtime_upstream.py): where upstream's schedule
fails there and the drop-in refuses it with invariant 11, the case is
counted as "upstream's runtime cannot run upstream's schedule"; exit 3 when
something did not run (NOT CHECKED).
"""
