"""Conformance check: dcpsched against the scheduler of a Megatron-LM checkout.

    python3 -m dcpsched.conformance --megatron PATH [--cases N] [--seed S]
        [--corpus DIR]... [--write-golden DIR] [--timeout SECONDS]

loads megatron/core/datasets/data_schedule.py and data_schedule_utils.py from
the checkout at PATH as they are (upstream.py), runs upstream's functions and
dcpsched's side by side on generated problems (generators.py) and on every
problem of fuzz corpora (corpus.py), compares the answers exactly, exec times
bit for bit (checks.py; upstream runs in a worker process under a timeout
and a memory limit, worker.py), shrinks every difference to a small problem
(shrink.py), and prints a closing line

    conformance: N equal, M differ, K both reject, H upstream hangs (dcpsched rejects)

Exit status: 0 when everything agrees; 1 when something differs (M > 0,
which includes problems exactly one side rejects); 2 when the checkout lacks
a file or a function the check needs, or the command line is wrong.
--write-golden DIR writes upstream's answers as golden vectors in the format
of tests/golden/ (golden.py).
"""
