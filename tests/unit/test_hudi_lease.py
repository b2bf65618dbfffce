"""Unit tests of the Hudi writer lease: S3Lease's conditional PUTs (moto in-process, which honours
If-None-Match/If-Match) and heartbeat, LocalLease's flock, and `held`, all on a fake clock."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from lakeinlet.incremental.targets.hudi.lease import LeaseHeld, LeaseLost, LocalLease, S3Lease, held
from lakeinlet.logs import _FIELDS

pytestmark = pytest.mark.unit
BUCKET, KEY, TTL, T0 = "lake-lease", "t/table.lakeinlet-writer.json", 30.0, 1_000_000.0
URI = f"s3://{BUCKET}/{KEY}"
Make = Callable[[], "S3Lease | LocalLease"]
MakeS3 = Callable[..., S3Lease]


class Clock:
    """A fake clock that only `sleep` (or a test) advances; `on_sleep` runs once, at the next sleep."""

    def __init__(self) -> None:
        self.now, self.on_sleep = T0, None  # type: float, Callable[[], None] | None

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        hook, self.on_sleep = self.on_sleep, None
        if hook is not None:
            hook()


class Beats(threading.Event):
    """A heartbeat's stop event: `beats` waits, each one beat on the clock and then `after_beat`."""

    def __init__(self, clock: Clock, beats: int, after_beat: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.clock, self.beats, self.after_beat = clock, beats, after_beat

    def wait(self, timeout: float | None = None) -> bool:
        if self.beats <= 0:
            return True
        self.beats, self.clock.now = self.beats - 1, self.clock.now + (timeout or 0.0)
        if self.after_beat is not None:
            self.after_beat()
        return False


class Meddled:
    """An S3 client that runs `meddle` once right after a get_object (a writer racing in)."""

    def __init__(self, s3: Any) -> None:
        self.s3, self.meddle = s3, None  # type: Any, Callable[[], object] | None

    def get_object(self, **kwargs: Any) -> Any:
        try:
            return self.s3.get_object(**kwargs)
        finally:  # also when the key is missing (NoSuchKey)
            hook, self.meddle = self.meddle, None
            if hook is not None:
                hook()

    def put_object(self, **kwargs: Any) -> Any:
        return self.s3.put_object(**kwargs)


def stop_beating(lease: S3Lease) -> None:
    """The heartbeat thread ends (a frozen or killed holder; with `Beats`: its beats ran out)."""
    lease._stop.set()
    if lease._beat is not None:
        lease._beat.join()


def record(s3: Any) -> dict[str, Any]:
    return dict(json.loads(s3.get_object(Bucket=BUCKET, Key=KEY)["Body"].read()))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        made = boto3.client("s3", region_name="us-east-1")
        made.create_bucket(Bucket=BUCKET)
        yield made


@pytest.fixture
def make_s3(s3: Any, clock: Clock) -> Iterator[MakeS3]:
    """S3Lease factory; every heartbeat is stopped before moto's mock ends (never a real S3 call)."""
    made: list[S3Lease] = []

    def make(client: Any = None) -> S3Lease:
        made.append(S3Lease(client or s3, URI, TTL, clock=clock, sleep=clock.sleep))
        return made[-1]
    yield make
    for lease in made:
        stop_beating(lease)


@pytest.fixture(params=["s3", "local"])
def make(request: pytest.FixtureRequest, clock: Clock, tmp_path: Path) -> Make:
    """A factory of leases on one table, once on S3 and once on a local path."""
    if request.param == "s3":
        return request.getfixturevalue("make_s3")
    return lambda: LocalLease(str(tmp_path / "t" / "w.lock"), sleep=clock.sleep, clock=clock)


def test_held_lease_refuses_another_for_the_whole_wait(make: Make, clock: Clock) -> None:
    a, b = make(), make()
    a.acquire(0)
    with pytest.raises(LeaseHeld, match="holds the writer"):
        b.acquire(3.0)
    assert clock.now >= T0 + 3.0
    a.check()
    with pytest.raises(LeaseLost):
        b.check()


def test_free_lease_is_taken_and_release_frees_it_at_once(make: Make, clock: Clock) -> None:
    a, b = make(), make()
    a.acquire(0)
    a.check()
    a.release()
    b.acquire(0)
    b.check()
    assert clock.now == T0
    with pytest.raises(LeaseLost):
        a.check()


def test_a_waiter_gets_the_lease_its_holder_releases(make: Make, clock: Clock) -> None:
    a, b = make(), make()
    a.acquire(0)
    clock.on_sleep = a.release
    b.acquire(60.0)
    b.check()
    assert T0 < clock.now < T0 + 60.0


def test_held_releases_on_exception(make: Make, clock: Clock) -> None:
    a = make()
    with pytest.raises(RuntimeError), held(a, 0):
        a.check()
        raise RuntimeError("load failed")
    make().acquire(0)
    assert clock.now == T0


def test_refusal_names_the_holder_and_until_when(make_s3: MakeS3) -> None:
    a, b = make_s3(), make_s3()
    a.acquire(0)
    with pytest.raises(LeaseHeld) as refused:
        b.acquire(1.0)
    until = time.strftime("%H:%M:%S", time.gmtime(T0 + TTL))
    assert a.holder in str(refused.value) and f"until {until} UTC" in str(refused.value)


def test_expired_lease_is_taken_over_never_while_valid(make_s3: MakeS3, clock: Clock, s3: Any) -> None:
    a, b = make_s3(), make_s3()
    a.acquire(0)
    stop_beating(a)
    clock.now += 5
    with pytest.raises(LeaseHeld):
        b.acquire(20.0)  # the wait ends before the lease expires
    clock.now = T0 + TTL  # valid up to and including its expiry
    with pytest.raises(LeaseHeld):
        b.acquire(0)
    clock.now = T0 + TTL - 10
    b.acquire(60.0)  # waits for the expiry, then takes it over
    assert T0 + TTL < clock.now <= T0 + TTL + 2.0 and record(s3)["holder"] == b.holder
    with pytest.raises(LeaseLost):
        a.check()


def test_heartbeat_renews_so_a_live_holder_keeps_it(make_s3: MakeS3, clock: Clock, s3: Any) -> None:
    a = make_s3()
    a._stop = Beats(clock, beats=7)  # 7 beats of TTL/3: well past the first expiry
    a.acquire(0)
    stop_beating(a)
    assert clock.now > T0 + 2 * TTL and record(s3)["expires_at"] == clock.now + TTL
    a.check()
    with pytest.raises(LeaseHeld):
        make_s3().acquire(0)


def test_heartbeat_renews_only_its_own_etag(make_s3: MakeS3, clock: Clock, s3: Any) -> None:
    a, b = make_s3(), make_s3()

    def taken_over() -> None:  # `a` stalled past its expiry and `b` took over, before a's beat
        clock.now += TTL
        b.acquire(0)
    a._stop = Beats(clock, beats=2, after_beat=taken_over)
    a.acquire(0)
    stop_beating(a)
    assert a.lost and record(s3)["holder"] == b.holder
    with pytest.raises(LeaseLost):
        a.check()
    b.check()


def test_check_raises_once_it_expired(make_s3: MakeS3, clock: Clock) -> None:
    a = make_s3()
    a.acquire(0)
    stop_beating(a)
    clock.now += TTL
    a.check()
    clock.now += 0.5
    with pytest.raises(LeaseLost):
        a.check()


def test_release_of_a_lease_taken_over_keeps_the_others(make_s3: MakeS3, clock: Clock, s3: Any) -> None:
    a, b = make_s3(), make_s3()
    a.acquire(0)
    stop_beating(a)
    clock.now += TTL + 1
    b.acquire(0)
    a.release()
    assert record(s3)["holder"] == b.holder and record(s3)["expires_at"] == clock.now + TTL
    b.check()


@pytest.mark.parametrize("state", ["free", "expired"])
def test_racing_acquirers_never_both_hold_it(make_s3: MakeS3, clock: Clock, s3: Any, state: str) -> None:
    if state == "expired":
        make_s3().acquire(0)
        clock.now += TTL + 1
    racer, late = make_s3(), Meddled(s3)
    a = make_s3(late)
    late.meddle = lambda: racer.acquire(0)  # `racer` reads and PUTs between a's read and a's PUT
    with pytest.raises(LeaseHeld, match="a concurrent taker"):
        a.acquire(0)
    assert record(s3)["holder"] == racer.holder
    racer.check()


def test_check_is_not_fooled_by_a_concurrent_renewal(make_s3: MakeS3, clock: Clock, s3: Any) -> None:
    late = Meddled(s3)
    a = make_s3(late)
    a.acquire(0)

    beats: list[bool] = []
    renewal = threading.Thread(target=lambda: beats.append(a.renew()))

    def beat() -> None:  # the heartbeat's renewal, from its own thread, while check reads
        clock.now += TTL / 3
        renewal.start()
        renewal.join(0.5)  # it waits for check to finish (else it lands between read and compare)
    late.meddle = beat
    a.check()  # we hold it, renewed and valid: this must pass
    renewal.join(5)
    assert beats == [True], "the renewal went through after the check"
    a.check()


def test_release_never_acquired_leaves_the_holder_alone(make_s3: MakeS3) -> None:
    a = make_s3()
    a.acquire(0)
    make_s3().release()
    a.check()


def test_a_waiter_is_told_who_holds_the_lease(make: Make, clock: Clock,
                                              caplog: pytest.LogCaptureFixture) -> None:
    """Before: "another loader" whoever held it, `maintain` included."""
    a, b = make(), make()
    a.acquire(0, role="maintain")
    with pytest.raises(LeaseHeld, match=r"^maintain \(.+:\d+.*\) holds the writer"), \
            caplog.at_level(logging.INFO, logger="lakeinlet"):
        b.acquire(1.0)
    assert [str(vars(r)[_FIELDS]["holder"]).startswith("maintain (") for r in caplog.records] == [True]
    a.release()
    b.acquire(0)
    with pytest.raises(LeaseHeld, match=r"^a loader \("):
        make().acquire(0)
