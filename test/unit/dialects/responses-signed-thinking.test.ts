import { expect } from 'chai';
import { canonicalToResponse, type ResponseFrame } from '../../../api/dialects/responses/response';
import { ResponsesStreamTranslator } from '../../../api/dialects/responses/stream';
import { answeredResponse } from '../../../api/dialects/responses/client-view';
import { thinkingOfEncrypted } from '../../../api/dialects/responses/thinking-content';
import { conversationMessages } from '../../../api/routes/responses/conversation';
import type { CanonicalCompletion, CanonicalChunk } from '../../../api/dialects/canonical';
import { ApiError } from '../../../shared/errors/ApiError';

type Item = Record<string, unknown>;

const BLOCKS = [
  { type: 'thinking' as const, thinking: 'I need the weather.', signature: 'sig-1' },
  { type: 'redacted_thinking' as const, data: 'EmwKAhgBEgy3va3pzix' },
];
const CALL = { id: 'toolu_w', type: 'function' as const, function: { name: 'weather', arguments: '{"city":"Paris"}' } };
const frameOf = (include?: string[]): ResponseFrame => ({ id: 'resp_1', createdAt: 1741476542, publicModel: 'pub', req: { model: 'pub', input: 'Weather?', ...(include ? { include } : {}) } as ResponseFrame['req'] });
const INCLUDE = ['reasoning.encrypted_content'];
const completion = { choices: [{ message: { content: null, reasoning_content: 'I need the weather.', thinking_blocks: BLOCKS, tool_calls: [CALL] }, finish_reason: 'tool_calls' }] } as unknown as CanonicalCompletion;
const chunks: CanonicalChunk[] = [
  { choices: [{ delta: { reasoning_content: 'I need the weather.' } }] },
  { choices: [{ delta: { thinking_blocks: BLOCKS } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0, id: CALL.id, function: { name: 'weather', arguments: CALL.function.arguments } }] }, finish_reason: 'tool_calls' }] },
] as unknown as CanonicalChunk[];

const reasoningOf = (output: unknown) => (output as Item[]).find((i) => i.type === 'reasoning')!;
const shows = (events: Array<Record<string, unknown>>) => JSON.stringify(events).includes('anthropic-signed-thinking');

/**
 * An Anthropic-native turn's signed thinking is derived from the reasoning item itself (its
 * `encrypted_content`, built whatever `include` said), not associated with the object that was built:
 * any copy of the Response (JSON round trip, spread, the store's storableCopy) is continued from with
 * the blocks. The client of the create is shown the field only when its `include` asks (client-view.ts).
 */
describe('responses dialect: signed thinking lives in the reasoning item, shown only when asked', () => {
  it('JSON: a copy of the built Response (JSON round trip, spread) still carries the blocks, and a conversation continued from the copy sends them back', () => {
    const { response } = canonicalToResponse(completion, frameOf());
    const copied = JSON.parse(JSON.stringify(response.output)) as Item[];
    expect(thinkingOfEncrypted(reasoningOf(copied).encrypted_content)).to.deep.equal(BLOCKS);
    for (const items of [copied, (response.output as Item[]).map((i) => ({ ...i }))]) {
      const history = conversationMessages([{ type: 'message', role: 'user', content: 'Weather?' }, ...items], 'org_1');
      expect(history[1]).to.deep.include({ role: 'assistant', thinking_blocks: BLOCKS, tool_calls: [CALL] });
    }
  });

  it('JSON: the answer shows encrypted_content only when include asks; other items and an answer without it are untouched', () => {
    const { response } = canonicalToResponse(completion, frameOf());
    const shown = answeredResponse(response, frameOf().req);
    expect(reasoningOf(shown.output)).not.to.have.property('encrypted_content');
    expect(reasoningOf(shown.output)).to.deep.include({ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'I need the weather.' }], status: 'completed' });
    expect((shown.output as Item[])[1]).to.equal((response.output as Item[])[1]);
    expect(reasoningOf(response.output).encrypted_content, 'the built Response is left whole').to.be.a('string');
    expect(answeredResponse(response, frameOf(INCLUDE).req)).to.equal(response);
    const plain = canonicalToResponse({ choices: [{ message: { content: 'Hi.' }, finish_reason: 'stop' }] } as CanonicalCompletion, frameOf()).response;
    expect(answeredResponse(plain, frameOf().req)).to.equal(plain);
  });

  it('streamed: the final and failed Responses are whole; the events show encrypted_content only when include asks', () => {
    for (const include of [undefined, INCLUDE]) {
      const t = new ResponsesStreamTranslator(frameOf(include));
      const events = [...chunks.flatMap((c) => t.push(c)), ...t.end()];
      expect(thinkingOfEncrypted(reasoningOf(JSON.parse(JSON.stringify(t.final!.response.output))).encrypted_content)).to.deep.equal(BLOCKS);
      expect(shows(events), String(include)).to.equal(!!include);
      const done = events.find((e) => e.type === 'response.output_item.done' && (e.item as Item).type === 'reasoning')!;
      expect('encrypted_content' in (done.item as Item)).to.equal(!!include);
      expect('encrypted_content' in reasoningOf((events.at(-1)!.response as Item).output)).to.equal(!!include);

      const cut = new ResponsesStreamTranslator(frameOf(include));
      const before = chunks.slice(0, 2).flatMap((c) => cut.push(c));
      const failed = cut.failed(new ApiError(502, 'upstream_error', 'broken'));
      expect(reasoningOf(failed.response.output)).to.deep.include({ status: 'incomplete' });
      expect(thinkingOfEncrypted(reasoningOf(failed.response.output).encrypted_content)).to.deep.equal(BLOCKS);
      expect(shows([...before, ...failed.events]), String(include)).to.equal(!!include);
    }
  });
});
