import { expect } from 'chai';
import { openaiOrg } from './openai-org';
import { keyHeader, type Reply } from './http';
import { useGeminiModels } from './gemini-model';

/** One model of each upstream kind a messages request can reach: OpenAI-compatible, Anthropic-native, Gemini, Bedrock. */
export const EVERY_UPSTREAM_KIND = ['sim-chat', 'sim-claude', 'test-gemini', 'sim-bedrock-claude'];

/**
 * For a describe block: an org with a key, and the Gemini and Bedrock models of EVERY_UPSTREAM_KIND
 * seeded before its tests (removed after); `headers()` the key and `anthropic-version` once seeded.
 */
export function everyUpstreamKind(): { s: ReturnType<typeof openaiOrg>; headers: () => Record<string, string> } {
  const s = openaiOrg();
  let h: Record<string, string> = {};
  useGeminiModels({ bedrock: true });
  before(async () => {
    h = { ...keyHeader(s.o.key), 'anthropic-version': '2023-06-01' };
  });
  return { s, headers: () => h };
}

/** Anthropic's 400 invalid_request_error with these words, as the gateway's messages envelope writes it. */
export function expectRefusal(r: Reply, message: string, what: string): void {
  expect(r.status, `${what} ${r.text}`).to.equal(400);
  expect(r.body, what).to.deep.equal({ error: { type: 'invalid_request_error', message, code: 'invalid_request' } });
}
