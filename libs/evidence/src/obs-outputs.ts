/**
 * The output texts of an ObsTable's rows, as bytes outside the JS heap: ~36 MB of strings at 300k
 * rows, where V8 lets the heap grow to ~4× what is live. Row r's text is `buf[start[r], end[r])`,
 * latin1 when every code unit is < 256, else UTF-16LE (either gives back the same code units, lone
 * surrogates included); start −1: no output.
 */

/** Texts held one byte per code unit. */
const LATIN1 = /^[\u0000-\u00ff]*$/;

/** Output texts by row: set as rows are added, read by scoring, freed by {@link release}. */
export class OutputTexts {
  private buf = Buffer.alloc(1 << 16);
  private start = new Float64Array(0);
  private end = new Float64Array(0);
  /** 1 where row r's text is UTF-16LE */
  private wide = new Uint8Array(0);
  private len = 0;
  /** true once {@link release} has freed the texts */
  released = false;

  /** Sets row `r`'s text (null: none). Rows are set once, in order, within the capacity of {@link grow}. */
  set(r: number, text: string | null): void {
    if (text === null) {
      this.start[r] = -1;
      this.end[r] = -1;
      return;
    }
    const wide = !LATIN1.test(text);
    const need = wide ? 2 * text.length : text.length;
    if (this.len + need > this.buf.length) {
      const b = Buffer.alloc(Math.max(this.len + need, Math.ceil(this.buf.length * 1.5)));
      this.buf.copy(b, 0, 0, this.len);
      this.buf = b;
    }
    this.buf.write(text, this.len, need, wide ? 'utf16le' : 'latin1');
    this.start[r] = this.len;
    this.wide[r] = wide ? 1 : 0;
    this.len += need;
    this.end[r] = this.len;
  }

  /** Row `r`'s text (null when none). @throws Error after {@link release} */
  get(r: number): string | null {
    if (this.released) throw new Error('ObsTable: output texts were released (releaseOutputs) and cannot be read');
    const s = this.start[r]!;
    if (s < 0) return null;
    return this.buf.toString(this.wide[r] ? 'utf16le' : 'latin1', s, this.end[r]!);
  }

  /** Room for rows 0 … cap − 1 (rows below cap keep their texts). */
  grow(cap: number): void {
    if (this.released) return;
    const s = new Float64Array(cap);
    s.set(this.start.subarray(0, cap));
    this.start = s;
    const e = new Float64Array(cap);
    e.set(this.end.subarray(0, cap));
    this.end = e;
    const w = new Uint8Array(cap);
    w.set(this.wide.subarray(0, cap));
    this.wide = w;
  }

  /** Trims the byte buffer to the texts held. */
  trim(): void {
    if (this.buf.length > this.len) {
      const b = Buffer.alloc(this.len);
      this.buf.copy(b, 0, 0, this.len);
      this.buf = b;
    }
  }

  /** Frees every text and its offsets; {@link get} throws afterwards. */
  release(): void {
    this.released = true;
    this.buf = Buffer.alloc(0);
    this.start = new Float64Array(0);
    this.end = new Float64Array(0);
    this.wide = new Uint8Array(0);
  }
}
