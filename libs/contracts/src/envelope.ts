import { z } from 'zod';
import { Api, Usage } from './usage.js';
import { RegexPattern } from './regex.js';

const Token = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 of [A-Za-z0-9_-]');
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');

/** A token safe as a NATS subject token and KV key part. */
export const SubjectToken = Token;
/** A sha256 digest, lowercase hex. */
export const Sha256Hex = Sha256;

/** Where the traffic came from. Only `production` traffic is production evidence. */
export const TrafficClass = z.enum(['production', 'synthetic', 'import', 'test']);
export type TrafficClass = z.infer<typeof TrafficClass>;

/** The expectation kinds, with the schema of a `regex` value (see {@link Expectation}). */
const expectationOf = (pattern: z.ZodString) =>
  z.discriminatedUnion('kind', [
    z
      .object({ kind: z.literal('numeric'), value: z.union([z.number(), z.string()]), hard: z.boolean().optional() })
      .strict(),
    z.object({ kind: z.literal('exact'), value: z.string(), hard: z.boolean().optional() }).strict(),
    z.object({ kind: z.literal('regex'), value: pattern, hard: z.boolean().optional() }).strict(),
    z
      .object({ kind: z.literal('must_include'), value: z.array(z.string()).min(1), hard: z.boolean().optional() })
      .strict(),
    z
      .object({
        kind: z.literal('must_not_include'),
        value: z.array(z.string()).min(1),
        hard: z.boolean().optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('json_schema'),
        value: z.record(z.string(), z.unknown()),
        hard: z.boolean().optional(),
      })
      .strict(),
  ]);

/**
 * A first-party assertion that rode in with the request (header `x-shadow-expect`, JSON), scored
 * programmatically by libs/scoring. `hard: true` makes a failure gate the verdict.
 * - `numeric`: the final number in the output (GSM8K `#### n` first) equals `value`
 * - `exact`: trimmed output equals `value`
 * - `regex`: output matches `value` anywhere (RE2 syntax: no backreferences or lookaround; see
 *   regex.ts for the size limits)
 * - `must_include` / `must_not_include`: output contains / lacks every string in `value`
 * - `json_schema`: output parses as JSON valid against the JSON Schema `value`
 *
 * This is the schema of expectations as carried and stored (envelopes, observations): any
 * `regex` string parses, so messages written before the RE2 rule still read, and a pattern RE2
 * refuses scores null with its reason. Intake ({@link SubmittedExpectation}) refuses such patterns.
 */
export const Expectation = expectationOf(z.string());
export type Expectation = z.infer<typeof Expectation>;

/**
 * An expectation as it enters Shadowplane (the sidecar's `x-shadow-expect` header and config, an
 * imported item's reference, a campaign spec): as {@link Expectation}, and a `regex` value must
 * compile under RE2 within the size limits ({@link RegexPattern}), else the issue names `value`.
 */
export const SubmittedExpectation = expectationOf(RegexPattern);

/** A reference to a body kept in the JetStream object store because it is too large for a message. */
export const BodyRef = z.object({
  store: z.string(),
  name: z.string(),
  sha256: Sha256,
  bytes: z.number().int().nonnegative(),
});
export type BodyRef = z.infer<typeof BodyRef>;

/** One redaction applied before the envelope left the pod: the placeholder type and how many. */
export const Redaction = z.object({ type: z.string(), count: z.number().int().positive() });
export type Redaction = z.infer<typeof Redaction>;

/**
 * The binding of a retained served output in the artifact store (libs/artifacts `ArtifactMeta`):
 * a served output belongs to no campaign, so its `campaign_id` and `arm_id` are these fixed
 * values, its `item_hash` the envelope's, its `purpose` {@link SERVED_ARTIFACT_PURPOSE}. A reader
 * checks all four after decryption (docs/bench.md "judged_dataset_run").
 */
export const SERVED_ARTIFACT_BINDING = { campaign_id: '_served', arm_id: 'served' } as const;
/** Purpose recorded with every retained served output. */
export const SERVED_ARTIFACT_PURPOSE = 'served-evaluation';

/** An artifact reference, `art:<sha256 of the stored encrypted bytes>` (libs/artifacts). */
export const ArtifactRef = z.string().regex(/^art:[0-9a-f]{64}$/, 'must be art:<64 lowercase hex>');

/**
 * What the production call got: the served summary the sidecar observed on the tee.
 * Latencies in ms from the request's first byte at the sidecar. `usage` fields null when the
 * provider did not report them; `abandoned` = a 2xx without a usage block.
 * `artifact_ref` names the served output retained for evaluation (redacted, encrypted, with a
 * TTL) when the sidecar retains served outputs and the request consented; null when retention
 * was wanted but failed or did not apply; absent from envelopes of a sidecar that does not
 * retain (and from envelopes written before the field existed). Not part of item_hash.
 */
export const ServedSummary = z.object({
  artifact_ref: ArtifactRef.nullable().optional(),
  status: z.number().int(),
  upstream: z.string().nullable(),
  model: z.string().nullable(),
  latency_ms: z.number().nonnegative(),
  ttft_ms: z.number().nonnegative().nullable(),
  usage: Usage,
  finish_reason: z.string().nullable(),
  abandoned: z.boolean(),
  stream: z.boolean(),
});
export type ServedSummary = z.infer<typeof ServedSummary>;

/**
 * `shadow.envelope/v1`: one sampled production request, redacted, as published on
 * `shadow.capture.<suite>.<call_type>` with `Nats-Msg-Id` = envelope_id.
 * Exactly one of `request.body` (inline JSON) and `request.body_ref` (object store) is non-null.
 * `item_hash` = sha256(canonical JSON {api, path, body without volatile fields}) over the
 * redacted body (libs/contracts `itemHash`).
 * Source: docs/architecture.md "Contracts" (Envelope).
 */
export const Envelope = z
  .object({
    schema: z.literal('shadow.envelope/v1'),
    envelope_id: z.uuid(),
    captured_at: z.iso.datetime({ offset: true }),
    suite: Token,
    call_type: Token,
    api: Api,
    method: z.string(),
    path: z.string(),
    request: z.object({
      body: z.unknown(),
      body_ref: BodyRef.nullable(),
      bytes: z.number().int().nonnegative(),
      content_type: z.string().nullable(),
    }),
    item_hash: Sha256,
    served: ServedSummary.nullable(),
    traffic_class: TrafficClass,
    retention: z.object({ consent: z.boolean() }),
    expectations: z.array(Expectation),
    redactions: z.array(Redaction),
    source: z.object({
      placement: z.enum(['ingress', 'egress']),
      sidecar_id: z.string(),
      /** salted hash of the sticky-sampling key (never the key itself), or null */
      sticky_key_hash: z.string().nullable(),
    }),
    /**
     * the production request's W3C trace context (its `traceparent`/`tracestate` headers), when
     * the sidecar traces; duplicators link the shadow item's span to it (a link, never a parent).
     * Not part of item_hash.
     */
    trace_context: z
      .object({
        traceparent: z.string().regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/),
        tracestate: z.string().max(512).nullable(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type Envelope = z.infer<typeof Envelope>;
