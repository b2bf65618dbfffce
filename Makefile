# lakeinlet: `make demo` and `make test` do all the set-up on a machine with Python 3.11+, Java 17
# and Maven.
PYTHON ?= python3
VENV   ?= .venv
# Jars go where the jobs look by default (the user's cache), so the README's commands find them.
JARS   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/lakeinlet/jars
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# checkov lives in its own virtualenv: it pins an older boto3 than lakeinlet uses.
TOOLS  ?= .venv-tools
export LAKEINLET_JARS := $(abspath $(JARS))
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export PYSPARK_DRIVER_PYTHON := $(abspath $(BIN)/python)
# Tests and the demo keep Spark's driver on loopback (override for a real cluster).
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: install jars demo test lint unit bench chaos docs checkov terraform clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "lakeinlet needs Python 3.11 or newer, found " + sys.version'
	@command -v java >/dev/null || { echo "Java 17 is needed for Spark: install a JDK (e.g. apt-get install openjdk-17-jre-headless)"; exit 2; }
	@command -v mvn >/dev/null || { echo "Maven is needed to fetch Spark's jars from Maven Central: install it (e.g. apt-get install maven)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks]'
	@touch $@

# Jars come from Maven Central with the ordinary Maven client (cached in $(JARS)/<group>/).
jars: install
	$(BIN)/lakeinlet jars --dest $(JARS)

# The runtime groups: the README's "Running the jobs" block loads Delta and Hudi tables after it.
demo: install
	$(BIN)/lakeinlet jars --dest $(JARS) --only s3a --only hudi --only iceberg
	$(BIN)/python -m lakeinlet.dev.demo

lint: install
	$(BIN)/ruff check lakeinlet sources incremental chaos tests bench
	$(BIN)/mypy chaos
	@# mypy cannot follow the package-dir map (sources/ is lakeinlet.sources): check the package
	@# through a tree of links shaped as it is installed.
	rm -rf .mypy-tree && mkdir -p .mypy-tree/lakeinlet
	ln -s $(CURDIR)/lakeinlet/* .mypy-tree/lakeinlet/
	ln -s $(CURDIR)/sources .mypy-tree/lakeinlet/sources && ln -s $(CURDIR)/incremental .mypy-tree/lakeinlet/incremental
	cd .mypy-tree && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p lakeinlet

$(TOOLS)/bin/checkov:
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet 'checkov>=3.2,<4'

checkov: $(TOOLS)/bin/checkov
	$(TOOLS)/bin/checkov -d infra --framework terraform --skip-download --compact --quiet

terraform: install jars $(TOOLS)/bin/checkov
	$(BIN)/python -m pytest -m terraform

# Every tier (a bare `pytest` runs only the fast ones: unit and contract), then the acceptance suite
# once more with every fast path off, so the plain paths they shadow stay correct.
test: install jars lint $(TOOLS)/bin/checkov
	$(BIN)/python -m pytest -m ""
	LAKEINLET_FAST_PATHS=off $(BIN)/python -m pytest -m "" tests/spark/test_formats.py

unit: install
	$(BIN)/python -m pytest -m unit

# Every benchmark's quick variant (figures and ratios against baselines measured in the same run);
# drop --quick (python bench/<name>.py) for the full sizes the README's Performance section quotes.
bench: install jars
	$(BIN)/python bench/poller.py --quick
	$(BIN)/python bench/loader_throughput.py --quick
	$(BIN)/python bench/freshness.py --quick
	$(BIN)/python bench/changelog_history.py --quick
	$(BIN)/python bench/scaleout.py --quick
	$(BIN)/python bench/api_cost.py --quick
	$(BIN)/python bench/loader_large.py --quick
	$(BIN)/python bench/lineage_rows.py --quick

# A bounded, seeded chaos campaign (faults, SIGKILLs, every target format) and its table.
SEED    ?= 1
RUNS    ?= 3
MINUTES ?= 19
chaos: install jars
	$(BIN)/python -m chaos ensure >/dev/null
	$(BIN)/python -m chaos.campaign --seed $(SEED) --runs $(RUNS) --minutes $(MINUTES)

docs: install
	$(BIN)/lakeinlet config-reference --update README.md

clean:
	rm -rf $(VENV) $(TOOLS) .pytest_cache .mypy_cache .ruff_cache   # the jar cache stays: `rm -rf $(JARS)`
