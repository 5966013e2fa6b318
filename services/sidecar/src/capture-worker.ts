// The capture worker thread: builds envelopes for large bodies so JSON parsing, redaction and
// hashing of megabytes never stall the proxy's event loop. Messages (capture-protocol.ts):
// WorkerRequest in, WorkerReply out (envelope bytes and body transferred, not copied).
import { parentPort, workerData } from 'node:worker_threads';
import type { Keyring } from '@shadowplane/artifacts';
import { buildEnvelope } from './capture.js';
import { toPublishable, type WorkerReply, type WorkerRequest } from './capture-protocol.js';

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

// the artifact keyring (served-output retention), cloned in once at start, never per message;
// structured clone turns its Buffers into Uint8Arrays
const sent = (workerData as { keyring?: Keyring | null } | undefined)?.keyring ?? null;
const keyring: Keyring | null =
  sent === null
    ? null
    : {
        activeKid: sent.activeKid,
        keys: new Map([...sent.keys].map(([kid, k]) => [kid, asBuffer(k)])),
      };

parentPort?.on('message', (msg: WorkerRequest) => {
  // the parent's wall-clock backstop runs from here, not from the post (start-up is not the build's)
  parentPort!.postMessage({ started: msg.id } satisfies WorkerReply);
  const input = msg.input;
  // structured clone turns Buffers into Uint8Arrays
  input.requestChunks = input.requestChunks.map(asBuffer);
  if (input.response) input.response.chunks = input.response.chunks.map(asBuffer);
  const result = toPublishable(buildEnvelope(input, keyring));
  const transfer: ArrayBuffer[] = [];
  if (result.kind === 'envelope') {
    if (result.data.byteOffset === 0 && result.data.byteLength === result.data.buffer.byteLength)
      transfer.push(result.data.buffer as ArrayBuffer);
    const b = result.body?.bytes;
    if (b && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && !transfer.includes(b.buffer as ArrayBuffer))
      transfer.push(b.buffer as ArrayBuffer);
    const sv = result.served?.kind === 'sealed' ? result.served.bytes : null;
    if (
      sv &&
      sv.byteOffset === 0 &&
      sv.byteLength === sv.buffer.byteLength &&
      !transfer.includes(sv.buffer as ArrayBuffer)
    )
      transfer.push(sv.buffer as ArrayBuffer);
  }
  parentPort!.postMessage({ id: msg.id, result } satisfies WorkerReply, transfer);
});
