# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
# gunicorn's processes and threads (messaging_project/gunicorn_config.py). Threads overlap
# the waits on WhatsApp's API; 32 per worker measured best on 2 cores
# (docs/performance.md). Each thread holds a database connection, as does each of the
# task worker's, and the worker 4 more (docs/operations.md, "Connections"):
#   WEB_SERVERS x WORKERS x THREADS + WORKER_PROCESSES x (TASK_WORKER_THREADS + 4)
#   = 1 x 2 x 32 + 1 x (16 + 4) = 84, within PostgreSQL's default 100 less 3 reserved.
WORKERS ?= 2
THREADS ?= 32
# One metrics view: the web and the worker count into this directory (prometheus_client's
# multiprocess mode), emptied as both start. A command run beside them is counted too
# when it has the same PROMETHEUS_MULTIPROC_DIR.
PROMETHEUS_MULTIPROC_DIR ?= $(or $(VAR_DIR),$(CURDIR)/var)/metrics

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
	mkdir -p "$(PROMETHEUS_MULTIPROC_DIR)"
	find "$(PROMETHEUS_MULTIPROC_DIR)" -mindepth 1 -delete
	PATH="$(CURDIR)/$(BIN):$$PATH" PORT=$(PORT) WORKERS=$(WORKERS) THREADS=$(THREADS) \
		PROMETHEUS_MULTIPROC_DIR="$(PROMETHEUS_MULTIPROC_DIR)" $(BIN)/honcho start

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The suite without the tests marked slow (gunicorn, the browser, fuzzing): for while
# developing; `make test` and CI run everything.
test-fast: install
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
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
		tests/admin/test_screenshots.py tests/analytics/test_screenshot.py

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
