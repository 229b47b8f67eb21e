import { expect } from 'chai';
import { encodeAll, packBits, toBase64 } from '../../../shared/embeddings/encodings';

/** Cohere's binary and base64 embedding types and OpenAI's base64, computed from a float vector. */
describe('embedding encodings', () => {
  it('packs one bit a dimension, set above 0, the first dimension in the highest bit', () => {
    // numpy.packbits([1,0,1,1,0,0,0,1]) == 177; the ninth dimension alone in the next byte's top bit
    const v = [0.3, -0.1, 0.2, 0.9, 0, -0.5, -0.01, 0.02, 0.7];
    expect(packBits(v, false)).to.deep.equal([177, 128]);
    expect(packBits(v, true), 'binary: ubinary minus 128').to.deep.equal([49, 0]);
    expect(packBits([], false)).to.deep.equal([]);
    expect(packBits(Array(16).fill(-1), true)).to.deep.equal([-128, -128]);
    expect(packBits(Array(16).fill(1), false)).to.deep.equal([255, 255]);
  });

  it('base64 is the little-endian float32 bytes', () => {
    const v = [1, -2.5, 0.1];
    const buf = Buffer.from(toBase64(v), 'base64');
    expect(buf.length).to.equal(12);
    expect([buf.readFloatLE(0), buf.readFloatLE(4), buf.readFloatLE(8)]).to.deep.equal([1, -2.5, Math.fround(0.1)]);
    expect(buf.subarray(0, 4)).to.deep.equal(Buffer.from([0x00, 0x00, 0x80, 0x3f]));
  });

  it('encodes every vector of a batch in the type asked for', () => {
    const floats = [[1, -1], [-1, 1]];
    expect(encodeAll('float', floats)).to.equal(floats);
    expect(encodeAll('ubinary', floats)).to.deep.equal([[128], [64]]);
    expect(encodeAll('binary', floats)).to.deep.equal([[0], [-64]]);
    expect(encodeAll('base64', floats)).to.deep.equal(floats.map(toBase64));
  });
});
