import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from './index.js';

// Bad options and bad files are the operator's mistake: a usage (64) or data (65) exit naming
// the option, never "cannot reach the control API" (69) and never a stack trace. No server is
// needed: every case here fails before a request is sent (the URL points at a closed port).

class Sink extends Writable {
  text = '';
  isTTY = false;
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void) {
    this.text += c.toString();
    cb();
  }
}
const run = async (...args: string[]) => {
  const out = new Sink();
  const err = new Sink();
  const code = await main(['--api-key', 'sp_test', ...args], {
    out: out as unknown as NodeJS.WriteStream,
    err: err as unknown as NodeJS.WriteStream,
  });
  return { code, out: out.text, err: err.text };
};
const CLOSED = ['--url', 'http://127.0.0.1:9'];

describe('shadowctl option and file checks', () => {
  it('--url that is not an http(s) URL → 64 naming --url', async () => {
    for (const u of ['notaurl', 'ftp://example.test', '']) {
      const r = await run('--url', u, 'campaign', 'list');
      expect(r.code, u).toBe(64);
      expect(r.err).toContain('--url');
    }
  });

  it('--timeout-ms, --interval-ms, --report-timeout-s and --score that are not numbers in range → 64 naming the option', async () => {
    const cases: [string[], string][] = [
      [['--timeout-ms', 'abc', 'campaign', 'list'], '--timeout-ms'],
      [['--timeout-ms', '-1', 'campaign', 'list'], '--timeout-ms'],
      [['--timeout-ms', '0', 'campaign', 'list'], '--timeout-ms'],
      [['campaign', 'watch', 'cmp_0123456789abcdef', '--interval-ms', '0'], '--interval-ms'],
      [['campaign', 'watch', 'cmp_0123456789abcdef', '--report-timeout-s', 'soon'], '--report-timeout-s'],
      [
        ['outcome', 'add', '--result', 'score', '--score', 'high', '--source', 's', '--item-hash', 'a'.repeat(64)],
        '--score',
      ],
    ];
    for (const [args, name] of cases) {
      const r = await run(...CLOSED, ...args);
      expect(r.code, args.join(' ')).toBe(64);
      expect(r.err).toContain(name);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
  });

  it('a YAML alias bomb, an empty spec and a truncated bundle → 65; a directory → 66', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shadowctl-opts-'));
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [i, n] of ['b', 'c', 'd', 'e', 'f', 'g', 'h'].entries())
      levels.push(`${n}: &${n} [${Array(9).fill(`*${'abcdefg'[i]}`).join(',')}]`);
    writeFileSync(join(dir, 'bomb.yaml'), `${levels.join('\n')}\n`);
    writeFileSync(join(dir, 'empty.yaml'), '\n');
    writeFileSync(join(dir, 'trunc.json'), '{"bundle":');
    const bomb = await run(...CLOSED, 'campaign', 'create', '-f', join(dir, 'bomb.yaml'), '--dry-run');
    expect(bomb.code).toBe(65);
    expect((await run(...CLOSED, 'campaign', 'create', '-f', join(dir, 'empty.yaml'))).code).toBe(65);
    expect((await run('verify', join(dir, 'trunc.json'))).code).toBe(65);
    expect((await run('verify', dir)).code).toBe(66);
  });
});
