// Benchmark instrument, preloaded into duplicator workers by bench/duplicator.ts
// (NODE_OPTIONS=--import): counts the NATS protocol messages (PUB/HPUB — requests, publishes and
// acks alike) the process writes to its NATS server, and prints `nats-count <n>` on stderr at
// SIGUSR2 (then starts again from 0). Every one of them is a message the server handles; a
// request or an acked publish is also a round trip the item waits for.
import net from 'node:net';

const port = Number(new URL(process.env.SHADOWPLANE_NATS_URL ?? 'nats://127.0.0.1:4222').port);
let messages = 0;
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  if (this.remotePort === port) {
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
    // a message starts a write or follows a CRLF; a payload can contain "PUB " only after a CRLF
    // in a body, which JSON bodies never have unescaped
    for (let i = s.indexOf('PUB '); i !== -1; i = s.indexOf('PUB ', i + 4)) {
      const at = s[i - 1] === 'H' ? i - 1 : i;
      if (at === 0 || (s[at - 1] === '\n' && s[at - 2] === '\r')) messages++;
    }
  }
  return write.call(this, chunk, ...rest);
};
process.on('SIGUSR2', () => {
  process.stderr.write(`nats-count ${messages}\n`);
  messages = 0;
});
