// The sidecar's configuration schemas: environment variables and the YAML config file (zod).
import { hostname } from 'node:os';
import { z } from 'zod';
import { CommonEnv, EnvBool } from '@shadowplane/config';
import { SubmittedExpectation, SubjectToken, TrafficClass } from '@shadowplane/contracts';

/** `host:port` (host may be an IPv4/IPv6 literal or a name; `[::1]:8080` for IPv6). */
const HostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:8080');

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const Int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const MiB = 1024 * 1024;

/**
 * Every environment variable the sidecar reads, with its meaning, unit and default. CLI flags
 * (`--listen --ops-listen --upstream --nats --sample --config --suite --prefix`) override the
 * matching variable. Sizes in bytes, times in ms.
 */
export const SidecarEnv = CommonEnv.extend({
  SHADOWPLANE_SIDECAR_LISTEN: HostPort.default('127.0.0.1:8080').describe(
    'proxy listen address host:port (flag --listen)',
  ),
  SHADOWPLANE_SIDECAR_OPS_LISTEN: HostPort.default('127.0.0.1:9464').describe(
    'ops listen address for /healthz, /readyz, /metrics (flag --ops-listen); use 0.0.0.0:9464 for Kubernetes probes',
  ),
  SHADOWPLANE_SIDECAR_UPSTREAM: HttpUrl.optional().describe(
    'the one upstream every request goes to (flag --upstream); alternative to `routes` in the config file',
  ),
  SHADOWPLANE_SIDECAR_SAMPLE: z.coerce
    .number()
    .min(0)
    .max(1)
    .default(0)
    .describe('default sampling rate 0–1 for requests no rule matches (flag --sample)'),
  SHADOWPLANE_SIDECAR_CONFIG: z
    .string()
    .optional()
    .describe('YAML file with routes and sampling rules (flag --config)'),
  SHADOWPLANE_SIDECAR_SUITE: SubjectToken.default('default').describe(
    'suite for captures no rule names (flag --suite)',
  ),
  SHADOWPLANE_SIDECAR_PLACEMENT: z
    .enum(['ingress', 'egress'])
    .default('ingress')
    .describe('placement recorded in envelopes for --upstream'),
  SHADOWPLANE_SIDECAR_ID: z
    .string()
    .min(1)
    .max(200)
    .default(hostname())
    .describe('sidecar id recorded in envelopes (default: host name)'),
  SHADOWPLANE_SIDECAR_STICKY_HEADER: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/)
    .optional()
    .describe('request header whose value keys sticky sampling (e.g. x-conversation-id); random sampling when unset'),
  SHADOWPLANE_SIDECAR_STICKY_SALT: z
    .string()
    .min(16)
    .optional()
    .describe('salt for the sticky-key hash (≥ 16 chars); required with a sticky header; same on every replica'),
  SHADOWPLANE_SIDECAR_STICKY_SALT_FILE: z
    .string()
    .optional()
    .describe('file holding the sticky salt (alternative to SHADOWPLANE_SIDECAR_STICKY_SALT)'),
  SHADOWPLANE_SIDECAR_RETENTION_CONSENT: EnvBool.default(false).describe(
    'retention.consent recorded in envelopes when the request does not say (x-shadow-retention-consent)',
  ),
  SHADOWPLANE_SIDECAR_RETAIN_SERVED: EnvBool.default(false).describe(
    'retain the served response of captures whose request consented to evaluation retention (retention.consent): redacted like requests, encrypted with the artifact keyring (one of the SHADOWPLANE_ARTIFACT_KEY* variables is then required), put in the artifact store for SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS and referenced as served.artifact_ref (docs/bench.md "Retained served outputs"). The work runs on the capture worker thread, never on the request path',
  ),
  SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS: Int(1, 7)
    .default(7)
    .describe(
      "days a retained served output stays readable (its encrypted expiry; reads after it are refused); at most 7, the artifact store's own TTL, which deletes it then",
    ),
  SHADOWPLANE_ARTIFACT_KEYS_FILE: z
    .string()
    .optional()
    .describe(
      'JSON keyring {"active":kid,"keys":{kid:base64}} encrypting retained served outputs (read only with SHADOWPLANE_SIDECAR_RETAIN_SERVED; the same keyring as the duplicator\'s)',
    ),
  SHADOWPLANE_ARTIFACT_KEY_FILE: z
    .string()
    .optional()
    .describe(
      'file holding one base64 32-byte artifact key (kid "default"; alternative to SHADOWPLANE_ARTIFACT_KEYS_FILE)',
    ),
  SHADOWPLANE_ARTIFACT_KEY: z
    .string()
    .optional()
    .describe('one base64 32-byte artifact key in the environment (dev only)'),
  SHADOWPLANE_SIDECAR_INLINE_MAX_BYTES: Int(1024, 8 * MiB)
    .default(512 * 1024)
    .describe('request bodies larger than this (bytes, redacted JSON) go to the object store'),
  SHADOWPLANE_SIDECAR_CAPTURE_MAX_BYTES: Int(1024, 1024 * MiB)
    .default(32 * MiB)
    .describe('request bodies larger than this (bytes, as received) are not captured: skipped:too_large'),
  SHADOWPLANE_SIDECAR_RESPONSE_CAPTURE_MAX_BYTES: Int(1024, 1024 * MiB)
    .default(8 * MiB)
    .describe('most response bytes teed for the served summary; beyond it the envelope has served: null'),
  SHADOWPLANE_SIDECAR_CAPTURE_OFFLOAD_BYTES: Int(0, 1024 * MiB)
    .default(64 * 1024)
    .describe('captures with more teed bytes than this are built on a worker thread instead of the event loop'),
  SHADOWPLANE_SIDECAR_CAPTURE_MAX_DECODE_RATIO: Int(1, 100_000)
    .default(100)
    .describe(
      'most decoded bytes per encoded byte of a gzip/deflate/br request body or response the capture decodes; above it (or above CAPTURE_MAX_BYTES decoded) the capture is excluded as too_large, the request untouched',
    ),
  SHADOWPLANE_SIDECAR_CAPTURE_CPU_BUDGET_MS: Int(1, 600_000)
    .default(2000)
    .describe(
      "most CPU ms (the capture worker thread's own CPU time) one capture may spend decoding, parsing and redacting on the worker thread; over it the capture is dropped (cpu_budget), never the request; a build still running after 2× this + 1 s of wall time is stopped by restarting the worker",
    ),
  SHADOWPLANE_SIDECAR_CAPTURE_WORKER_MEMORY_MB: Int(32, 65_536)
    .default(512)
    .describe(
      'heap limit of the capture worker thread, MiB; a capture that exhausts it is dropped (memory_budget) and the worker restarts',
    ),
  SHADOWPLANE_SIDECAR_REDACT_FIELD_NAMES: z
    .string()
    .default('')
    .describe(
      'comma-separated extra member names whose values are redacted as <SECRET> (case and -_ . ignored; added to api_key, password, secret, token, authorization, client_secret, private_key, …)',
    ),
  SHADOWPLANE_SIDECAR_OPT_IN: EnvBool.default(false).describe(
    'honour the x-shadow-suite / x-shadow-call-type opt-in headers (a client forcing a capture); off unless the operator turns it on (file: sampling.opt_in)',
  ),
  SHADOWPLANE_SIDECAR_CLIENT_HEADER_TIMEOUT_MS: Int(1, 3_600_000)
    .default(60_000)
    .describe('most ms a client may take to send a request head (→ 408; nginx client_header_timeout, 60 s)'),
  SHADOWPLANE_SIDECAR_CLIENT_BODY_TIMEOUT_MS: Int(1, 3_600_000)
    .default(60_000)
    .describe(
      'most ms between two reads of a request body, and for a client to read a response the proxy waits on before it reads the next pipelined request (→ 408 or a cut; nginx client_body_timeout / send_timeout, 60 s)',
    ),
  SHADOWPLANE_SIDECAR_REQUEST_TIMEOUT_MS: Int(1, 3_600_000)
    .default(300_000)
    .describe(
      'most ms from the first byte of a request head to the last byte of its body (→ 408 or a cut; Node http requestTimeout, 300 s; nginx has none)',
    ),
  SHADOWPLANE_SIDECAR_PIPELINE_MAX_UNREAD_BYTES: Int(0, 1024 * MiB)
    .default(1 * MiB)
    .describe(
      'response bytes a client may leave unread before the proxy stops reading its pipelined requests (until it reads)',
    ),
  SHADOWPLANE_SIDECAR_CAPTURE_BATCH_MS: Int(0, 5_000)
    .default(1000)
    .describe(
      'most ms a small capture waits so captures are built and published in batches (less CPU per capture; 0 = at once)',
    ),
  SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX: Int(1, 1_000_000)
    .default(1000)
    .describe('most envelopes waiting to publish; more are dropped (queue_full / nats_down)'),
  SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX_BYTES: Int(1024, 4096 * MiB)
    .default(128 * MiB)
    .describe('most bytes held by captures in flight (teed bodies plus queued envelopes)'),
  SHADOWPLANE_SIDECAR_PUBLISH_TIMEOUT_MS: Int(10, 600_000)
    .default(2000)
    .describe('JetStream publish / object-store put timeout, ms'),
  SHADOWPLANE_SIDECAR_PUBLISH_CONCURRENCY: Int(1, 256)
    .default(16)
    .describe('publishes in flight at once (16: a whole batch of captures leaves in one write)'),
  SHADOWPLANE_SIDECAR_UPSTREAM_CONNECTIONS: Int(1, 100_000)
    .default(1024)
    .describe('most connections per upstream origin'),
  SHADOWPLANE_SIDECAR_CONNECT_TIMEOUT_MS: Int(1, 600_000)
    .default(10_000)
    .describe('upstream TCP/TLS connect timeout, ms (→ 504)'),
  SHADOWPLANE_SIDECAR_HEADERS_TIMEOUT_MS: Int(1, 3_600_000)
    .default(600_000)
    .describe('most ms waiting for upstream response headers (→ 504)'),
  SHADOWPLANE_SIDECAR_BODY_TIMEOUT_MS: Int(1, 3_600_000)
    .default(600_000)
    .describe('most ms between two upstream body chunks (→ cut)'),
  SHADOWPLANE_SIDECAR_KEEPALIVE_TIMEOUT_MS: Int(1, 3_600_000)
    .default(65_000)
    .describe('idle keep-alive timeout of client connections, ms'),
  SHADOWPLANE_SIDECAR_LISTEN_BACKLOG: Int(1, 65_535)
    .default(4096)
    .describe(
      "accept queue of the proxy listener, connections (the kernel caps it at net.core.somaxconn); Node's default of 511 overflowed when a router opened 1,000 connections at once, and each dropped handshake waited 1 s for a retransmit",
    ),
  SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS: Int(0, 3_600_000)
    .default(30_000)
    .describe('on SIGTERM: most ms to wait for in-flight requests'),
  SHADOWPLANE_SIDECAR_DRAIN_IDLE_GRACE_MS: Int(0, 3_600_000)
    .default(1000)
    .describe(
      'on SIGTERM: ms an idle keep-alive connection stays open for a request its client already sent (served, then closed); at most the drain timeout',
    ),
  SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: Int(0, 600_000)
    .default(5_000)
    .describe('on SIGTERM: most ms to publish queued captures after requests drained'),
  SHADOWPLANE_SIDECAR_PROVISION: EnvBool.default(true).describe(
    'create the streams, KV buckets and object stores the roles share (CAPTURE, OBS, five buckets, the artifact and capture-body stores) when missing, at connect and after each reconnect (idempotent)',
  ),
});
export type SidecarEnv = z.infer<typeof SidecarEnv>;

