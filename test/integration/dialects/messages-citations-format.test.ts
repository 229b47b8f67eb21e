import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { call } from '../../helpers/http';
import { billedEvents } from '../../helpers/usage';
import { EVERY_UPSTREAM_KIND, everyUpstreamKind, expectRefusal } from '../../helpers/messages-every-upstream';
import { CITATIONS_WITH_FORMAT } from '../../../api/routes/messages/citations-format';

const SCHEMA = { type: 'object', properties: { color: { type: 'string' } }, required: ['color'], additionalProperties: false };
const doc = (citations?: { enabled: boolean }) => ({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' }, title: 'Doc', ...(citations ? { citations } : {}) });
const asked = (block: Record<string, unknown>) => [{ role: 'user', content: [block, { type: 'text', text: 'What color is the grass?' }] }];

/**
 * Anthropic refuses a JSON output format together with citations on a document ("Citations cannot be
 * enabled when output format is set. Please disable citations on uploaded document blocks.",
 * api/routes/messages/citations-format.ts): the same 400 on every upstream kind, JSON and streamed,
 * before anything is sent or billed. Before, a translated upstream served it.
 */
describe('messages: an output format with citations enabled on a document', function () {
  this.timeout(120_000);
  const { s, headers } = everyUpstreamKind();
  const post = (json: Record<string, unknown>) => call('POST', '/v1/messages', { headers: headers(), json });
  const format = { output_config: { format: { type: 'json_schema', schema: SCHEMA } } };
  const beta = { output_format: { type: 'json_schema', schema: SCHEMA } };

  it("is Anthropic's 400 in its words on every upstream kind (output_config.format or output_format; a document in a tool_result too), JSON and streamed; nothing sent or billed", async () => {
    const before = await billedEvents(s.o.org.id);
    const inToolResult = [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [doc({ enabled: true })] }] },
    ];
    const tools = [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }];
    for (const model of EVERY_UPSTREAM_KIND) {
      for (const stream of [false, true]) {
        for (const fields of [format, beta]) expectRefusal(await post({ model, max_tokens: 64, stream, messages: asked(doc({ enabled: true })), ...fields }), CITATIONS_WITH_FORMAT, `${model} stream ${stream}`);
        expectRefusal(await post({ model, max_tokens: 64, stream, tools, messages: inToolResult, ...format }), CITATIONS_WITH_FORMAT, `${model} tool_result stream ${stream}`);
      }
    }
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await billedEvents(s.o.org.id), 'nothing billed').to.equal(before);
  });

  it('served: the format with citations disabled or absent, and citations without a format', async () => {
    for (const [messages, fields] of [
      [asked(doc({ enabled: false })), format],
      [asked(doc()), format],
      [asked(doc({ enabled: true })), {}],
    ] as const) {
      const r = await post({ model: 'sim-chat', max_tokens: 64, messages, ...fields });
      expect(r.status, r.text).to.equal(200);
    }
  });
});
