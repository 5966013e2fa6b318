import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Replaces the text between `<!-- <name>:begin -->` and `<!-- <name>:end -->` in a file under
 * docs/ with a benchmark's table (the `--write` of the benches that keep their figures in docs).
 * Shape: file name under docs/, marker name, table text → the file rewritten in place.
 * Errors: Error naming the file and marker when either marker is missing or out of order.
 */
export function writeDocSection(docFile: string, name: string, table: string): void {
  const file = new URL(`../../docs/${docFile}`, import.meta.url);
  const doc = readFileSync(file, 'utf8');
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i < 0 || j < i) throw new Error(`docs/${docFile} has no ${name} markers`);
  writeFileSync(file, `${doc.slice(0, i + begin.length)}\n${table}\n${doc.slice(j)}`);
  console.error(`wrote docs/${docFile}`);
}
