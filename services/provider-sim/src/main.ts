/** Entry point of the provider-sim role (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane provider-sim: not built yet\n');
  return 3;
}
