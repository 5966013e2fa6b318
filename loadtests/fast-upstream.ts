// A minimal, fast LLM-shaped upstream for overhead benchmarks (no latency model, no parsing
// beyond a substring check). Run: node --import tsx loadtests/fast-upstream.ts <port> <capturePort>
//   POST …/chat/completions            → ~1 KB chat.completion JSON with a usage block
//   POST …/chat/completions (stream)   → 16 SSE chunks (one per event-loop turn) + usage + [DONE]
//   POST …?hold=1                      → one SSE event, then held open until /release (RSS test)
//   POST /release                      → ends every held stream
// A second port is the "capture endpoint" nginx's mirror posts to: reads the body, answers 204.
// Prints {"event":"listening",...} on stdout when both ports listen.
import { createServer, type ServerResponse } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const capturePort = Number(process.argv[3] ?? 0);

const content = 'Janet sells 16 - 3 - 4 = 9 duck eggs a day. She makes 9 * 2 = $18 every day at the farmer’s market. '
  .repeat(7)
  .slice(0, 700);
const JSON_REPLY = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1770000000,
    model: 'bench-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 230,
      completion_tokens: 180,
      total_tokens: 410,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  }),
);
const words = content.split(' ').slice(0, 16);
const SSE_EVENTS = [
  ...words.map((w, i) =>
    Buffer.from(
      `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'bench-model', choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: w } : { content: ` ${w}` }, finish_reason: null }] })}\n\n`,
    ),
  ),
  Buffer.from(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'bench-model', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 230, completion_tokens: 16, total_tokens: 246 } })}\n\n`,
  ),
  Buffer.from('data: [DONE]\n\n'),
];

const held = new Set<ServerResponse>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = req.url ?? '/';
    if (url.includes('hold=1')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(SSE_EVENTS[0]);
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (url.startsWith('/release')) {
      for (const h of held) h.end(SSE_EVENTS[SSE_EVENTS.length - 1]);
      held.clear();
      res.writeHead(204);
      return res.end();
    }
    const body = Buffer.concat(chunks);
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let i = 0;
      const next = () => {
        if (i < SSE_EVENTS.length - 1) {
          res.write(SSE_EVENTS[i++]);
          setImmediate(next);
        } else res.end(SSE_EVENTS[i]);
      };
      next();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': JSON_REPLY.length });
    res.end(JSON_REPLY);
  });
});
server.keepAliveTimeout = 65_000;
server.maxRequestsPerSocket = 0;

const capture = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(204);
    res.end();
  });
});
capture.keepAliveTimeout = 65_000;

let up = 0;
const ready = () => {
  if (++up < 2) return;
  const a = server.address() as { port: number };
  const b = capture.address() as { port: number };
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', role: 'fast-upstream', url: `http://127.0.0.1:${a.port}`, capture_url: `http://127.0.0.1:${b.port}` })}\n`,
  );
};
// a deep accept queue: 1,000 streams opened at once (the RSS test) must not overflow the upstream's
server.listen({ port, host: '127.0.0.1', backlog: 4096 }, ready);
capture.listen(capturePort, '127.0.0.1', ready);
process.on('SIGTERM', () => process.exit(0));
