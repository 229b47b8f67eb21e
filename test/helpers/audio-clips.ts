/**
 * Audio clips of known duration, as base64, for the tests of audio counted by its duration
 * (shared/tokenizer/audio-duration.ts): a PCM WAV (RIFF header, optional chunks before `data`), and
 * MPEG audio frames behind a header of a chosen bitrate.
 */

/** A RIFF chunk: its id, its size, its bytes (padded to even). */
function chunk(id: string, body: Buffer, size = body.length): Buffer {
  const h = Buffer.alloc(8);
  h.write(id, 0, 'latin1');
  h.writeUInt32LE(size, 4);
  return Buffer.concat([h, body, body.length & 1 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

export interface WavOptions {
  sampleRate?: number;
  channels?: number;
  bits?: number;
  /** chunks between `fmt ` and `data` (LIST, fact) */
  before?: Array<[string, Buffer]>;
  /** the `data` size the header states (default the real one; 0xFFFFFFFF as a streamed file writes) */
  statedSize?: number;
  /** the byte rate the header states (default the real one) */
  byteRate?: number;
}

/** A PCM WAV file of `seconds` of silence. */
export function wavBytes(seconds: number, o: WavOptions = {}): Buffer {
  const [rate, ch, bits] = [o.sampleRate ?? 16_000, o.channels ?? 1, o.bits ?? 16];
  const align = (ch * bits) / 8;
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0);
  fmt.writeUInt16LE(ch, 2);
  fmt.writeUInt32LE(rate, 4);
  fmt.writeUInt32LE(o.byteRate ?? rate * align, 8);
  fmt.writeUInt16LE(align, 12);
  fmt.writeUInt16LE(bits, 14);
  const data = Buffer.alloc(Math.round(seconds * rate) * align);
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), chunk('fmt ', fmt), ...(o.before ?? []).map(([id, b]) => chunk(id, b)), chunk('data', data, o.statedSize)]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

export const wav = (seconds: number, o: WavOptions = {}) => wavBytes(seconds, o).toString('base64');

/** `bytes` of MPEG audio starting with frame header `header` (4 bytes), the `tag` ('Xing', 'Info', 'VBRI') where an encoder writes it, behind an ID3v2 tag of `id3` bytes. */
export function mpegBytes(header: number[], bytes: number, o: { tag?: string; tagAt?: number; id3?: number } = {}): Buffer {
  const audio = Buffer.alloc(bytes);
  Buffer.from(header).copy(audio, 0);
  if (o.tag) audio.write(o.tag, o.tagAt ?? 36, 'latin1');
  if (!o.id3) return audio;
  const id3 = Buffer.alloc(10 + o.id3);
  id3.write('ID3', 0, 'latin1');
  id3[3] = 4;
  [21, 14, 7, 0].forEach((shift, i) => (id3[6 + i] = (o.id3! >> shift) & 0x7f));
  return Buffer.concat([id3, audio]);
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, joint stereo; MPEG-2 Layer III, 8 kbit/s, 22.05 kHz, mono. */
export const MP3_128K = [0xff, 0xfb, 0x90, 0x40];
export const MP3_8K_MONO = [0xff, 0xf3, 0x10, 0xc0];
