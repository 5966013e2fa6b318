/**
 * `shadowplane up`: the whole stack in one command, from a config folder (default
 * `examples/config/`): a private JetStream nats-server it starts and stops, provider-sim as the
 * upstream (unless `--no-sim`), the sidecar, a duplicator, the verdict service and the control API;
 * with provider-sim it turns paid_dispatch on and launches the folder's campaign. Prints the URLs,
 * `export SHADOWPLANE_URL=…` / `export SHADOWPLANE_API_KEY=…` lines for shadowctl in another
 * shell, then `shadowplane up: ready`. Ctrl-C (or SIGTERM) drains every role and exits 0.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { EX_USAGE, parseArgs } from './cli-args.js';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { API_KEY_SCOPES, CampaignSpec, generateApiKey, hashApiKey, type ProviderEntry } from '@shadowplane/contracts';
import { ConfigError, loadProviderAllowlist } from '@shadowplane/config';
import { ProcessGroup, STACK_ROOT } from '@shadowplane/stack';
import { startNatsServer } from '@shadowplane/stack';

const EX_CONFIG = 78;
/** Where the example providers file points provider-sim; `up` serves the sim there (or rewrites it to the port it got). */
const SIM_ORIGIN = 'http://127.0.0.1:4000';

interface UpOptions {
  config?: string;
  sim: boolean;
  upstream?: string;
  campaign: boolean;
  ephemeral: boolean;
  sample: string;
  logs?: string;
}

/** The config folder: `--config`, else `./examples/config`, else the one shipped beside the binary. */
function configDir(o: UpOptions): string {
  if (o.config) return resolve(o.config);
  const local = resolve('examples/config');
  return existsSync(local) ? local : join(STACK_ROOT, 'examples', 'config');
}

/** Reads and checks the folder's three files; errors name the file and field (exit 78). */
function readConfig(dir: string): {
  providers: ProviderEntry[];
  apiKeys: unknown[];
  campaign: CampaignSpec | null;
  campaignText: unknown;
} {
  const need = (f: string) => {
    const p = join(dir, f);
    if (!existsSync(p)) throw new ConfigError([{ key: p, message: 'missing (see examples/config/README.md)' }]);
    return p;
  };
  const providers = loadProviderAllowlist(need('providers.yaml'));
  const keysDoc = parseYaml(readFileSync(need('api-keys.yaml'), 'utf8')) as unknown;
  const apiKeys = Array.isArray(keysDoc)
    ? keysDoc
    : keysDoc === null
      ? []
      : ((keysDoc as { keys?: unknown[] }).keys ?? []);
  const campaignPath = join(dir, 'campaign.yaml');
  let campaign: CampaignSpec | null = null;
  let campaignText: unknown = null;
  if (existsSync(campaignPath)) {
    campaignText = parseYaml(readFileSync(campaignPath, 'utf8')) as unknown;
    const r = CampaignSpec.safeParse(campaignText);
    if (!r.success)
      throw new ConfigError(
        r.error.issues.map((i) => ({ key: `${campaignPath}[${i.path.join('.')}]`, message: i.message })),
      );
    campaign = r.data;
  }
  return { providers, apiKeys, campaign, campaignText };
}

