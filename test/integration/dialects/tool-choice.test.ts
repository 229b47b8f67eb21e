import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';

const fn = (name: string) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties: { q: { type: 'string' } } } } });
const rfn = (name: string) => ({ type: 'function' as const, name, parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false });
const sent = () => env().sim.log.entries.map((e) => e.body as Record<string, any>);

/**
 * The tool_choice forms of the current openai SDK: chat's ChatCompletionAllowedToolChoice and the
 * Responses ToolChoiceAllowed, through the gateway to an OpenAI-compatible (sim-chat) and an
 * Anthropic-native (sim-claude) upstream; what cannot be expressed is refused before any upstream.
 */
describe('tool_choice: allowed_tools, custom and hosted choices', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  it('chat allowed_tools required on sim-claude: Anthropic is offered the allowed tool alone with tool_choice any, and calls it', async () => {
    const r = await client.chat.completions.create({
      model: 'sim-claude',
      messages: [{ role: 'user', content: 'find owls' }],
      tools: [fn('first'), fn('lookup')],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'lookup' } }] } },
    });
    const up = sent()[0];
    expect(up.tool_choice).to.deep.equal({ type: 'any' });
    expect(up.tools.map((t: { name: string }) => t.name)).to.deep.equal(['lookup']);
    expect((r.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall).function.name).to.equal('lookup');
  });

  it('chat: a custom tool (and a choice naming it) on sim-claude is 400 unsupported_parameter, nothing sent upstream', async () => {
    const r = await call('POST', '/v1/chat/completions', {
      headers: keyHeader(o.key),
      json: { model: 'sim-claude', messages: [{ role: 'user', content: 'patch it' }], tools: [{ type: 'custom', custom: { name: 'apply_patch' } }], tool_choice: { type: 'custom', custom: { name: 'apply_patch' } } },
    });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error).to.include({ code: 'unsupported_parameter', param: 'tools[0]' });
    expect(sent()).to.have.length(0);
  });

  for (const [model, expectUpstream] of [
    ['sim-chat', (b: Record<string, any>) => expect(b.tool_choice).to.deep.equal({ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'lookup' } }] } })],
    ['sim-claude', (b: Record<string, any>) => expect([b.tool_choice, b.tools.map((t: { name: string }) => t.name)]).to.deep.equal([{ type: 'any' }, ['lookup']])],
  ] as const) {
    it(`responses allowed_tools required on ${model}: translated, the allowed tool called, the choice echoed; a Response by the document`, async () => {
      const tool_choice = { type: 'allowed_tools' as const, mode: 'required' as const, tools: [{ type: 'function', name: 'lookup' }] };
      const r = await client.responses.create({ model, input: 'find owls', tools: [rfn('first'), rfn('lookup')], tool_choice });
      expectUpstream(sent()[0]);
      const calls = r.output.filter((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall[];
      expect(calls.map((c) => c.name)).to.deep.equal(['lookup']);
      expect(r.tool_choice).to.deep.equal(tool_choice);
      expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(r))));
    });
  }

  it('responses: a hosted tool choice is a clear 400 naming tool_choice (web search not in tools; a hosted tool the gateway does not run), nothing sent', async () => {
    const ask = (tool_choice: unknown) => call('POST', '/v1/responses', { headers: keyHeader(o.key), json: { model: 'sim-chat', input: 'x', tools: [rfn('lookup')], tool_choice } });
    const web = await ask({ type: 'web_search_preview' });
    expect(web.status, web.text).to.equal(400);
    expect(web.body.error.message).to.equal("tool_choice names the hosted tool 'web_search_preview', which is not in tools.");
    expect(web.body.error).to.include({ code: 'invalid_request', param: 'tool_choice' });
    const file = await ask({ type: 'file_search' });
    expect(file.status, file.text).to.equal(400);
    expect(file.body.error).to.include({ code: 'unsupported_parameter', param: 'tool_choice' });
    const mcp = await ask({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'mcp', server_label: 'x' }] });
    expect(mcp.body.error).to.include({ code: 'unsupported_parameter', param: 'tool_choice' });
    const mode = await ask({ type: 'allowed_tools', mode: 'any', tools: [{ type: 'function', name: 'lookup' }] });
    expect(mode.body.error).to.include({ code: 'invalid_request', param: 'tool_choice' });
    expect(sent()).to.have.length(0);
  });

  it("responses: {type: 'local_shell'}, not among OpenAI's tool choices (its ToolChoiceParam, openai-node's ToolChoice* types), is 400 invalid_request naming tool_choice: JSON, streamed, background, hosted search; nothing sent, stored or billed", async () => {
    const org = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: org.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const tool_choice = { type: 'local_shell' } as unknown as OpenAI.Responses.ResponseCreateParams['tool_choice'];
    const base = { model: 'sim-chat', input: 'ls', tools: [{ type: 'local_shell' as const }], tool_choice };
    for (const extra of [{}, { stream: true }, { background: true }, { tools: [{ type: 'local_shell' as const }, { type: 'web_search' as const }] }]) {
      const err = await c.responses.create({ ...base, ...extra } as OpenAI.Responses.ResponseCreateParamsNonStreaming).then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.BadRequestError>);
      expect(err, JSON.stringify(extra)).to.be.instanceOf(OpenAI.BadRequestError);
      expect([err!.status, err!.code, err!.param], JSON.stringify(extra)).to.deep.equal([400, 'invalid_request', 'tool_choice']);
      expect(err!.message).to.include('allowed_tools');
    }
    const counted = await c.responses.inputTokens.count(base).then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.BadRequestError>);
    expect(counted?.param, 'input_tokens too').to.equal('tool_choice');
    expect(sent()).to.have.length(0);
    await usageSettled();
    expect(await StoredResponse.count({ where: { orgId: org.org.id } })).to.equal(0);
    expect(await UsageEvent.count({ where: { orgId: org.org.id } })).to.equal(0);
  });
});
