# Verdict area: scoring, evidence (fold, bundle, verify), reports storage, verdict service.
.PHONY: test-verdict verdict-html

test-verdict: install ## verdict area tests (scoring, evidence, reports, verdict service; needs /usr/bin/chromium for the HTML test)
	npx vitest run libs/scoring libs/evidence libs/reports services/verdict

verdict-html: install ## render a sample report to test-artifacts/verdict-report.{html,png} in headless Chromium
	npx vitest run libs/reports/src/html.int.test.ts
