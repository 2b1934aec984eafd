"""The deadlines' watchdog (messaging_project/core/deadlines.py) on real sockets: each
deadline cut when it passes, whatever came and went before and after it, none cut early,
and its heap kept to the deadlines still open."""

import socket
import threading
import time

import pytest

from messaging_project.core.deadlines import Deadline, Watchdog


@pytest.fixture
def watchdog():
    return Watchdog()


def watched(watchdog: Watchdog, seconds: float) -> tuple[Deadline, socket.socket]:
    """A deadline of `seconds` watching one end of a socket pair; the other end returned."""
    ours, theirs = socket.socketpair()
    deadline = Deadline(seconds)
    watchdog.add(deadline)
    watchdog.watch(deadline, ours)
    return deadline, theirs


def cut_within(deadline: Deadline, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while not deadline.expired and time.monotonic() < end:
        time.sleep(0.005)
    return bool(deadline.expired)


def test_a_deadline_that_ends_first_is_cut_although_the_watchdog_waits_for_a_later_one(
    watchdog,
):
    later, _ = watched(watchdog, 30)
    time.sleep(0.05)  # the thread now sleeps until `later`
    sooner, theirs = watched(watchdog, 0.1)
    assert cut_within(sooner, 2)
    assert theirs.recv(1) == b""  # the watched socket was shut down
    assert not later.expired


def test_removed_deadlines_are_not_cut_and_the_next_one_still_is(watchdog):
    removed = [watched(watchdog, 0.05)[0] for _ in range(50)]
    for deadline in removed:
        watchdog.remove(deadline)
    kept, _ = watched(watchdog, 0.15)
    assert cut_within(kept, 2)
    assert not any(deadline.expired for deadline in removed)


def test_stop_all_cuts_the_present_deadlines_and_the_future_ones(watchdog):
    present, _ = watched(watchdog, 30)
    watchdog.stop_all(0.05)
    assert cut_within(present, 2)
    future, _ = watched(watchdog, 30)
    assert cut_within(future, 2)


def test_many_calls_at_once_keep_the_heap_to_the_open_deadlines(watchdog):
    """Hundreds of calls a second each add and remove a deadline, from many threads and
    without a lock: the removed ones do not pile up, none of them is cut, and an open
    one added after them still is."""

    made: list[Deadline] = []

    def calls() -> None:
        for _ in range(2000):
            deadline = Deadline(30)
            watchdog.add(deadline)
            watchdog.remove(deadline)
            made.append(deadline)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    open_one, _ = watched(watchdog, 0.1)
    assert cut_within(open_one, 2)
    assert len(watchdog.due) <= 1000
    assert not watchdog.added
    assert len(made) == 8000
    assert not any(deadline.expired for deadline in made)


def test_a_deadline_added_while_the_watchdog_sleeps_with_none_open_is_cut(watchdog):
    first, _ = watched(watchdog, 30)
    watchdog.remove(first)
    time.sleep(0.2)  # the thread dropped it and sleeps until a deadline is added
    assert watchdog.idle
    later, theirs = watched(watchdog, 0.1)
    assert cut_within(later, 2)
    assert theirs.recv(1) == b""
    assert not first.expired


def test_a_socket_watched_after_its_deadline_was_cut_is_shut_down_at_once(watchdog):
    deadline, _ = watched(watchdog, 0.05)
    assert cut_within(deadline, 2)
    ours, theirs = socket.socketpair()
    watchdog.watch(deadline, ours)
    assert theirs.recv(1) == b""
