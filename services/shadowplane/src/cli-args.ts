import { CommanderError, type Command } from 'commander';

/** sysexits.h EX_USAGE: the command line was wrong. */
export const EX_USAGE = 64;

/**
 * Parses `argv` (user arguments, no node/script) with `program`, holding commander's help and
 * error text until it knows the outcome. Returns null when the command should go on, or the exit
 * code it should end with after the held text is written: 0 for `--help` / `--version`,
 * {@link EX_USAGE} for a usage error. Errors other than commander's are rethrown.
 */
export function parseArgs(program: Command, argv: string[]): number | null {
  let out = '';
  let err = '';
  program.exitOverride().configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  try {
    program.parse(argv, { from: 'user' });
    return null;
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    process.stdout.write(out);
    process.stderr.write(err);
    return e.exitCode === 0 ? 0 : EX_USAGE;
  }
}
