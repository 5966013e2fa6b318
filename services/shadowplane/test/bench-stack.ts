// The stack the Bench lifecycle's integration tests run on: the control API (in process, over a
// real nats-server), a duplicator worker, the verdict service, unless the test needs an address
// that accepts no connection, provider-sim as the arms' upstream, and on request a sidecar that
// captures production traffic into the stack (retaining served outputs if asked).
import { generateKey, loadKeyring } from '@shadowplane/artifacts';
import type { ProviderEntry } from '@shadowplane/contracts';
import { auth, fixture, type Fixture } from '@shadowplane/control/testing';
import { startDuplicator, type DuplicatorHandle } from '@shadowplane/duplicator';
import { startProviderSim, type ProviderSim, type ProviderSimOptions } from '@shadowplane/provider-sim';
import { loadConfig, startSidecar, type SidecarHandle } from '@shadowplane/sidecar';
import { randomPrefix, sharedNatsUrl, testDuplicatorConfig, testVerdictConfig, waitFor } from '@shadowplane/testkit';
import { startVerdict, type VerdictHandle } from '@shadowplane/verdict';

/** Polls `fn` every 200 ms until it gives a truthy value, which it returns; throws naming `what` after `timeoutMs`. */
export const until = <T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 180_000) =>
  waitFor(what, fn, { timeoutMs, intervalMs: 200 });

/** A running stack ({@link startBenchStack}). */
export interface BenchStack {
  /** the control API fixture: `app` (inject), `bus` */
  f: Fixture;
  /** the arms' upstream, null with `noUpstream` */
  sim: ProviderSim | null;
  /** the sidecar, with the `sidecar` option (else null) */
  sidecar: SidecarHandle | null;
  worker: DuplicatorHandle;
  verdict: VerdictHandle;
  /** the environment the duplicator reads keys from (SIM_KEY, SHADOWPLANE_ARTIFACT_KEY) */
  env: Record<string, string>;
  /** One control API request with `key` as the bearer, `payload` as its JSON body. */
  req(
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    key: string,
    payload?: unknown,
  ): Promise<Awaited<ReturnType<Fixture['app']['inject']>>>;
  /** Waits until campaign `id` is `completed`, then for its final (not provisional) report answer. */
  finalReport(id: string, readKey: string): Promise<any>;
  close(): Promise<void>;
}

/** Options of {@link startBenchStack}. */
export interface BenchStackOptions {
  /** no provider-sim: the one provider is `nowhere` (port 9 on loopback), so any arm call fails */
  noUpstream?: boolean;
  /** provider-sim's options (default: no dataset of known answers, seed 17) */
  sim?: ProviderSimOptions;
  /**
   * a sidecar on the stack's prefix in front of `upstream` (a URL), sampling every request with
   * opt-in headers honoured and captures built at once; with `retainServedTtlDays` it retains the
   * served outputs of consenting requests for that many days, sealed with the stack's artifact key
   */
  sidecar?: { upstream: string; retainServedTtlDays?: number };
}

/**
 * Starts the stack under a fresh subject prefix. The one provider is `sim-openai` (openai.chat at
 * provider-sim), or with `noUpstream` `nowhere`.
 * @param name prefix stem and duplicator name
 */
export async function startBenchStack(name: string, o: BenchStackOptions = {}): Promise<BenchStack> {
  const env = { SIM_KEY: o.noUpstream ? 'sk-unused' : 'sk-sim', SHADOWPLANE_ARTIFACT_KEY: generateKey() };
  const sim = o.noUpstream ? null : await startProviderSim(o.sim ?? { datasetPath: '', seed: 17 });
  const providers: ProviderEntry[] = [
    sim
      ? { id: 'sim-openai', base_url: `${sim.url}/v1`, api: 'openai.chat', api_key_env: 'SIM_KEY' }
      : { id: 'nowhere', base_url: 'http://127.0.0.1:9/v1', api: 'openai.chat', api_key_env: 'SIM_KEY' },
  ];
  const prefix = randomPrefix(name);
  const f = await fixture({ flag: true, providers, prefix });
  const sidecar = o.sidecar ? await startStackSidecar(o.sidecar, prefix, env.SHADOWPLANE_ARTIFACT_KEY) : null;
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
    sidecar,
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
      await sidecar?.stop();
      await worker.close();
      await verdict.close();
      await f.close();
      await sim?.close();
    },
  };
}

/** The sidecar of {@link BenchStackOptions.sidecar}, connected to the shared nats-server under `prefix`. */
async function startStackSidecar(
  o: NonNullable<BenchStackOptions['sidecar']>,
  prefix: string,
  artifactKey: string,
): Promise<SidecarHandle> {
  const args = ['--listen', '127.0.0.1:0', '--ops-listen', '127.0.0.1:0', '--upstream', o.upstream];
  const retain =
    o.retainServedTtlDays === undefined
      ? {}
      : {
          SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true',
          SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS: String(o.retainServedTtlDays),
          SHADOWPLANE_ARTIFACT_KEY: artifactKey,
        };
  const loaded = loadConfig([...args, '--nats', sharedNatsUrl(), '--prefix', prefix, '--sample', '1'], {
    SHADOWPLANE_LOG_LEVEL: 'warn',
    SHADOWPLANE_SIDECAR_OPT_IN: 'true',
    SHADOWPLANE_SIDECAR_CAPTURE_BATCH_MS: '0',
    ...retain,
  });
  if (loaded.kind !== 'config') throw new Error('sidecar config');
  return startSidecar(loaded.config, { natsRetryMs: 200 });
}
