// A corpus of structured secrets and PII as they appear in LLM request bodies, for measuring the
// redactor's recall (services/sidecar/README.md, "Redaction"). Every case holds one secret value
// planted in a realistic place; a case is caught when the value no longer appears anywhere in the
// redacted body. Values are generated from a seeded PRNG, so the corpus is the same on every run.
import { redactJson } from '../src/redact.js';

/** One planted secret: its category, the request body holding it, and the value that must not survive. */
export interface SecretCase {
  category: string;
  body: unknown;
  secret: string;
}

/** mulberry32: a small seeded PRNG (public-domain construction), uniform in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** Builds the corpus: `perForm` random values for every form (default 25). */
export function secretsCorpus(perForm = 25, seed = 18): SecretCase[] {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const str = (n: number, alphabet = ALNUM) => Array.from({ length: n }, () => pick([...alphabet])).join('');
  const digits = (n: number) => str(n, '0123456789');
  const password = () => `${str(6)}${pick(['!', '#', '%', '-', '_'])}${digits(3)}`;
  const luhn = (prefix: string, len: number) => {
    const body = prefix + digits(len - prefix.length - 1);
    for (let c = 0; c < 10; c++) {
      const d = body + String(c);
      let sum = 0;
      for (let i = 0; i < d.length; i++) {
        let x = Number(d[d.length - 1 - i]);
        if (i % 2 === 1) x = x * 2 > 9 ? x * 2 - 9 : x * 2;
        sum += x;
      }
      if (sum % 10 === 0) return d;
    }
    throw new Error('unreachable');
  };
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  const out: SecretCase[] = [];
  const add = (category: string, make: (secret: string) => unknown, secret: () => string) => {
    for (let i = 0; i < perForm; i++) {
      const s = secret();
      out.push({ category, body: make(s), secret: s });
    }
  };

  // secrets under member names (metadata, tool arguments as objects, nested config)
  for (const name of [
    'api_key',
    'apiKey',
    'API-KEY',
    'x-api-key',
    'password',
    'Password',
    'passwd',
    'client_secret',
    'clientSecret',
    'private_key',
    'access_token',
    'refresh_token',
    'auth_token',
    'authorization',
    'secret',
    'db_password',
    'aws_secret_access_key',
    'token',
    'session_id',
    'cookie',
  ]) {
    add('member name', (s) => chat('hello', { metadata: { user: 'u1', [name]: s } }), password);
    add(
      'member name, nested',
      (s) =>
        chat('hi', {
          tools: [{ type: 'function', function: { name: 'f' } }],
          metadata: { config: { db: { [name]: s } } },
        }),
      password,
    );
  }
  // name: value / name=value inside text (env files, YAML, JSON inside a tool call's arguments)
  add(
    'key=value in text',
    (s) => chat(`my .env has OPENAI_API_KEY=${s} and DEBUG=1`),
    () => `k${str(24)}`,
  );
  add('key=value in text', (s) => chat(`db:\n  host: db.internal\n  password: ${s}\n`), password);
  add('key=value in text', (s) => chat(`login with password "${s}" please`), password);
  add(
    'key=value in text',
    (s) =>
      chat('call the tool', {
        messages: [
          {
            role: 'assistant',
            tool_calls: [
              {
                id: 't',
                type: 'function',
                function: { name: 'login', arguments: JSON.stringify({ user: 'bob', password: s }) },
              },
            ],
          },
        ],
      }),
    password,
  );
  add(
    'key=value in text',
    (s) => chat(`client_secret: ${s}`),
    () => str(32),
  );
  add(
    'key=value in text',
    (s) => chat(`export AWS_SECRET_ACCESS_KEY="${s}"`),
    () => str(40, `${ALNUM}/+`),
  );
  // credentials in any string
  add(
    'Authorization: Bearer in text',
    (s) => chat(`curl -H "Authorization: Bearer ${s}" https://api.example.com`),
    () => str(40, `${ALNUM}._-`),
  );
  add(
    'Authorization: Basic in text',
    (s) => chat(`the header was Authorization: Basic ${s}`),
    () => b64(`${str(6)}:${password()}`),
  );
  add(
    'Basic credentials in text',
    (s) => chat(`use Basic ${s} for the proxy`),
    () => b64(`${str(6)}:${password()}`),
  );
  for (const scheme of ['https', 'postgres', 'postgresql', 'mysql', 'redis', 'mongodb+srv', 'amqp', 'ftp'])
    add('URL userinfo', (s) => chat(`connect to ${scheme}://admin:${s}@db.internal:5432/app`), password);
  add('URL userinfo', (s) => chat(`redis://:${s}@cache.internal:6379/0`), password);
  // PEM private keys
  for (const kind of [
    'RSA PRIVATE KEY',
    'EC PRIVATE KEY',
    'PRIVATE KEY',
    'OPENSSH PRIVATE KEY',
    'ENCRYPTED PRIVATE KEY',
  ]) {
    add(
      'PEM private key',
      (s) => chat(`here is my key:\n-----BEGIN ${kind}-----\n${s}\n-----END ${kind}-----\nwhy does ssh fail?`),
      () => Array.from({ length: 4 }, () => str(64, `${ALNUM}+/`)).join('\n'),
    );
  }
  add(
    'PEM private key, truncated',
    (s) => chat(`-----BEGIN PRIVATE KEY-----\n${s}`),
    () => str(64, `${ALNUM}+/`),
  );
  // token formats
  const tokens: [string, () => string][] = [
    ['OpenAI', () => `sk-proj-${str(48, `${ALNUM}_-`)}`],
    ['OpenAI legacy', () => `sk-${str(48)}`],
    ['Anthropic', () => `sk-ant-api03-${str(80, `${ALNUM}_-`)}`],
    ['AWS access key id', () => `AKIA${str(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`],
    ['GitHub', () => `ghp_${str(36)}`],
    ['GitHub fine-grained', () => `github_pat_${str(22)}_${str(59)}`],
    ['GitLab', () => `glpat-${str(20, `${ALNUM}_-`)}`],
    ['Slack', () => `xoxb-${digits(12)}-${digits(13)}-${str(24)}`],
    ['Google API key', () => `AIza${str(35, `${ALNUM}_-`)}`],
    ['Google OAuth', () => `ya29.${str(60, `${ALNUM}_-`)}`],
    ['Stripe', () => `sk_live_${str(32)}`],
    ['npm', () => `npm_${str(36)}`],
    ['Hugging Face', () => `hf_${str(34)}`],
    ['SendGrid', () => `SG.${str(22, `${ALNUM}_-`)}.${str(43, `${ALNUM}_-`)}`],
    ['Groq', () => `gsk_${str(52)}`],
    ['Replicate', () => `r8_${str(37)}`],
    ['JWT', () => `eyJ${str(20, `${ALNUM}_-`)}.eyJ${str(40, `${ALNUM}_-`)}.${str(43, `${ALNUM}_-`)}`],
  ];
  for (const [name, make] of tokens) add(`token: ${name}`, (s) => chat(`why does ${s} return 401?`), make);
  // PII
  add(
    'PII: email',
    (s) => chat(`reply to ${s} by friday`),
    () =>
      `${str(8).toLowerCase()}.${str(5).toLowerCase()}@${pick(['example.com', 'mail.example.co.uk', 'corp.example.org'])}`,
  );
  add(
    'PII: card',
    (s) => chat(`charge card ${s} exp 12/29`),
    () => {
      const [prefix, len] = pick([
        ['4', 16],
        ['51', 16],
        ['55', 16],
        ['2221', 16],
        ['37', 15],
        ['6011', 16],
        ['35', 16],
      ] as const);
      return luhn(prefix, len);
    },
  );
  add(
    'PII: US SSN',
    (s) => chat(`my SSN is ${s}`),
    () =>
      `${String(100 + Math.floor(r() * 565)).padStart(3, '0')}-${String(10 + Math.floor(r() * 89))}-${String(1000 + Math.floor(r() * 8999))}`,
  );
  add(
    'PII: phone',
    (s) => chat(`call me at ${s}`),
    () => `+44 20 ${digits(4)} ${digits(4)}`,
  );
  add(
    'PII: phone',
    (s) => chat(`call me at ${s}`),
    () => `(${String(200 + Math.floor(r() * 700))}) ${String(200 + Math.floor(r() * 700))}-${digits(4)}`,
  );
  add(
    'PII: IPv4',
    (s) => chat(`the server at ${s} is down`),
    () =>
      `${10 + Math.floor(r() * 200)}.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}.${1 + Math.floor(r() * 254)}`,
  );
  // not structured: a secret in prose with nothing marking it. Not a goal of the rules (they would
  // have to redact every word); measured so the limit is stated, and kept out of the structured figure
  add('unstructured: prose', (s) => chat(`my password is ${s} and it stopped working`), password);
  add(
    'unstructured: bare token',
    (s) => chat(`the key ${s} was revoked`),
    () => str(32),
  );
  return out;
}

/** Recall per category and overall: the share of cases whose secret is absent from the redacted body (uncertain items count as caught: they never leave the pod). */
export function measureRecall(cases: SecretCase[]): {
  overall: number;
  missed: SecretCase[];
  byCategory: Map<string, { n: number; caught: number }>;
} {
  const byCategory = new Map<string, { n: number; caught: number }>();
  const missed: SecretCase[] = [];
  for (const c of cases) {
    const red = redactJson(c.body);
    const caught = red.uncertain || !JSON.stringify(red.value).includes(JSON.stringify(c.secret).slice(1, -1));
    const e = byCategory.get(c.category) ?? { n: 0, caught: 0 };
    e.n++;
    if (caught) e.caught++;
    else missed.push(c);
    byCategory.set(c.category, e);
  }
  return { overall: (cases.length - missed.length) / cases.length, missed, byCategory };
}
