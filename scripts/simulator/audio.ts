import { WaveFile } from 'wavefile';

export interface SoundRegion {
  /** Seconds. */
  start: number;
  end: number;
  /** RMS level of the region (0..1 of full scale). */
  rms: number;
}

export interface WavAnalysis {
  duration: number;
  sampleRate: number;
  channels: number;
  regions: SoundRegion[];
}

const WINDOW_S = 0.02;
/** About -34 dBFS: quieter windows count as silence. */
const SILENCE_RMS = 0.02;
/** Pauses shorter than this do not split a region; regions shorter than MIN_REGION_S are dropped. */
const MIN_PAUSE_S = 0.25;
const MIN_REGION_S = 0.08;

interface Fmt {
  audioFormat: number;
  numChannels: number;
  sampleRate: number;
  bitsPerSample: number;
}

/** One sample as a number in [-1, 1], read straight from the data chunk's bytes. */
function sampleReader(view: DataView, fmt: Fmt): ((byteOffset: number) => number) | undefined {
  const b = fmt.bitsPerSample;
  if (fmt.audioFormat === 3 && b === 32) return (o) => view.getFloat32(o, true);
  if (fmt.audioFormat === 3 && b === 64) return (o) => view.getFloat64(o, true);
  if (fmt.audioFormat !== 1 && fmt.audioFormat !== 65534) return undefined;
  if (b === 8) return (o) => (view.getUint8(o) - 128) / 128;
  if (b === 16) return (o) => view.getInt16(o, true) / 32768;
  if (b === 24) return (o) => ((view.getUint8(o) | (view.getUint8(o + 1) << 8) | (view.getInt8(o + 2) << 16)) / 8388608);
  if (b === 32) return (o) => view.getInt32(o, true) / 2147483648;
  return undefined;
}

/**
 * Reads a WAV file (RIFF header, PCM or float samples) the way a speech backend's front end would:
 * the duration from the sample count, and the regions with sound from the energy of 20 ms windows
 * (sound between pauses). Undefined when the bytes are not a WAV it can read.
 */
export function analyseWav(buf: Buffer): WavAnalysis | undefined {
  if (buf.length < 44 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let wav: WaveFile;
  try {
    wav = new WaveFile(buf);
  } catch {
    return undefined;
  }
  const fmt = wav.fmt as Fmt;
  const bytes = (wav.data as { samples: Uint8Array }).samples;
  if (!fmt?.sampleRate || !fmt.numChannels || !bytes) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const read = sampleReader(view, fmt);
  if (!read) return undefined;
  const bytesPerSample = fmt.bitsPerSample / 8;
  const frameBytes = bytesPerSample * fmt.numChannels;
  const frames = Math.floor(bytes.byteLength / frameBytes);
  const duration = frames / fmt.sampleRate;

  const windowFrames = Math.max(1, Math.round(WINDOW_S * fmt.sampleRate));
  const loud: Array<{ i: number; rms: number }> = [];
  for (let start = 0, w = 0; start < frames; start += windowFrames, w++) {
    const end = Math.min(frames, start + windowFrames);
    let sum = 0;
    for (let f = start; f < end; f++) {
      let mono = 0;
      for (let c = 0; c < fmt.numChannels; c++) mono += read(f * frameBytes + c * bytesPerSample);
      mono /= fmt.numChannels;
      sum += mono * mono;
    }
    const rms = Math.sqrt(sum / (end - start));
    if (rms >= SILENCE_RMS) loud.push({ i: w, rms });
  }

  const regions: SoundRegion[] = [];
  const pauseWindows = Math.ceil(MIN_PAUSE_S / WINDOW_S);
  let cur: { first: number; last: number; sum: number; n: number } | undefined;
  const close = () => {
    if (!cur) return;
    const start = (cur.first * windowFrames) / fmt.sampleRate;
    const end = Math.min(duration, ((cur.last + 1) * windowFrames) / fmt.sampleRate);
    if (end - start >= MIN_REGION_S) regions.push({ start: round(start), end: round(end), rms: cur.sum / cur.n });
    cur = undefined;
  };
  for (const w of loud) {
    if (cur && w.i - cur.last > pauseWindows) close();
    if (!cur) cur = { first: w.i, last: w.i, sum: 0, n: 0 };
    cur.last = w.i;
    cur.sum += w.rms;
    cur.n++;
  }
  close();
  return { duration: round(duration), sampleRate: fmt.sampleRate, channels: fmt.numChannels, regions };
}

export const round = (s: number) => Math.round(s * 1000) / 1000;
