/** `shadowplane usage` (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane usage: not built yet\n');
  return 3;
}
