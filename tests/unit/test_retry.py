"""The one retry policy: transient errors only, exponential pauses through the injected sleep."""

from __future__ import annotations

import pytest

from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.retry import transient

pytestmark = pytest.mark.unit


class Flaky:
    """Raises `error` `fails` times, then answers "done"."""

    def __init__(self, error: Exception, fails: int) -> None:
        self.error, self.fails, self.calls = error, fails, 0

    def __call__(self, suffix: str = "") -> str:
        self.calls += 1
        if self.calls <= self.fails:
            raise self.error
        return "done" + suffix


def test_transient_errors_are_retried_with_growing_pauses_through_the_injected_sleep() -> None:
    sleeps: list[float] = []
    fn = Flaky(TransientError("throttled"), fails=3)
    assert transient(5, sleep=sleeps.append, first_wait=0.5, max_wait=1.5)(fn, suffix="!") == "done!"
    assert fn.calls == 4 and sleeps == [0.5, 1.0, 1.5]


def test_jittered_pauses_are_random_and_never_longer_than_the_plain_ones() -> None:
    """Writers that lost one race (the changelog's blind appends) must not retry in step."""
    sleeps: list[float] = []
    fn = Flaky(TransientError("lost the race"), fails=3)
    assert transient(5, sleep=sleeps.append, first_wait=0.5, max_wait=1.5, jitter=True)(fn) == "done"
    assert len(sleeps) == 3 and sleeps != [0.5, 1.0, 1.5]
    assert all(0 <= s <= cap for s, cap in zip(sleeps, [0.5, 1.0, 1.5], strict=True)), sleeps


def test_the_last_transient_error_is_raised_after_the_attempts() -> None:
    fn = Flaky(TransientError("still down"), fails=10)
    with pytest.raises(TransientError, match="still down"):
        transient(3, sleep=lambda s: None)(fn)
    assert fn.calls == 3


@pytest.mark.parametrize("error", [TerminalError("denied"), ValueError("a bug")])
def test_anything_but_a_transient_error_is_raised_at_once(error: Exception) -> None:
    sleeps: list[float] = []
    fn = Flaky(error, fails=10)
    with pytest.raises(type(error)):
        transient(3, sleep=sleeps.append)(fn)
    assert fn.calls == 1 and sleeps == []


class EntryFailed(TransientError):
    """A failure only the caller sees (botocore already retried the call's own errors)."""


def test_only_the_given_transient_errors_are_retried() -> None:
    call_failed = Flaky(TransientError("after botocore's retries"), fails=10)
    with pytest.raises(TransientError):
        transient(3, sleep=lambda s: None, on=EntryFailed)(call_failed)
    assert call_failed.calls == 1
    entry_failed = Flaky(EntryFailed("one entry"), fails=2)
    assert transient(3, sleep=lambda s: None, on=EntryFailed)(entry_failed) == "done"
    assert entry_failed.calls == 3
