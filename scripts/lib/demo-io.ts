import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { request } from 'undici';
import { REPO_ROOT } from './processes.js';
import type { ReplayRequest } from './traffic.js';

// The demo's conversations with the running stack: the control API, the replayed client calls,
// the progress lines it prints and shadowctl.

/** A control API call: status, parsed JSON (null for HTML or NDJSON) and the raw text. */
export type ControlApi = (
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
) => Promise<{ status: number; json: any; text: string }>;

/** A {@link ControlApi} on `controlUrl` with the operator key `adminKey`. */
export function controlApi(controlUrl: string, adminKey: string): ControlApi {
  return async (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: any; text: string }> => {
    const res = await request(`${controlUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* html or ndjson */
    }
    return { status: res.statusCode, json, text };
  };
}

/** Sends one replayed request through the sidecar as a router would (streamed ones read to the end). */
export async function replayOne(client: OpenAI, r: ReplayRequest): Promise<void> {
  const messages = [
    ...(r.system ? [{ role: 'system' as const, content: r.system }] : []),
    { role: 'user' as const, content: r.user },
  ];
  const headers = {
    'x-shadow-call-type': r.callType,
    ...(r.expectations.length ? { 'x-shadow-expect': JSON.stringify(r.expectations) } : {}),
  };
  if (r.stream) {
    const stream = await client.chat.completions.create(
      { model: 'sim-large', messages, max_tokens: r.maxTokens, stream: true, stream_options: { include_usage: true } },
      { headers },
    );
    for await (const _chunk of stream) {
      /* a router would forward these to its client */
    }
  } else {
    await client.chat.completions.create({ model: 'sim-large', messages, max_tokens: r.maxTokens }, { headers });
  }
}

/** The dry run's estimate, dispositions, power and stopping-rule items as one line. */
export function summariseDryRun(j: any): string {
  const est = j?.estimate?.worst_case_total_usd;
  const disp = (j?.dispositions ?? []).map((d: any) => `${d.call_type} ${d.disposition}`).join(', ');
  const power = (j?.power ?? []).map((p: any) => `${p.call_type} MDE ${Number(p.mde_pp).toFixed(1)} pp`).join(', ');
  const jw = j?.judge?.judge_worst_case_usd;
  const judge = j?.judge
    ? `; judge worst case ${jw === null || jw === undefined ? 'unknown' : `$${Number(jw).toFixed(2)}`} (apart, not summed)`
    : '';
  // spend under the stopping rules: the worst case, and the simulated expectation per scenario
  const expected = (rule: any): string =>
    (rule?.scenarios ?? [])
      .map((sc: any) => `${String(sc.scenario).replace('_', ' ')} ${Math.round(Number(sc.expected_items))}`)
      .join(' / ');
  const stopping = (j?.stopping ?? [])
    .map(
      (x: any) =>
        `${x.call_type}: fixed ${x.worst_case_items} items, sequential expected ${expected(x.sequential)}` +
        (x.group_sequential ? `, group_sequential expected ${expected(x.group_sequential)}` : ''),
    )
    .join('; ');
  return `worst case ${est === null || est === undefined ? 'unknown' : `$${Number(est).toFixed(2)}`} (basis estimate)${judge}; ${disp}; ${power}${stopping ? `; items by rule (simulated) ${stopping}` : ''}`;
}

/** Items dispatched over all call types of a campaign view. */
export function totalDispatched(view: any): number {
  const ct: any[] = view?.call_types ?? [];
  return ct.reduce((s: number, c: any) => s + Number(c?.items_dispatched ?? 0), 0);
}

/** One progress line of a campaign view: state, items per call type, spend. */
export function progressLine(view: any): string {
  const state = view?.campaign?.state ?? '?';
  const ct: any[] = view?.call_types ?? [];
  const items = ct.map((c: any) => `${c.call_type} ${c.items_dispatched}/${c.items_target}`).join(', ');
  const s = view?.spend ?? {};
  return `[${state}] items ${items || '0'} | spend $${Number(s.settled_usd ?? 0).toFixed(4)} settled + $${Number(s.reserved_usd ?? 0).toFixed(4)} reserved of $${Number(s.limit_usd ?? 0).toFixed(2)}`;
}

/** Runs `shadowctl <args>` from this checkout; resolves with its exit code and combined output. */
export async function runShadowctl(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'services', 'cli', 'bin', 'shadowctl.mjs'), ...args], {
      cwd: REPO_ROOT,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}
