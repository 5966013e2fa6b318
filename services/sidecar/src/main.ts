/** Entry point of the sidecar role (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane sidecar: not built yet\n');
  return 3;
}
