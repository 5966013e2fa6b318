import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKv } from '@shadowplane/bus';
import { Campaign } from '@shadowplane/contracts';
import { auth, fixture, KEYS, validSpec, type Fixture } from '@shadowplane/control/testing';
import { seedProgress, seedReport } from '@shadowplane/control/testing';
import { main } from '../src/index.js';

// `shadowctl campaign watch` writing to a pipe (CI logs, `| tee`): no bars, no redraw on every
// poll — a status line is printed when it changed, and only then.

class Pipe extends Writable {
  text = '';
  isTTY = false;
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void) {
    this.text += c.toString();
    cb();
  }
}

const progress = (dispatched: number) => ({
  call_types: {
    solve: {
      items_seen: dispatched + 5,
      items_unique: dispatched + 2,
      items_dispatched: dispatched,
      items_excluded: {},
      duplicates: 0,
    },
  },
  arms: {
    large: { calls_ok: dispatched, calls_error: {}, abandoned: 0 },
    medium: { calls_ok: dispatched, calls_error: {}, abandoned: 0 },
  },
});

async function until(pred: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('shadowctl campaign watch without a terminal', () => {
  let f: Fixture;
  let url = '';
  let id = '';
  beforeAll(async () => {
    f = await fixture({ flag: true });
    url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    id = (
      await f.app.inject({
        method: 'POST',
        url: '/v1/campaigns',
        headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
        payload: validSpec({ name: 'piped' }),
      })
    ).json().campaign.id;
  });
  afterAll(async () => f.close());

  it('prints each status line once, then again only when it changes', async () => {
    await seedProgress(f.bus, id, progress(3));
    // the watcher's polls, counted from the control API's request log
    const pollsOf = () =>
      f.logs.lines.filter((l) => l.includes('"route":"/v1/campaigns/{id}"') && l.includes('"method":"GET"')).length;
    const out = new Pipe();
    const done = main(['--url', url, '--api-key', KEYS.read, 'campaign', 'watch', id, '--interval-ms', '20'], {
      out: out as unknown as NodeJS.WriteStream,
      err: out as unknown as NodeJS.WriteStream,
    });
    await until(() => out.text.includes('solve: 3/200 items'));
    const seen = pollsOf();
    await until(() => pollsOf() >= seen + 10); // ten more polls of an unchanged campaign
    expect(out.text.match(/solve: /g)).toHaveLength(1);
    expect(out.text.match(/state running/g)).toHaveLength(1);

    await seedProgress(f.bus, id, progress(57));
    await until(() => out.text.includes('solve: 57/200 items'));
    expect(out.text.match(/solve: /g)).toHaveLength(2);
    expect(out.text.match(/state running/g)).toHaveLength(1); // the state line did not change

    const kv = await openKv(f.bus, f.bus.names.buckets.campaigns);
    const c = Campaign.parse(JSON.parse((await kv.get(id))!.string()));
    await kv.put(
      id,
      JSON.stringify({
        ...c,
        state: 'completed',
        state_reason: 'max_items reached',
        updated_at: new Date().toISOString(),
      }),
    );
    await until(() => out.text.includes('waiting for the verdict service'));
    await seedReport(f.bus, id);
    expect(await done).toBe(0);
    expect(out.text).toMatch(new RegExp(`campaign ${id} completed; report [0-9a-f]{64}`));
    expect(out.text).not.toMatch(/[█░]|\u001b\[/); // no bars, no cursor control
  });
});
