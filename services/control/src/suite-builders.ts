/**
 * The freeze builders that do more than read the stream: `import` (operator-supplied items are
 * published as captures first) and `from_failures` (the items an ended run saw failing on one
 * arm), plus the check that a named builder is implemented at all.
 * Source: issue 17 items 1–3.
 */
import type { Bus } from '@shadowplane/bus';
import {
  DATASET_BUILDER_KINDS,
  type Envelope,
  IMPLEMENTED_DATASET_BUILDERS,
  IMPORT_ITEM_MAX_BYTES,
  isShadowplaneError,
  itemHash,
  sha256Hex,
  ShadowplaneError,
  type Campaign,
  type FromFailuresBuilder,
  type ImportBuilder,
} from '@shadowplane/contracts';
import type { CaptureRecord, PairRow } from '@shadowplane/evidence';
import { WIRE_ADAPTERS } from '@shadowplane/providers';
import { TERMINAL_STATES } from './campaign-ids.js';
import type { CampaignService } from './campaigns.js';
import { invalidRequest } from './errors.js';
import type { ReportsPort } from './reports-port.js';
import { captureRecord, type ObjectStore, type SuiteCaptures } from './suite-captures.js';

const enc = new TextEncoder();

/** What the `from_failures` builder reads: the campaigns and the reports' read side. */
export interface RunsDeps {
  campaigns: CampaignService;
  reports: ReportsPort;
}

/**
 * Rejects a builder kind the contracts name but this release does not implement, before the body
 * is parsed (so the answer names the builder, not a schema mismatch).
 * @throws ShadowplaneError 400 builder_unsupported naming `builder.kind`
 */
export function checkBuilderImplemented(body: unknown): void {
  const kind = (body as { builder?: { kind?: unknown } } | undefined)?.builder?.kind;
  if (
    typeof kind === 'string' &&
    (DATASET_BUILDER_KINDS as readonly string[]).includes(kind) &&
    !(IMPLEMENTED_DATASET_BUILDERS as readonly string[]).includes(kind)
  )
    throw invalidRequest(
      [
        {
          path: 'builder.kind',
          message: `${kind} is not implemented; use ${IMPLEMENTED_DATASET_BUILDERS.join(' or ')}`,
        },
      ],
      'builder_unsupported',
      `dataset builder ${kind} is not implemented; only ${IMPLEMENTED_DATASET_BUILDERS.join(' and ')} are`,
    );
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
    const envelopeId = importEnvelopeId(suite, it.call_type, hash, k);
    const expectations = it.reference === undefined ? [] : Array.isArray(it.reference) ? it.reference : [it.reference];
    const json = JSON.stringify(it.request);
    const env: Envelope = {
      schema: 'shadow.envelope/v1',
      envelope_id: envelopeId,
      captured_at: now,
      suite,
      call_type: it.call_type,
      api: it.api,
      method: 'POST',
      path,
      request: { body: it.request, body_ref: null, bytes: enc.encode(json).length, content_type: 'application/json' },
      item_hash: hash,
      served: null,
      traffic_class: 'import',
      retention: { consent: true },
      expectations,
      redactions: [],
      source: { placement: 'ingress', sidecar_id: 'import', sticky_key_hash: null },
    };
    const ack = await bus.js.publish(bus.names.captureSubject(suite, it.call_type), JSON.stringify(env), {
      msgID: envelopeId,
    });
    captures.push(await captureRecord(bodies, ack.seq, env));
  }
  return { captures, unparseable: [], skips: [], counts: new Map() };
}

/** A UUID (version 4 layout) from the hash: the same item and occurrence always gets the same id. */
function importEnvelopeId(suite: string, callType: string, hash: string, occurrence: number): string {
  const id = sha256Hex(enc.encode(`import|${suite}|${callType}|${hash}|${occurrence}`));
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-${'89ab'[parseInt(id[16]!, 16) % 4]}${id.slice(17, 20)}-${id.slice(20, 32)}`;
}
