import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchStack, until as untilIn, type BenchStack } from '../test/bench-stack.js';
import { getArtifact, loadKeyring } from '@shadowplane/artifacts';
import { openObjectStore } from '@shadowplane/bus';
import { Envelope } from '@shadowplane/contracts';
import { KEYS } from '@shadowplane/control/testing';
import { GSM8K } from '@shadowplane/testkit';

// Instrument judged_dataset_run end to end over a real nats-server, provider-sim, a sidecar that
// retains served outputs, the control API, a duplicator worker and the verdict service:
// production traffic through the sidecar (consenting, and one request that does not) → freeze →
// a judged_dataset_run of the frozen dataset calls the candidate only, stands the retained
// served outputs in for the incumbent, excludes the item without consent with its reason, and
// reports at most ON_FRONTIER. Production's answers carry an e-mail address (added by a
// pass-through in front of provider-sim) that the retained copy must not.

const SUITE = 'judged';
const CT = 'math';
const N = 12;
const PII = 'jane.doe@example.com';

const until = <T>(what: string, fn: () => Promise<T | null | undefined | false>) => untilIn(what, fn, 120_000);

describe('instrument judged_dataset_run on a frozen dataset of retained served outputs', () => {
  let stack: BenchStack;
  let front: Server; // production's upstream: provider-sim, with a contact line added to each answer
  const served = new Map<string, string>(); // answer text production got, by question
  const req: BenchStack['req'] = (...a) => stack.req(...a);

  beforeAll(async () => {
    front = createServer((rq, rs) => {
      const chunks: Buffer[] = [];
      rq.on('data', (c: Buffer) => chunks.push(c));
      rq.on('end', () => {
        if (Buffer.concat(chunks).includes('(upstream down)')) {
          rs.writeHead(503, { 'content-type': 'application/json' });
          return void rs.end('{"error":{"message":"overloaded","type":"server_error"}}');
        }
        void (async () => {
          const r = await fetch(`${stack.sim!.url}${rq.url}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim' },
            body: Buffer.concat(chunks),
          });
          const j = (await r.json()) as { choices: { message: { content: string } }[] };
          j.choices[0]!.message.content += `\nQuestions? Write to ${PII}.`;
          rs.writeHead(r.status, { 'content-type': 'application/json' });
          rs.end(JSON.stringify(j));
        })().catch((e: unknown) => rs.destroy(e as Error));
      });
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    stack = await startBenchStack('judged', {
      sim: { seed: 23 },
      sidecar: { upstream: `http://127.0.0.1:${(front.address() as AddressInfo).port}`, retainServedTtlDays: 2 },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await new Promise((r) => front?.close(r));
  });

  it('re-scores what production served without calling the incumbent; no consent is excluded; capped at ON_FRONTIER', async () => {
    const sim = stack.sim!;
    const sidecar = stack.sidecar!;
    const f = stack.f;
    await until('the sidecar to reach NATS', async () => sidecar.publisher.isConnected);
    // production: N consenting requests and one that does not consent, all served by sim-large
    const send = async (i: number, consent: boolean, down = false) => {
      const g = { ...GSM8K[i]!, question: `${GSM8K[i]!.question}${down ? ' (upstream down)' : ''}` };
      const r = await fetch(`${sidecar.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-client',
          'x-shadow-suite': SUITE,
          'x-shadow-call-type': CT,
          'x-shadow-retention-consent': consent ? 'true' : 'false',
          'x-shadow-expect': JSON.stringify({ kind: 'numeric', value: g.answer }),
        },
        body: JSON.stringify({
          model: 'sim-large',
          messages: [{ role: 'user', content: g.question }],
          max_tokens: 256,
        }),
      });
      if (down) return expect(r.status).toBe(503);
      expect(r.status).toBe(200);
      const text = ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      expect(text).toContain(PII); // production got its answer unchanged
      served.set(g.question, text);
    };
    for (let i = 0; i < N; i++) await send(i, true);
    await send(N, false);
    await send(N + 1, true, true); // production failed: nothing was served
    const productionCalls = sim.calls().filter((c) => c.model === 'sim-large').length;
    expect(productionCalls).toBe(N + 1);

    const envelopes = await until('every capture in the stream', async () => {
      const info = await f.bus.jsm.streams.info(f.bus.names.streams.capture);
      if (info.state.messages < N + 2) return null;
      const out: Envelope[] = [];
      for (let seq = 1; seq <= info.state.messages; seq++) {
        const m = await f.bus.jsm.streams.getMessage(f.bus.names.streams.capture, { seq });
        if (m) out.push(Envelope.parse(m.json()));
      }
      return out;
    });
    const failed = envelopes.find((e) => e.served?.status === 503)!;
    expect(failed.served!.artifact_ref).toBeNull(); // retention wanted, nothing 2xx to retain
    const consented = envelopes.filter((e) => e.retention.consent && e !== failed);
    const refused = envelopes.find((e) => !e.retention.consent)!;
    expect(consented).toHaveLength(N);
    expect(refused.served?.artifact_ref ?? null).toBeNull();

    // the retained copies: encrypted at rest, redacted once decrypted
    const store = await openObjectStore(f.bus, f.bus.names.buckets.artifacts);
    const keyring = loadKeyring(stack.env);
    for (const e of consented) {
      const ref = e.served!.artifact_ref!;
      expect(ref).toMatch(/^art:[0-9a-f]{64}$/);
      const bytes = Buffer.from((await store.getBlob(ref.slice(4)))!).toString('utf8');
      const question = (e.request.body as { messages: { content: string }[] }).messages[0]!.content;
      const answer = served.get(question)!;
      expect(bytes).not.toContain(PII);
      expect(bytes).not.toContain(answer.split('\n')[0]!.slice(0, 40));
      const a = await getArtifact(store, keyring, ref);
      expect(a.output_text).not.toContain(PII);
      expect(a.output_text).toBe(answer.replace(PII, '<EMAIL>'));
    }

    // one retained output deleted (as its TTL would): that item is excluded, never silently missing
    const gone = consented[0]!;
    await store.delete(gone.served!.artifact_ref!.slice(4));
    // another one tampered with (one ciphertext character changed): it fails authentication
    const tampered = consented[1]!;
    const tName = tampered.served!.artifact_ref!.slice(4);
    const sealed = JSON.parse(Buffer.from((await store.getBlob(tName))!).toString('utf8')) as { ct: string };
    sealed.ct = (sealed.ct[0] === 'A' ? 'B' : 'A') + sealed.ct.slice(1);
    await store.putBlob({ name: tName }, new TextEncoder().encode(JSON.stringify(sealed)));
    const kept = N - 2;

    const frozen = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, {});
    expect(frozen.statusCode).toBe(201);
    const hash: string = frozen.json().datasets[0].dataset_hash;
    const spec = (extra: object = {}) => ({
      name: 'judged run',
      suite: SUITE,
      call_types: [CT],
      source: `frozen:${hash}`,
      instrument: 'judged_dataset_run',
      incumbent: {
        id: 'large',
        provider: 'sim-openai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
      },
      candidates: [
        {
          id: 'medium',
          provider: 'sim-openai',
          model: 'sim-medium',
          rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
        },
      ],
      max_cost_usd: 1,
      aa_share: 0,
      // any quality loss is within the margin: the uncapped rule would say BEAT for a cheaper arm
      margins: { noninferiority_pp: 100, min_savings: 0 },
      ...extra,
    });
    // what cannot apply without an incumbent call is a 400 naming the field
    for (const [extra, path] of [
      [{ aa_share: 0.1 }, 'aa_share'],
      [{ source: 'live' }, 'source'],
      [{ stopping: 'sequential' }, 'stopping'],
      [
        { scorers: [{ kind: 'expectations' }, { kind: 'llm_judge', provider: 'sim-openai', model: 'sim-large' }] },
        'scorers.1',
      ],
    ] as const) {
      const bad = await req('POST', '/v1/campaigns', KEYS.write, spec(extra));
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }

    const run = await req('POST', '/v1/campaigns', KEYS.write, spec());
    expect(run.statusCode).toBe(201);
    expect(run.json().campaign.spec.instrument).toBe('judged_dataset_run');
    const id: string = run.json().campaign.id;
    const done = await until('the judged run to complete', async () => {
      const s = (await req('GET', `/v1/campaigns/${id}`, KEYS.read)).json();
      return s.campaign.state === 'completed' ? s.campaign : null;
    });
    expect(done.state_reason).toBe('dataset_exhausted');

    // the incumbent was never called again; the candidate was, once per retained item
    expect(sim.calls().filter((c) => c.model === 'sim-large').length).toBe(productionCalls);
    expect(sim.calls().filter((c) => c.model === 'sim-medium').length).toBe(kept);

    const msgs = (await req('GET', `/v1/campaigns/${id}/observations`, KEYS.read)).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    const obs = msgs.filter((m) => m.schema === 'shadow.observation/v1');
    const inc = obs.filter((o) => o.role === 'incumbent');
    const cand = obs.filter((o) => o.role === 'candidate');
    expect([inc.length, cand.length]).toEqual([kept, kept]);
    expect(obs.every((o) => o.instrument === 'judged_dataset_run' && o.cost.basis === 'rate_card')).toBe(true);
    const byHash = new Map(consented.map((e) => [e.item_hash, e]));
    for (const o of inc) {
      const e = byHash.get(o.item_hash)!;
      expect(o.artifact_ref).toBe(e.served!.artifact_ref);
      expect(o.charged_micro_usd).toBe(0);
      expect(o.usage.output_tokens).toBe(e.served!.usage.output_tokens);
      expect(o.latency_ms).toBe(e.served!.latency_ms);
    }
    expect(cand.every((o) => o.charged_micro_usd > 0 && o.artifact_ref !== null)).toBe(true);
    const excluded = msgs.filter((m) => m.kind === 'excluded').map((m) => [m.item_hash, m.reason]);
    expect(excluded).toEqual(
      expect.arrayContaining([
        [refused.item_hash, 'served_not_retained'],
        [gone.item_hash, 'served_artifact_missing'],
        [tampered.item_hash, 'served_artifact_invalid'],
        [failed.item_hash, 'served_no_response'],
      ]),
    );
    expect(excluded).toHaveLength(4);

    const rep = await stack.finalReport(id, KEYS.read);
    const ct = rep.report.call_types[0];
    const c = ct.comparisons[0];
    expect(c.instrument).toBe('judged_dataset_run');
    expect(c.state).toBe('ON_FRONTIER');
    expect(c.decision_reasons.some((r: string) => r.startsWith('instrument_ceiling: judged_dataset_run'))).toBe(true);
    expect(c.pairs.items).toBe(kept);
    expect(c.stats.cost_savings.point).toBeGreaterThan(0.5);
    // quality was measured from the served outputs (not the whole range, as for replay)
    expect(c.stats.quality_delta.upper - c.stats.quality_delta.lower).toBeLessThan(2);
    expect(JSON.stringify(ct)).toContain('served_not_retained');
    for (const reason of ['served_artifact_missing', 'served_artifact_invalid', 'served_no_response'])
      expect(JSON.stringify(ct)).toContain(reason);

    // as a baseline it stands for its candidate: its incumbent was never called
    const notCalled = await req('PUT', `/v1/suites/${SUITE}/baseline`, KEYS.write, {
      campaign_id: id,
      arm_id: 'large',
    });
    expect(notCalled.statusCode).toBe(409);
    const pinned = await req('PUT', `/v1/suites/${SUITE}/baseline`, KEYS.write, { campaign_id: id });
    expect(pinned.statusCode).toBeLessThan(300);
    expect(pinned.json().arm_id).toBe('medium');
  }, 300_000);
});
