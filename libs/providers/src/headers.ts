/**
 * Status and headers of a provider response, as a caller has them: a Node `IncomingHttpHeaders`
 * style record, a WHATWG `Headers` (undici/fetch), or ordered `[name, value]` pairs (as in the
 * fixture sidecars). Header names are matched case-insensitively.
 */
export interface ResponseMeta {
  /** HTTP status code */
  status: number;
  headers: Record<string, string | string[] | undefined> | Headers | [string, string][];
}

/**
 * Returns the first value of header `name` (case-insensitive), or null when absent.
 * Repeated headers in a record are given as arrays; the first element is returned.
 */
export function headerValue(headers: ResponseMeta['headers'] | undefined, name: string): string | null {
  if (headers === undefined || headers === null) return null;
  const want = name.toLowerCase();
  if (typeof (headers as Headers).get === 'function' && !Array.isArray(headers)) {
    return (headers as Headers).get(want);
  }
  if (Array.isArray(headers)) {
    for (const pair of headers) {
      if (Array.isArray(pair) && typeof pair[0] === 'string' && pair[0].toLowerCase() === want) return String(pair[1]);
    }
    return null;
  }
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== want || v === undefined) continue;
    if (Array.isArray(v)) return v.length > 0 ? String(v[0]) : null;
    return String(v);
  }
  return null;
}
