"""The one retry policy: tenacity, TransientError only, exponential backoff, an injectable sleep.
For failures botocore cannot see (it already retries every boto3 call: never wrap one in this).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random_exponential,
)

from lakeinlet.errors import TransientError

log = logging.getLogger(__name__)


def transient(attempts: int, *, sleep: Callable[[float], None] = time.sleep,
              on: type[TransientError] = TransientError, first_wait: float = 0.2,
              max_wait: float = 5.0, jitter: bool = False) -> Retrying:
    """Call a function up to `attempts` times in all while it raises `on` (a TransientError),
    pausing `first_wait`, then twice as long each time (at most `max_wait`), through `sleep`;
    with `jitter`, a random pause up to that (writers that lost one race must not meet again).
    The last error is raised as is; any other exception at once.

    Usage: `transient(3, sleep=sleep)(fn, *args, **kwargs)`.
    """
    pauses = wait_random_exponential if jitter else wait_exponential
    return Retrying(retry=retry_if_exception_type(on), stop=stop_after_attempt(attempts),
                    wait=pauses(multiplier=first_wait, max=max_wait), sleep=sleep,
                    before_sleep=_log_retry, reraise=True)


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.warning("transient failure (attempt %d), retrying in %.1f s: %s", state.attempt_number, wait, exc)
