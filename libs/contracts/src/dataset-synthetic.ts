/**
 * The `synthetic` freeze builder (`POST /v1/suites/{suite}/freeze`, `builder.kind: synthetic`):
 * one request template expanded over variable bindings into captures of traffic class
 * `synthetic`, then frozen like any capture.
 *
 * Template syntax: a `{{name}}` placeholder inside any string value of `request` or `reference`
 * (logic-less: no sections, partials, comments or delimiter changes; no nested lookups). A string
 * that is exactly one placeholder takes the bound value with its JSON type (so a numeric reference
 * can be `"{{answer}}"`); elsewhere the value is written into the string as text. Bindings are
 * either `rows` (one expansion per row) or `product` (the cartesian product of value lists, the
 * last variable varying fastest). The expansion itself lives in the control service.
 * Source: issue 17 item 2 (builders of the closed vocabulary).
 */
import { z } from 'zod';
import { MAX_ITEMS_CEILING } from './campaign.js';
import { Sha256Hex, SubjectToken } from './envelope.js';
import { Api } from './usage.js';

/** A template variable's name: a letter or `_`, then letters, digits or `_` (no dots: no nested lookups). */
export const TEMPLATE_VARIABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Most variables one synthetic builder may bind. */
export const SYNTHETIC_MAX_VARIABLES = 32;
/** Largest bound string value, characters. */
export const SYNTHETIC_MAX_VALUE_CHARS = 64 * 1024;
/** Largest sum of the expanded requests' JSON, bytes: a small template can expand to much more. */
export const SYNTHETIC_MAX_TOTAL_BYTES = 64 * 1024 * 1024;

const TemplateVariable = z.string().regex(TEMPLATE_VARIABLE, 'a variable is [A-Za-z_][A-Za-z0-9_]{0,63}');
/** A bound value: a scalar (a string, a finite number or a boolean). */
const TemplateValue = z.union([z.string().max(SYNTHETIC_MAX_VALUE_CHARS), z.number(), z.boolean()]);
export type TemplateValue = z.infer<typeof TemplateValue>;

const Bindings = z
  .record(TemplateVariable, TemplateValue)
  .refine((r) => Object.keys(r).length <= SYNTHETIC_MAX_VARIABLES, {
    message: `at most ${SYNTHETIC_MAX_VARIABLES} variables`,
  });

/**
 * `synthetic`: `request` (the body as it would be sent on `api`, default `openai.chat`) and the
 * optional `reference` (one expectation or a list, as an import item's) are templates; exactly one
 * of `rows` (a list of bindings, each naming every variable the templates use) or `product`
 * (variable → list of values). Every expansion becomes one envelope of traffic class `synthetic`
 * on `call_type`; identical expansions collapse into one item with their count as weight. The
 * number of expansions must not exceed the request's `max_items` (checked by `FreezeRequest`):
 * it is refused, never truncated.
 */
export const SyntheticBuilder = z
  .object({
    kind: z.literal('synthetic'),
    call_type: SubjectToken,
    api: Api.default('openai.chat'),
    request: z
      .record(z.string(), z.unknown())
      .describe(
        'the request body template: {{name}} placeholders in string values (a string that is exactly one placeholder takes the value with its JSON type); no sections, partials or placeholders in keys',
      ),
    reference: z
      .union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown())).min(1).max(64)])
      .optional()
      .describe('one expectation or a list ({kind: numeric, value: "{{answer}}"}, …), templated like request'),
    rows: z
      .array(Bindings)
      .min(1)
      .max(MAX_ITEMS_CEILING)
      .optional()
      .describe('one expansion per row: each row binds every variable the templates use, and no other'),
    product: z
      .record(TemplateVariable, z.array(TemplateValue).min(1).max(MAX_ITEMS_CEILING))
      .refine((r) => Object.keys(r).length >= 1 && Object.keys(r).length <= SYNTHETIC_MAX_VARIABLES, {
        message: `1 to ${SYNTHETIC_MAX_VARIABLES} variables`,
      })
      .optional()
      .describe('variable → list of values: one expansion per combination, the last variable varying fastest'),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.rows === undefined) === (b.product === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [b.rows === undefined ? 'rows' : 'product'],
        message: 'give exactly one of rows (a list of bindings) or product (variable → list of values)',
      });
  });
export type SyntheticBuilder = z.infer<typeof SyntheticBuilder>;

/**
 * How many expansions a synthetic builder makes: the rows, or the product of the value lists'
 * lengths (a float; beyond 2^53 it is only ordered, never compared exactly — the cap is 5000).
 */
export function syntheticExpansionCount(b: Pick<SyntheticBuilder, 'rows' | 'product'>): number {
  if (b.rows) return b.rows.length;
  return Object.values(b.product ?? {}).reduce((n, vs) => n * vs.length, 1);
}

/** The variables a synthetic builder binds, sorted (the union of the rows' keys, or the product's). */
export function syntheticVariables(b: Pick<SyntheticBuilder, 'rows' | 'product'>): string[] {
  const names = new Set<string>(b.rows ? b.rows.flatMap((r) => Object.keys(r)) : Object.keys(b.product ?? {}));
  return [...names].sort();
}

/**
 * The `synthetic` builder as a dataset records it: the call type and api, how it expanded
 * (`rows` / `product`), the variables, the number of expansions and `spec_hash` (contentHash of
 * the builder as parsed), not the template itself.
 */
export const SyntheticBuilderRecord = z
  .object({
    kind: z.literal('synthetic'),
    call_type: SubjectToken,
    api: Api,
    expansion: z.enum(['rows', 'product']),
    variables: z.array(z.string()),
    expanded_items: z.number().int().positive(),
    spec_hash: Sha256Hex,
  })
  .strict();
export type SyntheticBuilderRecord = z.infer<typeof SyntheticBuilderRecord>;
