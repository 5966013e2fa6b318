// Benchmark instrument, preloaded into duplicator workers by bench/duplicator.ts
// (NODE_OPTIONS=--import): counts the NATS protocol messages (PUB/HPUB — requests, publishes and
// acks alike) the process writes to its NATS server, and prints `nats-count <n>` on stderr at
// SIGUSR2 (then starts again from 0). Every one of them is a message the server handles; a
// request or an acked publish is also a round trip the item waits for. With
// NATS_COUNT_SUBJECTS=1 it also prints `nats-subjects <json>`: the count per kind of subject
// (KV bucket write, stream read of a bucket, object-store chunk/meta, ack, ...).
import net from 'node:net';

const port = Number(new URL(process.env.SHADOWPLANE_NATS_URL ?? 'nats://127.0.0.1:4222').port);
const bySubject = process.env.NATS_COUNT_SUBJECTS === '1' ? new Map() : null;
let messages = 0;

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
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
    // a message starts a write or follows a CRLF; a payload can contain "PUB " only after a CRLF
    // in a body, which JSON bodies never have unescaped
    for (let i = s.indexOf('PUB '); i !== -1; i = s.indexOf('PUB ', i + 4)) {
      const at = s[i - 1] === 'H' ? i - 1 : i;
      if (at === 0 || (s[at - 1] === '\n' && s[at - 2] === '\r')) {
        messages++;
        if (bySubject) {
          const k = kind(s.slice(i + 4, s.indexOf(' ', i + 4)));
          bySubject.set(k, (bySubject.get(k) ?? 0) + 1);
        }
      }
    }
  }
  return write.call(this, chunk, ...rest);
};
process.on('SIGUSR2', () => {
  if (bySubject) {
    process.stderr.write(`nats-subjects ${JSON.stringify(Object.fromEntries(bySubject))}\n`);
    bySubject.clear();
  }
  process.stderr.write(`nats-count ${messages}\n`);
  messages = 0;
});
