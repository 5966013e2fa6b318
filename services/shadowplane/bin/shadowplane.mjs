#!/usr/bin/env node
// Entry binary: `shadowplane <role> [args]`. Sources are TypeScript, loaded through tsx.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('../src/index.ts');
process.exitCode = await run(process.argv.slice(2));
