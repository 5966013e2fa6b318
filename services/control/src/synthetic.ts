/**
 * Expansion of the `synthetic` freeze builder: a request template (and an optional reference
 * template) × variable bindings → one concrete request with its expectations per binding. Pure:
 * no I/O. The template syntax is Mustache's `{{name}}` (mustache.js parses it), restricted to plain
 * placeholders — no sections, partials, comments or delimiter changes, no dotted lookups — and
 * expanded inside string values only, never in keys and never by splicing JSON text, so a bound
 * value cannot change the request's structure. Nothing is escaped. A string that is exactly one
 * placeholder takes the value with its JSON type.
 *
 * Refusals (400 invalid_request, every issue naming its field): a malformed or non-placeholder tag,
 * a placeholder in a key, a variable the templates use that the bindings do not give ("unknown"),
 * a bound variable no template uses ("unused"), a row missing a variable, an expanded reference
 * that is not an expectation, an expanded request over IMPORT_ITEM_MAX_BYTES or all of them over
 * SYNTHETIC_MAX_TOTAL_BYTES, and one request expanded twice with different references.
 * Source: issue 17 item 2; contracts dataset-synthetic.ts.
 */
import Mustache from 'mustache';
import {
  canonicalJson,
  IMPORT_ITEM_MAX_BYTES,
  itemHash,
  MAX_ITEMS_CEILING,
  SYNTHETIC_MAX_TOTAL_BYTES,
  SubmittedExpectation,
  syntheticExpansionCount,
  TEMPLATE_VARIABLE,
  type Api,
  type Expectation,
  type SyntheticBuilder,
  type TemplateValue,
} from '@shadowplane/contracts';
import { WIRE_ADAPTERS } from '@shadowplane/providers';
import { invalidRequest, type FieldIssue } from './errors.js';

/** One expansion: the concrete request and its expectations, with the item hash they will carry. */
export interface SyntheticItem {
  call_type: string;
  api: Api;
  path: string;
  request: Record<string, unknown>;
  expectations: Expectation[];
  item_hash: string;
  /** where it came from, for messages: `rows.3` or `product #7 (a=1, b=x)` */
  label: string;
}

type Part = string | { v: string };
type Node =
  | { t: 'lit'; value: unknown }
  | { t: 'whole'; v: string }
  | { t: 'str'; parts: Part[] }
  | { t: 'arr'; items: Node[] }
  | { t: 'obj'; entries: [string, Node][] };

const TAGS: [string, string] = ['{{', '}}'];
const MAX_ISSUES = 20;

/** Parses one string into its parts, or records why it cannot be a template. */
function parseString(s: string, path: string, issues: FieldIssue[], uses: Map<string, string>): Node {
  if (!s.includes('{{')) return { t: 'lit', value: s };
  // a Writer of our own with no cache: the default one caches every template string forever
  const w = new Mustache.Writer();
  (w as unknown as { templateCache: undefined }).templateCache = undefined;
  let tokens: unknown[][];
  try {
    tokens = w.parse(s, TAGS) as unknown[][];
  } catch (e) {
    issues.push({ path, message: `not a valid template: ${(e as Error).message}` });
    return { t: 'lit', value: s };
  }
  const parts: Part[] = [];
  for (const tok of tokens) {
    const [type, value] = tok as [string, string];
    if (type === 'text') parts.push(value);
    else if (type === 'name' || type === '&') {
      if (!TEMPLATE_VARIABLE.test(value)) {
        issues.push({ path, message: `{{${value}}}: a variable is [A-Za-z_][A-Za-z0-9_]{0,63} (no dotted lookups)` });
        continue;
      }
      if (!uses.has(value)) uses.set(value, path);
      parts.push({ v: value });
    } else
      issues.push({
        path,
        message: `{{${type}${value}…}}: only {{name}} placeholders are allowed (no sections, partials, comments or delimiter changes)`,
      });
  }
  if (parts.length === 1 && typeof parts[0] !== 'string') return { t: 'whole', v: parts[0]!.v };
  return { t: 'str', parts };
}

