// Adversarial time-per-byte benchmark of every redaction rule: `npm run bench:redact`.
//
// Each rule (services/sidecar/src/redact.ts: REDACTION_RULES on RE2JS, BOUNDED_V8_PATTERNS) runs alone over strings built to
// make a backtracking engine work hard — near misses of every rule's shape repeated up to
// BENCH_REDACT_MAX bytes (1 MiB) — at a small and a large size; then the whole redactor does the
// same over each string. A linear-time rule spends the same time per byte at both sizes: the table
// shows ns/byte at each size and their ratio (large ÷ small; ~1 is flat, a quadratic rule would
// show ~size ratio). The former backtracking email pattern is timed beside them on its own worst
// case as the reference. Knobs: BENCH_REDACT_MIN (16384), BENCH_REDACT_MAX (1048576),
// BENCH_REDACT_REPS (3, best of). Output: the table on stdout, JSON in loadtests/out/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyNamedRule, BOUNDED_V8_PATTERNS, redactText, REDACTION_RULES } from '../services/sidecar/src/redact.js';
import { REPO } from './lib/procs.js';

const MIN = Number(process.env.BENCH_REDACT_MIN ?? 16 * 1024);
const MAX = Number(process.env.BENCH_REDACT_MAX ?? 1024 * 1024);
const REPS = Number(process.env.BENCH_REDACT_REPS ?? 3);

/** Near-miss units, each repeated to the size: every one is the start of some rule without its end. */
const FAMILIES: Record<string, string> = {
  local_part: 'a', // email: a huge local part and no domain
  at_run: 'a@', // email: domains that never get a TLD
  jwt_heads: 'eyJ', // JWT: starts everywhere, no dots
  key_prefix: 'sk-', // OpenAI keys: prefixes with no body
  bearer: 'Bearer ', // bearer: scheme, no token
  digits: '1', // card / phone / IBAN digit runs too long to match
  spaced_digits: '1 ', // grouped card shapes
  dotted: '1.', // IPv4 near misses
  colons: 'a:', // IPv6 near misses
  hex_groups: 'ff:ff:', // IPv6 with too many groups
  kv: 'password=', // key=value with the value always another key
  url: 'http://a:', // userinfo without '@'
  pem: '-----BEGIN A-----', // PEM blocks never closed
  basic: 'Basic QQ', // Basic with undecodable credentials
  plus: '+1 ', // E.164 near misses
  iban: 'GB82 ', // IBAN country and check digits, no BBAN
};

function build(unit: string, n: number): string {
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

/** Best of REPS, ns per byte. */
function nsPerByte(fn: (s: string) => unknown, s: string): number {
  let best = Infinity;
  for (let i = 0; i < REPS; i++) {
    const t = process.hrtime.bigint();
    fn(s);
    best = Math.min(best, Number(process.hrtime.bigint() - t));
  }
  return best / s.length;
}

// The email pattern as it was before RE2JS (V8, backtracking): the reference for "not linear".
const OLD_EMAIL =
  /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b/g;

function main(): void {
  const rows: { rule: string; family: string; small: number; large: number; ratio: number }[] = [];
  const add = (rule: string, fn: (s: string) => unknown) => {
    let worst: (typeof rows)[number] | null = null;
    for (const [family, unit] of Object.entries(FAMILIES)) {
      const small = nsPerByte(fn, build(unit, MIN));
      const large = nsPerByte(fn, build(unit, MAX));
      const row = { rule, family, small, large, ratio: large / small };
      rows.push(row);
      if (worst === null || row.large > worst.large) worst = row;
    }
    const w = worst!;
    process.stdout.write(
      `${rule.padEnd(18)} worst family ${w.family.padEnd(14)} ${w.small.toFixed(1).padStart(8)} ns/B @ ${MIN} B  ${w.large.toFixed(1).padStart(8)} ns/B @ ${MAX} B  ratio ${w.ratio.toFixed(2)}\n`,
    );
  };
  process.stdout.write(
    `redaction rules, adversarial inputs, ns per byte (best of ${REPS}); ratio = large / small (flat ≈ 1; quadratic ≈ ${(MAX / MIN).toFixed(0)})\n`,
  );
  for (const r of REDACTION_RULES) add(r.name, (s) => applyNamedRule(r.name, s));
  for (const r of BOUNDED_V8_PATTERNS) add(`${r.name} (V8)`, (s) => applyNamedRule(r.name, s));
  add('whole redactor', (s) => redactText(s));
  // the reference: the old backtracking email pattern on its worst case, at sizes it can finish
  const oldSmall = nsPerByte((s) => s.replace(OLD_EMAIL, '<EMAIL>'), build('a', 4096) + '@');
  const oldLarge = nsPerByte((s) => s.replace(OLD_EMAIL, '<EMAIL>'), build('a', 65536) + '@');
  process.stdout.write(
    `reference: backtracking email on 'a…a@': ${oldSmall.toFixed(1)} ns/B @ 4096 B, ${oldLarge.toFixed(1)} ns/B @ 65536 B, ratio ${(oldLarge / oldSmall).toFixed(2)}\n`,
  );
  const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  process.stdout.write(
    `largest ratio over every rule and family: ${worst.ratio.toFixed(2)} (${worst.rule}, ${worst.family})\n`,
  );
  const dir = join(REPO, 'loadtests', 'out');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `redact-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify({ min: MIN, max: MAX, reps: REPS, rows, reference: { oldSmall, oldLarge } }, null, 2),
  );
  process.stdout.write(`raw: ${file}\n`);
}

main();
