// What the bundle checks share: the JSON object guard, number comparison and the problem sink.

/** A JSON object as parsed. */
export type Obj = Record<string, unknown>;
/** True for a plain JSON object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Records one problem: the path of the recorded value, the recomputed (expected) and recorded (actual) values, why. */
export type AddProblem = (path: string, expected: unknown, actual: unknown, message: string) => void;

/** Equal numbers up to a relative 1e-12 (float sums in another order); non-numbers by ===. */
export function sameNumber(a: unknown, b: unknown): boolean {
  if (typeof a !== 'number' || typeof b !== 'number') return a === b;
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
}
