/**
 * Reading a suite's captures off the CAPTURE stream and reducing each envelope to the record the
 * dataset builder reads (item hash, call type, prompt SimHash or the body problem).
 * Source: issue 17 items 1–3; docs/architecture.md "State".
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import type { openObjectStore, Bus } from '@shadowplane/bus';
import { CaptureSkipMarker, Envelope, sha256Hex, simhash64 } from '@shadowplane/contracts';
import { bodyProblem, type CaptureRecord, type SkipRecord, type UnparseableRecord } from '@shadowplane/evidence';
import { requestPromptText } from '@shadowplane/providers';

/** An opened JetStream object store (datasets, capture bodies). */
export type ObjectStore = Awaited<ReturnType<typeof openObjectStore>>;

const dec = new TextDecoder();

/** What the stream holds for one suite, reduced for the builder. */
export interface SuiteCaptures {
  captures: CaptureRecord[];
  unparseable: UnparseableRecord[];
  skips: SkipRecord[];
  /** confirmed (stored) envelopes and skip markers per call type, from the stream's subject counts */
  counts: Map<string, { envelopes: number; skip_markers: number }>;
}

/**
 * Reads every message the CAPTURE stream holds for the suite (ordered consumer; ends when caught
 * up), or with `callType` only that call type's envelopes (no skip markers). Envelopes that do not
 * parse are counted as unparseable; skip markers become skips.
 */
export async function readSuiteCaptures(
  bus: Bus,
  bodies: ObjectStore,
  suite: string,
  callType?: string,
): Promise<SuiteCaptures> {
  const n = bus.names;
  const filter = callType === undefined ? n.captureSuiteAll(suite) : n.captureSubject(suite, callType);
  const info = await bus.jsm.streams.info(n.streams.capture, { subjects_filter: filter });
  const counts = new Map<string, { envelopes: number; skip_markers: number }>();
  const base = n.captureFilter(suite).slice(0, -1); // `…shadow.capture.<suite>.`
  let total = 0;
  for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
    const rest = subject.slice(base.length).split('.');
    const ct = rest[0]!;
    const c = counts.get(ct) ?? { envelopes: 0, skip_markers: 0 };
    if (rest.length === 1) c.envelopes += count;
    else if (rest[1] === 'skipped') c.skip_markers += count;
    counts.set(ct, c);
    total += count;
  }
  const out: SuiteCaptures = { captures: [], unparseable: [], skips: [], counts };
  if (total === 0) return out;
  const consumer = await bus.js.consumers.get(n.streams.capture, {
    filter_subjects: filter,
    deliver_policy: DeliverPolicy.All,
  });
  // fetch in batches until caught up: a batch that comes back empty (messages aged out since
  // the count) ends the read instead of waiting for messages that will never come
  try {
    for (;;) {
      const batch = await consumer.fetch({ max_messages: 1000, expires: 2000 });
      let got = 0;
      let pending = 1;
      for await (const m of batch) {
        got++;
        pending = m.info.pending;
        const rest = m.subject.slice(base.length).split('.');
        const ct = rest[0]!;
        const json = safeJson(m.data);
        if (rest.length === 2 && rest[1] === 'skipped') {
          const s = CaptureSkipMarker.safeParse(json);
          if (s.success) out.skips.push({ call_type: ct, at: s.data.at, reason: s.data.reason });
        } else if (rest.length === 1) {
          const e = Envelope.safeParse(json);
          if (!e.success) out.unparseable.push({ seq: m.seq, call_type: ct });
          else out.captures.push(await captureRecord(bodies, m.seq, e.data));
        }
        if (pending === 0) break;
      }
      if (got === 0 || pending === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return out;
}

/**
 * The builder's record of one stored envelope at stream sequence `seq`: its body (inline or from
 * the capture bodies store, checked against its sha256) gives the prompt SimHash, or the problem
 * (`body_missing`, or what `bodyProblem` finds) that excludes it.
 */
export async function captureRecord(bodies: ObjectStore, seq: number, env: Envelope): Promise<CaptureRecord> {
  const r: CaptureRecord = {
    seq,
    envelope_id: env.envelope_id,
    item_hash: env.item_hash,
    call_type: env.call_type,
    traffic_class: env.traffic_class,
    captured_at: env.captured_at,
    prompt_simhash: null,
    expectation_kinds: [...new Set(env.expectations.map((x) => x.kind))].sort(),
    problem: null,
  };
  let body: unknown = env.request.body;
  if (env.request.body_ref) {
    const bytes = await bodies.getBlob(env.request.body_ref.name).catch(() => null);
    if (!bytes || sha256Hex(bytes) !== env.request.body_ref.sha256) return { ...r, problem: 'body_missing' };
    body = safeJson(bytes);
  }
  const problem = bodyProblem(env.api, body);
  if (problem) return { ...r, problem };
  // the same prompt text and SimHash the duplicator writes on observations, so clusters agree
  return { ...r, prompt_simhash: simhash64(requestPromptText(env.api, body)) };
}

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(data));
  } catch {
    return undefined;
  }
}
