"""The per-key counter without Redis (`surfaces.http.rate_counter`): exact across the threads of one
process (a lock around read and write), a window that starts at its first hit and ends."""

import threading

from surfaces.http import rate_counter


def test_the_local_counter_is_exact_across_threads():
    counts: list[int] = []
    lock = threading.Lock()

    def hits():
        for _ in range(50):
            count, _ = rate_counter.hit("throttle_test", window_seconds=60)
            with lock:
                counts.append(count)

    threads = [threading.Thread(target=hits) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts) == list(range(1, 401))  # no count given twice, none lost


def test_a_window_ends_and_the_next_starts_at_one(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(rate_counter.time, "time", lambda: clock[0])
    assert rate_counter.hit("throttle_window", window_seconds=60) == (1, 60)
    clock[0] += 59.5
    assert rate_counter.hit("throttle_window", window_seconds=60) == (2, 1)
    clock[0] += 1
    assert rate_counter.hit("throttle_window", window_seconds=60)[0] == 1
