/**
 * Polls `fn` until it gives a value (anything but null, undefined or false) and resolves with it.
 * `what` names the condition in the timeout error. Defaults: 60,000 ms timeout, 100 ms between polls.
 * @throws Error `timed out waiting for <what>` after `timeoutMs`
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  { timeoutMs = 60_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Exclude<T, false>> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== null && v !== undefined && v !== false) return v as Exclude<T, false>;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
