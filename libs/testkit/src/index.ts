// Private test kit: real processes and sockets for tests. Named exports only.
export { startNatsServer, natsServerBinary, canConnect, MIN_NATS_SERVER_VERSION } from '@shadowplane/stack';
export type { NatsServerHandle, NatsClusterMemberOptions } from '@shadowplane/stack';
export { startNatsCluster } from './nats-cluster.js';
export type { NatsClusterHandle } from './nats-cluster.js';
export { freePort } from './ports.js';
export { randomPrefix, testNames } from './names.js';
export { sharedNatsUrl } from './shared-nats.js';
export { chatEnvelope } from './envelopes.js';
export { startRedisServer } from './redis-server.js';
export type { RedisServerHandle } from './redis-server.js';
export { freezeProcess, thawProcess } from './freeze.js';
export { startFakeNatsInfo } from './fake-nats.js';
export { startJaeger, jaegerBinary } from './jaeger.js';
export { startOtlpReceiver } from './otlp-receiver.js';
export type { OtlpReceiverHandle, OtlpSpan } from './otlp-receiver.js';
export type { JaegerHandle, JaegerSpan } from './jaeger.js';
export { GSM8K, uuidFrom, synthSpec, synthObservation, synthEvent, seededRandom, synthCampaign } from './synth.js';
export type { ArmAnswer } from './synth.js';
