// Worker-thread bootstrap: TypeScript sources load through tsx (as in the shadowplane binary).
import { register } from 'tsx/esm/api';

register();
await import('./capture-worker.ts');
