import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

/**
 * A streamed /v1/messages answer passed through natively is billed on all the input Anthropic billed:
 * input_tokens plus the cache reads and writes. message_delta's counts are cumulative and each of its
 * cache fields may be absent or null (Anthropic's MessageDeltaUsage): what message_start reported then
 * stands, as the translated path (stream-to-chat) and the JSON answer already count it.
 */
describe('messages native stream: cached input stays billed when message_delta omits it', () => {
  let up: ScriptedUpstream;
  let model: string;
  before(async () => {
    up = await ScriptedUpstream.start('anthropic');
    model = await up.model({ tokenizer: 'cl100k_base' });
  });
  after(() => up.close());

  it('message_start reports 1,000 cache-read tokens, message_delta input_tokens with null cache fields: 1,005 input tokens billed, as the JSON answer bills', async function () {
    this.timeout(20_000);
    const o = await buildOrg(env().redis);
    const message = { id: 'msg_c', type: 'message', role: 'assistant', model: 'up-model', content: [], stop_reason: null, stop_sequence: null };
    const start = { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000, output_tokens: 1 };
    up.next = [
      {
        kind: 'sse',
        events: [
          { type: 'message_start', message: { ...message, usage: start } },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'cached' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 5, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens: 7 } },
          { type: 'message_stop' },
        ],
      },
      { kind: 'json', body: { ...message, content: [{ type: 'text', text: 'cached' }], stop_reason: 'end_turn', usage: { ...start, output_tokens: 7 } } },
    ];
    const ask = (stream: boolean) =>
      fetch(`${env().gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...keyHeader(o.key), 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model, max_tokens: 50, stream, messages: [{ role: 'user', content: 'long cached prompt' }] }),
      });
    const streamed = await ask(true);
    expect(streamed.status).to.equal(200);
    await streamed.text();
    const json = await ask(false);
    expect(json.status).to.equal(200);
    await json.text();
    await usageSettled();
    const billed = async (r: Response) => (await UsageEvent.findOne({ where: { requestId: r.headers.get('x-service-request-id')! } }))!;
    const [s, j] = [await billed(streamed), await billed(json)];
    expect([j.inputTokens, j.outputTokens], 'the JSON answer').to.deep.equal([1005, 7]);
    expect([s.inputTokens, s.outputTokens], 'the streamed answer bills the same').to.deep.equal([1005, 7]);
  });
});
