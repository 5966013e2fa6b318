import { closeSync, createReadStream, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Command, CommanderError } from 'commander';
import { parse as parseYaml } from 'yaml';
import { Campaign, CampaignSpec, ObsMessage, StoredCampaignSpec } from '@shadowplane/contracts';
import {
  ObsTable,
  foldReport,
  obsInterner,
  writeCanonicalJson,
  type FoldObs,
  type FoldResult,
} from '@shadowplane/evidence';
import { renderReportHtml } from '@shadowplane/reports';

/**
 * Builds the spec for an offline fold from the observations alone (no --spec): the arm with role
 * `incumbent` is the incumbent, every `candidate` arm a candidate, call types and suite from the
 * observations, every other field at its CampaignSpec default; max_cost_usd is what the
 * observations were charged (Σ charged_micro_usd, rounded up to a cent). The report names it.
 * @throws Error when there is no incumbent observation, or a value of the file does not fit a
 *   campaign spec (e.g. a model name over 200 characters): the message names the field
 */
export function specFromObservations(obs: readonly FoldObs[]): CampaignSpec {
  const arm = (role: string) =>
    [
      ...new Map(
        obs
          .filter((o) => o.role === role)
          .map((o) => [
            o.arm_id,
            { id: o.arm_id, provider: o.provider.replace(/[^a-z0-9_-]/g, '') || 'unknown', model: o.model },
          ]),
      ).values(),
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
  const inc = arm('incumbent')[0];
  if (!inc) throw new Error('no incumbent observation in the file; pass --spec');
  const spent = obs.reduce((a, o) => a + o.charged_micro_usd, 0) / 1e6;
  const derived = CampaignSpec.safeParse({
    name: 'offline fold: spec derived from observations (no pinned spec given)',
    suite: 'offline',
    call_types: [...new Set(obs.map((o) => o.call_type))].sort(),
    incumbent: inc,
    candidates: arm('candidate'),
    max_cost_usd: Math.max(0.01, Math.ceil(spent * 100) / 100),
    traffic_classes: [...new Set(obs.map((o) => o.traffic_class))].sort(),
  });
  if (derived.success) return derived.data;
  // values a campaign spec refuses (a model name over 200 characters, say) came from the file
  const issue = derived.error.issues[0]!;
  throw new Error(
    `the observations cannot be read as a campaign spec (${issue.path.join('.')}: ${issue.message}); pass the run's pinned spec with --spec`,
  );
}

/**
 * Outcome of {@link readObsFile}: the observations (as columns) and the other messages, or the
 * error line and the exit code (65 bad data, 66 unreadable).
 */
export type ReadObsResult =
  { ok: true; observations: ObsTable; messages: ObsMessage[] } | { ok: false; exitCode: 65 | 66; error: string };

/**
 * Reads an exported observations file as a stream, one line at a time (the file is never one
 * string), validating each non-blank line as an OBS message with the contracts schema (the same
 * strictness as the verdict service). Each observation goes into an ObsTable as it is read (compact columns; the
 * parsed object is dropped at once), the other messages into a list. Stops at the first bad line: `FILE:LINE: not JSON: ...` or
 * `FILE:LINE: not an OBS message: <first 3 issues>` (exit code 65); `cannot read FILE` (66).
 */
export async function readObsFile(file: string): Promise<ReadObsResult> {
  const messages: ObsMessage[] = [];
  // hundreds of thousands of observations: held as columns, not as parsed objects (obs-table.ts)
  const observations = new ObsTable();
  const intern = obsInterner((v) => observations.intern(v));
  let lineNo = 0;
  try {
    const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const raw of lines) {
      lineNo++;
      const l = raw.trim();
      if (!l) continue;
      let json: unknown;
      try {
        json = JSON.parse(l);
      } catch (e) {
        lines.close();
        return { ok: false, exitCode: 65, error: `${file}:${lineNo}: not JSON: ${(e as Error).message}` };
      }
      const r = ObsMessage.safeParse(json);
      if (!r.success) {
        lines.close();
        const issues = r.error.issues
          .map((x) => `${x.path.join('.')}: ${x.message}`)
          .slice(0, 3)
          .join('; ');
        return { ok: false, exitCode: 65, error: `${file}:${lineNo}: not an OBS message: ${issues}` };
      }
      if (r.data.schema === 'shadow.observation/v1') observations.add(r.data);
      // their repeated strings (item hashes, campaign id, schema) become the table's own copies
      else messages.push(intern(r.data));
    }
  } catch (e) {
    return { ok: false, exitCode: 66, error: `cannot read ${file}: ${(e as Error).message}` };
  }
  return { ok: true, observations, messages };
}

