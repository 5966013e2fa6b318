import type { z } from 'zod';
import { ShadowplaneError, type ErrorCode } from '@shadowplane/contracts';

/** One offending field of a rejected request: a dotted path (e.g. `candidates.0.provider`) and why. */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * Flattens zod issues into `{path, message}` pairs. Unknown keys (`unrecognized_keys`) become one
 * issue per key with the key in the path, so the offending field is always named.
 * @param prefix path segments to prepend (e.g. `['spec']`)
 */
export function zodIssues(error: z.ZodError, prefix: (string | number)[] = []): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const i of error.issues) {
    const base = [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (i.code === 'unrecognized_keys') {
      for (const k of i.keys) out.push({ path: [...base, k].join('.'), message: 'unknown field' });
    } else {
      out.push({ path: base.join('.') || '(body)', message: i.message });
    }
  }
  return out;
}

/** A 400 `invalid_request` (or another code) naming the offending fields in `details.issues`. */
export function invalidRequest(
  issues: FieldIssue[],
  code: ErrorCode = 'invalid_request',
  message?: string,
): ShadowplaneError {
  const names = issues.map((i) => i.path).join(', ');
  return new ShadowplaneError(code, message ?? `invalid request: ${names}`, { details: { issues } });
}

/**
 * Parses `input` with `schema` or throws a 400 `invalid_request` naming every offending field.
 * @throws ShadowplaneError invalid_request
 */
export function parseOr400<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix: (string | number)[] = [],
): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data as z.infer<S>;
  throw invalidRequest(zodIssues(r.error, prefix));
}