/** Compiles a JSON value into a template tree, recording the variables it uses (first path of each). */
function compile(v: unknown, path: string, issues: FieldIssue[], uses: Map<string, string>): Node {
  if (typeof v === 'string') return parseString(v, path, issues, uses);
  if (Array.isArray(v)) return { t: 'arr', items: v.map((x, i) => compile(x, `${path}.${i}`, issues, uses)) };
  if (v !== null && typeof v === 'object') {
    const entries: [string, Node][] = [];
    for (const [k, x] of Object.entries(v)) {
      if (k.includes('{{'))
        issues.push({ path: `${path}.${k}`, message: 'placeholders are expanded in string values only, not in keys' });
      entries.push([k, compile(x, `${path}.${k}`, issues, uses)]);
    }
    return { t: 'obj', entries };
  }
  return { t: 'lit', value: v };
}

function render(n: Node, b: Record<string, TemplateValue>): unknown {
  switch (n.t) {
    case 'lit':
      return n.value;
    case 'whole':
      return b[n.v];
    case 'str':
      return n.parts.map((p) => (typeof p === 'string' ? p : String(b[p.v]))).join('');
    case 'arr':
      return n.items.map((x) => render(x, b));
    case 'obj':
      // fromEntries defines own members, so a `__proto__` key stays a member as JSON.parse made it
      return Object.fromEntries(n.entries.map(([k, x]) => [k, render(x, b)]));
  }
}

/** The bindings in expansion order: the rows, or the product with the last variable varying fastest. */
function* bindings(b: SyntheticBuilder): Generator<[string, Record<string, TemplateValue>]> {
  if (b.rows) {
    for (const [i, r] of b.rows.entries()) yield [`rows.${i}`, r];
    return;
  }
  const vars = Object.entries(b.product ?? {});
  const at = vars.map(() => 0);
  for (let i = 0; ; i++) {
    const row = Object.fromEntries(vars.map(([k, vs], j) => [k, vs[at[j]!]!]));
    const shown = vars.map(([k], j) => `${k}=${String(row[k]).slice(0, 40)}`).join(', ');
    yield [`product #${i} (${shown})`, row as Record<string, TemplateValue>];
    let j = vars.length - 1;
    for (; j >= 0; j--) {
      if (++at[j]! < vars[j]![1].length) break;
      at[j] = 0;
    }
    if (j < 0) return;
  }
}

/** Unknown and unused variables: the bindings must give exactly the variables the templates use. */
function checkVariables(b: SyntheticBuilder, uses: Map<string, string>, issues: FieldIssue[]): void {
  if (b.product) {
    const bound = Object.keys(b.product);
    for (const k of bound)
      if (!uses.has(k))
        issues.push({ path: `builder.product.${k}`, message: `variable ${k} is used by no template (unused)` });
    for (const [v, path] of uses)
      if (!bound.includes(v))
        issues.push({ path, message: `unknown variable {{${v}}}: product binds ${bound.join(', ') || 'nothing'}` });
    return;
  }
  const rows = b.rows ?? [];
  const boundAnywhere = new Set(rows.flatMap((r) => Object.keys(r)));
  for (const [v, path] of uses)
    if (!boundAnywhere.has(v)) issues.push({ path, message: `unknown variable {{${v}}}: no row binds it` });
  const reported = new Set<string>();
  for (const [i, r] of rows.entries()) {
    for (const k of Object.keys(r))
      if (!uses.has(k) && !reported.has(k)) {
        reported.add(k);
        issues.push({ path: `builder.rows.${i}.${k}`, message: `variable ${k} is used by no template (unused)` });
      }
    for (const v of uses.keys())
      if (boundAnywhere.has(v) && !(v in r) && !reported.has(`missing:${v}`)) {
        reported.add(`missing:${v}`);
        issues.push({ path: `builder.rows.${i}`, message: `binds no value for {{${v}}}, which the template uses` });
      }
  }
}