/** Writes `v` as canonical JSON to `path` in chunks (a bundle of hundreds of MB is never one string). */
function writeJsonFile(path: string, v: unknown): void {
  const fd = openSync(path, 'w');
  try {
    writeCanonicalJson(v, (chunk) => {
      const b = Buffer.from(chunk, 'utf8');
      for (let off = 0; off < b.length;) off += writeSync(fd, b, off);
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * Entry point of `shadowplane fold OBS.jsonl [--spec run-spec.yaml] [--json out|-] [--run-record out|-] [--html out.html] [--bundle out.json]`.
 * Folds an exported observations file (one OBS message per line, outputs filled in) into the same
 * report the verdict service writes, and the run record of that run. `--json` writes the report's
 * canonical JSON (its sha256 without report_id is the report id: the same evidence gives the same
 * bytes whatever the campaign id or timing); `--run-record` writes the run record's canonical JSON
 * (campaign id/state, window, latency/TTFT/skew percentiles; points at the report). The HTML and
 * the bundle hold both. Without any output option the report JSON goes to stdout. Both ids go to stderr.
 * Exit codes: 0 ok, 64 usage, 65 bad data (a line that is not an OBS message, or nothing to
 * report), 66 input file missing.
 */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('shadowplane fold')
    .argument('<obs-file>', 'exported observations, one JSON message per line')
    .option('--spec <file>', 'pinned run spec (YAML/JSON CampaignSpec, or a Campaign record with id and run_index)')
    .option('--campaign-id <id>', 'campaign id (default: from the spec record or the observations)')
    .option('--run-index <n>', 'run index for α-spending (default: from the campaign record, else 1)')
    .option('--provisional', 'mark the report provisional', false)
    .option('--json <file>', "write the report JSON here ('-' for stdout)")
    .option('--run-record <file>', "write the run record JSON here ('-' for stdout)")
    .option('--html <file>', 'write the HTML report here')
    .option('--bundle <file>', 'write the evidence bundle here')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 64;
    throw e;
  }
  const o = program.opts<{
    spec?: string;
    campaignId?: string;
    runIndex?: string;
    provisional: boolean;
    json?: string;
    runRecord?: string;
    html?: string;
    bundle?: string;
  }>();
  const file = program.args[0]!;
  // the messages live only inside readAndFold: they are garbage before the bundle is written
  const r = await readAndFold(file, o);
  if (typeof r === 'number') return r;
  if (o.html) writeFileSync(o.html, renderReportHtml(r.report, r.runRecord, { bundle: r.bundle }));
  if (o.bundle) writeJsonFile(o.bundle, r.bundle);
  if (o.json && o.json !== '-') writeFileSync(o.json, r.reportJson);
  if (o.runRecord && o.runRecord !== '-') writeFileSync(o.runRecord, r.runRecordJson);
  if (o.json === '-' || (!o.json && !o.runRecord && !o.html && !o.bundle)) process.stdout.write(`${r.reportJson}\n`);
  if (o.runRecord === '-') process.stdout.write(`${r.runRecordJson}\n`);
  process.stderr.write(
    `report ${r.reportId}\nrun record ${r.runRecordId}\n${(r.report.verdict_text ?? []).join('\n')}\n`,
  );
  return 0;
}

/** Options of `shadowplane fold` that {@link readAndFold} reads. */
interface FoldOptions {
  spec?: string;
  campaignId?: string;
  runIndex?: string;
  provisional: boolean;
}

/**
 * Reads `file`, resolves the spec, campaign id and run index from `o`, and folds. Returns the fold
 * result, or the exit code after writing the error to stderr (64 usage, 65 bad data, 66 unreadable).
 */
async function readAndFold(file: string, o: FoldOptions): Promise<FoldResult | number> {
  const read = await readObsFile(file);
  if (!read.ok) {
    process.stderr.write(`shadowplane fold: ${read.error}\n`);
    return read.exitCode;
  }
  const { messages, observations } = read;
  let spec: CampaignSpec;
  let campaignId = o.campaignId ?? (observations.length > 0 ? observations.row(0).campaign_id : undefined);
  let runIndex = o.runIndex ? Number(o.runIndex) : undefined;
  let state: string | null = null;
  try {
    if (o.spec) {
      const doc = parseYaml(readFileSync(o.spec, 'utf8')) as unknown;
      // a record or a bare spec is folded as pinned (StoredCampaignSpec): a pattern RE2 refuses
      // scores null, it does not refuse the fold
      const asCampaign = Campaign.safeParse(doc);
      if (asCampaign.success) {
        spec = asCampaign.data.spec;
        campaignId = o.campaignId ?? asCampaign.data.id;
        runIndex ??= asCampaign.data.run_index;
        state = asCampaign.data.state;
      } else spec = StoredCampaignSpec.parse(doc);
    } else {
      try {
        spec = specFromObservations(Array.from({ length: observations.length }, (_, r) => observations.row(r)));
      } catch (e) {
        // no spec was given: the data is what cannot be folded (65), not the command line
        process.stderr.write(`shadowplane fold: ${(e as Error).message}\n`);
        return 65;
      }
    }
  } catch (e) {
    process.stderr.write(`shadowplane fold: bad spec: ${(e as Error).message}\n`);
    return 64;
  }
  if (!campaignId) {
    process.stderr.write('shadowplane fold: no campaign id (no observations and no --campaign-id)\n');
    return 65;
  }
  if (runIndex !== undefined && !(Number.isInteger(runIndex) && runIndex >= 1)) {
    process.stderr.write('shadowplane fold: --run-index must be an integer >= 1\n');
    return 64;
  }
  try {
    return foldReport({
      campaign: { campaign_id: campaignId, spec, run_index: runIndex ?? 1, state },
      messages,
      observations,
      // the bundle is hashed, written and dropped: its rows are built as they are read
      lazyRows: true,
      // and the table is dropped after it: its output texts are freed once everything is scored
      releaseOutputs: true,
      provisional: o.provisional,
    });
  } catch (e) {
    process.stderr.write(`shadowplane fold: ${(e as Error).message}\n`);
    return 65;
  }
}
