// Benchmark instrument, preloaded into duplicator workers by bench/duplicator.ts
// (NODE_OPTIONS=--import). At every SIGUSR2 it reports on stderr what happened since the last
// one, then starts counting again from 0:
// - `nats-count <n>`: the NATS protocol messages (PUB/HPUB — requests, publishes and acks alike)
//   the process wrote to its NATS server. Every one is a message the server handles; a request or
//   an acked publish is also a round trip the item waits for.
// - `nats-writes <n>`: the socket writes that carried them (nats.js sends what one microtask
//   turn queued in one write).
// - with NATS_COUNT_SUBJECTS=1, `nats-subjects <json>`: the messages per kind of subject (KV
//   bucket write, stream read of a bucket, object-store chunk/meta, ack, ...).
// - with PROBE_CPU_PROF=<dir>: a V8 CPU profile of the main thread from the PROBE_CPU_PROF_FROM-th
//   SIGUSR2 (default 1) to the next one (the bench's measured window), written to <dir> before
//   the counts are printed (`probe-profile <path>`).
import net from 'node:net';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const port = Number(new URL(process.env.SHADOWPLANE_NATS_URL ?? 'nats://127.0.0.1:4222').port);
const bySubject = process.env.NATS_COUNT_SUBJECTS === '1' ? new Map() : null;
const profDir = process.env.PROBE_CPU_PROF || null;
const profFrom = Number(process.env.PROBE_CPU_PROF_FROM ?? 1);
let messages = 0;
let writes = 0;
let signals = 0;
/** @type {Session | null} */
let session = null;

/** The kind of a subject: ids, keys and hashes dropped. */
function kind(subject) {
  return subject
    .replace(/^\$KV\.([^.]+)\..*/, 'KV write $1')
    .replace(/^\$O\.([^.]+)\.([CM])\..*/, 'object $2 $1')
    .replace(/^\$JS\.API\.DIRECT\.GET\.([^.]+).*/, 'direct get $1')
    .replace(/^\$JS\.API\.STREAM\.MSG\.GET\.([^.]+).*/, 'stream read $1')
    .replace(/^\$JS\.ACK\..*/, 'ack')
    .replace(/^\$JS\.API\.([A-Z.]+[A-Z])\..*/, 'api $1')
    .replace(/^([^$][^.]*)\.shadow\.([a-z_]+)\..*/, 'publish $2')
    .replace(/[A-Za-z0-9]*_(shadow_[a-z_]+)/, '$1');
}

const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  if (this.remotePort === port) {
    writes++;
    // scanned in place (no copy, no string): the probe's own CPU is counted with the worker's
    const b =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'latin1')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    // a message starts a write or follows a CRLF; a payload can contain "PUB " only after a CRLF
    // in a body, which JSON bodies never have unescaped
    for (let i = b.indexOf('PUB '); i !== -1; i = b.indexOf('PUB ', i + 4)) {
      const at = b[i - 1] === 0x48 ? i - 1 : i; // HPUB
      if (at === 0 || (b[at - 1] === 0x0a && b[at - 2] === 0x0d)) {
        messages++;
        if (bySubject) {
          const k = kind(b.toString('latin1', i + 4, b.indexOf(0x20, i + 4)));
          bySubject.set(k, (bySubject.get(k) ?? 0) + 1);
        }
      }
    }
  }
  return write.call(this, chunk, ...rest);
};

async function startProfile() {
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}

async function stopProfile() {
  const { profile } = await session.post('Profiler.stop');
  const file = join(profDir, `worker-${process.pid}-${Date.now()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
  session = null;
  process.stderr.write(`probe-profile ${file}\n`);
}

/** Prints the counts since the last report and starts again from 0. */
function report() {
  if (bySubject) {
    process.stderr.write(`nats-subjects ${JSON.stringify(Object.fromEntries(bySubject))}\n`);
    bySubject.clear();
  }
  process.stderr.write(`nats-writes ${writes}\n`);
  process.stderr.write(`nats-count ${messages}\n`);
  messages = 0;
  writes = 0;
}

process.on('SIGUSR2', () => {
  signals++;
  const fail = (e) => process.stderr.write(`probe-profile failed: ${e}\n`);
  if (profDir && session) {
    // the counts go out once the profile is on disk: the bench stops the worker after reading them
    stopProfile().catch(fail).finally(report);
    return;
  }
  report();
  if (profDir && signals === profFrom) startProfile().catch(fail);
});
