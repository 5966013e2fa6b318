import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Command, Option } from 'commander';
import { EX_USAGE, parseArgs } from './cli-args.js';
import { z } from 'zod';
import { Api, RateCard } from '@shadowplane/contracts';
import type { Cost, ErrorClass, Usage } from '@shadowplane/contracts';
import { parseResponse, resolveCost } from '@shadowplane/providers';
import type { ResponseMeta } from '@shadowplane/providers';

/** Exit codes (sysexits.h): usage error, unreadable input, bad data. */
const EX_DATAERR = 65;
const EX_NOINPUT = 66;

/**
 * A recorded response's status and headers, as in the fixture sidecars
 * (`<file>.headers.json`): `{"status": 200, "reason": "OK", "headers": [[name, value], ...]}`.
 */
export const HeadersSidecar = z.object({
  status: z.number().int().min(100).max(999),
  reason: z.string().nullable().optional(),
  headers: z.array(z.tuple([z.string(), z.string()])),
});
export type HeadersSidecar = z.infer<typeof HeadersSidecar>;

/** What `shadowplane usage` prints: the fields an observation would record for this response. */
export interface UsageReport {
  api: Api;
  http_status: number;
  stream: boolean;
  usage: Usage;
  cost: Cost;
  provider_cost_usd: number | null;
  upstream: string | null;
  model_echo: string | null;
  response_id: string | null;
  finish_reason: string | null;
  abandoned: boolean;
  complete: boolean;
  error_class: ErrorClass | null;
  retry_after_s: number | null;
  error_message: string | null;
  output_chars: number;
  tool_calls: { name: string; arguments: string }[];
  output_text?: string;
  /** where status/headers came from: a sidecar path, or `default` (200, no headers) */
  headers_source: string;
}

/**
 * Parses `--prices in,out[,cached_in[,cache_write[,cache_write_1h]]]` (USD per million tokens) into a RateCard.
 * @throws Error naming the bad part
 */
export function parsePrices(s: string): RateCard {
  const parts = s.split(',').map((p) => p.trim());
  if (parts.length < 2 || parts.length > 5)
    throw new Error(
      `--prices wants in,out[,cached_in[,cache_write[,cache_write_1h]]] (USD per million tokens), got '${s}'`,
    );
  const nums = parts.map((p, i) => {
    if (!/^\d+(\.\d+)?$/.test(p)) throw new Error(`--prices part ${i + 1} ('${p}') is not a non-negative number`);
    return Number(p);
  });
  const card: RateCard = { input: nums[0]!, output: nums[1]! };
  if (nums[2] !== undefined) card.cached_input = nums[2];
  if (nums[3] !== undefined) card.cache_write = nums[3];
  if (nums[4] !== undefined) card.cache_write_1h = nums[4];
  return RateCard.parse(card);
}

/** Builds the report for a body and its meta (pure; the CLI wraps it). */
export function usageReport(
  api: Api,
  meta: ResponseMeta,
  body: Uint8Array,
  card: RateCard | undefined,
  headersSource: string,
  withText: boolean,
): UsageReport {
  const p = parseResponse(api, meta, body);
  return {
    api,
    http_status: p.status,
    stream: p.stream,
    usage: p.usage,
    cost: resolveCost(p, card),
    provider_cost_usd: p.providerCostUsd,
    upstream: p.upstream,
    model_echo: p.model,
    response_id: p.responseId,
    finish_reason: p.finishReason,
    abandoned: p.abandoned,
    complete: p.complete,
    error_class: p.errorClass,
    retry_after_s: p.retryAfterS,
    error_message: p.errorMessage,
    output_chars: p.outputText.length,
    tool_calls: p.toolCalls,
    ...(withText ? { output_text: p.outputText } : {}),
    headers_source: headersSource,
  };
}

/** Default largest body (read or decompressed) the command accepts, bytes. */
export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

/** A body over the byte limit: refused with exit 65 rather than read whole (or inflated) into memory. */
class TooLarge extends Error {}

