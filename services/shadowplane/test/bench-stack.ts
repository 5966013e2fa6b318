// The stack the Bench lifecycle's integration tests run on: the control API (in process, over a
// real nats-server), a duplicator worker, the verdict service and, unless the test needs an
// address that accepts no connection, provider-sim as the arms' upstream.
import { generateKey, loadKeyring } from '@shadowplane/artifacts';
import type { ProviderEntry } from '@shadowplane/contracts';
import { auth, fixture, type Fixture } from '@shadowplane/control/testing';
import { startDuplicator, type DuplicatorHandle } from '@shadowplane/duplicator';
import { startProviderSim, type ProviderSim } from '@shadowplane/provider-sim';
import { randomPrefix, sharedNatsUrl, testDuplicatorConfig, testVerdictConfig, waitFor } from '@shadowplane/testkit';
import { startVerdict, type VerdictHandle } from '@shadowplane/verdict';

/** Polls `fn` every 200 ms until it gives a truthy value, which it returns; throws naming `what` after `timeoutMs`. */
export const until = <T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 90_000) =>
  waitFor(what, fn, { timeoutMs, intervalMs: 200 });

/** A running stack ({@link startBenchStack}). */
export interface BenchStack {
  /** the control API fixture: `app` (inject), `bus` */
  f: Fixture;
  /** the arms' upstream, null with `noUpstream` */
  sim: ProviderSim | null;
  worker: DuplicatorHandle;
  verdict: VerdictHandle;
  /** the environment the duplicator reads keys from (SIM_KEY, SHADOWPLANE_ARTIFACT_KEY) */
  env: Record<string, string>;
  /** One control API request with `key` as the bearer, `payload` as its JSON body. */
  req(
    method: 'GET' | 'POST',
    url: string,
    key: string,
    payload?: unknown,
  ): Promise<Awaited<ReturnType<Fixture['app']['inject']>>>;
  /** Waits until campaign `id` is `completed`, then for its final (not provisional) report answer. */
  finalReport(id: string, readKey: string): Promise<any>;
  close(): Promise<void>;
}

/**
 * Starts the stack under a fresh subject prefix. The one provider is `sim-openai` (openai.chat at
 * provider-sim, seed 17), or with `noUpstream` `nowhere`: port 9 on loopback, where nothing
 * listens, so any arm call fails.
 * @param name prefix stem and duplicator name
 */
export async function startBenchStack(name: string, o: { noUpstream?: boolean } = {}): Promise<BenchStack> {
  const env = { SIM_KEY: o.noUpstream ? 'sk-unused' : 'sk-sim', SHADOWPLANE_ARTIFACT_KEY: generateKey() };
  const sim = o.noUpstream ? null : await startProviderSim({ datasetPath: '', seed: 17 });
  const providers: ProviderEntry[] = [
    sim
      ? { id: 'sim-openai', base_url: `${sim.url}/v1`, api: 'openai.chat', api_key_env: 'SIM_KEY' }
      : { id: 'nowhere', base_url: 'http://127.0.0.1:9/v1', api: 'openai.chat', api_key_env: 'SIM_KEY' },
  ];
  const prefix = randomPrefix(name);
  const f = await fixture({ flag: true, providers, prefix });
  const worker = await startDuplicator(testDuplicatorConfig(sharedNatsUrl(), prefix, name), { providers, env });
  const verdict = await startVerdict(testVerdictConfig(sharedNatsUrl(), prefix, loadKeyring(env)));
  const req: BenchStack['req'] = async (method, url, key, payload) =>
    f.app.inject({
      method,
      url,
      headers: { ...auth(key), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  return {
    f,
    sim,
    worker,
    verdict,
    env,
    req,
    async finalReport(id, readKey) {
      await until(`campaign ${id} to complete`, async () => {
        const s = (await req('GET', `/v1/campaigns/${id}`, readKey)).json();
        return s.campaign.state === 'completed';
      });
      return until(`the final report of ${id}`, async () => {
        const r = await req('GET', `/v1/campaigns/${id}/report`, readKey);
        return r.statusCode === 200 && r.json().provisional === false ? (r.json() as any) : null;
      });
    },
    async close() {
      await worker.close();
      await verdict.close();
      await f.close();
      await sim?.close();
    },
  };
}
