// The process group lives in libs/stack (shared with `shadowplane up`); re-exported for the scripts.
import { STACK_ROOT } from '@shadowplane/stack';

export { ProcessGroup, SHADOWPLANE_ENTRY } from '@shadowplane/stack';
export type { RoleProcess } from '@shadowplane/stack';
/** Repository root. */
export const REPO_ROOT = STACK_ROOT;
