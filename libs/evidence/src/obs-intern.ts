/**
 * Memory sharing for OBS messages read one at a time (the offline fold reads hundreds of
 * thousands). Each parsed line carries its own copy of strings that repeat across lines — the
 * campaign id, the item_hash and envelope id shared by an item's arms, providers, models,
 * timestamps, statuses — and of small sub-objects (an item's expectations, empty tool-call lists).
 * An interner replaces each by one shared instance, so a fold holds each distinct value once.
 *
 * The messages stay equal value for value (same JSON, same content hashes, same fold). Shared
 * sub-objects are frozen: the fold is pure and never writes to its input, and a write would throw
 * rather than change another message.
 */
import type { ObsMessage } from '@shadowplane/contracts';

/** Strings longer than this are left alone: outputs and other long text rarely repeat. */
const MAX_INTERNED_STRING = 256;
/** Expectation lists whose JSON is longer are left alone: their key would cost as much as the list. */
const MAX_INTERNED_LIST_JSON = 1024;
const EMPTY_LIST: readonly never[] = Object.freeze([]);

/** An interner: call it on each message as it is read; it returns the same message, its values shared. */
export type ObsInterner = <M extends ObsMessage>(m: M) => M;

/**
 * Makes an interner whose tables live as long as it does (drop it after reading). Interns every
 * top-level string field except `output_text`, the string fields of `cost`, `expectations` (by
 * value, JSON-equal lists of up to 1 KB of JSON share one frozen copy) and empty `tool_calls` lists. Cost: one Map
 * lookup per string field, ~40 bytes per distinct string and the JSON key of each distinct list.
 * `shared`: where strings are interned instead of the interner's own table (e.g. ObsTable.intern,
 * so messages kept beside a table share its strings).
 */
export function obsInterner(shared?: (v: string) => string): ObsInterner {
  const strings = new Map<string, string>();
  const lists = new Map<string, unknown>();
  const s = (v: string): string => {
    if (v.length > MAX_INTERNED_STRING) return v;
    if (shared) return shared(v);
    const hit = strings.get(v);
    if (hit !== undefined) return hit;
    strings.set(v, v);
    return v;
  };
  const internStrings = (o: Record<string, unknown>, skip?: string): void => {
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (typeof v === 'string' && k !== skip) o[k] = s(v);
    }
  };
  return <M extends ObsMessage>(m: M): M => {
    const o = m as unknown as Record<string, unknown>;
    internStrings(o, 'output_text');
    if (m.schema !== 'shadow.observation/v1') return m;
    internStrings(m.cost as unknown as Record<string, unknown>);
    if (Array.isArray(o.tool_calls) && o.tool_calls.length === 0) o.tool_calls = EMPTY_LIST;
    if (Array.isArray(o.expectations)) {
      const key = JSON.stringify(o.expectations);
      if (key.length <= MAX_INTERNED_LIST_JSON) {
        const hit = lists.get(key);
        if (hit !== undefined) o.expectations = hit;
        else lists.set(key, deepFreeze(o.expectations));
      }
    }
    return m;
  };
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
