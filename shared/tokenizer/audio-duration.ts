import { Base64Bytes } from './base64-bytes';

/**
 * The tokens OpenAI bills for audio, by its duration: "Audio tokens in user messages are 1 token per
 * 100 ms of audio, while audio tokens in assistant messages are 1 token per 50ms of audio"
 * (developers.openai.com/api/docs/guides/realtime-costs, "Managing costs"; the same audio tokens its
 * chat completions report in `prompt_tokens_details.audio_tokens` / `completion_tokens_details.audio_tokens`).
 * A clip's duration is read from its header (a few dozen bytes decoded, never the whole payload);
 * a clip whose header cannot be read is bounded by its size at the lowest bitrate its format may
 * have, so the estimate is never below the audio's real duration (docs/catalog.md "Audio tokens").
 */
export const INPUT_AUDIO_TOKENS_PER_SECOND = 10;
export const OUTPUT_AUDIO_TOKENS_PER_SECOND = 20;

/** pcm16 as OpenAI sends it: 24 kHz, 16-bit, mono (ChatCompletionAudioParam `format`, the audio guide). */
const PCM16_BYTES_PER_SECOND = 24_000 * 2;
/**
 * The bounds by size, in bytes a second: 8 kbit/s, the lowest MP3 bitrate (MPEG-2/2.5 Layer III),
 * below what a WAV of speech holds (8 kHz 8-bit mono is 8,000; GSM 6.10 about 1,625); 6 kbit/s, the
 * lowest Opus bitrate (RFC 6716 §2.1.1), for any other format (an answer's opus, aac, flac).
 */
const MP3_FLOOR = 1_000;
const OTHER_FLOOR = 750;
/** The most bytes a second a WAV's header is believed for (192 kHz, 8 channels, 32-bit); more is read as no header. */
const MAX_BYTE_RATE = 192_000 * 8 * 4;
/** WAV chunks walked before `data` (fmt, LIST, fact...), and bytes searched for an MP3 frame after its ID3 tag. */
const MAX_CHUNKS = 32;
const SYNC_WINDOW = 512;

