/** Entry point of shadowctl (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowctl: not built yet\n');
  return 3;
}
