/**
 * The freeze builders that do more than read the stream: `import` and `synthetic`
 * (operator-supplied or template-expanded items are published as captures first) and
 * `from_failures` (the items an ended run saw failing on one arm).
 * Source: issue 17 items 1–3.
 */
import type { Bus } from '@shadowplane/bus';
import {
  canonicalJson,
  type Envelope,
  IMPORT_ITEM_MAX_BYTES,
  isShadowplaneError,
  itemHash,
  sha256Hex,
  ShadowplaneError,
  type Campaign,
  type FromFailuresBuilder,
  type ImportBuilder,
  type SyntheticBuilder,
} from '@shadowplane/contracts';
import type { CaptureRecord, PairRow } from '@shadowplane/evidence';
import { WIRE_ADAPTERS } from '@shadowplane/providers';
import { TERMINAL_STATES } from './campaign-ids.js';
import type { CampaignService } from './campaigns.js';
import { invalidRequest } from './errors.js';
import type { ReportsPort } from './reports-port.js';
import { captureRecord, readSuiteCaptures, type ObjectStore, type SuiteCaptures } from './suite-captures.js';
import { expandSynthetic, type SyntheticItem } from './synthetic.js';

const enc = new TextEncoder();

/** What the `from_failures` builder reads: the campaigns and the reports' read side. */
export interface RunsDeps {
  campaigns: CampaignService;
  reports: ReportsPort;
}

/**
 * The items an ended run observed failing on one arm (the `from_failures` builder): error
 * observations of the arm, and paired rows of the final report's evidence where the arm's
 * quality is below `below`.
 * @throws ShadowplaneError 500 internal (`runs` not wired), 404 not_found (no such campaign,
 *   `builder.campaign_id`), 400 invalid_request (`builder.campaign_id` of another suite,
 *   `builder.arm_id` not called by the run), 409 conflict (the run has not ended or its final
 *   report is not written yet)
 */
export async function failedItems(
  bus: Bus,
  runs: RunsDeps | undefined,
  suite: string,
  b: FromFailuresBuilder,
): Promise<{ items: Set<string>; arm_id: string; call_types: string[] }> {
  if (!runs) throw new ShadowplaneError('internal', 'the from_failures builder is not wired in this process');
  const id = b.campaign_id;
  let c: Campaign;
  try {
    c = await runs.campaigns.get(id);
  } catch (e) {
    if (isShadowplaneError(e) && e.code === 'not_found')
      throw new ShadowplaneError('not_found', `no campaign ${id}`, {
        details: { issues: [{ path: 'builder.campaign_id', message: 'no such campaign' }] },
      });
    throw e;
  }
  if (c.spec.suite !== suite)
    throw invalidRequest([{ path: 'builder.campaign_id', message: `campaign ${id} ran on suite ${c.spec.suite}` }]);
  const called = [...(c.spec.compare ? [] : [c.spec.incumbent.id]), ...c.spec.candidates.map((a) => a.id)];
  const arm = b.arm_id ?? c.spec.candidates[0]!.id;
  if (!called.includes(arm))
    throw invalidRequest([
      { path: 'builder.arm_id', message: `campaign ${id} called no arm ${arm} (its arms: ${called.join(', ')})` },
    ]);
  const notYet = (why: string) =>
    new ShadowplaneError('conflict', `campaign ${id} has no failures to freeze yet: ${why}`, {
      details: { campaign_id: id, state: c.state },
    });
  if (!TERMINAL_STATES.has(c.state)) throw notYet(`it is ${c.state}`);
  const latest = await runs.reports.readLatestReport(bus, id);
  if (!latest || latest.provisional) throw notYet('its final report is not written yet');
  const items = new Set<string>();
  const paired =
    (latest.bundle as { parts?: { paired?: { candidate_arm_id: string; rows: PairRow[] }[] } } | null)?.parts?.paired ??
    [];
  for (const p of paired)
    for (const r of p.rows) {
      if (p.candidate_arm_id === arm && r.q_cand < b.below) items.add(r.item_hash);
      if (arm === c.spec.incumbent.id && !c.spec.compare && r.q_inc < b.below) items.add(r.item_hash);
    }
  for await (const m of runs.reports.exportObservations(bus, id, {}))
    if (m.schema === 'shadow.observation/v1' && m.arm_id === arm && m.role !== 'incumbent_aa' && m.status === 'error')
      items.add(m.item_hash);
  return { items, arm_id: arm, call_types: c.spec.call_types };
}

/**
 * The `import` builder's captures: each item becomes a `shadow.envelope/v1` of traffic class
 * `import` on `shadow.capture.<suite>.<call_type>` (request inline, no served summary, nothing
 * redacted — the operator supplied it), published with a message id derived from the suite, the
 * item hash and its occurrence in the import, so a retried import within the stream's
 * de-duplication window publishes nothing twice. Returns the captures as the builder reads them.
 * @throws ShadowplaneError 400 invalid_request naming `builder.items.<i>.request` (larger than
 *   IMPORT_ITEM_MAX_BYTES)
 */
