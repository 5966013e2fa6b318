// `shadowctl campaign …`: create (or --dry-run), list, status, watch, pause, resume, stop.
import type { Command } from 'commander';
import { CampaignList, CampaignStatus, DryRunResult } from '@shadowplane/contracts';
import type { ControlClient } from './client.js';
import { CliError, EXIT } from './exit-codes.js';
import { watchCampaign } from './watch.js';
import { id, intOption, parseDoc } from './cli-io.js';

/**
 * Registers the `campaign` command group on `p`. `watch` sets `state.code` (its exit code) and
 * writes to `out`, in JSON lines when `json()` says --json was given.
 */
export function registerCampaignCommands(
  p: Command,
  client: () => ControlClient,
  print: (value: unknown, text: () => string) => void,
  state: { code: number },
  out: NodeJS.WriteStream,
  json: () => boolean,
): void {
  const campaign = p
    .command('campaign')
    .description('launch, list, watch, pause, resume and stop campaigns')
    .exitOverride();
  campaign
    .command('create')
    .description('launch a campaign from a spec file (YAML or JSON), or plan it with --dry-run')
    .requiredOption('-f, --file <spec>', 'campaign spec, YAML or JSON')
    .option('--dry-run', 'estimate cost, power plan and dispositions; nothing is written', false)
    .option('--require-power', 'refuse if a call type cannot reach the margin at max_items', false)
    .action(async (o: { file: string; dryRun: boolean; requirePower: boolean }) => {
      const spec = parseDoc(o.file);
      if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
        throw new CliError(EXIT.dataError, `${o.file} must hold a mapping (the campaign spec)`);
      const body = {
        ...(spec as Record<string, unknown>),
        ...(o.dryRun ? { dry_run: true } : {}),
        ...(o.requirePower ? { require_power: true } : {}),
      };
      if (o.dryRun) {
        const d = await client().post(DryRunResult, '/v1/campaigns', body);
        const usd = (x: number | null): string => (x === null ? 'unknown' : `$${x.toFixed(4)}`);
        print(d, () =>
          [
            `dry run: ${d.would_launch ? 'would launch' : 'would NOT launch'}`,
            `worst case ${d.estimate.worst_case_total_usd === null ? 'unknown (an arm has no rate card)' : `$${d.estimate.worst_case_total_usd.toFixed(4)}`} (estimate) for budget $${d.estimate.max_cost_usd}; items affordable per call type: ${d.estimate.items_affordable ?? 'unknown'}`,
            ...d.power.map(
              (x) =>
                `power ${x.call_type}: MDE ${x.mde_pp === null ? 'n/a' : `${x.mde_pp.toFixed(2)} pp`} vs margin ${x.margin_pp} pp → ${x.powered ? 'powered' : 'underpowered'}${x.design_effect_source ? ` (prior sd, design effect ${x.design_effect ?? 1} from ${x.design_effect_source})` : ''}`,
            ),
            ...(d.stopping ?? []).map(
              (x) =>
                `spend ${x.call_type} (${x.rule}): fixed pays ${x.worst_case_items} items, ${usd(x.worst_case_usd)} (worst case of every rule); sequential expected (simulated) ${x.sequential.scenarios.map((sc) => `${sc.scenario} ${sc.expected_items} items ${usd(sc.expected_usd)}`).join(', ')}${x.group_sequential ? `; group_sequential (${x.group_sequential.planned_looks} planned looks) expected (simulated) ${x.group_sequential.scenarios.map((sc) => `${sc.scenario} ${sc.expected_items} items ${usd(sc.expected_usd)}`).join(', ')}` : ''}`,
            ),
            ...d.dispositions.map(
              (x) =>
                `${x.call_type}: ${x.disposition}${x.reasons.length ? ` (${x.reasons.join(', ')})` : ''}${x.warnings.length ? ` warnings: ${x.warnings.join(', ')}` : ''}`,
            ),
          ].join('\n'),
        );
      } else {
        const r = await client().post(CampaignStatus, '/v1/campaigns', body);
        const c = r.campaign;
        print(r, () => `${c.id} ${c.state} (run ${c.run_index}); watch with: shadowctl campaign watch ${c.id}`);
      }
    });
  campaign
    .command('list')
    .description('list campaigns, newest first')
    .option('--state <state>', 'only campaigns in this state')
    .action(async (o: { state?: string }) => {
      const r = await client().get(CampaignList, `/v1/campaigns${o.state ? `?state=${id(o.state)}` : ''}`);
      print(r, () =>
        r.campaigns.length
          ? r.campaigns
              .map(
                (c) =>
                  `${c.id}  ${c.state.padEnd(16)} run ${c.run_index}  ${c.spend ? `$${c.spend.settled_usd.toFixed(4)}/$${c.spend.limit_usd}` : 'no ledger'}  ${c.created_at}  ${c.name}`,
              )
              .join('\n')
          : 'no campaigns',
      );
    });
  campaign
    .command('get <id>')
    .description('state, progress, spend and per-arm counts of a campaign')
    .action(async (cid: string) => {
      const r = await client().get(CampaignStatus, `/v1/campaigns/${id(cid)}`);
      print(r, () =>
        [
          `${r.campaign.id} ${r.campaign.state}  ${r.campaign.spec.name}`,
          `spend: ${r.spend ? `$${r.spend.settled_usd} settled + $${r.spend.reserved_usd} reserved of $${r.spend.limit_usd}` : 'no ledger'}`,
          ...r.call_types.map(
            (c) => `${c.call_type}: ${c.items_dispatched}/${c.items_target} dispatched, ${c.items_seen} seen`,
          ),
          ...r.arms.map(
            (a) =>
              `${a.arm_id}: ok ${a.calls_ok}, errors ${Object.values(a.calls_error).reduce((x, y) => x + y, 0)}, abandoned ${a.abandoned}`,
          ),
        ].join('\n'),
      );
    });
  campaign
    .command('watch <id>')
    .description('live progress until the campaign ends and its final report is written')
    .option('--interval-ms <ms>', 'poll period, ms', '1000')
    .option('--report-timeout-s <s>', 'after the end, how long to wait for the report, s', '300')
    .action(async (cid: string, o: { intervalMs: string; reportTimeoutS: string }) => {
      const intervalMs = intOption('--interval-ms', o.intervalMs, 10);
      const reportTimeoutS = intOption('--report-timeout-s', o.reportTimeoutS, 0);
      state.code = await watchCampaign(client(), cid, { intervalMs, reportTimeoutS, json: json(), out });
    });
  for (const action of ['pause', 'resume', 'stop'] as const) {
    campaign
      .command(`${action} <id>`)
      .description(`${action} a campaign`)
      .action(async (cid: string) => {
        const r = await client().post(CampaignStatus, `/v1/campaigns/${id(cid)}/${action}`);
        print(r, () => `${r.campaign.id} ${r.campaign.state}`);
      });
  }
}
