# lakeinlet: `make demo` and `make test` do all the set-up on a machine with Python 3.11+, Java 17
# and Maven.
PYTHON ?= python3
VENV   ?= .venv
# Jars go where the jobs look by default (the user's cache), so the README's commands find them.
JARS   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/lakeinlet/jars
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The Spark 4.1 line: its own virtualenv and jar folder (`make test-spark4`).
VENV4  ?= .venv-spark4
JARS4  ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/lakeinlet/jars-spark4
STAMP4 := $(VENV4)/.installed-stamp
# checkov lives in its own virtualenv: it pins an older boto3 than lakeinlet uses.
TOOLS  ?= .venv-tools
export LAKEINLET_JARS := $(abspath $(JARS))
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export PYSPARK_DRIVER_PYTHON := $(abspath $(BIN)/python)
# Tests and the demo keep Spark's driver on loopback (override for a real cluster).
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: install jars demo test test-spark4 test-all lint unit bench bench-smoke bench-lines chaos docs docs-check checkov terraform clean

install: $(STAMP)

# $(call venv,folder,spark extra): a virtualenv with lakeinlet (editable) on one Spark line.
define venv
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "lakeinlet needs Python 3.11 or newer, found " + sys.version'
	@command -v java >/dev/null || { echo "Java 17 is needed for Spark: install a JDK (e.g. apt-get install openjdk-17-jre-headless)"; exit 2; }
	@command -v mvn >/dev/null || { echo "Maven is needed to fetch Spark's jars from Maven Central: install it (e.g. apt-get install maven)"; exit 2; }
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	$(1)/bin/python -m pip install --quiet -e '.[dev,notebooks,docs,$(2)]'
	@touch $(1)/.installed-stamp
endef

$(STAMP): pyproject.toml setup.py
	$(call venv,$(VENV),spark35)

$(STAMP4): pyproject.toml setup.py
	$(call venv,$(VENV4),spark41)

# Jars come from Maven Central with the ordinary Maven client (cached in $(JARS)/<group>/).
jars: install
	$(BIN)/lakeinlet jars --dest $(JARS)

# The runtime groups: the README's "Running the jobs" block loads Delta and Hudi tables after it.
demo: install
	$(BIN)/lakeinlet jars --dest $(JARS) --only s3a --only hudi --only iceberg
	$(BIN)/python -m lakeinlet.dev.demo

