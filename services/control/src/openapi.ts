import { z } from 'zod';
import { ERROR_CODES } from '@shadowplane/contracts';
import { LaunchOptionsBody, ROUTES, type RouteDef } from './routes.js';
import { ErrorBody } from '@shadowplane/contracts';

type Json = Record<string, unknown>;

/** JSON Schema (2020-12, as OpenAPI 3.1 uses) of a zod schema, without the `$schema` marker. */
export function jsonSchema(s: z.ZodType, io: 'input' | 'output' = 'output'): Json {
  const out = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  delete out['$schema'];
  return out;
}

function requestBodySchema(r: RouteDef): Json {
  const base = jsonSchema(r.body!, 'input');
  if (r.operationId !== 'createCampaign') return base;
  // The launch options ride beside the spec; they are stripped before the spec is parsed.
  const opts = jsonSchema(LaunchOptionsBody, 'input');
  return { ...base, properties: { ...(base['properties'] as Json), ...(opts['properties'] as Json) } };
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request / invalid_json / unknown_provider: details.issues names each offending field',
  401: 'unauthenticated: no or unknown bearer key (WWW-Authenticate: Bearer)',
  403: 'forbidden: the key lacks the scope this route needs',
  404: 'not_found / report_not_ready',
  409: 'conflict: the campaign is in a state that does not allow this change',
  413: 'payload_too_large: the body is larger than the configured limit',
  415: 'unsupported_media_type: the body is not application/json (details.content_type names what was sent)',
  422: 'underpowered: require_power was set and a call type cannot reach the margin',
  500: 'internal',
  503: 'paid_dispatch_disabled / dependency_unavailable',
};

/**
 * Builds the OpenAPI 3.1 document of the control API from the route table and the same zod
 * schemas that validate requests (contracts) and describe responses (views).
 * Source: OpenAPI Specification 3.1.0 (https://spec.openapis.org/oas/v3.1.0).
 */
export function buildOpenApi(version: string): Json {
  const paths: Record<string, Json> = {};
  for (const r of ROUTES) {
    const responses: Json = {};
    for (const [status, res] of Object.entries(r.responses)) {
      const content: Json = {
        [res.mediaType ?? (res.schema ? 'application/json' : 'text/plain')]: res.schema
          ? { schema: jsonSchema(res.schema) }
          : { schema: { type: 'string' } },
      };
      for (const [mediaType, alt] of Object.entries(res.alternatives ?? {}))
        content[mediaType] = {
          schema: {
            ...(alt.schema ? jsonSchema(alt.schema) : { type: 'string' }),
            ...(alt.description ? { description: alt.description } : {}),
          },
        };
      responses[status] = { description: res.description, content };
    }
    const errs = new Set([...r.errors, 500, 503, ...(r.scope ? [401, 403] : []), ...(r.body ? [415] : [])]);
    for (const status of [...errs].sort()) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? 'error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.path.startsWith('/v1/') ? r.path.split('/')[2] : 'ops'],
      responses,
      security: r.scope ? [{ bearerAuth: [r.scope] }] : [],
    };
    if (r.scope) op['x-required-scope'] = r.scope;
    if (r.params?.length) {
      op['parameters'] = r.params.map((p) => ({
        name: p.name,
        in: p.in,
        description: p.description,
        required: p.in === 'path' ? true : (p.required ?? false),
        schema: jsonSchema(p.schema, 'input'),
      }));
    }
    if (r.body) {
      op['requestBody'] = {
        required: true,
        description: r.bodyDescription,
        content: { 'application/json': { schema: requestBodySchema(r) } },
      };
      if (r.bodyDescription === undefined) delete (op['requestBody'] as Json)['description'];
    }
    paths[r.path] = { ...(paths[r.path] ?? {}), [r.method.toLowerCase()]: op };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shadowplane control API',
      version,
      description:
        'Launch, watch and stop budget-capped shadow campaigns; record first-party outcomes; read reports and dataset cards; flip the paid_dispatch kill switch. Errors are {error:{code,message,details?}}; codes: ' +
        Object.keys(ERROR_CODES).join(', '),
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: jsonSchema(ErrorBody) },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'API key (scopes: campaign:read, campaign:write, outcome:write, admin)',
        },
      },
    },
  };
}
