// File and option helpers shared by the shadowctl command modules; each failure is a CliError
// carrying the exit code the README documents.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { CliError, EXIT } from './exit-codes.js';

/** The UTF-8 text of file `path`; unreadable → CliError exit 66 (EX_NOINPUT) naming the file and errno. */
export function readInput(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(
      EXIT.noInput,
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** Writes `text` to file `path`; unwritable → CliError exit 73 (EX_CANTCREAT) naming the file and errno. */
export function writeOutput(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new CliError(
      EXIT.cantCreate,
      `cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** File `path` parsed as YAML (JSON is YAML): unreadable → exit 66, unparseable → exit 65 (EX_DATAERR). */
export function parseDoc(path: string): unknown {
  const text = readInput(path);
  try {
    return parseYaml(text);
  } catch (e) {
    throw new CliError(EXIT.dataError, `${path} is not valid YAML/JSON: ${(e as Error).message}`);
  }
}

/** A path segment for the control API URL (percent-encoded). */
export const id = (s: string) => encodeURIComponent(s);

/** A whole-number option at least `min`, or a usage error (64) naming the option. */
export function intOption(name: string, v: string, min: number): number {
  const n = /^\d{1,12}$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw new CliError(EXIT.usage, `${name} must be a whole number ≥ ${min}, got '${v}'`);
  return n;
}

/** The control API base URL: http(s) only, or a usage error (64) naming --url. */
export function baseUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new CliError(EXIT.usage, `--url (SHADOWPLANE_URL) must be an http(s) URL, got '${v}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CliError(EXIT.usage, `--url (SHADOWPLANE_URL) must be an http(s) URL, got '${v}'`);
  return v;
}
