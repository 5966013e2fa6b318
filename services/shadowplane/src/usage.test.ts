// `shadowplane usage` run as a real subprocess on every recorded fixture must print the same values
// as the hand-read table that libs/providers' fixture test checks (libs/providers/test/fixture-expectations.json).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = `${ROOT}services/shadowplane/bin/shadowplane.mjs`;
const EXPECTED = JSON.parse(readFileSync(`${ROOT}libs/providers/test/fixture-expectations.json`, 'utf8')) as {
  prices_flag: string;
  bodies: Array<Record<string, any> & { file: string; api: string; status: number; sidecar: boolean }>;
};

async function usage(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const p = run(process.execPath, [BIN, 'usage', ...args], { cwd: ROOT, timeout: 60_000 });
    if (input !== undefined) {
      p.child.stdin?.end(input);
    }
    const { stdout, stderr } = await p;
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

describe('shadowplane usage (subprocess)', () => {
  const results = new Map<string, { code: number; stdout: string; stderr: string }>();

  beforeAll(async () => {
    // One subprocess per (api, assumed status) group — several FILEs print JSON Lines in order —
    // so the suite starts 9 processes, not 20.
    const groups = new Map<string, typeof EXPECTED.bodies>();
    for (const b of EXPECTED.bodies) {
      const key = `${b.api}|${b.sidecar ? 'sidecar' : b.status}`;
      groups.set(key, [...(groups.get(key) ?? []), b]);
    }
    const limit = pLimit(3);
    await Promise.all(
      [...groups.values()].map((bodies) =>
        limit(async () => {
          const b0 = bodies[0]!;
          const args = [
            '--api',
            b0.api,
            '--prices',
            EXPECTED.prices_flag,
            ...(b0.sidecar ? [] : ['--status', String(b0.status)]),
            ...bodies.map((b) => `test/fixtures/providers/${b.file}`),
          ];
          const res = await usage(args);
          const lines = res.stdout.split('\n').filter((l) => l !== '');
          const docs = bodies.length === 1 ? [res.stdout] : lines;
          expect(docs.length).toBe(bodies.length);
          bodies.forEach((b, i) => results.set(b.file, { code: res.code, stdout: docs[i]!, stderr: res.stderr }));
        }),
      ),
    );
  }, 180_000);

  for (const exp of EXPECTED.bodies) {
    it(`${exp.file}: prints the table's usage, cost, echo, abandoned and error class`, () => {
      const res = results.get(exp.file)!;
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const out = JSON.parse(res.stdout) as Record<string, any>;
      const { raw, ...usageFields } = out['usage'];
      expect(usageFields).toEqual(exp['usage']);
      expect(raw === null).toBe(exp['abandoned'] === true || exp.status !== 200);
      expect(out['cost']).toEqual(exp['cost']);
      expect(out['api']).toBe(exp.api);
      expect(out['http_status']).toBe(exp.status);
      expect(out['stream']).toBe(exp['stream']);
      expect(out['provider_cost_usd']).toBe(exp['provider_cost_usd']);
      expect(out['upstream']).toBe(exp['upstream']);
      expect(out['model_echo']).toBe(exp['model']);
      expect(out['response_id']).toBe(exp['response_id']);
      expect(out['finish_reason']).toBe(exp['finish_reason']);
      expect(out['abandoned']).toBe(exp['abandoned']);
      expect(out['complete']).toBe(exp['complete']);
      expect(out['error_class']).toBe(exp['error_class']);
      expect(out['retry_after_s']).toBe(exp['retry_after_s']);
      expect(out['output_chars']).toBe(exp['output_chars']);
      expect(out['tool_calls']).toEqual(exp['tool_calls']);
      expect(out['headers_source']).toBe(
        exp.sidecar ? `test/fixtures/providers/${exp.file.replace(/\.(json|sse)$/, '')}.headers.json` : 'default',
      );
    });
  }

  it('reads the body from stdin with "-" and takes status/headers from --headers', async () => {
    const body = readFileSync(`${ROOT}test/fixtures/providers/anthropic/error-529-overloaded.json`, 'utf8');
    const res = await usage(
      [
        '--api',
        'anthropic.messages',
        '--headers',
        'test/fixtures/providers/anthropic/error-529-overloaded.headers.json',
        '-',
      ],
      body,
    );
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.http_status).toBe(529);
    expect(out.error_class).toBe('overloaded');
    expect(out.cost).toEqual({ usd: null, micro_usd: null, basis: null, reason: 'no_usage' });
  });

  it('decodes a gzip-compressed capture (as recorded with Content-Encoding: gzip)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-usage-'));
    const file = join(dir, 'cached.json');
    writeFileSync(file, gzipSync(readFileSync(`${ROOT}test/fixtures/providers/openai/chat-cached-tokens-1024.json`)));
    const res = await usage(['--api', 'openai.chat', '--text', file]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    // hand-read from the fixture: prompt_tokens 1149, cached_tokens 1024, completion_tokens 353
    expect(out.usage.input_tokens).toBe(1149);
    expect(out.usage.cache_read_input_tokens).toBe(1024);
    expect(out.usage.output_tokens).toBe(353);
    expect(out.headers_source).toBe('default');
    expect(out.output_text.startsWith('1. **Open-Source Library OpenL')).toBe(true);
  });

  it('exits 64 naming the flag for bad --prices, and 66 for a missing file', async () => {
    const [bad, missing, noApi] = await Promise.all([
      usage(['--api', 'openai.chat', '--prices', '1,x', 'test/fixtures/providers/openai/chat-cached-tokens-1024.json']),
      usage(['--api', 'openai.chat', 'no/such/file.json']),
      usage(['test/fixtures/providers/openai/chat-cached-tokens-1024.json']),
    ]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--prices');
    expect(missing.code).toBe(66);
    expect(noApi.code).toBe(64);
    expect(noApi.stderr).toContain('--api');
  });

  it('refuses a gzip bomb and an oversized body with exit 65 instead of inflating it into memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-usage-'));
    const bomb = join(dir, 'bomb.json');
    writeFileSync(bomb, gzipSync(Buffer.alloc(64 * 1024)));
    const big = join(dir, 'big.json');
    writeFileSync(big, `{"pad":"${'x'.repeat(4096)}"}`);
    const [b, g, s, ok, bad] = await Promise.all([
      usage(['--api', 'openai.chat', '--max-bytes', '4096', bomb]),
      usage(['--api', 'openai.chat', '--max-bytes', '4096', big]),
      usage(['--api', 'openai.chat', '--max-bytes', '4096', '-'], 'y'.repeat(5000)),
      usage(['--api', 'openai.chat', '--max-bytes', '100000', bomb]),
      usage(['--api', 'openai.chat', '--max-bytes', 'lots', big]),
    ]);
    expect(b.code).toBe(65);
    expect(b.stderr).toContain('decompresses to more than --max-bytes 4096');
    expect(g.code).toBe(65);
    expect(g.stderr).toContain('larger than --max-bytes 4096');
    expect(s.code).toBe(65);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).error_class).not.toBeNull();
    expect(bad.code).toBe(64);
    for (const r of [b, g, s, bad]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
