import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { lastSent, openaiOrg } from '../../helpers/openai-org';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { decrypt } from '../../../shared/crypto';
import { expectRefused, outcome } from '../../helpers/responses-background';

/** `POST /v1/responses/compact` (`client.responses.compact`) and the compaction items it answers, sent back as input. */
describe('responses compact', () => {
  const s = openaiOrg();

  it('summarises the conversation by the model (billed), answers its user messages and a sealed compaction item, which stands for it when sent back', async () => {
    const first = await s.c.responses.create({ model: 'sim-chat', input: 'remember that the code word is PELICAN' });
    await usageSettled();
    const before = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const compacted = await s.c.responses.compact({ model: 'sim-chat', previous_response_id: first.id, input: 'and the colour is teal' });
    expect(compacted.object).to.equal('response.compaction');
    expectOpenAI('CompactResource', JSON.parse(JSON.stringify(compacted)));
    const sent = lastSent();
    expect(sent, 'the model was asked for the summary after the conversation').to.include('CONTEXT CHECKPOINT COMPACTION').and.to.include('PELICAN').and.to.include('teal');
    expect(compacted.output.map((i) => i.type)).to.deep.equal(['message', 'message', 'compaction']);
    const texts = compacted.output.slice(0, 2).map((i) => ((i as { content: Array<{ text: string }> }).content[0].text));
    expect(texts, 'the user messages, in order').to.deep.equal(['remember that the code word is PELICAN', 'and the colour is teal']);
    const item = compacted.output[2] as { id: string; encrypted_content: string };
    expect(item.id).to.match(/^cmp_/);
    expect(item.encrypted_content, 'opaque').to.not.include('PELICAN');
    const sealed = JSON.parse(decrypt(item.encrypted_content)) as { o: string; s: string };
    expect(sealed.o).to.equal(s.o.org.id);
    expect(sealed.s.length).to.be.above(0);
    expect(compacted.usage.input_tokens).to.be.above(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } }), 'the compaction pass is billed').to.equal(before + 1);

    const next = await s.c.responses.create({ model: 'sim-chat', input: [...(compacted.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'what was the code word?' }] });
    expect(next.status).to.equal('completed');
    expect(lastSent(), 'the summary went upstream in place of the item').to.include('Summary of the earlier conversation').and.to.include(JSON.stringify(sealed.s).slice(1, 40));
    const counted = await s.c.responses.inputTokens.count({ model: 'sim-chat', input: [compacted.output[2] as OpenAI.Responses.ResponseInputItem] });
    expect(counted.input_tokens).to.be.above(5);
  });

  it('refuses a compaction item it did not seal for the org, and a request with nothing to compact, before anything is sent or billed', async () => {
    const compacted = await s.c.responses.compact({ model: 'sim-chat', input: 'something to compact' });
    const item = compacted.output.at(-1) as OpenAI.Responses.ResponseInputItem;
    const other = await buildOrg(env().redis);
    const oc = new OpenAI({ apiKey: other.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const sentBefore = env().sim.log.entries.length;
    expectRefused(await outcome(oc.responses.create({ model: 'sim-chat', input: [item, { role: 'user', content: 'x' }] })), 400, 'input[0]');
    const tampered = { type: 'compaction', encrypted_content: 'v1.AAAA.BBBB.CCCC' };
    expectRefused(await outcome(s.c.responses.create({ model: 'sim-chat', input: [tampered as unknown as OpenAI.Responses.ResponseInputItem] })), 400, 'input[0]');
    const empty = await call('POST', '/v1/responses/compact', { headers: keyHeader(s.o.key), json: { model: 'sim-chat' } });
    expect([empty.status, empty.body.error.param]).to.deep.equal([400, 'input']);
    const unknown = await call('POST', '/v1/responses/compact', { headers: keyHeader(s.o.key), json: { model: 'no-such-model', input: 'x' } });
    expect(unknown.status).to.equal(404);
    const get = await call('GET', '/v1/responses/compact', { headers: keyHeader(s.o.key) });
    expect(get.status, 'POST only').to.equal(405);
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: other.org.id } })).to.equal(0);
  });
});
