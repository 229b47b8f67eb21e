import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';

/**
 * `mcp_servers`, Anthropic's MCP connector (SDK 1.16 `beta.messages.create({mcp_servers})`):
 * Anthropic connects to the servers and offers their tools to the model. A translated upstream was
 * sent the request without them and answered as if no tools had been given; now it is refused 400
 * naming the field, before anything is sent or billed. An Anthropic-native upstream gets it as sent.
 */
describe('messages dialect: mcp_servers only where Anthropic runs them', () => {
  let o: TestOrg;
  let client: Anthropic;
  before(async () => {
    o = await buildOrg(env().redis);
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  beforeEach(resetSim);
  const mcp_servers = [{ type: 'url' as const, url: 'https://mcp.example.com/sse', name: 'example' }];
  const params = (model: string) => ({ model, max_tokens: 50, messages: [{ role: 'user' as const, content: 'use the example server' }], mcp_servers, betas: ['mcp-client-2025-04-04'] });

  it('an Anthropic-native upstream is sent the servers as they were given', async () => {
    const m = await client.beta.messages.create(params('sim-claude'));
    expect(m.type).to.equal('message');
    expect((env().sim.log.entries[0].body as { mcp_servers: unknown }).mcp_servers).to.deep.equal(mcp_servers);
  });

  it('a translated upstream refuses them 400 unsupported_parameter, JSON and streamed, nothing sent or billed', async () => {
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const stream of [false, true]) {
      const err = await client.beta.messages.create({ ...params('sim-chat'), stream }).then(() => undefined, (e: unknown) => e);
      expect(err, `stream=${stream}`).to.be.instanceOf(Anthropic.BadRequestError);
      const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { code: string; type: string; message: string } };
      expect(body.error).to.include({ code: 'unsupported_parameter', type: 'invalid_request_error' });
      expect(body.error.message).to.include('`mcp_servers`');
    }
    // one server given as an object, not in a list: asked for all the same, not dropped
    const lone = await client.beta.messages.create({ ...params('sim-chat'), mcp_servers: mcp_servers[0] as never }).then(() => undefined, (e: unknown) => e);
    expect(lone, 'a lone server object').to.be.instanceOf(Anthropic.BadRequestError);
    expect((lone as InstanceType<typeof Anthropic.BadRequestError>).message).to.include('`mcp_servers`');
    // an empty list asks for nothing
    const empty = await client.beta.messages.create({ ...params('sim-chat'), mcp_servers: [] });
    expect(empty.type).to.equal('message');
    expect(env().sim.log.entries, 'only the request without servers was sent').to.have.length(1);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(before + 1);
  });
});
