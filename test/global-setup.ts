import type { TestProject } from 'vitest/node';
import { startNatsServer, type NatsServerHandle } from '@shadowplane/testkit';

let server: NatsServerHandle | undefined;

// One nats-server for the whole run (or the one NATS_URL names); tests isolate with prefixes.
export async function setup(project: TestProject): Promise<void> {
  let url = process.env.NATS_URL;
  if (!url) {
    server = await startNatsServer();
    url = server.url;
  }
  project.provide('natsUrl', url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    natsUrl: string;
  }
}
