/** Entry point of the verdict role (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane verdict: not built yet\n');
  return 3;
}
