// @shadowplane/stack: start and stop the processes of a local Shadowplane. Named exports only.
export { ProcessGroup, STACK_ROOT, SHADOWPLANE_ENTRY } from './processes.js';
export type { RoleProcess } from './processes.js';
export { startNatsServer, natsServerBinary, canConnect, MIN_NATS_SERVER_VERSION } from './nats-server.js';
export type { NatsServerHandle, NatsClusterMemberOptions } from './nats-server.js';
