/** What the control API's route handlers share: their type and the boolean query flag reader. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest } from './errors.js';
import { QueryBool } from './routes.js';

/** A route handler; its result (when not sent on `reply`) is the JSON answer. */
export type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Handlers by the `operationId` of their route in ROUTES. */
export type Handlers = Record<string, Handler>;

const TRUE = new Set(['true', '1']);

/**
 * A boolean query parameter: absent → false; `true`/`1` → true, `false`/`0` → false.
 * @throws ShadowplaneError 400 invalid_request naming the parameter for anything else
 */
export function queryFlag(req: FastifyRequest, name: string): boolean {
  const v = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return false;
  const r = QueryBool.safeParse(v);
  if (!r.success) throw invalidRequest([{ path: name, message: 'must be true, false, 1 or 0' }]);
  return TRUE.has(r.data);
}
