"""Conformance check: dcpsched against the scheduler of a Megatron-LM checkout.

    python3 -m dcpsched.conformance --megatron PATH [--cases N] [--seed S]
        [--corpus DIR]... [--no-corpora] [--all-differences]
        [--write-golden DIR [--golden-tag TAG] [--golden-max-gpus G]]
        [--timeout SECONDS]

loads megatron/core/datasets/data_schedule.py and data_schedule_utils.py, and
pipeline_parallel/hybrid_cp_schedule.py where there is one, from the
checkout at PATH as they are (upstream.py), finds which of upstream's
schedulers it carries (packing-aware: dev; dp_balanced: dev and main;
legacy BalancedCPScheduler: dev and main), names each it lacks, runs each
it has side by side with dcpsched on generated problems (generators.py) and
on every problem of fuzz corpora (corpus.py), compares the answers exactly,
exec times bit for bit (checks.py; upstream runs in a worker process under
a timeout and a memory limit, worker.py), reports what it found by class,
each class once with its count and its smallest problem shrunk
(classes.py, shrink.py) and a command that runs that problem in dcpsched
(reproduce.py: `dcpsched schedule --problem 'LINE'`), and prints a closing
line

    conformance: N equal, M differ, K both reject, H upstream hangs (dcpsched rejects),
        R upstream returns a schedule its runtime cannot run (dcpsched refuses: invariant 11),
        F upstream fails where dcpsched schedules[; generated problems only (no fuzz corpora)]

(one line). F counts upstream's assertion failures where dcpsched returns a
schedule that keeps the invariants (Megatron-LM main's DpBalancedScheduler
asserts `i > 0` where dev splits the first packed sequence), each class
named by upstream's message. R counts the problems where upstream returns a schedule that
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

Exit status: 0 when every problem compared agrees or falls in a named
class (hangs, R, F); 1 when something differs (M > 0, which includes
problems exactly one side rejects) or upstream has a parameter dcpsched
does not model; 2 when PATH is no checkout (no data_schedule.py), or the
command line is wrong; 3 when the check itself failed (an internal error,
with its traceback: NOT CHECKED); 4 when nothing was checked (no problem,
or a checkout with none of the schedulers). Progress goes to stderr every
tenth of the problems and at least every 30 s.
--write-golden DIR writes upstream's answers as golden vectors in the format
of tests/golden/ (golden.py).

    python3 -m dcpsched.conformance --megatron PATH --exhaustive SETS [--timeout SECONDS]

runs, instead of generated and corpus problems, every problem of explicit
finite sets (the exhaustive check's, properties/problem_enumerator.h; e.g.
SETS "test") and closes with "conformance --exhaustive: N problems of the
sets (C checks): ..." (exhaustive.py; docs/exhaustive.md).

    python3 -m dcpsched.conformance --megatron PATH --pipeline-order [--all-differences]

checks, instead, the op order of dcpsched's runtime step model
(dcpsched.pipeline_stage_order, core/pipeline_order.h) against the
checkout's megatron/core/pipeline_parallel/schedules.py
(get_forward_backward_func, get_pp_rank_microbatches, get_schedule_table,
convert_schedule_table_to_order, and the set-up of the schedule function
that runs each shape, which says which shapes upstream refuses and, for
1F1B, its warm-up) on every P in 1..8, V in 1..4, M in 1..24, N in 1..M+1
and pipeline rank; it names the checkout's git commit and closes with
"pipeline-order: E equal, D differ, B both refuse (S shapes: ...)"
(pipeline_order.py).

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
