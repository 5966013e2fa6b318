// The fields the proxy does not forward as they arrived, one table per direction, and the
// Connection-header handling that extends them per message.
import {
  FIELD_CONNECTION,
  FIELD_CONTENT_LENGTH,
  FIELD_EXPECT,
  FIELD_HOST,
  FIELD_KEEP_ALIVE,
  FIELD_PROXY_AUTH,
  FIELD_PROXY_CONNECTION,
  FIELD_SHADOW,
  FIELD_SHADOW_CAPTURE,
  FIELD_TE,
  FIELD_TRAILER,
  FIELD_TRANSFER_ENCODING,
  FIELD_UPGRADE,
  HttpSyntaxError,
  type FieldScan,
} from '../http1.js';

/** One past the largest field id (http1.ts `FIELD_*`). */
const IDS = 16;

function table(ids: readonly number[]): Uint8Array {
  const t = new Uint8Array(IDS);
  for (const id of ids) t[id] = 1;
  return t;
}

// Hop-by-hop fields (RFC 9110 §7.6.1): Connection and the fields it lists (applyConnection),
// Proxy-Connection, Keep-Alive, TE, Transfer-Encoding, Upgrade; plus Trailer, which describes a
// framing the proxy re-applies itself, and Proxy-Authorization/-Authenticate, credentials for
// this hop only (RFC 9110 §11.7).
const HOP_BY_HOP = [
  FIELD_CONNECTION,
  FIELD_KEEP_ALIVE,
  FIELD_PROXY_CONNECTION,
  FIELD_TE,
  FIELD_TRANSFER_ENCODING,
  FIELD_UPGRADE,
  FIELD_TRAILER,
  FIELD_PROXY_AUTH,
];

/**
 * Request fields never forwarded, indexed by field id (1 = dropped): the hop-by-hop ones; Expect,
 * which the proxy answers itself; Host, which the forwarded head writes anew; and every
 * `x-shadow-*` field, the sidecar's own controls.
 */
export const REQUEST_DROPPED: Uint8Array = table([
  ...HOP_BY_HOP,
  FIELD_EXPECT,
  FIELD_HOST,
  FIELD_SHADOW,
  FIELD_SHADOW_CAPTURE,
]);

/**
 * Response fields never relayed, indexed by field id (1 = dropped): the hop-by-hop ones; Expect
 * (a request field); and `x-shadow-capture`, which the sidecar writes itself. An interim (1xx)
 * response also drops Content-Length: it has no body ({@link INTERIM_DROPPED}).
 */
export const RESPONSE_DROPPED: Uint8Array = table([...HOP_BY_HOP, FIELD_EXPECT, FIELD_SHADOW_CAPTURE]);

/** {@link RESPONSE_DROPPED} for an interim (1xx) response, which has no body framing to relay. */
export const INTERIM_DROPPED: Uint8Array = (() => {
  const t = RESPONSE_DROPPED.slice();
  t[FIELD_CONTENT_LENGTH] = 1;
  return t;
})();

export const V_KEEP_ALIVE = Uint8Array.from('keep-alive', (c) => c.charCodeAt(0));
export const V_CLOSE = Uint8Array.from('close', (c) => c.charCodeAt(0));

/** Fields a Connection header may not name: the message framing and the target host. */
const FRAMING_FIELDS = new Set(['content-length', 'transfer-encoding', 'host']);

/**
 * Applies a Connection field value (RFC 9110 §7.6.1): clears `kept[k]` for the fields of `fs` it
 * lists and returns true when it says `close`.
 * @throws HttpSyntaxError 400 `malformed_http` when it lists Content-Length, Transfer-Encoding or
 *   Host (a response's caller turns this into a 502)
 */
export function applyConnection(fs: FieldScan, kept: Uint8Array, value: string): boolean {
  let close = false;
  const listed = new Set<string>();
  for (const raw of value.toLowerCase().split(',')) {
    const t = raw.trim();
    if (t === 'close') close = true;
    else if (FRAMING_FIELDS.has(t)) {
      // removing these would strip the message's framing (or its Host) while its body is still
      // relayed: the next hop would read the body as another message — request smuggling
      throw new HttpSyntaxError(400, 'malformed_http', `the connection header lists ${t}, which frames the message`);
    } else if (t !== '' && t !== 'keep-alive') listed.add(t);
  }
  if (listed.size > 0)
    for (let k = 0; k < fs.n; k++) if (kept[k] === 1 && listed.has(fs.name(k).toLowerCase())) kept[k] = 0;
  return close;
}
