import { describe, expect, it } from 'vitest';
import { createRng } from '@shadowplane/stats';
import {
  ChunkedDecoder,
  FIELD_CONTENT_LENGTH,
  FIELD_HOST,
  FIELD_OTHER,
  FIELD_SHADOW,
  FIELD_SHADOW_CAPTURE,
  FIELD_TRANSFER_ENCODING,
  FieldScan,
  HttpSyntaxError,
  assertChunkedOnly,
  isFieldValue,
  isToken,
  parseContentLength,
  parseRequestLine,
  parseStatusLine,
} from './http1.js';

/** Runs `fn` and returns the HttpSyntaxError it throws (fails the test when it does not). */
function syntaxError(fn: () => unknown): HttpSyntaxError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(HttpSyntaxError);
    return e as HttpSyntaxError;
  }
  throw new Error('expected an HttpSyntaxError, nothing was thrown');
}

function expectMalformed(fn: () => unknown): void {
  const e = syntaxError(fn);
  expect(e.status).toBe(400);
  expect(e.code).toBe('malformed_http');
}

describe('isToken / isFieldValue', () => {
  it('accepts every tchar and refuses separators, controls and non-ASCII', () => {
    expect(isToken("!#$%&'*+-.^_`|~09AZaz")).toBe(true);
    for (const bad of [
      '',
      'a b',
      'a:b',
      'a"b',
      'a(b',
      'a,b',
      'a/b',
      'a;b',
      'a=b',
      'a@b',
      'a[b',
      'a{b',
      'a\x00b',
      'a\x7fb',
      'a\xe9b',
      'a\tb',
    ]) {
      expect(isToken(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('allows VCHAR, obs-text, SP and HTAB in values and refuses other controls', () => {
    expect(isFieldValue('')).toBe(true);
    expect(isFieldValue('a b\tc ~ \x80\xff')).toBe(true);
    for (const bad of ['\x00', 'a\rb', 'a\nb', '\x01', '\x1b', '\x7f', '\u0100'])
      expect(isFieldValue(bad), JSON.stringify(bad)).toBe(false);
  });
});

describe('parseRequestLine', () => {
  it('parses origin-form, absolute-form and asterisk-form targets of HTTP/1.1 and HTTP/1.0', () => {
    expect(parseRequestLine('GET / HTTP/1.1')).toEqual({ method: 'GET', target: '/', minor: 1, fieldsAt: 16 });
    const h = 'POST /v1/chat?x=1&y=%20 HTTP/1.0\r\nHost: a\r\n';
    expect(parseRequestLine(h)).toEqual({
      method: 'POST',
      target: '/v1/chat?x=1&y=%20',
      minor: 0,
      fieldsAt: h.indexOf('Host'),
    });
    expect(parseRequestLine('GET http://a.example:8080/p?q HTTP/1.1').target).toBe('http://a.example:8080/p?q');
    expect(parseRequestLine('OPTIONS * HTTP/1.1').target).toBe('*');
    expect(parseRequestLine('M-SEARCH /x HTTP/1.1').method).toBe('M-SEARCH');
  });

  it.each([
    ['empty', ''],
    ['no spaces', 'GET'],
    ['no version', 'GET /'],
    ['leading space', ' GET / HTTP/1.1'],
    ['two spaces after the method', 'GET  / HTTP/1.1'],
    ['two spaces before the version', 'GET /  HTTP/1.1'],
    ['trailing space', 'GET / HTTP/1.1 '],
    ['space inside the target', 'GET /a b HTTP/1.1'],
    ['tabs as separators', 'GET\t/\tHTTP/1.1'],
    ['HTTP/2.0 (h2 preface)', 'PRI * HTTP/2.0\r\n\r\nSM'],
    ['HTTP/1.2', 'GET / HTTP/1.2'],
    ['HTTP/0.9', 'GET / HTTP/0.9'],
    ['HTTP/1.10', 'GET / HTTP/1.10'],
    ['lower-case version', 'GET / http/1.1'],
    ['HTTP/01.1', 'GET / HTTP/01.1'],
    ['bare CR inside the line', 'GET / HTTP/1.1\rX\r\n'],
    ['bare LF ending the line', 'GET / HTTP/1.1\nHost: a'],
    ['a separator in the method', 'G(T / HTTP/1.1'],
    ['non-ASCII in the method', 'G\xc9T / HTTP/1.1'],
    ['NUL in the target', 'GET /a\x00b HTTP/1.1'],
    ['DEL in the target', 'GET /a\x7f HTTP/1.1'],
    ['obs-text in the target', 'GET /caf\xe9 HTTP/1.1'],
    ['the spaces only in the field lines', 'GET\r\nHost: a b c'],
  ])('refuses %s', (_name, line) => {
    expectMalformed(() => parseRequestLine(line));
  });
});

describe('parseStatusLine', () => {
  it('parses status, reason and version; a missing reason (with or without its space) is empty', () => {
    expect(parseStatusLine('HTTP/1.1 200 OK\r\ncontent-length: 0')).toEqual({
      status: 200,
      reason: 'OK',
      minor: 1,
      fieldsAt: 17,
    });
    expect(parseStatusLine('HTTP/1.0 404 Not  Found')).toMatchObject({ status: 404, reason: 'Not  Found', minor: 0 });
    expect(parseStatusLine('HTTP/1.1 204')).toMatchObject({ status: 204, reason: '' });
    expect(parseStatusLine('HTTP/1.1 204 ')).toMatchObject({ status: 204, reason: '' });
    expect(parseStatusLine('HTTP/1.1 103 Early Hints')).toMatchObject({ status: 103 });
    expect(parseStatusLine('HTTP/1.1 599 tab\there \x80\xff')).toMatchObject({
      status: 599,
      reason: 'tab\there \x80\xff',
    });
  });

  it.each([
    ['garbage', 'garbage'],
    ['empty', ''],
    ['ICY', 'ICY 200 OK'],
    ['HTTP/2', 'HTTP/2 200 OK'],
    ['HTTP/1.2', 'HTTP/1.2 200 OK'],
    ['lower-case version', 'http/1.1 200 OK'],
    ['two-digit status', 'HTTP/1.1 20 OK'],
    ['four-digit status', 'HTTP/1.1 2000 OK'],
    ['status below 100', 'HTTP/1.1 099 X'],
    ['letters in the status', 'HTTP/1.1 2OO OK'],
    ['signed status', 'HTTP/1.1 -20 OK'],
    ['two spaces before the status', 'HTTP/1.1  200 OK'],
    ['no space after the status', 'HTTP/1.1 200OK'],
    ['bare CR in the reason', 'HTTP/1.1 200 O\rK\r\n'],
    ['bare LF ending the line', 'HTTP/1.1 200 OK\nSet-Cookie: a=b'],
    ['NUL in the reason', 'HTTP/1.1 200 O\x00K'],
  ])('refuses %s', (_name, line) => {
    expectMalformed(() => parseStatusLine(line));
  });
});

describe('FieldScan', () => {
  /** Scans `text` (latin1; a final CRLF is added when missing) and returns [name, value, …]. */
  const parse = (text: string, from = 0) => {
    const b = Buffer.from(text === '' || text.endsWith('\r\n') ? text : `${text}\r\n`, 'latin1');
    const fs = new FieldScan();
    fs.scan(b, from, b.length);
    const out: string[] = [];
    for (let k = 0; k < fs.n; k++) out.push(fs.name(k), fs.value(k));
    return out;
  };

  it('keeps names, order and duplicates; trims OWS around values; allows empty values, inner whitespace and obs-text', () => {
    expect(parse('Host: a\r\nX-A:b\r\nx-a:  \t c \t d\t \r\nEmpty:\r\nE2:   \r\nO: \x80\xff')).toEqual([
      'Host',
      'a',
      'X-A',
      'b',
      'x-a',
      'c \t d',
      'Empty',
      '',
      'E2',
      '',
      'O',
      '\x80\xff',
    ]);
  });

  it('starts at the given offset and accepts a final CRLF', () => {
    const head = 'GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n';
    expect(parse(head, parseRequestLine(head).fieldsAt)).toEqual(['A', '1', 'B', '2']);
    expect(parse('')).toEqual([]);
  });

  it('says which rule a refused line broke', () => {
    const msg = (text: string) => {
      try {
        parse(text);
      } catch (e) {
        return (e as Error).message;
      }
      return null;
    };
    expect(msg(': v')).toBe('an invalid header field name');
    expect(msg('A b: v')).toBe('an invalid header field name');
    expect(msg('A b')).toBe('a header line without a colon');
    expect(msg(' A: b')).toBe('obsolete line folding in a header field');
    expect(msg('A: b\x00')).toBe('control characters in the value of A');
  });

  it('keeps colons inside values', () => {
    expect(parse('Host: [::1]:8080')).toEqual(['Host', '[::1]:8080']);
  });

  it('names the fields the proxy acts on in any letter case, and gives line bounds for verbatim copies', () => {
    const text =
      'HOST: a\r\ncontent-LENGTH: 12\r\nTransfer-Encoding: chunked\r\nX-Shadow-Suite: s\r\nx-shadow-capture: q\r\nHostx: b\r\nx-shadow-: c\r\n';
    const b = Buffer.from(text, 'latin1');
    const fs = new FieldScan();
    fs.scan(b, 0, b.length);
    expect(Array.from({ length: fs.n }, (_, k) => fs.id(k))).toEqual([
      FIELD_HOST,
      FIELD_CONTENT_LENGTH,
      FIELD_TRANSFER_ENCODING,
      FIELD_SHADOW,
      FIELD_SHADOW_CAPTURE,
      FIELD_OTHER,
      FIELD_SHADOW,
    ]);
    expect(b.toString('latin1', fs.lineStart(1), fs.lineEnd(1))).toBe('content-LENGTH: 12\r\n');
    expect(fs.digits(1)).toBe(12);
    expect(fs.digits(0)).toBe(-1);
    expect(
      fs.valueIs(
        2,
        Uint8Array.from('chunked', (c) => c.charCodeAt(0)),
      ),
    ).toBe(true);
  });

  it('is reused from head to head and grows past 64 fields', () => {
    const fs = new FieldScan();
    const many = Array.from({ length: 200 }, (_, i) => `F${i}: ${i}\r\n`).join('');
    fs.scan(Buffer.from(many, 'latin1'), 0, many.length);
    expect(fs.n).toBe(200);
    expect(fs.value(199)).toBe('199');
    const one = 'A: 1\r\n';
    fs.scan(Buffer.from(one, 'latin1'), 0, one.length);
    expect(fs.n).toBe(1);
    expect(fs.name(0)).toBe('A');
  });

  it.each([
    ['obs-fold with a space', 'A: b\r\n c'],
    ['obs-fold with a tab', 'A: b\r\n\tc'],
    ['obs-fold hiding a transfer-encoding', 'X: y\r\n Transfer-Encoding: chunked'],
    ['a space before the colon', 'Transfer-Encoding : chunked'],
    ['a tab before the colon', 'Content-Length\t: 5'],
    ['a space inside the name', 'Content Length: 5'],
    ['an empty name', ': v'],
    ['a separator in the name', 'A@b: v'],
    ['non-ASCII in the name', 'Caf\xe9: v'],
    ['a line without a colon', 'A: b\r\nnocolon'],
    ['an empty line in the middle', 'A: b\r\n\r\nC: d'],
    ['a bare LF as line end', 'A: b\nTransfer-Encoding: chunked'],
    ['a bare CR in a value', 'A: b\rc'],
    ['a bare CR ending a value', 'A: b\r'],
    ['a NUL in a value', 'A: b\x00c'],
    ['a DEL in a value', 'A: b\x7f'],
    ['an ESC in a value', 'A: \x1b[31m'],
    ['a vertical tab in a value', 'A: b\x0bc'],
    ['a form feed in a value', 'A: b\x0cc'],
  ])('refuses %s', (_name, text) => {
    expectMalformed(() => parse(text));
  });
});

describe('parseContentLength', () => {
  it.each([
    ['0', 0],
    ['5', 5],
    ['007', 7],
    ['5,5', 5],
    ['5, 5', 5],
    ['5 ,\t5 , 5', 5],
    ['999999999999999', 999_999_999_999_999],
  ])('reads %j as %d', (v, n) => {
    expect(parseContentLength(v)).toBe(n);
  });

  it.each([
    ['empty', ''],
    ['differing list values', '5, 6'],
    ['a list with an empty member', '5,'],
    ['a list starting empty', ',5'],
    ['a plus sign', '+5'],
    ['a minus sign', '-1'],
    ['an inner space', '5 5'],
    ['a leading space (the caller trims OWS, nothing else does)', ' 5'],
    ['a decimal point', '5.0'],
    ['an exponent', '1e3'],
    ['hex', '0x10'],
    ['an underscore', '1_000'],
    ['non-ASCII digits', '\u0665'],
    ['16 digits', '1000000000000000'],
    ['a huge number', '9'.repeat(400)],
    ['a list of huge numbers', `${'9'.repeat(20)}, ${'9'.repeat(20)}`],
  ])('refuses %s', (_name, v) => {
    expect(parseContentLength(v)).toBe(-1);
  });
});

describe('assertChunkedOnly', () => {
  it('passes chunked alone, in any case and with OWS or empty list members', () => {
    for (const v of ['chunked', 'Chunked', 'CHUNKED', ' chunked ', 'chunked,', ', chunked'])
      expect(() => assertChunkedOnly(v), v).not.toThrow();
  });

  it('400 malformed_http when chunked is not the final coding, is applied twice, or the list is empty (RFC 9112 §6.3)', () => {
    for (const v of [
      'chunked, chunked',
      'chunked,chunked',
      '',
      ' , ',
      'chunked, gzip',
      'chunked, identity',
      'gzip',
      'identity',
      'xchunked',
      'chunked;q=1',
    ]) {
      const e = syntaxError(() => assertChunkedOnly(v));
      expect(e.status, v).toBe(400);
      expect(e.code).toBe('malformed_http');
    }
  });

  it('501 not_implemented when chunked is final but another coding precedes it (RFC 9112 §6.1)', () => {
    for (const v of ['gzip, chunked', 'deflate,chunked']) {
      const e = syntaxError(() => assertChunkedOnly(v));
      expect(e.status, v).toBe(501);
      expect(e.code).toBe('not_implemented');
    }
  });
});

describe('ChunkedDecoder', () => {
  interface Run {
    data: string;
    /** absolute index (in the concatenation of all pieces) just past the message, or -1 */
    end: number;
    /** absolute index of the byte that was refused, or -1 */
    errorAt: number;
    error: HttpSyntaxError | null;
  }

  /** Feeds `pieces` in order, as a transport would, stopping at the message end or an error. */
  function run(pieces: Buffer[], withData = true): Run {
    const d = new ChunkedDecoder();
    const parts: Buffer[] = [];
    let base = 0;
    for (const p of pieces) {
      let r: number;
      try {
        r = d.push(p, 0, withData ? (x) => parts.push(Buffer.from(x)) : null);
      } catch (e) {
        if (!(e instanceof HttpSyntaxError)) throw e;
        return { data: Buffer.concat(parts).toString('latin1'), end: -1, errorAt: base, error: e };
      }
      if (r !== -1) {
        expect(d.done).toBe(true);
        return { data: Buffer.concat(parts).toString('latin1'), end: base + r, errorAt: -1, error: null };
      }
      expect(d.done).toBe(false);
      base += p.length;
    }
    return { data: Buffer.concat(parts).toString('latin1'), end: -1, errorAt: -1, error: null };
  }

  const bytes = (s: string) => Buffer.from(s, 'latin1');
  const split2 = (b: Buffer, k: number) => [b.subarray(0, k), b.subarray(k)];
  const singles = (b: Buffer) => Array.from({ length: b.length }, (_, i) => b.subarray(i, i + 1));
  function randomPieces(b: Buffer, r: () => number): Buffer[] {
    const out: Buffer[] = [];
    for (let i = 0; i < b.length;) {
      const n = 1 + Math.floor(r() * 7);
      out.push(b.subarray(i, i + n));
      i += n;
    }
    return out;
  }

  // hex in both cases, a 0-padded size, extensions (with BWS and quoted values), trailers, then a
  // pipelined request that must be left alone
  const MESSAGE =
    '5\r\nhello\r\n' +
    'A;name=value;q="a b"\r\n0123456789\r\n' +
    '1a \t; ext\r\n' +
    'chunk with \r\n and \n inside\r\n' +
    '0001\r\n!\r\n' +
    '0;last\r\n' +
    'Trailer-One: 1\r\nx-checksum: abc\r\n' +
    '\r\n';
  const DATA = 'hello0123456789chunk with \r\n and \n inside!';
  const LEFTOVER = 'POST /next HTTP/1.1\r\nHost: a\r\n\r\n';
  const WHOLE = bytes(MESSAGE + LEFTOVER);

  it('decodes a whole message and returns the index where the pipelined bytes start', () => {
    expect(run([WHOLE])).toEqual({ data: DATA, end: MESSAGE.length, errorAt: -1, error: null });
  });

  it('gives the same data and end for every split into two pieces', () => {
    for (let k = 0; k <= WHOLE.length; k++) {
      const r = run(split2(WHOLE, k));
      expect(r.error, `split at ${k}`).toBeNull();
      expect(r.end, `split at ${k}`).toBe(MESSAGE.length);
      expect(r.data, `split at ${k}`).toBe(DATA);
    }
  });

  it('gives the same data and end for one byte at a time and for 200 random splits into 1–7-byte pieces', () => {
    expect(run(singles(WHOLE))).toMatchObject({ data: DATA, end: MESSAGE.length });
    // seeded, so the random splits are the same on every run
    const r = createRng(0x5eed);
    for (let t = 0; t < 200; t++)
      expect(run(randomPieces(WHOLE, r)), `run ${t}`).toMatchObject({ data: DATA, end: MESSAGE.length });
  });

  it('finds the same end without a data callback', () => {
    expect(run([WHOLE], false)).toMatchObject({ data: '', end: MESSAGE.length });
  });

  it('honours a start offset inside the buffer', () => {
    const prefix = bytes('HEADBYTES');
    const d = new ChunkedDecoder();
    const got: string[] = [];
    const end = d.push(Buffer.concat([prefix, WHOLE]), prefix.length, (x) => got.push(x.toString('latin1')));
    expect(end).toBe(prefix.length + MESSAGE.length);
    expect(got.join('')).toBe(DATA);
  });

  it('hands out views of the input, not copies', () => {
    const buf = bytes('3\r\nabc\r\n0\r\n\r\n');
    const views: Buffer[] = [];
    new ChunkedDecoder().push(buf, 0, (x) => views.push(x));
    expect(views).toHaveLength(1);
    expect(views[0]!.buffer).toBe(buf.buffer);
    expect(views[0]!.byteOffset).toBe(buf.byteOffset + 3);
  });

  it('ends a message with no data chunks, with or without trailers, and returns the start when pushed again after the end', () => {
    expect(run([bytes('0\r\n\r\nX')])).toMatchObject({ data: '', end: 5 });
    expect(run([bytes('000\r\nA: b\r\n\r\n')])).toMatchObject({ data: '', end: 13 });
    const d = new ChunkedDecoder();
    expect(d.push(bytes('0\r\n\r\n'), 0, null)).toBe(5);
    expect(d.push(bytes('more'), 2, null)).toBe(2);
  });

  it('waits for more while a message is incomplete at every byte', () => {
    for (let k = 0; k < MESSAGE.length; k++) expect(run([bytes(MESSAGE.slice(0, k))]).end, `prefix ${k}`).toBe(-1);
  });

  it('accepts 15 hex digits and a 15-digit size line does not throw', () => {
    expect(run([bytes('000000000000005\r\nhello\r\n0\r\n\r\n')])).toMatchObject({ data: 'hello', end: 29 });
    expect(run([bytes('fffffffffffffff\r\nabc')])).toMatchObject({ error: null, end: -1, data: 'abc' });
  });

  it('accepts chunk-size lines and trailer sections of a few KiB', () => {
    expect(run([bytes(`3;${'e'.repeat(4000)}\r\nabc\r\n0\r\n\r\n`)])).toMatchObject({ data: 'abc', error: null });
    expect(run([bytes(`0\r\nX: ${'v'.repeat(15_000)}\r\n\r\n`)])).toMatchObject({ end: 15_010, error: null });
  });

  // [name, bytes, index of the refused byte]
  const MALFORMED: [string, string, number][] = [
    ['data longer than its size', '5\r\nhelloX\r\n0\r\n\r\n', 8],
    ['data shorter than its size (the CRLF eaten as data)', '5\r\nhell\r\n0\r\n\r\n', 8],
    ['CR without LF after data', '5\r\nhello\rX0\r\n\r\n', 9],
    ['bare LF after data', '5\r\nhello\n0\r\n\r\n', 8],
    ['bare LF after the size', '5\nhello\r\n0\r\n\r\n', 1],
    ['CR without LF after the size', '5\rhello\r\n', 2],
    ['bare LF in an extension', '5;a=b\nhello\r\n', 5],
    ['NUL in an extension', '5;a\x00\r\nhello\r\n', 3],
    ['bare LF after the last chunk', '0\n\r\n', 1],
    ['bare LF ending the message', '0\r\n\n', 3],
    ['CR without LF ending the message', '0\r\n\rX', 4],
    ['bare LF ending a trailer', '0\r\nA: b\n\r\n', 7],
    ['CR without LF ending a trailer', '0\r\nA: b\rC: d\r\n\r\n', 8],
    ['NUL in a trailer', '0\r\nA: b\x00\r\n\r\n', 7],
    ['a line without a size', '\r\nhello\r\n', 0],
    ['an extension without a size', ';a\r\n', 0],
    ['whitespace before the size', ' 5\r\nhello\r\n', 0],
    ['a plus sign', '+5\r\nhello\r\n', 0],
    ['a minus sign', '-5\r\nhello\r\n', 0],
    ['a 0x prefix', '0x5\r\nhello\r\n', 1],
    ['a non-hex digit', '5g\r\nhello\r\n', 1],
    ['16 hex digits', '0000000000000005\r\nhello\r\n', 15],
    ['16 significant hex digits', 'ffffffffffffffff\r\n', 15],
    ['a chunk line longer than 4 KiB', `3;${'e'.repeat(5000)}\r\nabc\r\n`, -1],
    ['a trailer section longer than 16 KiB', `0\r\nX: ${'v'.repeat(17_000)}\r\n\r\n`, -1],
    ['many small trailers adding up to more than 16 KiB', `0\r\n${'A: b\r\n'.repeat(4000)}\r\n`, -1],
  ];

  it.each(MALFORMED)('refuses %s, whole or byte by byte, at the offending byte', (_name, msg, at) => {
    const b = bytes(msg);
    const whole = run([b]);
    expect(whole.error?.status).toBe(400);
    expect(whole.error?.code).toBe('malformed_http');
    const one = run(singles(b));
    expect(one.error).toBeInstanceOf(HttpSyntaxError);
    if (at >= 0) expect(one.errorAt).toBe(at);
    else expect(one.errorAt).toBeGreaterThan(4000);
    // every 2-piece split refuses too (no state is lost across a boundary)
    for (let k = 0; k <= Math.min(b.length, 64); k++)
      expect(run(split2(b, k)).error, `split at ${k}`).toBeInstanceOf(HttpSyntaxError);
  });

  it('refuses a second, smuggled size line hidden behind a bare LF in the data CRLF', () => {
    // a lenient parser reading "\n" as a line end would see "0" and end the message at byte 11
    expect(run([bytes('5\r\nhello\n0\r\n\r\nGET /admin HTTP/1.1\r\n\r\n')]).error).toBeInstanceOf(HttpSyntaxError);
  });

  // RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
  it('refuses whitespace after the size that is not followed by ";" (BWS then an extension is fine)', () => {
    expect(run([bytes('5 ;a=b\r\nhello\r\n0\r\n\r\n')]).error).toBeNull();
    expect(run([bytes('5 junk\r\nhello\r\n0\r\n\r\n')]).error).toBeInstanceOf(HttpSyntaxError);
  });

  // RFC 9112 §7.1.2: trailer-section = *( field-line CRLF )
  it('refuses trailer lines that are not field lines', () => {
    for (const t of ['nocolon', ' folded: x', 'Bad Name: x', 'A: \x01']) {
      expect(run([bytes(`0\r\n${t}\r\n\r\n`)]).error, JSON.stringify(t)).toBeInstanceOf(HttpSyntaxError);
    }
  });
});
