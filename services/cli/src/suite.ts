/**
 * `shadowctl suite status <suite>` and
 * `shadowctl suite freeze <suite> [--max-items N] [--import items.jsonl | --synthetic template.yaml]`: the
 * readiness meter and the freeze of the control API (`GET /v1/suites/{suite}/status`,
 * `POST /v1/suites/{suite}/freeze`). Text output states readiness in qualified-evidence terms
 * (distinct items, clusters, exclusions by reason, the power plan's MDE at the margin), never
 * "ready"; `--json` prints the API's answer unchanged.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { FreezeResultView, SuiteStatusView, type PowerPlanValue } from '@shadowplane/contracts';
import type { ControlClient } from './client.js';
import { parseDoc } from './cli-io.js';
import { CliError, EXIT } from './exit-codes.js';

const counts = (r: Record<string, number> | undefined) =>
  Object.entries(r ?? {})
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';
const mde = (p: PowerPlanValue, margin: number) =>
  p.mde_pp === null
    ? 'MDE unknown'
    : `MDE ${p.mde_pp.toFixed(1)} pp at ${p.clusters} clusters (${p.mde_pp <= margin ? 'within' : 'wider than'} the ${margin} pp margin)`;

function maxItems(v: string): number {
  const n = /^\d{1,5}$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 5000)
    throw new CliError(EXIT.usage, `--max-items must be a whole number from 1 to 5000, got '${v}'`);
  return n;
}

/**
 * The items of a JSONL file for the `import` builder: one JSON object per non-empty line, sent as
 * they are (the control API validates each and names `builder.items.<i>` when one is wrong).
 * @throws CliError usage (64) when the file cannot be read or a line is not a JSON object, naming the line
 */
export function readJsonlItems(path: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(EXIT.usage, `--import: cannot read ${path}: ${(e as Error).message}`);
  }
  const items: unknown[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch (e) {
      throw new CliError(EXIT.usage, `--import: line ${i + 1} of ${path} is not JSON: ${(e as Error).message}`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      throw new CliError(EXIT.usage, `--import: line ${i + 1} of ${path} is not a JSON object`);
    items.push(v);
  });
  if (items.length === 0) throw new CliError(EXIT.usage, `--import: ${path} holds no items`);
  return items;
}

/**
 * The `synthetic` builder from a YAML or JSON file: a mapping `{call_type, api?, request,
 * reference?, rows | product}` (`kind: synthetic` may be given), sent as it is — the control API
 * validates it and names `builder.<field>` when something is wrong.
 * @throws CliError 66 (unreadable), 65 (not YAML/JSON, or not a mapping)
 */
export function readSyntheticBuilder(path: string): Record<string, unknown> {
  const doc = parseDoc(path);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new CliError(
      EXIT.dataError,
      `--synthetic: ${path} must hold a mapping {call_type, request, rows | product, …}`,
    );
  const kind = (doc as Record<string, unknown>)['kind'];
  if (kind !== undefined && kind !== 'synthetic')
    throw new CliError(
      EXIT.dataError,
      `--synthetic: ${path} names builder kind ${String(kind)}; omit kind or use synthetic`,
    );
  return { ...(doc as Record<string, unknown>), kind: 'synthetic' };
}

/** Adds `suite status` and `suite freeze` to the shadowctl program. */
export function registerSuiteCommands(
  p: Command,
  client: () => ControlClient,
  print: (value: unknown, text: () => string) => void,
): void {
  const suite = p.command('suite').description('suites: readiness and freezing captured traffic into datasets');
  suite
    .command('status <suite>')
    .description('per call type: confirmed captures, distinct items, clusters, exclusions, power plan, frozen dataset')
    .action(async (name: string) => {
      const r = await client().get(SuiteStatusView, `/v1/suites/${encodeURIComponent(name)}/status`);
      print(r, () =>
        [
          `suite ${r.suite} (margin ${r.settings.margin_pp} pp, α ${r.settings.alpha}, cap ${r.settings.max_items})`,
          ...r.call_types.flatMap((c) => [
            `${c.call_type}: ${c.confirmed_captures} captures confirmed, ${c.skip_markers} skipped at capture`,
            c.readiness
              ? `  ${c.readiness.distinct_items} distinct items (weight ${c.readiness.total_weight}) in ${c.readiness.near_duplicate_clusters} clusters; excluded: ${counts(c.readiness.exclusion_counts)}; ${mde(c.readiness.power_plan, r.settings.margin_pp)}`
              : '  nothing to freeze',
            c.frozen
              ? `  frozen ${c.frozen.dataset_hash} at ${c.frozen.frozen_at}${c.frozen.current ? ' (current)' : ' (captures changed since)'}`
              : '  not frozen',
          ]),
        ].join('\n'),
      );
    });
  suite
    .command('freeze <suite>')
    .description('freeze the captures into one immutable weighted dataset per call type (same captures → same hash)')
    .option('--max-items <n>', 'distinct items per call type, highest frequency kept (1–5000)', '500')
    .option(
      '--import <file.jsonl>',
      'freeze operator-supplied items instead of captures: one {call_type, api?, request, reference?} per line (traffic class import)',
    )
    .option(
      '--synthetic <file.yaml>',
      'freeze a request template expanded over variables: {call_type, api?, request, reference?, rows | product} (traffic class synthetic)',
    )
    .action(async (name: string, o: { maxItems: string; import?: string; synthetic?: string }) => {
      if (o.import !== undefined && o.synthetic !== undefined)
        throw new CliError(EXIT.usage, '--import and --synthetic are two builders: give one');
      const builder =
        o.import !== undefined
          ? { kind: 'import', items: readJsonlItems(o.import) }
          : o.synthetic !== undefined
            ? readSyntheticBuilder(o.synthetic)
            : undefined;
      const r = await client().post(FreezeResultView, `/v1/suites/${encodeURIComponent(name)}/freeze`, {
        max_items: maxItems(o.maxItems),
        ...(builder ? { builder } : {}),
      });
      print(r, () =>
        r.datasets
          .map(
            (d) =>
              `${d.call_type}: ${d.dataset_hash} ${d.created ? 'written' : 'unchanged (already frozen)'}; ${d.card.unique_items} items (weight ${d.card.total_weight}) in ${d.card.near_duplicate_clusters} clusters; excluded: ${counts(d.card.exclusion_counts)}${d.card.fit_eligibility ? `; ${d.card.fit_eligibility.eligible ? 'fit-eligible' : `not fit-eligible (${d.card.fit_eligibility.reasons.join(', ')})`}` : ''}`,
          )
          .join('\n'),
      );
    });
}
