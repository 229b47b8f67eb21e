import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { ScriptedUpstream, byStream, chunk, completion, usageChunk } from '../../helpers/scripted-upstream';

const NO = "I can't help with that.";

/**
 * The Responses dialect's web search loop (hosted `web_search` on a translated upstream): an OpenAI
 * refusal (`message.refusal`) is a message item with a `refusal` content part (OpenAI's
 * RefusalContent), as the plain path answers it; before, the loop dropped it and the answer had no
 * message at all.
 */
describe("responses: the web search loop answers the model's refusal as a refusal part", function () {
  this.timeout(30_000);
  let up: ScriptedUpstream;
  let model: string;
  let key: string;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    up = await ScriptedUpstream.start('openai');
    model = await up.model();
    key = (await buildOrg(env().redis)).key;
    client = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(() => up.close());

  it('JSON, streamed (every event OpenAI-shaped) and through the SDK stream helper', async () => {
    up.otherwise = byStream(completion({ content: null, refusal: NO }, 'stop'), [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: "I can't " }), chunk({ refusal: 'help with that.' }), chunk({}, 'stop'), usageChunk()]);
    const p = { model, input: 'do the bad thing', tools: [{ type: 'web_search' as const }], store: false };
    // the SDK's parsed response adds `parsed` to each part: compare the part's own fields
    const refusalOf = (r: OpenAI.Responses.Response) =>
      r.output.filter((i) => i.type === 'message').flatMap((i) => (i as OpenAI.Responses.ResponseOutputMessage).content.map((c) => ({ type: c.type, refusal: (c as { refusal?: string }).refusal })));
    const json = await client.responses.create(p);
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(json))));
    expect(refusalOf(json)).to.deep.equal([{ type: 'refusal', refusal: NO }]);
    const streamed = await client.responses.stream(p).finalResponse();
    expect(refusalOf(streamed)).to.deep.equal([{ type: 'refusal', refusal: NO }]);
    const raw = await postSse('/v1/responses', keyHeader(key), { ...p, stream: true });
    for (const e of raw.events) expectResponsesEvent(responsesEventForDocument(e.data));
    const types = raw.events.map((e) => e.data.type);
    expect(types).to.include.members(['response.content_part.added', 'response.refusal.delta', 'response.refusal.done', 'response.content_part.done']);
    expect(raw.events.find((e) => e.data.type === 'response.refusal.done')!.data.refusal).to.equal(NO);
  });
});
