/**
 * Request plumbing of the control API that runs around every route: JSON body parsing, bearer-key
 * authentication against the route's scope, and the per-request metrics and log line.
 */
import type { FastifyInstance } from 'fastify';
import { ShadowplaneError } from '@shadowplane/contracts';
import type { ApiKeyStore, Principal, Scope } from './auth.js';
import type { ControlMetrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: Scope | null;
    routePath?: string;
  }
  interface FastifyRequest {
    principal: Principal | null;
    startedAt: bigint;
  }
}

/**
 * Bodies are JSON: application/json (any parameters, e.g. charset) and the +json suffix types are
 * parsed, a malformed one is 400 invalid_json; a body of any other media type (a form post, text)
 * is 415 unsupported_media_type naming what was sent. An empty body is no body, whatever its type.
 * `bodyLimit` is in bytes.
 */
export function registerJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  const parseJson = (text: string, done: (err: Error | null, body?: unknown) => void): void => {
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(
        new ShadowplaneError('invalid_json', `the request body is not valid JSON: ${(e as Error).message}`, {
          details: { issues: [{ path: '(body)', message: 'not valid JSON' }] },
        }),
        undefined,
      );
    }
  };
  for (const type of ['application/json', /^application\/[a-z0-9.+-]*\+json$/i]) {
    app.addContentTypeParser(type, { parseAs: 'string', bodyLimit }, (_req, body, done) =>
      parseJson(typeof body === 'string' ? body : body.toString('utf8'), done),
    );
  }
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    const sent = req.headers['content-type'];
    done(
      new ShadowplaneError(
        'unsupported_media_type',
        sent
          ? `the request body is ${sent}; send it as JSON with Content-Type: application/json`
          : 'the request body has no Content-Type; send it as JSON with Content-Type: application/json',
        {
          details: {
            content_type: sent ?? null,
            accepted: ['application/json'],
            issues: [{ path: '(body)', message: 'not application/json' }],
          },
        },
      ),
      undefined,
    );
  });
}

/**
 * Authenticates a request to a scoped route (the route's `config.scope`; null = open) and sets
 * `req.principal`; also stamps `req.startedAt` for the duration metric.
 * @throws ShadowplaneError 401 unauthenticated (with `WWW-Authenticate`), 403 forbidden naming the scope
 */
export function registerAuth(app: FastifyInstance, keys: ApiKeyStore, metrics: ControlMetrics): void {
  app.addHook('onRequest', async (req, reply) => {
    req.startedAt = process.hrtime.bigint();
    const scope = req.routeOptions.config.scope;
    if (!scope) return;
    const principal = keys.authenticate(req.headers.authorization);
    if (!principal) {
      metrics.authFailures.inc({ reason: 'unauthenticated' });
      const presented = req.headers.authorization !== undefined;
      reply.header(
        'www-authenticate',
        presented ? 'Bearer realm="shadowplane", error="invalid_token"' : 'Bearer realm="shadowplane"',
      );
      throw new ShadowplaneError(
        'unauthenticated',
        presented ? 'the bearer key is not recognised' : 'an Authorization: Bearer <key> header is required',
      );
    }
    if (!principal.scopes.has(scope)) {
      metrics.authFailures.inc({ reason: 'forbidden' });
      throw new ShadowplaneError('forbidden', `this route needs the ${scope} scope`, {
        details: { required_scope: scope, key_id: principal.id },
      });
    }
    req.principal = principal;
  });
}

/** Counts and times every answered request by route pattern (or `unmatched`) and logs one line for it. */
export function registerRequestLog(app: FastifyInstance, metrics: ControlMetrics): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.config.routePath ?? 'unmatched';
    const seconds = Number(process.hrtime.bigint() - req.startedAt) / 1e9;
    metrics.requests.inc({ method: req.method, route, status: `${Math.floor(reply.statusCode / 100)}xx` });
    metrics.duration.observe({ method: req.method, route }, seconds);
    req.log.info(
      {
        method: req.method,
        route,
        statusCode: reply.statusCode,
        durationMs: Math.round(seconds * 1e4) / 10,
        keyId: req.principal?.id ?? null,
      },
      'request',
    );
  });
}
