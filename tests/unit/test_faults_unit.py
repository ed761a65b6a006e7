"""The fault model's building blocks: backoff bounds and the circuit breaker's transitions."""

from __future__ import annotations

from ragls.system.faults import Backoff, CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_backoff_doubles_up_to_its_cap_and_resets() -> None:
    b = Backoff(1.0, 60.0)
    assert [b.next_delay() for _ in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]
    b.reset()
    assert b.next_delay() == 1


def test_breaker_opens_after_threshold_probes_with_backoff_and_closes_on_success() -> None:
    clock = Clock()
    br = CircuitBreaker(threshold=3, first_wait=5.0, max_wait=20.0, clock=clock)
    assert br.allow() and not br.is_open
    assert br.record_failure("down") is False and not br.allow()  # a short pause below the threshold
    clock.t += 4
    assert br.allow()
    br.record_failure("down")
    clock.t += 4
    assert br.record_failure("down") is True and br.is_open
    assert "dense paused" in br.describe() and "down since" in br.describe()
    waits = []
    for _ in range(4):  # failed probes: 5, 10, 20, 20 s
        waits.append(round(br.wait_s()))
        assert not br.allow()
        clock.t += br.wait_s()
        assert br.allow()
        br.record_failure("still down")
    assert waits == [5, 10, 20, 20]
    br.probe_now()
    assert br.allow()
    assert br.record_success() is True and not br.is_open and br.allow()
    assert br.record_success() is False
