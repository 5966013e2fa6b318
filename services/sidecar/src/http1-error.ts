// The error every HTTP/1.1 parser of the proxy throws (shared by http1.ts and its parts).

/** A message the proxy refuses; `status` and `code` are what the client is answered with. */
export class HttpSyntaxError extends Error {
  constructor(
    /** HTTP status for the answer: 400, 417, 431, 501 or 505 */
    readonly status: number,
    /** stable error code from the contracts catalogue */
    readonly code: 'malformed_http' | 'headers_too_large' | 'not_implemented' | 'expectation_failed',
    message: string,
  ) {
    super(message);
  }
}
