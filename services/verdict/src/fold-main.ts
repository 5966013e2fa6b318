/** Entry point of `shadowplane fold` (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane fold: not built yet\n');
  return 3;
}
