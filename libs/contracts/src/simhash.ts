import { createHash } from 'node:crypto';

/** Words per shingle in {@link simhash64}. */
export const SIMHASH_SHINGLE_WORDS = 3;

/**
 * Normalises prompt text for near-duplicate signatures: Unicode NFKC, lower case, every run of
 * characters that are not letters or digits becomes one space, trimmed.
 */
export function normalizeForSimhash(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * 64-bit SimHash of a text over word shingles: the text is normalised
 * ({@link normalizeForSimhash}), split into words, and every run of
 * {@link SIMHASH_SHINGLE_WORDS} consecutive words (or the whole word list when shorter) is hashed
 * to 64 bits (first 8 bytes of its sha256); each bit of the signature is 1 when more shingles
 * have that bit set than unset. Near-duplicate prompts differ in few bits (compare with Hamming
 * distance); identical normalised texts give identical signatures.
 * @returns 16 lowercase hex characters; the empty text gives `0000000000000000`
 * Source: M. Charikar, "Similarity estimation techniques from rounding algorithms", STOC 2002;
 * word shingles as in Manku, Jain & Das Sarma, "Detecting near-duplicates for web crawling", WWW 2007.
 */
export function simhash64(text: string): string {
  const words = normalizeForSimhash(text)
    .split(' ')
    .filter((w) => w.length > 0);
  if (words.length === 0) return '0000000000000000';
  const shingles: string[] = [];
  if (words.length <= SIMHASH_SHINGLE_WORDS) shingles.push(words.join(' '));
  else
    for (let i = 0; i + SIMHASH_SHINGLE_WORDS <= words.length; i++)
      shingles.push(words.slice(i, i + SIMHASH_SHINGLE_WORDS).join(' '));
  const counts = new Int32Array(64);
  for (const s of shingles) {
    const d = createHash('sha256').update(s).digest();
    for (let byte = 0; byte < 8; byte++) {
      const b = d[byte]!;
      for (let bit = 0; bit < 8; bit++) counts[byte * 8 + bit]! += (b >> (7 - bit)) & 1 ? 1 : -1;
    }
  }
  let hex = '';
  for (let byte = 0; byte < 8; byte++) {
    let v = 0;
    for (let bit = 0; bit < 8; bit++) if (counts[byte * 8 + bit]! > 0) v |= 1 << (7 - bit);
    hex += v.toString(16).padStart(2, '0');
  }
  return hex;
}

/** Hamming distance between two 16-hex-character SimHash signatures (0–64). */
export function simhashDistance(a: string, b: string): number {
  let x = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let n = 0;
  while (x > 0n) {
    n += Number(x & 1n);
    x >>= 1n;
  }
  return n;
}
