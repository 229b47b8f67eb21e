import { expect } from 'chai';
import { assertJsonDepth } from '../../../shared/http/json-checks';

describe('json checks: what the raw bytes say about the parsed body', () => {
  const scan = (text: string | Buffer) => assertJsonDepth(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8')).mayBeUnstorable;

  it('a UTF-8 body without a \\u escape cannot hold NUL or a lone surrogate: no walk needed', () => {
    expect(scan(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'plain, "quoted" \\ backslash, tab\t, café, emoji 😀' }] }))).to.equal(false);
  });

  it('any \\u escape, in a value or a key, or a NUL byte, asks for the walk', () => {
    expect(scan(JSON.stringify({ a: 'x\u0000y' }))).to.equal(true); // JSON.stringify writes \u0000
    expect(scan(JSON.stringify({ a: 'half \ud800' }))).to.equal(true); // and \ud800 for a lone surrogate
    expect(scan('{"caf\\u00e9":"harmless"}')).to.equal(true); // harmless escapes too: the scan does not decode them
    expect(scan(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x00, 0x22, 0x7d]))).to.equal(true); // a raw NUL byte
  });

  it('both ways of reading the bytes agree: counted natively (few brackets) and scanned (many)', () => {
    const many = (inner: string) => JSON.stringify({ items: Array.from({ length: 150 }, () => ({ a: 1 })), text: inner }); // 151 objects, depth 3
    expect(scan(many('plain'))).to.equal(false);
    expect(scan(many('x\u0000y'))).to.equal(true);
    expect(scan(many('half \ud800'))).to.equal(true);
    expect(scan('{"path":"C:\\\\users"}')).to.equal(true); // few brackets: an escaped backslash before a u counts (a walk, no harm)
    expect(scan(many('C:\\users'))).to.equal(false); // scanned: an escaped backslash is not an escape
    expect(scan('{"s":"' + '['.repeat(300) + '"}')).to.equal(false); // brackets inside a string do not nest
  });

  it('still refuses JSON nested deeper than the limit', () => {
    expect(() => scan('['.repeat(200) + ']'.repeat(200))).to.throw(/nested deeper/);
  });
});
