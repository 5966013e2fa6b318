/** Entry point of the duplicator role (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane duplicator: not built yet\n');
  return 3;
}