export async function importItems(
  bus: Bus,
  bodies: ObjectStore,
  suite: string,
  b: ImportBuilder,
): Promise<SuiteCaptures> {
  const now = new Date().toISOString();
  b.items.forEach((it, i) => {
    const bytes = enc.encode(JSON.stringify(it.request)).length;
    if (bytes > IMPORT_ITEM_MAX_BYTES)
      throw invalidRequest([
        {
          path: `builder.items.${i}.request`,
          message: `${bytes} bytes; an imported request holds at most ${IMPORT_ITEM_MAX_BYTES}`,
        },
      ]);
  });
  const seen = new Map<string, number>();
  const captures: CaptureRecord[] = [];
  for (const it of b.items) {
    const path = WIRE_ADAPTERS[it.api].publicPath;
    const hash = itemHash(it.api, path, it.request);
    const k = seen.get(hash) ?? 0;
    seen.set(hash, k + 1);
    const expectations = it.reference === undefined ? [] : Array.isArray(it.reference) ? it.reference : [it.reference];
    const item = { call_type: it.call_type, api: it.api, path, request: it.request, expectations, item_hash: hash };
    const env = operatorEnvelope(
      suite,
      item,
      'import',
      uuidFromKey(`import|${suite}|${it.call_type}|${hash}|${k}`),
      now,
    );
    captures.push(await publishEnvelope(bus, bodies, env));
  }
  return { captures, unparseable: [], skips: [], counts: new Map() };
}

/**
 * The `synthetic` builder's captures: the template's expansions (`expandSynthetic`), each an
 * envelope of traffic class `synthetic` on `shadow.capture.<suite>.<call_type>`. An envelope's id
 * derives from the suite, the call type, the item hash, its expectations and its occurrence among
 * identical expansions, and one already in the stream is reused, not published again: a re-freeze
 * of the same spec, at any later time while the stream holds its captures, publishes nothing and
 * gives the same dataset. Returns the captures as the builder reads them.
 * @throws ShadowplaneError 400 invalid_request (see `expandSynthetic`)
 */
export async function syntheticItems(
  bus: Bus,
  bodies: ObjectStore,
  suite: string,
  b: SyntheticBuilder,
): Promise<SuiteCaptures> {
  const items = expandSynthetic(b);
  const seen = new Map<string, number>();
  const ids = items.map((it) => {
    const k = seen.get(it.item_hash) ?? 0;
    seen.set(it.item_hash, k + 1);
    const exp = sha256Hex(enc.encode(canonicalJson(it.expectations)));
    return uuidFromKey(`synthetic|${suite}|${b.call_type}|${it.item_hash}|${exp}|${k}`);
  });
  const wanted = new Set(ids);
  const stored = new Map<string, CaptureRecord>();
  for (const c of (await readSuiteCaptures(bus, bodies, suite, b.call_type)).captures)
    if (wanted.has(c.envelope_id) && !stored.has(c.envelope_id)) stored.set(c.envelope_id, c);
  const now = new Date().toISOString();
  const captures: CaptureRecord[] = [];
  for (const [i, it] of items.entries()) {
    const have = stored.get(ids[i]!);
    captures.push(have ?? (await publishEnvelope(bus, bodies, operatorEnvelope(suite, it, 'synthetic', ids[i]!, now))));
  }
  return { captures, unparseable: [], skips: [], counts: new Map() };
}

/** An item the operator supplied (imported or expanded), ready to become an envelope. */
type OperatorItem = Pick<SyntheticItem, 'call_type' | 'api' | 'path' | 'request' | 'expectations' | 'item_hash'>;

/** The envelope of an operator-supplied item: request inline, no served summary, nothing redacted. */
function operatorEnvelope(
  suite: string,
  it: OperatorItem,
  cls: 'import' | 'synthetic',
  envelopeId: string,
  now: string,
): Envelope {
  return {
    schema: 'shadow.envelope/v1',
    envelope_id: envelopeId,
    captured_at: now,
    suite,
    call_type: it.call_type,
    api: it.api,
    method: 'POST',
    path: it.path,
    request: {
      body: it.request,
      body_ref: null,
      bytes: enc.encode(JSON.stringify(it.request)).length,
      content_type: 'application/json',
    },
    item_hash: it.item_hash,
    served: null,
    traffic_class: cls,
    retention: { consent: true },
    expectations: it.expectations,
    redactions: [],
    source: { placement: 'ingress', sidecar_id: cls, sticky_key_hash: null },
  };
}

/** Publishes an envelope on its capture subject with its id as the message id; its capture record. */
async function publishEnvelope(bus: Bus, bodies: ObjectStore, env: Envelope): Promise<CaptureRecord> {
  const ack = await bus.js.publish(bus.names.captureSubject(env.suite, env.call_type), JSON.stringify(env), {
    msgID: env.envelope_id,
  });
  return captureRecord(bodies, ack.seq, env);
}

/** A UUID (version 4 layout) from a key: the same item and occurrence always gets the same id. */
function uuidFromKey(key: string): string {
  const id = sha256Hex(enc.encode(key));
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-${'89ab'[parseInt(id[16]!, 16) % 4]}${id.slice(17, 20)}-${id.slice(20, 32)}`;
}
