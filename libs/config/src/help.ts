import { z } from 'zod';

/** Exit code for a bad flag or argument (EX_USAGE from sysexits.h). */
export const EXIT_USAGE = 64;

/** The exit-code line every role's and shadowctl's help ends with. */
export const EXIT_CODES_LINE =
  'Exit codes: 0 stopped cleanly or done, 1 crashed or could not start, 64 bad flag or argument,\n78 bad configuration (the variable or key is named on stderr).';

/** What {@link renderHelp} lays out. */
export interface HelpSpec {
  /** e.g. `shadowplane verdict [options]` (printed after `Usage: `) */
  usage: string;
  /** one paragraph: what the command does */
  summary: string;
  /** `[flags, text]` rows; `-h, --help` is added first */
  options?: ReadonlyArray<readonly [string, string]>;
  /** the role's env schema (descriptions and defaults come from it), or `[name, text]` rows */
  env?: z.ZodObject | ReadonlyArray<readonly [string, string]>;
  /** more lines printed after the environment, before the exit codes */
  notes?: readonly string[];
}

const WIDTH = 100;

function wrap(text: string, indent: number): string {
  const out: string[] = [];
  let line = '';
  for (const w of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + w.length > WIDTH) {
      out.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) out.push(line);
  return out.join(`\n${' '.repeat(indent)}`);
}

/** `[name, text]` rows of an env schema: its description, then its default unless the text states one. */
function envRows(schema: z.ZodObject): Array<[string, string]> {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { description?: string; default?: unknown }>;
    required?: string[];
  };
  return Object.entries(js.properties ?? {}).map(([k, p]) => {
    const d = p.description ?? '';
    const def =
      /\bdefault\b/i.test(d) || p.default === undefined
        ? js.required?.includes(k)
          ? ' (required)'
          : ''
        : ` (default ${p.default === '' ? 'empty' : String(p.default)})`;
    return [k, `${d}${def}`];
  });
}

/**
 * The one help layout of every `shadowplane <role>` and of shadowctl (commander's): `Usage:`, the
 * summary, `Options:` (flags padded to one column), `Environment:` (each variable on its own line,
 * its text indented under it), notes, then {@link EXIT_CODES_LINE}. Ends with a newline.
 */
export function renderHelp(spec: HelpSpec): string {
  const options: Array<readonly [string, string]> = [
    ['-h, --help', 'display help for command'],
    ...(spec.options ?? []),
  ];
  const col = Math.max(...options.map(([f]) => f.length)) + 2;
  const parts = [
    `Usage: ${spec.usage}`,
    '',
    wrap(spec.summary, 0),
    '',
    'Options:',
    ...options.map(([f, t]) => `  ${f.padEnd(col)}${wrap(t, col + 2)}`),
  ];
  const env = spec.env === undefined ? [] : Array.isArray(spec.env) ? spec.env : envRows(spec.env as z.ZodObject);
  if (env.length) {
    parts.push('', 'Environment:');
    for (const [k, t] of env) parts.push(`  ${k}`, `        ${wrap(t, 8)}`);
  }
  if (spec.notes?.length) parts.push('', ...spec.notes.map((n) => wrap(n, 0)));
  parts.push('', EXIT_CODES_LINE);
  return `${parts.join('\n')}\n`;
}
