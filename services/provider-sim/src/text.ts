import { encode } from 'gpt-tokenizer';
import { mulberry32 } from './rng.js';

/**
 * Deterministic filler text whose token count is known by construction: every word in the
 * vocabulary is one o200k token both as " word" and as a capitalised sentence start, and each
 * sentence ends with "." (one token). The BPE pre-tokeniser splits at those boundaries, so the
 * text's token count is the number of pieces — a test checks this against the real tokenizer.
 */

const RAW_WORDS = (
  'the model answer request system data service value result process time system team user query ' +
  'report cost quality budget token stream latency price market plan review signal window batch ' +
  'record policy sample metric trace event state change order number table field record line ' +
  'we they it this that each every some most many few more less first next last other same new ' +
  'good simple clear small large long short fast slow early late high low open close main final ' +
  'is are was were be has have had can will would should could may might must does did makes ' +
  'takes gives shows keeps finds reads writes sends holds moves runs starts stops checks builds ' +
  'and or but so then also still just only even well often always never here there now again ' +
  'of to in on at for with from by about into over after before under between through during ' +
  'work part case point way fact group home world area level form room word side kind head ' +
  'house service friend power hour game line end member law car city name idea body back ' +
  'water story month book night week money place company problem question program study'
).split(/\s+/);

function singleToken(s: string): boolean {
  return encode(s).length === 1;
}

/** Vocabulary words whose lower-case, space-prefixed and capitalised forms are single tokens. */
const WORDS: readonly string[] = [...new Set(RAW_WORDS)].filter((w) => {
  const cap = w[0]!.toUpperCase() + w.slice(1);
  return singleToken(` ${w}`) && singleToken(cap) && singleToken(` ${cap}`);
});

/**
 * Builds `tokens` tokens of filler text as pieces (one token each), seeded by `seed32`.
 * @param tokens wanted length in tokens (≥ 1)
 * @param seed32 a 32-bit seed, e.g. from hashUnit(seed, model, requestHash)·2³²
 * @returns pieces whose concatenation is the text; `pieces.length === tokens`
 */
export function fillerPieces(tokens: number, seed32: number): string[] {
  const rand = mulberry32(seed32);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  const pieces: string[] = [];
  if (tokens <= 1) {
    const w = pick();
    return [w[0]!.toUpperCase() + w.slice(1)];
  }
  while (pieces.length < tokens) {
    const r = tokens - pieces.length;
    const k = 6 + Math.floor(rand() * 11);
    // never leave a lone 1-token remainder (a bare "." would merge with the previous one)
    const words = r <= k + 1 ? Math.max(1, r - 1) : r === k + 2 ? k + 1 : k;
    for (let i = 0; i < words; i++) {
      const w = pick();
      if (i === 0) {
        const cap = w[0]!.toUpperCase() + w.slice(1);
        pieces.push(pieces.length === 0 ? cap : ` ${cap}`);
      } else pieces.push(` ${w}`);
    }
    pieces.push('.');
  }
  return pieces;
}

/** Splits text into stream pieces: words with their leading whitespace. Concatenation = text. */
export function wordPieces(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}
