"""The GIL is released while the core schedules.

A worker thread makes one long call while the main thread spins, noting the
time every millisecond. If the call holds the GIL, the main thread cannot
run Python at all while the call is in C++: it notes nothing in the middle
half of the call. The harness itself is checked on a C call known to hold
the GIL (sorting a list of floats), which must show exactly that.
"""

import random
import threading
import time

import dcpsched

# Calls shorter than this are made longer (more samples) before measuring.
MIN_SECONDS = 0.25
TICK_SECONDS = 0.001


def main_thread_ticks_during(call):
    """Runs call() in a thread; returns (its duration, main-thread ticks in
    the middle half of it)."""
    window = {}

    def worker():
        window["start"] = time.perf_counter()
        call()
        window["end"] = time.perf_counter()

    ticks = []
    last = 0.0
    thread = threading.Thread(target=worker)
    thread.start()
    while thread.is_alive():
        now = time.perf_counter()
        if now - last >= TICK_SECONDS:
            ticks.append(now)
            last = now
    thread.join()
    start, end = window["start"], window["end"]
    quarter = (end - start) / 4
    middle = [tick for tick in ticks if start + quarter <= tick <= end - quarter]
    return end - start, len(middle)


def long_call(make_call, size=25_000, max_size=4_000_000):
    """make_call(size) for the first doubled size whose call takes at least
    MIN_SECONDS (measured in this thread)."""
    while True:
        call = make_call(size)
        start = time.perf_counter()
        call()
        if time.perf_counter() - start >= MIN_SECONDS or size >= max_size:
            return call
        size *= 2


def make_schedule_call(size):
    rng = random.Random(size)
    batch = [(i, min(8192, max(128, int(rng.lognormvariate(6.5, 1.5)))))
             for i in range(size)]
    return lambda: dcpsched.schedule_dynamic_cp(batch, 1024, 2048)


def make_sort_call(size):
    rng = random.Random(size)
    values = [rng.random() for _ in range(size)]
    return lambda: sorted(values)


def test_harness_sees_a_call_that_holds_the_gil():
    duration, middle_ticks = main_thread_ticks_during(long_call(make_sort_call))
    assert duration >= MIN_SECONDS / 2
    assert middle_ticks == 0


def test_schedule_dynamic_cp_releases_the_gil():
    duration, middle_ticks = main_thread_ticks_during(long_call(make_schedule_call))
    assert duration >= MIN_SECONDS / 2
    # Released: the main thread ran throughout (about one tick per ms).
    assert middle_ticks >= 5, (duration, middle_ticks)


def test_concurrent_calls_give_the_sequential_results():
    batches = [make_schedule_call(20_000 + i) for i in range(4)]
    rng = random.Random(3)
    problems = [[(i, rng.randint(1, 9000)) for i in range(5_000)] for _ in range(4)]
    expected = [dcpsched.schedule_dynamic_cp(p, 64, 2048, vpp_group=4) for p in problems]
    results = [None] * len(problems)

    def worker(index):
        results[index] = dcpsched.schedule_dynamic_cp(problems[index], 64, 2048,
                                                      vpp_group=4)
        batches[index]()  # more concurrent work, results unused

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(problems))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == expected