const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name')
  .transform((s) => s.toLowerCase());

/** One route: requests whose Host and/or path prefix match go to `upstream` (first match wins). */
export const RouteSpec = z
  .object({
    /** path prefix, e.g. `/openai/`; default `/` (all) */
    path_prefix: z.string().startsWith('/').default('/'),
    /** Host header to match (port ignored, case-insensitive); any when absent */
    host: z.string().min(1).optional(),
    upstream: HttpUrl,
    /** remove `path_prefix` from the path before appending it to the upstream's base path */
    strip_prefix: z.boolean().default(false),
    /** forward the client's Host header instead of the upstream's */
    preserve_host: z.boolean().default(false),
    placement: z.enum(['ingress', 'egress']).default('ingress'),
  })
  .strict();
export type RouteSpec = z.infer<typeof RouteSpec>;

/**
 * One sampling rule (first match wins). `path_prefix`, `host` and `headers` are matched from the
 * request line and headers before the body is read; `models` can only be checked once the body is
 * seen, so it is applied at capture time (a non-matching model drops the capture with reason
 * `model_filtered` after the header already said `queued`).
 */
export const SamplingRuleSpec = z
  .object({
    name: z.string().min(1).max(100).optional(),
    path_prefix: z.string().startsWith('/').optional(),
    host: z.string().min(1).optional(),
    /** header → exact value, or `*` for "present" */
    headers: z.record(HeaderName, z.string()).optional(),
    /** model names; a trailing `*` matches a prefix */
    models: z.array(z.string().min(1)).min(1).optional(),
    suite: SubjectToken.optional(),
    /** default: derived from the wire API (openai_chat, openai_responses, anthropic_messages, openrouter_chat) */
    call_type: SubjectToken.optional(),
    rate: z.number().min(0).max(1),
    /** overrides the global sticky header for this rule; `null` = random sampling */
    sticky_header: HeaderName.nullable().optional(),
    traffic_class: TrafficClass.optional(),
  })
  .strict();
export type SamplingRuleSpec = z.infer<typeof SamplingRuleSpec>;

/** The YAML config file (`--config`): routes and sampling. Every key optional. */
export const SidecarFile = z
  .object({
    routes: z.array(RouteSpec).min(1).optional(),
    sampling: z
      .object({
        /** default rate for requests no rule matches (overrides SHADOWPLANE_SIDECAR_SAMPLE) */
        rate: z.number().min(0).max(1).optional(),
        suite: SubjectToken.optional(),
        sticky_header: HeaderName.optional(),
        /** honour x-shadow-suite / x-shadow-call-type opt-in headers (default SHADOWPLANE_SIDECAR_OPT_IN, false) */
        opt_in: z.boolean().optional(),
        /** rate applied to opt-in requests (default 1: every opted-in request) */
        opt_in_rate: z.number().min(0).max(1).default(1),
        rules: z.array(SamplingRuleSpec).default([]),
        /** expectations added to every capture of this sidecar (in addition to x-shadow-expect) */
        expectations: z.array(SubmittedExpectation).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type SidecarFile = z.infer<typeof SidecarFile>;
