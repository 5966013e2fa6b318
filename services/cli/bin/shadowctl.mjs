#!/usr/bin/env node
// `shadowctl`: the operator CLI over the control API. Sources are TypeScript, loaded through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
