import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedDocs, scanMetrics } from '../scripts/gen-docs.js';
import { REPO_ROOT } from '../scripts/lib/processes.js';

describe('generated operator docs', () => {
  it('docs/configuration.md, campaign-spec.md and metrics.md match the schemas and metric definitions (run npx tsx scripts/gen-docs.ts)', () => {
    for (const [path, text] of Object.entries(generatedDocs())) {
      expect(readFileSync(join(REPO_ROOT, path), 'utf8'), path).toBe(text);
    }
  });

  it('finds the metrics every role is known to export', () => {
    const names = scanMetrics().map((m) => m.name);
    for (const n of [
      'shadowplane_sidecar_captures_total',
      'shadowplane_control_http_requests_total',
      'shadowplane_verdict_reports_written_total',
    ]) {
      expect(names).toContain(n);
    }
    expect(names.some((n) => n.startsWith('shadowplane_duplicator_'))).toBe(true);
  });
});
