import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKv } from '@shadowplane/bus';
import { Campaign } from '@shadowplane/contracts';
import { auth, fixture, KEYS, validSpec, type Fixture } from '@shadowplane/control/testing';
import { seedProgress, seedReport } from '@shadowplane/control/testing';

// `shadowctl campaign watch` drawn in a real terminal: a detached tmux session (private socket,
// 120×30) runs the shadowctl binary against a live control API; the test moves the campaign's
// progress and spend in NATS and reads the screen back with `tmux capture-pane`.

const BIN = fileURLToPath(new URL('../bin/shadowctl.mjs', import.meta.url));
const SOCKET = `sp-watch-${process.pid}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const screen = () => tmux('capture-pane', '-p', '-t', 'watch');

async function waitForScreen(pred: (s: string) => boolean, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let s = '';
  while (Date.now() < deadline) {
    s = screen();
    if (pred(s)) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`screen never matched; last capture:\n${s}`);
}

function progress(dispatched: number, ok: number, errors: Record<string, number>) {
  return {
    call_types: {
      solve: {
        items_seen: dispatched + 5,
        items_unique: dispatched + 2,
        items_dispatched: dispatched,
        items_excluded: { pii_uncertain: 1 },
        duplicates: 3,
      },
    },
    arms: {
      large: { calls_ok: ok, calls_error: {}, abandoned: 0 },
      medium: { calls_ok: ok - 1, calls_error: errors, abandoned: 1 },
    },
  };
}

describe('shadowctl campaign watch in a terminal', () => {
  let f: Fixture;
  let url = '';
  let id = '';
  beforeAll(async () => {
    f = await fixture({ flag: true });
    url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    const res = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
      payload: validSpec({ name: 'watch demo' }),
    });
    id = res.json().campaign.id;
  });
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      /* already gone */
    }
    await f.close();
  });

  it(
    'draws progress that updates while the campaign runs, then exits 0 when the final report is written',
    { timeout: 240_000 },
    async () => {
      const budget = await openKv(f.bus, f.bus.names.buckets.budget);
      await seedProgress(f.bus, id, progress(3, 3, {}));
      await budget.put(
        id,
        JSON.stringify({
          limit_micro_usd: 12_500_000,
          reserved_micro_usd: 30_000,
          settled_micro_usd: 20_000,
          exhausted: false,
        }),
      );
      tmux(
        'new-session',
        '-d',
        '-s',
        'watch',
        '-x',
        '120',
        '-y',
        '30',
        '-e',
        `SHADOWPLANE_URL=${url}`,
        '-e',
        `SHADOWPLANE_API_KEY=${KEYS.read}`,
        '-e',
        'TERM=xterm-256color',
        `${process.execPath} ${BIN} campaign watch ${id} --interval-ms 200; echo "EXIT=$?"; sleep 60`,
      );
      const first = await waitForScreen((s) => s.includes('3/200 items') && s.includes('$0.0200 settled'), 120_000); // process start-up (tsx) is slow on a loaded machine
      expect(first).toContain(`${id} (watch demo)  state: running`);
      expect(first).toMatch(/solve\s+\|[█░]+\| 3\/200 items {2}seen 8 {2}unique 5 {2}dups 3 {2}excluded 1/);
      expect(first).toMatch(/spend\s+\|[█░]+\| \$0\.0200 settled \+ \$0\.0300 reserved of \$12\.50/);
      expect(first).toMatch(/\* large\s+ok 3 {2}errors 0 {2}abandoned 0/);

      await seedProgress(f.bus, id, progress(57, 60, { rate_limited: 2, upstream_5xx: 1 }));
      await budget.put(
        id,
        JSON.stringify({
          limit_micro_usd: 12_500_000,
          reserved_micro_usd: 40_000,
          settled_micro_usd: 910_000,
          exhausted: false,
        }),
      );
      const second = await waitForScreen((s) => s.includes('57/200 items') && s.includes('$0.9100 settled'));
      expect(second).not.toEqual(first);
      expect(second).toMatch(/solve\s+\|[█░]+\| 57\/200 items {2}seen 62/);
      expect(second).toMatch(/\$0\.9100 settled \+ \$0\.0400 reserved of \$12\.50/);
      expect(second).toMatch(/ {2}medium\s+ok 59 {2}errors 3 \(rate_limited 2, upstream_5xx 1\) {2}abandoned 1/);
      const dispatched = (s: string) => Number(/(\d+)\/200 items/.exec(s)![1]);
      expect(dispatched(second)).toBeGreaterThan(dispatched(first));
      process.stdout.write(`--- capture 1 ---\n${first}\n--- capture 2 ---\n${second}\n`);

      // the duplicator completes the campaign; watch keeps waiting until the verdict service writes the final report
      const kv = await openKv(f.bus, f.bus.names.buckets.campaigns);
      const c = Campaign.parse(JSON.parse((await kv.get(id))!.string()));
      await kv.put(
        id,
        JSON.stringify({
          ...c,
          state: 'completed',
          state_reason: 'max_items reached',
          updated_at: new Date().toISOString(),
        }),
      );
      await waitForScreen((s) => s.includes('waiting for the verdict service'));
      expect(screen()).not.toContain('EXIT=');
      await seedReport(f.bus, id);
      const done = await waitForScreen((s) => s.includes('EXIT='));
      expect(done).toMatch(/EXIT=0/);
      expect(done).toMatch(new RegExp(`campaign ${id} completed; report [0-9a-f]{64}`));
    },
  );
});
