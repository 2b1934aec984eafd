"""Fixtures for campaigns: sending in the test's thread (one thread per sender task, as
SQLite in a test transaction needs), a fast rate, and the bench's Cloud API stand-in in
a process of its own for the tests that measure the pace."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from campaigns.sender import sends_under_way
from devtools.loopback import free_port, wait_until_listening
from tests.factories import ContactFactory, ContactGroupFactory
from tests.tasks.processes import ROOT

TEMPLATE = {"name": "order_update", "language": {"code": "en_US"}}


@pytest.fixture(autouse=True)
def inline_senders(settings):
    settings.CAMPAIGN_THREADS = 1
    settings.CAMPAIGN_SENDERS = 1
    yield
    # Every sender gave back the room it reserved, whatever happened to its sends (reset
    # either way, so that one test's leak fails that test, not every one after it).
    leaked, sends_under_way.count = sends_under_way.count, 0
    assert leaked == 0


@pytest.fixture
def group(org_a):
    group = ContactGroupFactory(organization=org_a, name="Customers")
    for n in range(3):
        ContactFactory(organization=org_a, contact_group=group, phone=f"4915123456{n:03d}")
    return group


def sends(graph) -> list:
    """The messages that reached the fake Cloud API."""
    return [r for r in graph.requests if r.method == "POST" and r.path.endswith("/messages")]


def body(**values):
    return {"name": "Spring sale", "template": TEMPLATE, "rate": 1000, **values}


@dataclasses.dataclass
class StandIn:
    url: str
    arrivals_file: Path

    def arrivals(self) -> list[tuple[str, float]]:
        """(to, when) of each send, when being the kernel's receive time."""
        rows = [line.split("\t") for line in self.arrivals_file.read_text().splitlines()]
        return [(to, float(at)) for to, at in rows]


@pytest.fixture
def stand_in(tmp_path):
    """The bench's Cloud API stand-in (bench/cloud_stub.py, 0.1 s a send) in a process of
    its own, which stamps each send with the kernel's receive time: a clock read in this
    busy process can be late by tens of milliseconds and bunch arrivals that were not."""
    port = free_port()
    arrivals = tmp_path / "arrivals.tsv"
    arrivals.touch()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.cloud_stub", str(port), "0.1", str(arrivals)], cwd=ROOT
    )
    try:
        assert wait_until_listening(port, timeout=60, process=process)
        yield StandIn(url=f"http://127.0.0.1:{port}/v21.0", arrivals_file=arrivals)
    finally:
        process.terminate()
        process.wait(10)