async function readStdin(maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of process.stdin) {
    const b = typeof c === 'string' ? Buffer.from(c) : (c as Buffer);
    n += b.length;
    if (n > maxBytes) throw new TooLarge(`stdin is larger than --max-bytes ${maxBytes}`);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

async function readBounded(file: string, maxBytes: number): Promise<Uint8Array> {
  if (file === '-') return readStdin(maxBytes);
  const st = await stat(file);
  if (st.isFile() && st.size > maxBytes)
    throw new TooLarge(`${file} is ${st.size} bytes, larger than --max-bytes ${maxBytes}`);
  return readFile(file);
}

/**
 * `shadowplane usage --api <api> [--prices in,out[,cached_in[,cache_write[,cache_write_1h]]]] [--headers F]
 * [--status N] [--text] FILE...|-`: prints, as JSON, exactly what Shadowplane would record for a
 * recorded provider response (JSON body or raw SSE): usage, cost with basis, upstream/model
 * echo, finish reason, abandoned, error class, retry_after_s. Status and headers come from
 * `--headers F`, else `<FILE>.headers.json` when it exists (the `.json`/`.sse` extension of FILE
 * replaced, as in test/fixtures), else status 200 with no headers; `--status` overrides the status.
 * A body that starts with the gzip magic bytes is gunzipped first (a raw `Content-Encoding: gzip`
 * capture). One FILE prints one pretty-printed JSON object; several FILEs print one compact JSON object
 * per line (JSON Lines), in argument order, each read with the same flags.
 * A body (or its decompressed form) over `--max-bytes` (default 256 MiB) is refused, so a gzip
 * bomb or a runaway capture cannot exhaust memory.
 * @returns 0 when every report was printed (whatever the responses' own status); 64 bad flags;
 *   65 unreadable headers file, a body that does not decompress or is over --max-bytes; 66 unreadable input
 */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('shadowplane usage')
    .description('print what Shadowplane would record for a recorded provider response (JSON body or raw SSE)')
    .addOption(new Option('--api <api>', 'wire API of the response').choices(Api.options).makeOptionMandatory())
    .option(
      '--prices <in,out[,cached_in[,cache_write[,cache_write_1h]]]>',
      'rate card, USD per million tokens (cost basis rate_card when no provider-reported cost)',
    )
    .option('--headers <file>', 'status/headers sidecar JSON ({"status":..,"headers":[[name,value],...]})')
    .option('--status <code>', 'HTTP status to assume (overrides the sidecar)')
    .option('--text', 'include the output text')
    .option('--max-bytes <n>', `largest body, read or decompressed, in bytes (default ${DEFAULT_MAX_BYTES})`)
    .argument('<files...>', "response body file(s), or '-' for stdin");
  const parsed = parseArgs(program, argv);
  if (parsed !== null) return parsed;
  const opts = program.opts<{
    api: Api;
    prices?: string;
    headers?: string;
    status?: string;
    text?: boolean;
    maxBytes?: string;
  }>();
  if (opts.maxBytes !== undefined && !/^[1-9]\d{0,15}$/.test(opts.maxBytes)) {
    process.stderr.write(`shadowplane usage: --max-bytes must be a positive integer, got '${opts.maxBytes}'\n`);
    return EX_USAGE;
  }
  const maxBytes = opts.maxBytes === undefined ? DEFAULT_MAX_BYTES : Number(opts.maxBytes);
  const files = program.args;
  if (files.length > 1 && files.includes('-')) {
    process.stderr.write("shadowplane usage: '-' (stdin) cannot be combined with other files\n");
    return EX_USAGE;
  }
  if (files.length > 1 && opts.headers !== undefined) {
    process.stderr.write('shadowplane usage: --headers names one sidecar, so it takes exactly one FILE\n');
    return EX_USAGE;
  }

  let card: RateCard | undefined;
  if (opts.prices !== undefined) {
    try {
      card = parsePrices(opts.prices);
    } catch (e) {
      process.stderr.write(`shadowplane usage: ${(e as Error).message}\n`);
      return EX_USAGE;
    }
  }
  if (opts.status !== undefined && !/^\d{3}$/.test(opts.status)) {
    process.stderr.write(`shadowplane usage: --status must be a 3-digit HTTP status, got '${opts.status}'\n`);
    return EX_USAGE;
  }

  const reports: UsageReport[] = [];
  for (const file of files) {
    let body: Uint8Array;
    try {
      body = await readBounded(file, maxBytes);
    } catch (e) {
      if (e instanceof TooLarge) {
        process.stderr.write(`shadowplane usage: ${e.message}\n`);
        return EX_DATAERR;
      }
      process.stderr.write(`shadowplane usage: cannot read ${file}: ${(e as Error).message}\n`);
      return EX_NOINPUT;
    }
    // A capture saved as the raw gzip entity (Content-Encoding: gzip) is decoded first.
    if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
      try {
        body = gunzipSync(body, { maxOutputLength: maxBytes });
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
          process.stderr.write(`shadowplane usage: ${file} decompresses to more than --max-bytes ${maxBytes} bytes\n`);
          return EX_DATAERR;
        }
        process.stderr.write(
          `shadowplane usage: ${file} looks gzip-compressed but does not decompress: ${(e as Error).message}\n`,
        );
        return EX_DATAERR;
      }
    }
    let headersPath = opts.headers;
    if (headersPath === undefined && file !== '-') {
      const beside = `${file.replace(/\.(json|sse|txt)$/, '')}.headers.json`;
      if (existsSync(beside)) headersPath = beside;
    }
    let meta: ResponseMeta = { status: 200, headers: [] };
    if (headersPath !== undefined) {
      try {
        const side = HeadersSidecar.parse(JSON.parse(await readFile(headersPath, 'utf8')));
        meta = { status: side.status, headers: side.headers };
      } catch (e) {
        process.stderr.write(`shadowplane usage: bad headers file ${headersPath}: ${(e as Error).message}\n`);
        return EX_DATAERR;
      }
    }
    if (opts.status !== undefined) meta = { ...meta, status: Number(opts.status) };
    reports.push(usageReport(opts.api, meta, body, card, headersPath ?? 'default', opts.text === true));
  }
  if (reports.length === 1) process.stdout.write(`${JSON.stringify(reports[0], null, 2)}\n`);
  else process.stdout.write(reports.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return 0;
}
