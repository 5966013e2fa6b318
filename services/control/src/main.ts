/** Entry point of the control role (not built yet). */
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('shadowplane control: not built yet\n');
  return 3;
}