/** Kilobits a second by bitrate index 1-14 (ISO/IEC 11172-3, 13818-3): MPEG-1 layers I, II, III; MPEG-2/2.5 layer I; layers II and III. */
const KBPS = {
  v1l1: [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};

const tag = (b: Buffer, at: number) => b.toString('latin1', at, at + 4);

/**
 * The seconds of audio `src` holds in `format` (wav, mp3, flac, opus, pcm16, ...); `total`, the
 * payload's bytes (a stream's audio is several payloads, the first holding the header). pcm16 is read
 * by its size; a WAV or an MP3 by its first bytes, whatever format is named (a client that names one
 * wrongly is still read); a FLAC's or an Ogg Opus's stated length only when that format is named (an
 * answer's, which the upstream wrote: OpenAI takes only wav and mp3 as input).
 */
export function audioSeconds(src: Base64Bytes, format: unknown, total = src.size): number {
  if (format === 'pcm16') return total / PCM16_BYTES_PER_SECOND;
  const head = src.at(0, 12);
  const magic = head.length < 4 ? '' : tag(head, 0);
  const known =
    magic === '' ? undefined
    : magic === 'RIFF' || magic === 'RF64' ? wavSeconds(src, head, total)
    : format === 'flac' ? (magic === 'fLaC' ? flacSeconds(src) : undefined)
    : format === 'opus' ? (magic === 'OggS' && total === src.size ? opusSeconds(src) : undefined)
    : format === 'wav' || format === 'mp3' ? mp3Seconds(src, total)
    : undefined; // aac, a stream's opus, a format not known: by size
  return known ?? total / (format === 'wav' || format === 'mp3' ? MP3_FLOOR : OTHER_FLOOR);
}

/** Tokens for `seconds` of audio at `perSecond`, whole tokens up. */
export const audioTokens = (seconds: number, perSecond: number) => Math.ceil(seconds * perSecond);

/** An `input_audio` part's tokens: its base64 `data` (or a data URL) in `format`, at the input rate. */
export function inputAudioTokens(data: string, format: unknown): number {
  const comma = data.startsWith('data:') ? data.indexOf(',') : -1;
  return audioTokens(audioSeconds(new Base64Bytes(comma < 0 ? data : data.slice(comma + 1)), format), INPUT_AUDIO_TOKENS_PER_SECOND);
}

/**
 * A RIFF WAVE file's seconds: its `data` chunk's bytes over the `fmt ` chunk's rate (for PCM and
 * its kin the sample rate times the block align, what a decoder plays it at; else the average byte
 * rate). A `data` size past the payload (0xFFFFFFFF of a streamed or RF64 file) is the bytes there.
 */
function wavSeconds(src: Base64Bytes, head: Buffer, total: number): number | undefined {
  if (head.length < 12 || tag(head, 8) !== 'WAVE') return undefined;
  let rate: number | undefined;
  for (let off = 12, i = 0; i < MAX_CHUNKS && off + 8 <= total; i++) {
    const c = src.at(off, 8);
    if (c.length < 8) return undefined;
    const size = c.readUInt32LE(4);
    if (tag(c, 0) === 'fmt ') rate = byteRate(src.at(off + 8, 16));
    else if (tag(c, 0) === 'data') {
      if (!rate) return undefined;
      const left = total - off - 8;
      return (size > 0 && size <= left ? size : left) / rate;
    }
    off += 8 + size + (size & 1);
  }
  return undefined;
}

/** A WAVE `fmt ` chunk's bytes a second, or undefined when it is not one to believe. */
function byteRate(f: Buffer): number | undefined {
  if (f.length < 16) return undefined;
  const [fmt, channels, sampleRate, avg, align, bits] = [f.readUInt16LE(0), f.readUInt16LE(2), f.readUInt32LE(4), f.readUInt32LE(8), f.readUInt16LE(12), f.readUInt16LE(14)];
  // PCM, IEEE float, A-law, mu-law, extensible: a sample frame every block
  const pcm = fmt === 1 || fmt === 3 || fmt === 6 || fmt === 7 || fmt === 0xfffe;
  const rate = pcm ? sampleRate * (align || channels * Math.ceil(bits / 8)) : avg;
  return rate > 0 && rate <= MAX_BYTE_RATE ? rate : undefined;
}

/**
 * An MP3's seconds from its first frame header (after an ID3v2 tag): the bytes from that frame on
 * at its bitrate, a constant-bitrate stream's duration. A stream its encoder marked variable (a
 * `Xing` or `VBRI` tag in the first frame; LAME writes `Info` for a constant one), or whose second
 * frame has another bitrate, is bounded at the lowest bitrate of its MPEG version and layer: its
 * first frame's says nothing of the others. (A file made to mislead, a first frame of a high bitrate
 * before frames of a low one, is read short: the estimate bills only an upstream that reports no
 * usage, and OpenAI reports it.)
 */
function mp3Seconds(src: Base64Bytes, total: number): number | undefined {
  let start = 0;
  const id3 = src.at(0, 10);
  if (id3.length === 10 && id3.toString('latin1', 0, 3) === 'ID3') {
    // the tag's size: four 7-bit bytes, past its 10-byte header (and a footer, flag 0x10)
    start = 10 + ((id3[6] & 0x7f) << 21) + ((id3[7] & 0x7f) << 14) + ((id3[8] & 0x7f) << 7) + (id3[9] & 0x7f) + (id3[5] & 0x10 ? 10 : 0);
  }
  const w = src.at(start, SYNC_WINDOW);
  for (let i = 0; i + 4 <= w.length; i++) {
    const f = frame(w, i);
    if (!f) continue;
    const tagged = w.length >= i + 4 + 36 + 4 ? [tag(w, i + 4 + f.sideInfo), tag(w, i + 36)] : [];
    const second = frame(src.at(start + i + f.bytes, 4), 0);
    const kbps = tagged.includes('Xing') || tagged.includes('VBRI') || (second && second.kbps !== f.kbps) ? f.lowest : f.kbps;
    return ((total - start - i) * 8) / (kbps * 1000);
  }
  return undefined;
}

/** Sample rates by index 0-2: MPEG-1, MPEG-2, MPEG-2.5. */
const HZ = { 3: [44_100, 48_000, 32_000], 2: [22_050, 24_000, 16_000], 0: [11_025, 12_000, 8_000] } as Record<number, number[]>;

/**
 * The MPEG audio frame header at `b[i]`: its bitrate, its version and layer's lowest, its Layer III
 * side information's length, and the frame's length in bytes (where the next header is).
 */
function frame(b: Buffer, i: number): { kbps: number; lowest: number; sideInfo: number; bytes: number } | undefined {
  if (b.length < i + 4 || b[i] !== 0xff || (b[i + 1] & 0xe0) !== 0xe0) return undefined;
  const version = (b[i + 1] >> 3) & 3; // 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5, 1 reserved
  const layer = (b[i + 1] >> 1) & 3; // 3 layer I, 2 layer II, 1 layer III, 0 reserved
  const index = b[i + 2] >> 4;
  const rateIndex = (b[i + 2] >> 2) & 3;
  if (version === 1 || layer === 0 || index === 0 || index === 15 || rateIndex === 3) return undefined;
  const v1 = version === 3;
  const table = v1 ? (layer === 3 ? KBPS.v1l1 : layer === 2 ? KBPS.v1l2 : KBPS.v1l3) : layer === 3 ? KBPS.v2l1 : KBPS.v2l23;
  const mono = b[i + 3] >> 6 === 3;
  const [kbps, hz, pad] = [table[index - 1], HZ[version][rateIndex], (b[i + 2] >> 1) & 1];
  // ISO/IEC 11172-3 2.4.3.1: a layer I frame is 384 samples in 4-byte slots, layer II and MPEG-1 layer III 1,152, MPEG-2/2.5 layer III 576
  const bytes = layer === 3 ? (Math.floor((12_000 * kbps) / hz) + pad) * 4 : Math.floor(((layer === 1 && !v1 ? 72_000 : 144_000) * kbps) / hz) + pad;
  return { kbps, lowest: table[0], sideInfo: v1 ? (mono ? 17 : 32) : mono ? 9 : 17, bytes };
}

/** A FLAC stream's seconds from its STREAMINFO block (total samples over sample rate); undefined when it states no total. */
function flacSeconds(src: Base64Bytes): number | undefined {
  const s = src.at(8, 18); // STREAMINFO, the first metadata block, after "fLaC" and its 4-byte block header
  if (s.length < 18) return undefined;
  const rate = (s[10] << 12) | (s[11] << 4) | (s[12] >> 4);
  const samples = (s[13] & 0x0f) * 2 ** 32 + s.readUInt32BE(14);
  return rate > 0 && samples > 0 ? samples / rate : undefined;
}

/** The most bytes an Ogg page takes (27 of header, 255 lacing values, 255 segments of 255): the last page is in the payload's last this many. */
const MAX_OGG_PAGE = 27 + 255 + 255 * 255;

/**
 * An Ogg Opus stream's seconds: its last page's granule position (samples at 48 kHz, RFC 7845 §4)
 * less the pre-skip its OpusHead states; only the payload's last page is decoded.
 */
function opusSeconds(src: Base64Bytes): number | undefined {
  const first = src.at(0, 27 + 255 + 19);
  if (first.length < 28) return undefined;
  const head = 27 + first[26]; // the first packet, after the segment table: "OpusHead", version, channels, pre-skip
  if (first.length < head + 12 || first.toString('latin1', head, head + 8) !== 'OpusHead') return undefined;
  const preSkip = first.readUInt16LE(head + 10);
  const from = Math.max(0, src.size - MAX_OGG_PAGE);
  const tail = src.at(from, src.size - from);
  for (let at = tail.lastIndexOf('OggS'); at >= 0; at = at > 0 ? tail.lastIndexOf('OggS', at - 1) : -1) {
    if (at + 14 > tail.length) continue;
    const granule = tail.readBigInt64LE(at + 6);
    if (granule >= 0n) return Math.max(0, Number(granule) - preSkip) / 48_000; // -1: no packet ends on this page
  }
  return undefined;
}
