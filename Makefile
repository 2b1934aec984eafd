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

.PHONY: install run test test-fast lint format messages screenshots bench bench-quick loadtest

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

# The admin's translations (docs/admin.md): the strings marked in the apps and templates
# gathered into locale/<language>/LC_MESSAGES/django.po, for the translator; then the
# .mo files the service reads, compiled and committed with them (so installing needs no
# gettext). tests/admin/test_translations.py fails while a string lacks a translation.
# Needs GNU gettext (Debian's `gettext` package), as .ci/run installs it.
MESSAGE_LANGUAGES := es pt_BR
MESSAGE_IGNORE := -i tests -i bench -i loadtest -i devtools -i docs -i var -i .venv

messages: install
	@command -v xgettext >/dev/null || { echo "make messages needs GNU gettext: apt-get install gettext"; exit 1; }
	$(BIN)/python manage.py makemessages $(addprefix -l ,$(MESSAGE_LANGUAGES)) \
		$(MESSAGE_IGNORE) --add-location file --no-obsolete
	$(BIN)/python manage.py compilemessages $(addprefix -l ,$(MESSAGE_LANGUAGES)) $(MESSAGE_IGNORE)

# The pictures of docs/admin.md (docs/img/admin-*.png): the admin's browser tests, with
# Debian's chromium and chromium-driver, writing their screenshots.
screenshots: install
	WRITE_SCREENSHOTS=1 $(BIN)/python -m pytest tests/admin/test_browser.py \
		tests/admin/test_screenshots.py

# The benchmark (docs/performance.md): every scenario, each on its own scratch PostgreSQL
# database and `make run`, driven by wrk; or those named, `make bench ONLY=events,send`.
# Writes bench/results/latest.json and docs/img/bench.png.
BENCH_STAMP := $(VENV)/.bench-installed
BENCH_ONLY := $(if $(ONLY),--only $(ONLY))

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q --disable-pip-version-check ".[test,bench]"
	touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(BIN)/python -m bench.run $(BENCH_ONLY) $(BENCH_ARGS)

# The smoke run CI makes: small data, a few seconds a scenario; fails when a scenario
# fails, never on a target. Writes bench/results/quick.json.
bench-quick: install $(BENCH_STAMP)
	$(BIN)/python -m bench.run --quick $(BENCH_ONLY) $(BENCH_ARGS)

# The load test (docs/reliability.md): a scratch database, gunicorn, a fixed number of
# mixed requests on loopback, then a consistency check; non-zero when anything is off.
loadtest: install
	$(BIN)/python loadtest/run.py $(LOADTEST_ARGS)
