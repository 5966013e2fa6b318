/**
 * `shadowplane <role>`: one binary for every role. Each role module exports
 * `main(argv: string[]): Promise<number>` returning the process exit code.
 */
import { EXIT_CODES_LINE } from '@shadowplane/config';

type RoleMain = (argv: string[]) => Promise<number>;

/** Every role and command, with a one-line description and a lazy loader (roles load only when run). */
export const ROLES: Record<string, { describe: string; load: () => Promise<{ main: RoleMain }> }> = {
  sidecar: {
    describe: 'transparent streaming proxy beside the router; samples and captures',
    load: () => import('@shadowplane/sidecar/main'),
  },
  duplicator: {
    describe: 'consumes captures and re-invokes arms under budget and rate limits',
    load: () => import('@shadowplane/duplicator/main'),
  },
  control: {
    describe: 'REST API for campaigns, outcomes, datasets and the kill switch',
    load: () => import('@shadowplane/control/main'),
  },
  verdict: {
    describe: 'scores and folds observations into reports and evidence bundles',
    load: () => import('@shadowplane/verdict/main'),
  },
  'provider-sim': {
    describe: 'OpenAI/Anthropic/OpenRouter-compatible simulated upstream',
    load: () => import('@shadowplane/provider-sim/main'),
  },
  usage: {
    describe: 'print what Shadowplane would record for a recorded provider response',
    load: () => import('./usage.js'),
  },
  up: {
    describe:
      'start the whole stack from examples/config/ (NATS, provider-sim, every role, a campaign); Ctrl-C drains it',
    load: () => import('./up.js'),
  },
  ledger: {
    describe: 'the call ledger and per-arm comparison of an exported observations file (text or CSV)',
    load: () => import('./ledger.js'),
  },
  fold: {
    describe: 'fold an exported observations file into a report, offline',
    load: () => import('@shadowplane/verdict/fold'),
  },
  ctl: {
    describe: 'shadowctl, the operator CLI (same as the shadowctl binary)',
    load: () => import('@shadowplane/cli/main'),
  },
};

function usageText(): string {
  const lines = Object.entries(ROLES).map(([k, v]) => `  ${k.padEnd(14)} ${v.describe}`);
  return `Usage: shadowplane <role> [options]\n\nShadowplane: a shadow-duplicator data plane for LLM API traffic.\n\nOptions:\n  -h, --help     display help for command\n\nRoles:\n${lines.join('\n')}\n\nRun 'shadowplane <role> --help' for a role's options.\n\n${EXIT_CODES_LINE}\n`;
}

/**
 * Dispatches to a role.
 * @param argv arguments after the binary name: `[role, ...roleArgs]`
 * @returns exit code: the role's, 64 for a usage error
 */
export async function run(argv: string[]): Promise<number> {
  const [role, ...rest] = argv;
  if (!role || role === '--help' || role === '-h' || role === 'help') {
    process.stdout.write(usageText());
    return role ? 0 : 64;
  }
  const entry = ROLES[role];
  if (!entry) {
    process.stderr.write(`shadowplane: unknown role '${role}'\n\n${usageText()}`);
    return 64;
  }
  const mod = await entry.load();
  return mod.main(rest);
}
