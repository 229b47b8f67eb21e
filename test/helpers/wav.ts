/** A stretch of a test WAV: a sine tone (Hz) or silence, for `seconds`. */
export interface WavPiece {
  seconds: number;
  toneHz?: number;
  /** Peak amplitude, 0..1 of full scale (default 0.5). */
  amplitude?: number;
}

/** A 16-bit PCM mono WAV (RIFF header and samples), e.g. tone bursts between pauses. */
export function makeWav(pieces: WavPiece[], sampleRate = 16_000): Buffer {
  const frames = pieces.reduce((n, p) => n + Math.round(p.seconds * sampleRate), 0);
  const data = Buffer.alloc(frames * 2);
  let f = 0;
  for (const p of pieces) {
    const n = Math.round(p.seconds * sampleRate);
    const amp = (p.amplitude ?? 0.5) * 32767;
    for (let i = 0; i < n; i++, f++) {
      const v = p.toneHz ? Math.round(amp * Math.sin((2 * Math.PI * p.toneHz * i) / sampleRate)) : 0;
      data.writeInt16LE(v, f * 2);
    }
  }
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** Three tone bursts between pauses: 0.2-1.0 s, 1.5-2.7 s, 3.2-3.6 s, in 4 s. */
export const SPEECH_LIKE: WavPiece[] = [
  { seconds: 0.2 },
  { seconds: 0.8, toneHz: 440 },
  { seconds: 0.5 },
  { seconds: 1.2, toneHz: 660 },
  { seconds: 0.5 },
  { seconds: 0.4, toneHz: 550 },
  { seconds: 0.4 },
];
