# libs/stats: benchmarks and calibration runs (never part of `make test`).
.PHONY: bench-fold bench-fold-cli bench-calibration bench-sequential bench-sequential-frontier stats-numpy

NUMPY_PYTHON ?= /usr/bin/python3

stats-numpy: ## ensure Debian's python3-numpy is installed for the numpy side of bench-fold
	@$(NUMPY_PYTHON) -c 'import numpy' 2>/dev/null || { \
	  echo "installing python3-numpy (apt)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy; }

bench-fold: install stats-numpy ## fold + 2000-resample bootstrap, 100k items x 3 arms: Node (libs/stats) vs numpy
	BENCH_PYTHON=$(NUMPY_PYTHON) npx tsx bench/fold.ts

bench-fold-cli: install stats-numpy build node24 ## the whole `shadowplane fold --bundle` (compiled, this Node and Node 24) on 100k items x 3 arms vs the same pipeline in numpy (wall, CPU, peak RSS)
	BENCH_PYTHON=$(NUMPY_PYTHON) BENCH_NODE24=$(NODE24_BIN)/node npx tsx bench/fold-cli.ts

bench-calibration: install ## calibration table of the verdict statistics (type-I, coverage, MDE, powered-pass), written to docs/statistics.md
	npm run -s bench:calibration -- --write

bench-sequential: install ## sequential and group-sequential vs fixed-n stopping: paid items and dollars by candidate, written to docs/statistics.md
	npm run -s bench:sequential -- --write

bench-sequential-frontier: install ## the least items any stopping rule can pay for an equal candidate at equal power (SPRT bound, spending families), written to docs/statistics.md
	npm run -s bench:sequential-frontier -- --write
