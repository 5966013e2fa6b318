// Docs-vs-defaults: every default a hand-written page, a schema description or a role's --help
// states for a SHADOWPLANE_* variable is the default the role's env schema applies.
// (docs/configuration.md itself is generated from the schemas and checked by docs.test.ts.)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CommonEnv } from '@shadowplane/config';
import { SidecarEnv } from '@shadowplane/sidecar';
import { DuplicatorEnv } from '@shadowplane/duplicator';
import { ControlEnv } from '@shadowplane/control';
import { VerdictEnv } from '@shadowplane/verdict';
import { REPO_ROOT } from '../scripts/lib/processes.js';

type Js = { properties?: Record<string, { default?: unknown; description?: string }> };
const SCHEMAS = {
  common: CommonEnv,
  sidecar: SidecarEnv,
  duplicator: DuplicatorEnv,
  control: ControlEnv,
  verdict: VerdictEnv,
};

/** variable → its schema default as text (the host-name default and variables without one are left out) */
function schemaDefaults(): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of Object.values(SCHEMAS)) {
    const js = z.toJSONSchema(s as z.ZodObject, { io: 'input', unrepresentable: 'any' }) as Js;
    for (const [k, p] of Object.entries(js.properties ?? {}))
      if (p.default !== undefined && p.default !== hostname()) out.set(k, String(p.default));
  }
  return out;
}

/** descriptions of every variable, by name */
function descriptions(): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of Object.values(SCHEMAS)) {
    const js = z.toJSONSchema(s as z.ZodObject, { io: 'input', unrepresentable: 'any' }) as Js;
    for (const [k, p] of Object.entries(js.properties ?? {})) if (p.description) out.set(k, p.description);
  }
  return out;
}

/** a stated value as the schema's text: quotes and trailing punctuation off, units resolved, "none"/"empty" = '' */
const UNITS: Record<string, number> = { KiB: 1024, MiB: 2 ** 20, GiB: 2 ** 30, ms: 1, s: 1000, min: 60_000 };
const normal = (v: string) => {
  const t = v.replace(/[.:]$/, '').replace(/^["']|["']$/g, '');
  // a size or a duration with its unit, as the schema's bytes or ms
  const u = /^(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|ms|s|min)$/.exec(t);
  if (u) return String(Number(u[1]) * UNITS[u[2]!]!);
  return t === 'none' || t === 'empty' ? '' : t;
};

/**
 * `[variable, stated default]` for every "`SHADOWPLANE_X` … default V" in `text` (V in backticks,
 * a number, a URL or host:port, stated after the name and before the next variable or the end of
 * the line), and for every row of a Markdown table with a `default` column whose first cell names
 * a variable.
 */
function statedDefaults(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let defaultCol = -1;
  for (const line of text.split('\n')) {
    const cells = line.trim().startsWith('|')
      ? line
          .trim()
          .slice(1, -1)
          .split(/(?<!\\)\|/)
          .map((c) => c.trim())
      : null;
    if (cells) {
      const header = cells.findIndex((c) => c.toLowerCase() === 'default');
      if (header !== -1) defaultCol = header;
      const name = /^`(SHADOWPLANE_[A-Z0-9_]+)`$/.exec(cells[0] ?? '');
      if (name && defaultCol > 0 && cells[defaultCol] !== undefined) {
        const v = cells[defaultCol]!;
        if (/^`[^`]*`$|^\d/.test(v)) out.push([name[1]!, normal(v.replace(/`/g, ''))]);
      }
      continue;
    }
    defaultCol = -1;
    const names = [...line.matchAll(/SHADOWPLANE_[A-Z0-9_]+/g)];
    names.forEach((m, i) => {
      const tail = line.slice(m.index + m[0].length, names[i + 1]?.index ?? line.length);
      const d =
        /\bdefault(?:s to|:)?\s+(?:is\s+)?(`[^`]+`|\d[\d.]*\s*(?:KiB|MiB|GiB|ms|min|s)\b|\d[^\s),;|]*|[a-z]+:\/\/[^\s),;|`]+)/i.exec(
          tail,
        );
      if (d) out.push([m[0], normal(d[1]!.replace(/`/g, ''))]);
    });
  }
  return out;
}

/** the hand-written pages a reader finds defaults in */
function pages(): string[] {
  const out = ['README.md', 'helm/shadowplane/README.md', 'examples/config/README.md'];
  const generated = new Set(['configuration.md', 'campaign-spec.md', 'metrics.md']);
  for (const f of readdirSync(join(REPO_ROOT, 'docs')))
    if (f.endsWith('.md') && !generated.has(f)) out.push(`docs/${f}`);
  for (const top of ['services', 'libs'])
    for (const d of readdirSync(join(REPO_ROOT, top))) out.push(`${top}/${d}/README.md`);
  return out.filter((p) => existsSync(join(REPO_ROOT, p)));
}

describe('stated defaults match the schemas', () => {
  const defaults = schemaDefaults();
  const check = (where: string, text: string) => {
    const wrong: string[] = [];
    let seen = 0;
    for (const [k, v] of statedDefaults(text)) {
      const want = defaults.get(k);
      if (want === undefined) continue;
      seen++;
      if (v !== want) wrong.push(`${where}: ${k} says default ${v}, the schema applies ${want}`);
    }
    return { wrong, seen };
  };

  it('in the hand-written docs and READMEs', () => {
    const all = pages().map((p) => check(p, readFileSync(join(REPO_ROOT, p), 'utf8')));
    expect(all.flatMap((r) => r.wrong)).toEqual([]);
    expect(all.reduce((a, r) => a + r.seen, 0)).toBeGreaterThan(0);
  });

  it('in the schema descriptions themselves', () => {
    const wrong: string[] = [];
    for (const [k, d] of descriptions()) {
      const m = /\(default ([^)\s,;]+)\)/.exec(d);
      const want = defaults.get(k);
      if (m && want !== undefined && normal(m[1]!) !== want)
        wrong.push(`${k}: description says ${m[1]}, schema ${want}`);
    }
    expect(wrong).toEqual([]);
  });

  it("in every role's --help", () => {
    const bin = join(REPO_ROOT, 'services', 'shadowplane', 'bin', 'shadowplane.mjs');
    const wrong: string[] = [];
    let seen = 0;
    for (const role of ['sidecar', 'duplicator', 'control', 'verdict']) {
      const r = spawnSync(process.execPath, [bin, role, '--help'], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, `${role} --help: ${r.stderr}`).toBe(0);
      // help wraps text: a variable's description may continue on the next lines
      const joined = r.stdout.replace(/\n\s{8,}(?=\S)/g, ' ');
      const c = check(`shadowplane ${role} --help`, joined);
      wrong.push(...c.wrong);
      seen += c.seen;
    }
    expect(wrong).toEqual([]);
    expect(seen).toBeGreaterThan(3);
  }, 240_000);
});