/** One expanded expectation parsed, or its zod issues named under `builder.reference`. */
function parseReference(raw: unknown, path: string, label: string, issues: FieldIssue[]): Expectation | null {
  const r = SubmittedExpectation.safeParse(raw); // a regex value must compile under RE2, as an import's
  if (r.success) return r.data;
  for (const i of r.error.issues)
    issues.push({
      path: [path, ...i.path.map(String)].join('.'),
      message: `${label} expands to an invalid expectation: ${i.message}`,
    });
  return null;
}

/**
 * Expands a synthetic builder into its requests, in expansion order (rows, or the product with the
 * last variable varying fastest). Identical expansions are kept (the freeze collapses them into
 * one weighted item).
 * @throws ShadowplaneError 400 invalid_request naming every offending field (see the module doc)
 */
export function expandSynthetic(b: SyntheticBuilder): SyntheticItem[] {
  const n = syntheticExpansionCount(b);
  const countPath = b.rows ? 'builder.rows' : 'builder.product';
  if (n > MAX_ITEMS_CEILING)
    throw invalidRequest([{ path: countPath, message: `expands to ${n} requests, more than ${MAX_ITEMS_CEILING}` }]);
  const issues: FieldIssue[] = [];
  const uses = new Map<string, string>();
  const request = compile(b.request, 'builder.request', issues, uses);
  const refs = b.reference === undefined ? [] : Array.isArray(b.reference) ? b.reference : [b.reference];
  const refPath = (j: number) => (Array.isArray(b.reference) ? `builder.reference.${j}` : 'builder.reference');
  const reference = refs.map((r, j) => compile(r, refPath(j), issues, uses));
  checkVariables(b, uses, issues);
  if (issues.length > 0) throw invalidRequest(issues.slice(0, MAX_ISSUES));

  // first every expansion's size and references (cheap), then the item hashes (canonical JSON)
  const rendered: { label: string; req: Record<string, unknown>; expectations: Expectation[] }[] = [];
  let total = 0;
  for (const [label, row] of bindings(b)) {
    const req = render(request, row) as Record<string, unknown>;
    const bytes = Buffer.byteLength(JSON.stringify(req));
    total += bytes;
    if (bytes > IMPORT_ITEM_MAX_BYTES)
      issues.push({
        path: 'builder.request',
        message: `${label} expands to ${bytes} bytes; at most ${IMPORT_ITEM_MAX_BYTES}`,
      });
    else if (total > SYNTHETIC_MAX_TOTAL_BYTES)
      issues.push({
        path: 'builder.request',
        message: `the expansions up to ${label} come to ${total} bytes; all together at most ${SYNTHETIC_MAX_TOTAL_BYTES}`,
      });
    const parsed = reference.map((r, j) => parseReference(render(r, row), refPath(j), label, issues));
    if (issues.length > 0) throw invalidRequest(issues.slice(0, MAX_ISSUES));
    rendered.push({ label, req, expectations: parsed as Expectation[] });
  }
  const path = WIRE_ADAPTERS[b.api].publicPath;
  const out: SyntheticItem[] = [];
  const seen = new Map<string, { expectations: string; label: string }>();
  for (const { label, req, expectations } of rendered) {
    const hash = itemHash(b.api, path, req);
    const key = canonicalJson(expectations);
    const prior = seen.get(hash);
    if (prior && prior.expectations !== key)
      throw invalidRequest([
        {
          path: refs.length > 0 ? 'builder.reference' : countPath,
          message: `${label} expands to the same request as ${prior.label} with a different reference`,
        },
      ]);
    if (!prior) seen.set(hash, { expectations: key, label });
    out.push({ call_type: b.call_type, api: b.api, path, request: req, expectations, item_hash: hash, label });
  }
  return out;
}
