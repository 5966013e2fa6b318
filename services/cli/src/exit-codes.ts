/**
 * shadowctl exit codes (documented in services/cli/README.md). Values from sysexits.h where one fits.
 */
export const EXIT = {
  /** success; with --gate: every gated comparison passed */
  ok: 0,
  /** unexpected error (server 5xx, 404 not found, 409 conflict, bad server answer) */
  error: 1,
  /** --gate: a gated comparison failed or is inconclusive (or the report is provisional); verify: the bundle has problems */
  gateFailed: 2,
  /** usage error: unknown command or option, missing argument */
  usage: 64,
  /** the request was refused as invalid (400, 413, 422), or a spec file does not parse */
  dataError: 65,
  /** an input file cannot be read */
  noInput: 66,
  /** the control API cannot be reached, or answers 503 (paid_dispatch off, NATS down); watch: no report in time */
  unavailable: 69,
  /** cannot write an output file */
  cantCreate: 73,
  /** 401/403: no key, unknown key, or a key without the needed scope */
  noPermission: 77,
} as const;

/** An error that carries the exit code shadowctl should end with. */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Exit code for an HTTP error status from the control API. */
export function exitForStatus(status: number): number {
  if (status === 401 || status === 403) return EXIT.noPermission;
  if (status === 400 || status === 413 || status === 415 || status === 422) return EXIT.dataError;
  if (status === 503 || status === 502 || status === 504) return EXIT.unavailable;
  return EXIT.error;
}
