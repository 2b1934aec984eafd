"""What a gunicorn worker of the web process does once it has loaded the service
(messaging_project/gunicorn_config.py's post_worker_init), in a process of its own: the
suite's interpreter has imported and collected far more than a worker."""

import json
import subprocess
import sys

from tests.tasks.processes import ROOT

WORKER_INIT = """
import gc, json, sys
import django
django.setup()
from messaging_project import gunicorn_config
views = "contacts.api.views"
before = views in sys.modules
gunicorn_config.post_worker_init(None)
print(json.dumps({"views_before": before, "views_after": views in sys.modules,
                  "frozen": gc.get_freeze_count(), "left": len(gc.get_objects())}))
"""


def test_a_worker_loads_its_views_and_keeps_them_out_of_the_collectors_sight():
    done = subprocess.run(
        [sys.executable, "-c", WORKER_INIT], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert not found["views_before"] and found["views_after"]
    # The loaded service (tens of thousands of objects) frozen, next to nothing left.
    assert found["frozen"] > 20_000
    assert found["left"] < found["frozen"] / 10
