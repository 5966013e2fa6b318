/**
 * The control API's error answers: every non-2xx answer is `{error:{code,message,details?}}` with a
 * code from ERROR_CODES, whether a handler threw a ShadowplaneError, fastify refused the request
 * (body too large, bad Content-Length, a router error before any route runs), NATS was not
 * reachable, or no route matched (404, or 405 with `Allow` when the path exists).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { isShadowplaneError, ShadowplaneError } from '@shadowplane/contracts';
import { invalidRequest } from './errors.js';
import { pathRegex, ROUTES } from './routes.js';

/** The path parameter a URL would fill (`id`, `hash`), for naming it in a router-level error. */
function paramOf(url: string): string {
  const path = url.split('?')[0] ?? '';
  for (const r of ROUTES) {
    const m = /\{(\w+)\}/.exec(r.path);
    if (m && pathRegex(r.path).test(path)) return m[1]!;
  }
  return '(url)';
}

/** Maps a fastify router error (raised before routing, so before auth) to a 4xx ShadowplaneError. */
export function frameworkError(err: { code?: string }, url: string): ShadowplaneError {
  const field = paramOf(url);
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return invalidRequest([{ path: field, message: 'too long' }]);
  return invalidRequest([{ path: field, message: 'not a valid URL component (bad percent-encoding)' }]);
}

/** Fastify's `frameworkErrors` option: a router error answered in our error shape, never fastify's bare one. */
export function sendFrameworkError(err: { code?: string }, req: { url: string }, reply: FastifyReply): void {
  const e = frameworkError(err, req.url);
  void reply.status(e.httpStatus).type('application/json').send(e.toBody());
}

function isDependencyError(e: unknown): boolean {
  const name = (e as { name?: string })?.name ?? '';
  const msg = String((e as Error)?.message ?? '');
  return (
    /Timeout|ClosedConnection|NoResponders|RequestError|Connection/i.test(name) ||
    /TIMEOUT|CONNECTION_CLOSED|connection closed|no responders|timeout/i.test(msg)
  );
}

/**
 * Whatever a request raised, as the ShadowplaneError it is answered with: fastify's body errors
 * become 413 payload_too_large / 400 invalid_request, a NATS failure 503 dependency_unavailable,
 * any other 4xx invalid_request and the rest 500 internal (the cause kept for the log).
 */
export function toApiError(err: unknown, bodyLimit: number): ShadowplaneError {
  const fe = err as { code?: string; statusCode?: number; message?: string };
  if (isShadowplaneError(err)) return err as ShadowplaneError;
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ShadowplaneError('payload_too_large', `the request body is larger than ${bodyLimit} bytes`, {
      details: { limit_bytes: bodyLimit, issues: [{ path: '(body)', message: `larger than ${bodyLimit} bytes` }] },
    });
  if (fe.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new ShadowplaneError('invalid_request', fe.message ?? 'bad request body');
  if (isDependencyError(err))
    return new ShadowplaneError('dependency_unavailable', 'NATS is not reachable; try again', { cause: err });
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return new ShadowplaneError('invalid_request', fe.message ?? 'bad request');
  return new ShadowplaneError('internal', 'an unexpected error; see the logs', { cause: err });
}

/**
 * Installs the error handler (internal errors logged at error, other 5xx at warn) and the
 * not-found handler (405 method_not_allowed with `Allow` when another method serves the path).
 */
export function registerErrorHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler(async (err: unknown, req, reply) => {
    const e = toApiError(err, bodyLimit);
    if (e.code === 'internal') req.log.error({ err, code: e.code }, 'request failed');
    else if (e.httpStatus >= 500) req.log.warn({ code: e.code, message: e.message }, 'request refused');
    return reply.status(e.httpStatus).type('application/json').send(e.toBody());
  });

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const allowed = ROUTES.filter((r) => pathRegex(r.path).test(path)).map((r) => r.method);
    if (allowed.length) {
      reply.header('allow', [...new Set(allowed)].join(', '));
      return reply.status(405).send(
        new ShadowplaneError('method_not_allowed', `${req.method} is not allowed on ${path}`, {
          details: { allow: allowed },
        }).toBody(),
      );
    }
    return reply.status(404).send(new ShadowplaneError('not_found', `no route ${req.method} ${path}`).toBody());
  });
}
