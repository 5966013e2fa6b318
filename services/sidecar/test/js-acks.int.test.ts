// JetStreamAcks against a real nats-server: the stream's PubAck, dedupe by Nats-Msg-Id, the 503
// when no stream takes a subject, a subject with a listener that never acks, and close().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, type Bus } from '@shadowplane/bus';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { JetStreamAcks, readAck } from '../src/js-acks.js';

describe('JetStreamAcks', () => {
  let bus: Bus;
  const prefix = randomPrefix('jsacks');
  const stream = `${prefix.toUpperCase()}_ACKS`;

  beforeAll(async () => {
    bus = await connectBus({ url: sharedNatsUrl(), name: 'js-acks-test', prefix });
    await bus.jsm.streams.add({ name: stream, subjects: [`${prefix}.acks.>`], duplicate_window: 60_000_000_000 });
  });
  afterAll(async () => {
    await bus.jsm.streams.delete(stream).catch(() => undefined);
    await bus.close();
  });

  it('resolves ok when the stream stores the message, once per Nats-Msg-Id', async () => {
    const acks = new JetStreamAcks(bus.nc, 2000);
    const results = await Promise.all([
      acks.publish(`${prefix}.acks.a`, new TextEncoder().encode('{"n":1}'), 'id-1'),
      acks.publish(`${prefix}.acks.b`, new TextEncoder().encode('{"n":2}'), 'id-2'),
      acks.publish(`${prefix}.acks.a`, new TextEncoder().encode('{"n":1}'), 'id-1'),
    ]);
    expect(results).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    const info = await bus.jsm.streams.info(stream);
    expect(info.state.messages).toBe(2); // the repeated id was de-duplicated by the stream
    const m = await bus.jsm.streams.getMessage(stream, { seq: 1 });
    expect(m?.header.get('Nats-Msg-Id')).toBe('id-1');
    expect(acks.inflight).toBe(0);
    acks.close();
  });

  it('reports a subject no stream takes (the server answers 503) as an error, not a timeout', async () => {
    const acks = new JetStreamAcks(bus.nc, 2000);
    const r = await acks.publish(`${prefix}.nostream.x`, new Uint8Array([1]), 'id-x');
    expect(r).toMatchObject({ ok: false, timeout: false });
    expect(r.ok === false && r.error).toContain('503');
    acks.close();
  });

  it('times out when something listens on the subject but no ack comes', async () => {
    const silent = bus.nc.subscribe(`${prefix}.silent.>`, { callback: () => undefined });
    const acks = new JetStreamAcks(bus.nc, 150);
    const t0 = Date.now();
    const r = await acks.publish(`${prefix}.silent.x`, new Uint8Array([1]), 'id-s');
    expect(r).toMatchObject({ ok: false, timeout: true });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(acks.inflight).toBe(0);
    silent.unsubscribe();
    acks.close();
  });

  it('close() answers the waiters still pending as timeouts (sent, outcome unknown) and refuses new publishes', async () => {
    const silent = bus.nc.subscribe(`${prefix}.silent2.>`, { callback: () => undefined });
    const acks = new JetStreamAcks(bus.nc, 10_000);
    const pending = acks.publish(`${prefix}.silent2.x`, new Uint8Array([1]), 'id-c');
    acks.close();
    expect(await pending).toEqual({ ok: false, timeout: true, error: 'no ack before the publisher closed' });
    expect(await acks.publish(`${prefix}.acks.z`, new Uint8Array([1]), 'id-z')).toMatchObject({ ok: false });
    silent.unsubscribe();
  });
});

describe('readAck', () => {
  const msg = (json: string) => ({ data: new TextEncoder().encode(json), json: <T>() => JSON.parse(json) as T });
  it('reads a PubAck, a JetStream error and junk', () => {
    expect(readAck(msg('{"stream":"CAPTURE","seq":7}'))).toEqual({ ok: true });
    expect(readAck(msg('{"stream":"CAPTURE","seq":7,"duplicate":true}'))).toEqual({ ok: true });
    expect(
      readAck(
        msg('{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"CAPTURE"}'),
      ),
    ).toEqual({
      ok: false,
      timeout: false,
      error: 'maximum messages exceeded (err_code 10077)',
    });
    expect(readAck(msg('not json'))).toMatchObject({ ok: false, error: 'an ack that is not JSON' });
    expect(readAck(msg('{"seq":1}'))).toMatchObject({ ok: false, error: 'an ack without a stream' });
  });
});
