import { expect } from 'chai';
import { Base64Bytes } from '../../../shared/tokenizer/base64-bytes';
import { audioSeconds, inputAudioTokens, INPUT_AUDIO_TOKENS_PER_SECOND, OUTPUT_AUDIO_TOKENS_PER_SECOND } from '../../../shared/tokenizer/audio-duration';
import { MP3_128K, MP3_8K_MONO, mpegBytes, wav, wavBytes } from '../../helpers/audio-clips';

const seconds = (b: Buffer, format: string, total?: number) => audioSeconds(new Base64Bytes(b.toString('base64')), format, total);

/**
 * Audio counted by its duration (OpenAI: 1 token per 100 ms of input audio, 1 per 50 ms of output:
 * developers.openai.com/api/docs/guides/realtime-costs): a WAV's RIFF header and an MP3's first
 * frame read from a few decoded bytes; anything unreadable bounded by its size at the lowest bitrate,
 * never below its real duration.
 */
describe('tokenizer: audio duration from its header', () => {
  it("OpenAI's rates: 10 audio tokens a second of input, 20 of output", () => {
    expect([INPUT_AUDIO_TOKENS_PER_SECOND, OUTPUT_AUDIO_TOKENS_PER_SECOND]).to.deep.equal([10, 20]);
  });

  it('decodes any run of bytes of a base64 payload alone, as the whole would', () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 37) % 256));
    for (const cut of [1000, 999, 998]) {
      const b = new Base64Bytes(bytes.subarray(0, cut).toString('base64'));
      expect(b.size).to.equal(cut);
      for (const [off, n] of [[0, 12], [1, 8], [2, 5], [500, 40], [cut - 3, 10], [cut, 4], [-1, 4]]) expect(b.at(off, n).equals(bytes.subarray(Math.max(0, off), off < 0 ? 0 : Math.min(cut, off + n))), `${cut} ${off} ${n}`).to.equal(true);
    }
  });

  it('a WAV: its data chunk over its rate, exactly, past chunks before data; a 10-second clip is 100 input tokens', () => {
    expect(inputAudioTokens(wav(10), 'wav')).to.equal(100);
    expect(seconds(wavBytes(2.5, { sampleRate: 24_000, channels: 2 }), 'wav')).to.equal(2.5);
    const list = Buffer.alloc(4001, 7); // an odd size: padded to even
    expect(seconds(wavBytes(3, { before: [['LIST', list], ['fact', Buffer.alloc(4)]] }), 'wav')).to.equal(3);
    expect(inputAudioTokens(`data:audio/wav;base64,${wav(1.23)}`, 'wav'), 'a data URL').to.equal(13);
  });

  it("a WAV's stated data size past its payload (a streamed file's 0xFFFFFFFF) is the bytes there; a lying byte rate is not believed for PCM", () => {
    expect(seconds(wavBytes(4, { statedSize: 0xffffffff }), 'wav')).to.equal(4);
    expect(seconds(wavBytes(4, { statedSize: 0 }), 'wav')).to.equal(4);
    expect(seconds(wavBytes(4, { byteRate: 4_000_000 }), 'wav'), 'sample rate x block align, as a decoder plays it').to.equal(4);
  });

  it('a WAV named mp3 (or an MP3 named wav) is read by its bytes', () => {
    expect(seconds(wavBytes(2), 'mp3')).to.equal(2);
    expect(seconds(mpegBytes(MP3_128K, 16_000), 'wav')).to.equal(1);
  });

  it('an MP3: the bytes from its first frame at that frame bitrate, past an ID3v2 tag', () => {
    expect(seconds(mpegBytes(MP3_128K, 160_000), 'mp3')).to.equal(10); // 128 kbit/s = 16,000 bytes a second
    expect(seconds(mpegBytes(MP3_128K, 160_000, { id3: 5_000 }), 'mp3')).to.equal(10);
    expect(seconds(mpegBytes(MP3_8K_MONO, 3_000), 'mp3')).to.equal(3);
    expect(seconds(mpegBytes(MP3_128K, 160_000, { tag: 'Info' }), 'mp3'), 'LAME marks constant bitrate Info').to.equal(10);
  });

  it('a variable-bitrate MP3 (Xing, VBRI) is bounded at the lowest bitrate of its version: never below its duration', () => {
    expect(seconds(mpegBytes(MP3_128K, 160_000, { tag: 'Xing' }), 'mp3')).to.equal(40); // MPEG-1 Layer III: 32 kbit/s at least
    expect(seconds(mpegBytes(MP3_128K, 160_000, { tag: 'VBRI', tagAt: 36 }), 'mp3')).to.equal(40);
    expect(seconds(mpegBytes(MP3_8K_MONO, 3_000, { tag: 'Xing', tagAt: 13 }), 'mp3')).to.equal(3);
  });

  it('anything unreadable is bounded by its size at 8 kbit/s (wav, mp3: the lowest MP3 bitrate) or 6 kbit/s (any other: the lowest Opus bitrate)', () => {
    const noise = Buffer.alloc(50_000, 0x41);
    expect(seconds(noise, 'wav')).to.equal(50);
    expect(seconds(noise, 'mp3')).to.equal(50);
    expect(seconds(noise, 'opus')).to.be.closeTo(50_000 / 750, 1e-9);
    expect(seconds(wavBytes(1).subarray(0, 30), 'wav'), 'a header cut short').to.equal(30 / 1000);
    const badRate = wavBytes(1);
    badRate.writeUInt32LE(0, 24); // sample rate 0
    expect(seconds(badRate, 'wav')).to.equal(badRate.length / 1000);
    expect(inputAudioTokens('', 'wav')).to.equal(0);
    expect(inputAudioTokens('!!not base64!!', 'mp3')).to.be.a('number');
    // an 8 kbit/s MP3 whose header is lost is bounded at its real duration, not below
    const lost = mpegBytes(MP3_8K_MONO, 3_000);
    lost[0] = 0;
    expect(seconds(lost, 'mp3')).to.equal(3);
  });

  it('pcm16 is 24 kHz 16-bit mono; a FLAC states its samples in STREAMINFO; a stream of payloads counts the bytes of all', () => {
    expect(seconds(Buffer.alloc(96_000), 'pcm16')).to.equal(2);
    const flac = Buffer.alloc(42 + 1000);
    flac.write('fLaC', 0, 'latin1');
    flac[4] = 0x80; // last block, STREAMINFO
    flac[7] = 34;
    const si = 8; // 24,000 Hz (20 bits), mono 16-bit, 72,000 samples
    flac[si + 10] = 24_000 >> 12;
    flac[si + 11] = (24_000 >> 4) & 0xff;
    flac[si + 12] = ((24_000 & 0xf) << 4) | (0 << 1) | 0;
    flac[si + 13] = (15 << 4) & 0xf0;
    flac.writeUInt32BE(72_000, si + 14);
    expect(seconds(flac, 'flac')).to.equal(3);
    const head = wavBytes(0);
    expect(seconds(head, 'wav', head.length + 64_000), 'the header in the first payload, 2 seconds of data after it').to.equal(2);
  });

  it("an MP3 whose second frame has another bitrate is variable: bounded at the lowest; the same bitrate is constant", () => {
    const same = mpegBytes(MP3_128K, 160_000);
    Buffer.from(MP3_128K).copy(same, 417); // 144,000 x 128 / 44,100: the first frame's 417 bytes
    expect(seconds(same, 'mp3')).to.equal(10);
    const other = mpegBytes(MP3_128K, 160_000);
    Buffer.from([0xff, 0xfb, 0x50, 0x40]).copy(other, 417); // 64 kbit/s
    expect(seconds(other, 'mp3')).to.equal(40);
  });

  it("an Ogg Opus answer: its last page's granule position less the pre-skip, at 48 kHz; named anything else, or its end unknown, bounded by size", () => {
    const page = (granule: bigint, body: Buffer) => {
      const h = Buffer.alloc(27);
      h.write('OggS', 0, 'latin1');
      h.writeBigInt64LE(granule, 6);
      h[26] = 1;
      return Buffer.concat([h, Buffer.from([body.length]), body]);
    };
    const opusHead = Buffer.alloc(19);
    opusHead.write('OpusHead', 0, 'latin1');
    opusHead[8] = 1;
    opusHead[9] = 1;
    opusHead.writeUInt16LE(312, 10);
    opusHead.writeUInt32LE(24_000, 12);
    const ogg = Buffer.concat([page(0n, opusHead), Buffer.alloc(20_000, 1), page(BigInt(312 + 48_000 * 3), Buffer.alloc(200, 2)), page(-1n, Buffer.alloc(100, 3))]);
    expect(seconds(ogg, 'opus')).to.equal(3);
    expect(seconds(ogg, 'wav'), 'Ogg is not read as input').to.equal(ogg.length / 1000);
    expect(seconds(ogg, 'opus', ogg.length + 5_000), 'a stream of pieces: its last page not at hand').to.equal((ogg.length + 5_000) / 750);
  });
});