lint: install docs-check
	$(BIN)/ruff check lakeinlet sources incremental chaos tests bench docgen docs/samples
	$(BIN)/mypy chaos
	@# mypy cannot follow the package-dir map (sources/ is lakeinlet.sources): check the package
	@# through a tree of links shaped as it is installed.
	rm -rf .mypy-tree && mkdir -p .mypy-tree/lakeinlet
	ln -s $(CURDIR)/lakeinlet/* .mypy-tree/lakeinlet/
	ln -s $(CURDIR)/sources .mypy-tree/lakeinlet/sources && ln -s $(CURDIR)/incremental .mypy-tree/lakeinlet/incremental
	cd .mypy-tree && $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml -p lakeinlet
	@# The benchmarks import their siblings (loader_common, _localstack) and the package as installed.
	MYPYPATH=$(CURDIR)/.mypy-tree:$(CURDIR)/bench $(BIN)/mypy --config-file pyproject.toml bench

$(TOOLS)/bin/checkov:
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet 'checkov>=3.2,<4'

checkov: $(TOOLS)/bin/checkov
	$(TOOLS)/bin/checkov -d infra --framework terraform --skip-download --compact --quiet

terraform: install jars $(TOOLS)/bin/checkov
	$(BIN)/python -m pytest -m terraform

# Tests run on WORKERS pytest-xdist processes, each test file one unit, the heaviest tiers first
# (tests/schedule.py); the run ends with each tier's time.
WORKERS ?= 2
XDIST    = -n $(WORKERS)

# Every tier (a bare `pytest` runs only the fast ones: unit and contract); the acceptance suite runs
# with the fast paths on and off (tests/spark/test_formats.py).
test: install jars lint $(TOOLS)/bin/checkov
	$(BIN)/python -m pytest -m "" $(XDIST) --durations=30

# The Spark 4.1 line (Scala 2.13, Hadoop 3.4, no Hudi): the unit, contract, spark, integration and
# cluster tiers, in their own virtualenv with their own jars. The other tiers (notebooks, terraform,
# packaging, chaos) exercise no engine code of their own and run once, on the 3.5 line.
SPARK4_ENV = LAKEINLET_JARS=$(abspath $(JARS4)) PYSPARK_PYTHON=$(abspath $(VENV4))/bin/python \
             PYSPARK_DRIVER_PYTHON=$(abspath $(VENV4))/bin/python
test-spark4: $(STAMP4)
	$(SPARK4_ENV) $(VENV4)/bin/lakeinlet jars --dest $(JARS4)
	$(SPARK4_ENV) $(VENV4)/bin/python -m pytest -m "unit or contract or engine" $(XDIST) --durations=30

# Both lines with the slow extras `make test` leaves out on the 4.1 line (the chaos slice, the cluster
# kill of an Iceberg load): run it before resolving an issue that touches them.
test-all: export LAKEINLET_TEST_ALL = 1
test-all: test test-spark4

unit: install
	$(BIN)/python -m pytest -m unit

# Every benchmark's quick variant (figures and ratios against baselines measured in the same run);
# drop --quick (python bench/<name>.py) for the full sizes docs/operate/performance.md quotes; --json PATH
# writes a run's header (machine, date, load) and table, as bench/results/ keeps them.
bench: install jars
	$(BIN)/python bench/poller.py --quick
	$(BIN)/python bench/loader_throughput.py --quick
	$(BIN)/python bench/freshness.py --quick
	$(BIN)/python bench/changelog_history.py --quick
	$(BIN)/python bench/scaleout.py --quick
	$(BIN)/python bench/api_cost.py --quick
	$(BIN)/python bench/loader_large.py --quick
	$(BIN)/python bench/lineage_rows.py --quick
	$(BIN)/python bench/routes.py --quick
	$(BIN)/python bench/compaction.py --quick
	$(BIN)/python bench/merge.py --quick

# Every benchmark once on tiny inputs in one process: that each still runs (figures mean nothing);
# tests/integration/test_bench_smoke.py runs it in `make test`.
bench-smoke: install jars
	$(BIN)/python bench/smoke.py

# The loader against plain Spark per format on each Spark line, one after the other in one run.
bench-lines: install jars $(STAMP4)
	LAKEINLET_JARS=$(abspath $(JARS4)) $(VENV4)/bin/lakeinlet jars --dest $(JARS4)
	$(BIN)/python bench/lines.py --quick --jars 3.5=$(abspath $(JARS)) --jars 4.1=$(abspath $(JARS4)) \
	    --venv 3.5=$(abspath $(VENV)) --venv 4.1=$(abspath $(VENV4))

# A bounded, seeded chaos campaign (faults, SIGKILLs, every target format) and its table.
SEED    ?= 1
RUNS    ?= 3
MINUTES ?= 19
chaos: install jars
	$(BIN)/python -m chaos ensure >/dev/null
	$(BIN)/python -m chaos.campaign --seed $(SEED) --runs $(RUNS) --minutes $(MINUTES)

# The docs site: the generated pages (reference, performance) rewritten from the code and bench/results/,
# then the site built into site/ (`python -m http.server -d site --bind 127.0.0.1` to look at it).
export NO_MKDOCS_2_WARNING := 1
docs: install
	$(BIN)/python -m docgen
	$(BIN)/mkdocs build --strict

# In `make lint` (so in `make test`): the site builds with no broken link or missing page, and no
# generated page is stale (tests/unit/test_docs_reference.py says the same in the fast tier).
docs-check: install
	$(BIN)/python -m docgen --check
	$(BIN)/mkdocs build --strict --quiet --site-dir .site-check

clean:
	rm -rf $(VENV) $(VENV4) $(TOOLS) .pytest_cache .mypy_cache .ruff_cache site .site-check   # the jar caches stay: `rm -rf $(JARS) $(JARS4)`
