# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
# Threads overlap the waits on WhatsApp's API. 32 per worker measured best on 2 cores
# (docs/performance.md); 2 x 32 database connections, and the task worker's
# TASK_WORKER_THREADS (16) and 2 more, fit PostgreSQL's default 100.
# --reuse-port gives each worker its own listening socket and lets the kernel spread
# connections over them; with one shared socket, a burst of keep-alive connections
# could all land on one worker and halve the throughput (docs/performance.md).
WORKERS ?= 2
THREADS ?= 32

.PHONY: install run test test-fast lint format bench bench-quick bench-media bench-events bench-instructions bench-campaigns loadtest

install: $(STAMP)

# Reinstalls only when pyproject.toml changed since the last install.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check ".[test]"
	touch $(STAMP)

# The Procfile's two processes, the web server (gunicorn) and the task worker, under
# honcho: their output interleaved, and Ctrl-C (or either one stopping) stops both.
run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	$(BIN)/python manage.py getting_started --port $(PORT)
	PATH="$(CURDIR)/$(BIN):$$PATH" PORT=$(PORT) WORKERS=$(WORKERS) THREADS=$(THREADS) \
		$(BIN)/honcho start

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The suite without the tests marked slow (gunicorn, the browser, fuzzing): for while
# developing; `make test` and CI run everything.
test-fast: install
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python manage.py spectacular --validate --fail-on-warn --file /dev/null

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The benchmark (docs/performance.md): scratch PostgreSQL database, `make run`, wrk.
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q --disable-pip-version-check ".[test,bench]"
	touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# A smoke run for CI: small data, two seconds a scenario; never fails on timing.
bench-quick: install $(BENCH_STAMP)
	$(BIN)/python bench/run.py --quick $(BENCH_ARGS)

# Inbound media (docs/media.md): a 5 MB video, the webhook's answer and the worker's memory.
bench-media: install
	$(BIN)/python -m bench.media $(BENCH_ARGS)

# Event webhooks' fan-out and throughput (docs/events.md), and campaigns' pacing at the
# stand-in (docs/campaigns.md); each on a scratch PostgreSQL database.
bench-events: install
	$(BIN)/python -m bench.events $(BENCH_ARGS)

# The inbound webhook's Python instructions with and without event endpoints, counted by
# valgrind's callgrind: the same to 0.1% whatever else the machine does (docs/performance.md).
bench-instructions: install
	$(BIN)/python -m bench.instructions $(BENCH_ARGS)

bench-campaigns: install
	$(BIN)/python -m bench.campaigns $(BENCH_ARGS)

# The load test (docs/reliability.md): a scratch database, gunicorn, a fixed number of
# mixed requests on loopback, then a consistency check; non-zero when anything is off.
loadtest: install
	$(BIN)/python loadtest/run.py $(LOADTEST_ARGS)
