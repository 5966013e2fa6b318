import { FLAG_PAID_DISPATCH, PaidDispatchFlag } from '@shadowplane/contracts';
import type { KV } from '@nats-io/kv';
import type { FlagView } from '@shadowplane/contracts';

/**
 * Reads the `paid_dispatch` kill switch. Absent, deleted or unparsable → `unknown`, which is off:
 * fail closed (docs/architecture.md "State"). Connection errors propagate (the caller answers 503).
 */
export async function readPaidDispatch(flags: KV): Promise<FlagView> {
  const e = await flags.get(FLAG_PAID_DISPATCH);
  if (!e || e.operation !== 'PUT' || e.length === 0)
    return { name: 'paid_dispatch', enabled: false, state: 'unknown', flag: null };
  let parsed: PaidDispatchFlag | null = null;
  try {
    const r = PaidDispatchFlag.safeParse(e.json());
    parsed = r.success ? r.data : null;
  } catch {
    parsed = null;
  }
  if (!parsed) return { name: 'paid_dispatch', enabled: false, state: 'unknown', flag: null };
  return { name: 'paid_dispatch', enabled: parsed.enabled, state: parsed.enabled ? 'on' : 'off', flag: parsed };
}

/** Writes the `paid_dispatch` flag (unconditional put; the KV keeps history). */
export async function writePaidDispatch(
  flags: KV,
  enabled: boolean,
  updatedBy: string,
  reason?: string,
): Promise<FlagView> {
  const flag: PaidDispatchFlag = PaidDispatchFlag.parse({
    enabled,
    updated_at: new Date().toISOString(),
    updated_by: updatedBy,
    ...(reason === undefined ? {} : { reason }),
  });
  await flags.put(FLAG_PAID_DISPATCH, JSON.stringify(flag));
  return { name: 'paid_dispatch', enabled, state: enabled ? 'on' : 'off', flag };
}