/** Entry point. Exit codes: 0 stopped cleanly, 1 a role failed to start, 64 usage, 78 bad config. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('shadowplane up')
    .description(
      'start the whole stack from a config folder (providers, API keys, a campaign) on this machine; Ctrl-C drains it',
    )
    .option('--config <dir>', 'config folder (default ./examples/config)')
    .option(
      '--no-sim',
      'do not start provider-sim; the providers file names real providers (paid_dispatch stays as it is)',
    )
    .option('--upstream <url>', `what the sidecar forwards to (default: provider-sim, ${SIM_ORIGIN})`)
    .option('--no-campaign', "do not launch the folder's campaign.yaml")
    .option(
      '--ephemeral',
      'every listener on a free port instead of the defaults (sidecar 8080, control 8090, provider-sim 4000)',
      false,
    )
    .option('--sample <rate>', "the sidecar's sample rate, 0–1", '1')
    .option('--logs <dir>', "write each role's log here (default: a folder in the session directory, removed at exit)");
  const parsed = parseArgs(program, argv);
  if (parsed !== null) return parsed;
  const o = program.opts<UpOptions>();
  const sample = Number(o.sample);
  if (!(sample >= 0 && sample <= 1)) {
    process.stderr.write(`shadowplane up: --sample must be a number in [0, 1], got '${o.sample}'\n`);
    return EX_USAGE;
  }
  const dir = configDir(o);
  let cfg: ReturnType<typeof readConfig>;
  try {
    cfg = readConfig(dir);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(
        `shadowplane up: bad config in ${dir}:\n${e.issues.map((i) => `  ${i.key}: ${i.message}`).join('\n')}\n`,
      );
      return EX_CONFIG;
    }
    throw e;
  }
  const say = (l: string) => process.stdout.write(`${l}\n`);
  const work = mkdtempSync(join(tmpdir(), 'shadowplane-up-'));
  const logDir = o.logs ? resolve(o.logs) : join(work, 'logs');
  mkdirSync(logDir, { recursive: true });
  const group = new ProcessGroup(logDir);
  group.onStop(async () => rmSync(work, { recursive: true, force: true }));
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= group.stopAll());
  const port = (p: number) => (o.ephemeral ? 0 : p);
  try {
    const nats = await startNatsServer();
    group.onStop(() => nats.stop());
    say(`nats        ${nats.url} (private JetStream server, store in the session folder)`);

    // secrets for this session only, in a private folder removed at exit
    const adminKey = generateApiKey();
    const keys = [
      ...cfg.apiKeys,
      {
        id: 'up-session',
        hash: hashApiKey(adminKey),
        scopes: [...API_KEY_SCOPES],
      },
    ];
    writeFileSync(join(work, 'api-keys.yaml'), toYaml(keys), { mode: 0o600 });
    writeFileSync(join(work, 'artifact.key'), randomBytes(32).toString('base64'), { mode: 0o600 });
    const env: Record<string, string> = {
      SHADOWPLANE_NATS_URL: nats.url,
      SHADOWPLANE_LOG_LEVEL: process.env.SHADOWPLANE_LOG_LEVEL ?? 'warn',
      SHADOWPLANE_SIM_API_KEY: process.env.SHADOWPLANE_SIM_API_KEY ?? `sk-sim-${randomBytes(8).toString('hex')}`,
    };

    let providers = cfg.providers;
    let simUrl: string | null = null;
    if (o.sim) {
      const sim = await group.startRole('provider-sim', 'provider-sim', ['--listen', `127.0.0.1:${port(4000)}`], {});
      simUrl = String(sim.ready.url).replace(/\/$/, '');
      providers = providers.map((p) =>
        p.base_url.startsWith(SIM_ORIGIN) ? { ...p, base_url: simUrl + p.base_url.slice(SIM_ORIGIN.length) } : p,
      );
      say(`provider-sim ${simUrl} (simulated OpenAI/Anthropic/OpenRouter upstream: sim-large, sim-medium, sim-small)`);
    }
    writeFileSync(join(work, 'providers.yaml'), toYaml({ providers }));
    const upstream = o.upstream ?? simUrl;
    if (!upstream) throw new Error('--no-sim needs --upstream <url>: the sidecar must forward somewhere');

    const sidecar = await group.startRole(
      'sidecar',
      'sidecar',
      [
        '--listen',
        `127.0.0.1:${port(8080)}`,
        '--ops-listen',
        `127.0.0.1:${port(9464)}`,
        '--upstream',
        upstream,
        '--nats',
        nats.url,
        '--sample',
        String(sample),
        '--suite',
        cfg.campaign?.suite ?? 'default',
      ],
      env,
    );
    say(
      `sidecar     ${sidecar.ready.url} → ${upstream} (sampling ${sample * 100}%, suite ${cfg.campaign?.suite ?? 'default'})`,
    );
    const shared = {
      ...env,
      SHADOWPLANE_PROVIDERS_FILE: join(work, 'providers.yaml'),
      SHADOWPLANE_ARTIFACT_KEY_FILE: join(work, 'artifact.key'),
    };
    const dup = await group.startRole('duplicator', 'duplicator', [], {
      ...shared,
      SHADOWPLANE_DUPLICATOR_OPS_LISTEN: `127.0.0.1:${port(9465)}`,
    });
    say(`duplicator  ops ${dup.ready.url}`);
    const verdict = await group.startRole('verdict', 'verdict', [], {
      ...env,
      SHADOWPLANE_ARTIFACT_KEY_FILE: join(work, 'artifact.key'),
      SHADOWPLANE_VERDICT_OPS_LISTEN: `127.0.0.1:${port(9466)}`,
    });
    say(`verdict     ops ${verdict.ready.url}`);
    const control = await group.startRole('control', 'control', [], {
      ...shared,
      SHADOWPLANE_CONTROL_LISTEN: `127.0.0.1:${port(8090)}`,
      SHADOWPLANE_CONTROL_API_KEYS_FILE: join(work, 'api-keys.yaml'),
    });
    const controlUrl = String(control.ready.url).replace(/\/$/, '');
    say(`control     ${controlUrl} (OpenAPI at ${controlUrl}/openapi.json)`);

    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${controlUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, json: (await r.json().catch(() => null)) as Record<string, any> | null };
    };
    if (o.sim && !o.upstream && cfg.campaign && o.campaign) {
      // only simulated money can be spent: the kill switch goes on for this session's own NATS
      const flag = await api('PUT', '/v1/admin/flags/paid_dispatch', {
        enabled: true,
        reason: 'shadowplane up: provider-sim only',
      });
      if (flag.status !== 200) throw new Error(`turning paid_dispatch on failed: ${flag.status}`);
      const launched = await api('POST', '/v1/campaigns', cfg.campaignText);
      if (launched.status !== 201)
        throw new Error(
          `launching ${join(dir, 'campaign.yaml')} failed: ${launched.status} ${JSON.stringify(launched.json?.error ?? null)}`,
        );
      const c = launched.json!.campaign;
      say(
        `campaign    ${c.id} "${c.spec.name}" running (max_cost_usd ${c.spec.max_cost_usd}; call types ${c.spec.call_types.join(', ')})`,
      );
    } else if (cfg.campaign && o.campaign) {
      say(
        `campaign    not launched: real providers spend real money. Turn paid_dispatch on, then: shadowctl campaign create -f ${join(dir, 'campaign.yaml')}`,
      );
    }
    say('');
    say('# in another shell:');
    say(`export SHADOWPLANE_URL=${controlUrl}`);
    say(`export SHADOWPLANE_API_KEY=${adminKey}`);
    say(
      `# send traffic through ${sidecar.ready.url} with header x-shadow-call-type: <call type> (e.g. ${cfg.campaign?.call_types[0] ?? 'gsm8k'}); watch with: npx shadowctl campaign list`,
    );
    say(`# logs: ${logDir}`);
    say('shadowplane up: ready (Ctrl-C drains and stops everything)');
  } catch (e) {
    process.stderr.write(`shadowplane up: ${(e as Error).message}\n(logs in ${logDir})\n`);
    await stop();
    return 1;
  }
  // wait for a signal, then drain: roles get SIGTERM (in-flight work finishes), then NATS stops
  const sig = await new Promise<NodeJS.Signals>((r) => {
    process.once('SIGINT', () => r('SIGINT'));
    process.once('SIGTERM', () => r('SIGTERM'));
  });
  say(`\n${sig}: draining every role`);
  const again = () => undefined; // a second Ctrl-C must not cut the drain short
  process.on('SIGINT', again);
  process.on('SIGTERM', again);
  await stop();
  say('shadowplane up: stopped');
  return 0;
}
