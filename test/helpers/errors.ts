import { expect } from 'chai';

/** A stack frame as V8 prints it (`at fn (/path/file.js:12:5)`, compiled or source-mapped). */
const STACK_FRAME = /\bat .+\.(?:js|ts|mjs|cjs):\d+/;

/**
 * An error answer's body: the documented envelope, with no stack trace and no `stack` field
 * anywhere in the text (not only in the message).
 */
export function expectErrorEnvelope(text: string, code: string): void {
  let body: { error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    expect.fail(`error body is not JSON: ${text.slice(0, 200)}`);
  }
  expect(body?.error?.code, text).to.equal(code);
  expect(body?.error?.message, text).to.be.a('string').and.not.equal('');
  expect(text, 'stack trace in the error body').not.to.match(STACK_FRAME);
  expect(text, 'stack field in the error body').not.to.match(/"stack"\s*:/);
}
