import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectAnthropic, expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { ScriptedUpstream, byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

const NO = "I can't help with that.";

/**
 * An OpenAI-compatible upstream that refuses: `message.refusal` in JSON, `delta.refusal` streamed
 * (content null). The Responses dialect answers a message item with a RefusalContent part (streamed
 * as response.refusal.delta / .done); the messages dialect a text block with stop_reason `refusal`.
 */
describe('conformance: a refusal from the upstream, in the Responses and messages dialects', function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let h: Record<string, string>;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('openai');
    up.otherwise = byStream(completion({ content: null, refusal: NO }, 'stop', { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }), [
      chunk({ role: 'assistant', content: null, refusal: '' }),
      chunk({ refusal: "I can't " }),
      chunk({ refusal: 'help with that.' }),
      chunk({}, 'stop'),
      usageChunk({ prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 }),
    ]);
    model = await up.model();
    const key = (await buildOrg(env().redis)).key;
    h = keyHeader(key);
    client = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('Responses JSON: a message item whose content is a refusal part; a Response by the document', async () => {
    const r = await call('POST', '/v1/responses', { headers: h, json: { model, input: 'do the bad thing' } });
    expect(r.status, r.text).to.equal(200);
    expectOpenAI('Response', withoutNullUser(r.body));
    expect(r.body.status).to.equal('completed');
    expect(r.body.output).to.have.length(1);
    expect(r.body.output[0]).to.deep.include({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: NO }] });
  });

  it('Responses stream: refusal.delta / refusal.done events, each by the document; the SDK\'s finalResponse holds the refusal', async () => {
    const s = await postSse('/v1/responses', h, { model, input: 'do the bad thing', stream: true });
    expect(s.status, s.text).to.equal(200);
    for (const e of s.events) expectResponsesEvent(responsesEventForDocument(e.data));
    const types = s.events.map((e) => e.data.type);
    expect(types).to.include.members(['response.refusal.delta', 'response.refusal.done']);
    expect(types).to.not.include('response.output_text.delta');
    const added = s.events.find((e) => e.data.type === 'response.content_part.added')!.data;
    expect(added.part).to.deep.equal({ type: 'refusal', refusal: '' });
    expect(s.events.find((e) => e.data.type === 'response.refusal.done')!.data).to.include({ refusal: NO, content_index: 0 });

    const f = await client.responses.stream({ model, input: 'do the bad thing' }).finalResponse();
    expect(f.status).to.equal('completed');
    const content = (f.output[0] as OpenAI.Responses.ResponseOutputMessage).content;
    expect(content).to.have.length(1);
    expect(content[0]).to.deep.include({ type: 'refusal', refusal: NO });
  });

  it('messages: a text block with the refusal and stop_reason refusal, JSON and streamed', async () => {
    const V = { ...h, 'anthropic-version': '2023-06-01' };
    const body = { model, max_tokens: 100, messages: [{ role: 'user', content: 'do the bad thing' }] };
    const r = await call('POST', '/v1/messages', { headers: V, json: body });
    expect(r.status, r.text).to.equal(200);
    expectAnthropic('Message', r.body);
    expect(r.body).to.deep.include({ stop_reason: 'refusal', content: [{ type: 'text', text: NO }] });
    const s = await postSse('/v1/messages', V, { ...body, stream: true });
    for (const e of s.events) expectAnthropic('StreamEvent', e.data);
    const text = s.events.filter((e) => e.data.type === 'content_block_delta').map((e) => (e.data.delta as { text: string }).text).join('');
    expect(text).to.equal(NO);
    expect(s.events.find((e) => e.data.type === 'message_delta')!.data.delta).to.deep.include({ stop_reason: 'refusal' });
  });
});
