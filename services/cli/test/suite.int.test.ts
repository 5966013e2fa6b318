import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, KEYS, type Fixture } from '@shadowplane/control/testing';
import { chatEnvelope } from '@shadowplane/testkit';
import { main } from '../src/index.js';

// shadowctl suite status / freeze against a live control API on a real nats-server.

class Sink extends Writable {
  text = '';
  isTTY = false;
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void) {
    this.text += c.toString();
    cb();
  }
}

describe('shadowctl suite', () => {
  let f: Fixture;
  let url = '';
  const run = async (key: string, ...args: string[]) => {
    const out = new Sink();
    const err = new Sink();
    const code = await main(['--url', url, '--api-key', key, ...args], {
      out: out as unknown as NodeJS.WriteStream,
      err: err as unknown as NodeJS.WriteStream,
    });
    return { code, out: out.text, err: err.text };
  };
  beforeAll(async () => {
    f = await fixture();
    url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    const prompts = ['What is 2 + 2?', 'Name the capital of France.', 'What is 2 + 2?', 'Spell "cat" backwards.'];
    for (const p of prompts) {
      const e = chatEnvelope('cli', 'qa', p);
      await f.bus.js.publish(f.bus.names.captureSubject('cli', 'qa'), JSON.stringify(e), { msgID: e.envelope_id });
    }
  });
  afterAll(async () => f.close());

  it('status states readiness in items, clusters, exclusions and MDE; unknown suite exits 1, no scope 77', async () => {
    const s = await run(KEYS.read, 'suite', 'status', 'cli');
    expect(s.code).toBe(0);
    expect(s.out).toMatch(/qa: 4 captures confirmed, 0 skipped at capture/);
    expect(s.out).toMatch(/3 distinct items \(weight 4\) in \d+ clusters; excluded: none; MDE/);
    expect(s.out).toMatch(/not frozen/);
    expect(s.out).not.toMatch(/\bready\b/);
    const missing = await run(KEYS.read, 'suite', 'status', 'nosuch');
    expect([missing.code, missing.err]).toEqual([1, expect.stringMatching(/not_found/)]);
    expect((await run(KEYS.write, 'suite', 'status', 'cli')).code).toBe(77);
  });

  it('freeze writes once, a second freeze is unchanged with the same hash; --max-items is checked', async () => {
    const a = await run(KEYS.write, '--json', 'suite', 'freeze', 'cli', '--max-items', '2');
    expect(a.code).toBe(0);
    const first = JSON.parse(a.out).datasets[0];
    expect(first).toMatchObject({ call_type: 'qa', created: true, card: { unique_items: 2 } });
    expect(first.card.exclusion_counts).toEqual({ over_cap: 1 });
    const b = await run(KEYS.write, 'suite', 'freeze', 'cli', '--max-items', '2');
    expect(b.out).toContain(`qa: ${first.dataset_hash} unchanged (already frozen)`);
    const bad = await run(KEYS.write, 'suite', 'freeze', 'cli', '--max-items', '5001');
    expect([bad.code, bad.err]).toEqual([64, expect.stringMatching(/--max-items/)]);
    const s = await run(KEYS.read, '--json', 'suite', 'status', 'cli');
    expect(JSON.parse(s.out).call_types[0].frozen).toMatchObject({ dataset_hash: first.dataset_hash });
  });

  it('freeze --import sends the lines of a JSONL file as the import builder; a bad line exits 64 naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shadowctl-import-'));
    const file = join(dir, 'items.jsonl');
    const line = (q: string) =>
      JSON.stringify({
        call_type: 'imp',
        request: { model: 'm', messages: [{ role: 'user', content: q }] },
        reference: { kind: 'exact', value: '4' },
      });
    writeFileSync(file, `${line('What is 2 + 2?')}\n\n${line('What is 3 + 1?')}\n`);
    const a = await run(KEYS.write, 'suite', 'freeze', 'cli', '--import', file);
    expect(a.code).toBe(0);
    expect(a.out).toMatch(/imp: [0-9a-f]{64} written; 2 items \(weight 2\)/);
    expect(a.out).toContain('not fit-eligible (census_not_production, below_min_items');
    writeFileSync(file, `${line('x')}\n{not json\n`);
    const bad = await run(KEYS.write, 'suite', 'freeze', 'cli', '--import', file);
    expect([bad.code, bad.err]).toEqual([64, expect.stringMatching(/line 2 of .* is not JSON/)]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('freeze --synthetic sends a YAML template as the synthetic builder; refusals exit 65 naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shadowctl-synthetic-'));
    const file = join(dir, 'template.yaml');
    writeFileSync(
      file,
      [
        'call_type: syn',
        'request:',
        '  model: m',
        '  messages: [{ role: user, content: "What is {{a}} + {{b}}?" }]',
        'reference: { kind: numeric, value: "{{sum}}" }',
        'rows:',
        '  - { a: 1, b: 2, sum: 3 }',
        '  - { a: 2, b: 2, sum: 4 }',
        '  - { a: 1, b: 2, sum: 3 }',
        '',
      ].join('\n'),
    );
    const a = await run(KEYS.write, 'suite', 'freeze', 'cli', '--synthetic', file);
    expect([a.code, a.err]).toEqual([0, '']);
    expect(a.out).toMatch(/syn: [0-9a-f]{64} written; 2 items \(weight 3\)/);
    expect(a.out).toContain('not fit-eligible (census_not_production, below_min_items');
    const again = await run(KEYS.write, '--json', 'suite', 'freeze', 'cli', '--synthetic', file);
    expect(JSON.parse(again.out).datasets[0]).toMatchObject({
      created: false,
      card: { census: { synthetic: { items: 2, weight: 3 } } },
    });

    writeFileSync(file, 'call_type: syn\nrequest: { content: "{{a}}" }\nproduct: { a: [1, 2], unused: [3] }\n');
    const unused = await run(KEYS.write, 'suite', 'freeze', 'cli', '--synthetic', file);
    expect([unused.code, unused.err]).toEqual([
      65,
      expect.stringMatching(/invalid_request: .*builder\.product\.unused/),
    ]);
    writeFileSync(file, '- not a mapping\n');
    expect((await run(KEYS.write, 'suite', 'freeze', 'cli', '--synthetic', file)).code).toBe(65);
    const both = await run(KEYS.write, 'suite', 'freeze', 'cli', '--synthetic', file, '--import', file);
    expect([both.code, both.err]).toEqual([64, expect.stringMatching(/give one/)]);
    expect((await run(KEYS.write, 'suite', 'freeze', 'cli', '--synthetic', join(dir, 'missing.yaml'))).code).toBe(66);
    rmSync(dir, { recursive: true, force: true });
  });
});
