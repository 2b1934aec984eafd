# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
# Threads overlap the waits on WhatsApp's API; see docs/operations.md.
WORKERS ?= 2
THREADS ?= 16

.PHONY: install run test lint format bench

install: $(STAMP)

# Reinstalls only when pyproject.toml changed since the last install.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check ".[test]"
	touch $(STAMP)

run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	$(BIN)/python manage.py getting_started --port $(PORT)
	$(BIN)/gunicorn messaging_project.wsgi --bind 127.0.0.1:$(PORT) --no-control-socket \
		--worker-class gthread --workers $(WORKERS) --threads $(THREADS) \
		--access-logfile - --graceful-timeout 10

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python manage.py makemigrations --check --dry-run

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
