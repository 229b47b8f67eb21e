/**
 * Random access to the bytes a base64 string encodes, decoding only the few asked for: each run of
 * four characters is three bytes, so byte `off` starts in the run at character `floor(off / 3) * 4`.
 * A payload's headers are read without decoding the payload (an audio clip's base64 runs to
 * hundreds of kilobytes). Characters outside the alphabet (whitespace) shift what is read: the
 * reader of a header then finds none, and falls back to its bound (audio-duration.ts).
 */
export class Base64Bytes {
  /** The bytes the string encodes (its padding taken off). */
  readonly size: number;

  constructor(private readonly b64: string) {
    const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    this.size = Math.max(0, Math.floor((b64.length * 3) / 4) - pad);
  }

  /** Up to `n` bytes from byte `off` (fewer past the end; none for an offset outside the payload). */
  at(off: number, n: number): Buffer {
    if (!(off >= 0) || off >= this.size || n <= 0) return Buffer.alloc(0);
    const from = Math.floor(off / 3) * 4;
    const to = Math.min(this.b64.length, Math.ceil((off + n) / 3) * 4);
    const skip = off % 3;
    return Buffer.from(this.b64.slice(from, to), 'base64').subarray(skip, skip + n);
  }
}
