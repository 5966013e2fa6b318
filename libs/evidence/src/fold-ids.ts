import type { Observation } from '@shadowplane/contracts';
import { fastContentHash } from './canonical-fast.js';

/** Key of a judge score: `<item_hash>:<arm_id>:<role>`. */
export function judgeKey(itemHash: string, armId: string, role: string): string {
  return `${itemHash}:${armId}:${role}`;
}

/** Lineage id of an observation: contentHash of the observation without `output_text`. */
export function observationId(o: Observation): string {
  const { output_text: _drop, ...rest } = o;
  return fastContentHash(rest);
}
