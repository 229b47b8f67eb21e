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
    expect([unknown.status, unknown.body.error.code], 'the Responses API\'s 400 (responses-model-not-found.test.ts)').to.deep.equal([400, 'model_not_found']);
    const get = await call('GET', '/v1/responses/compact', { headers: keyHeader(s.o.key) });
    expect(get.status, 'POST only').to.equal(405);
    expect(env().sim.log.entries.length, 'nothing sent').to.equal(sentBefore);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: other.org.id } })).to.equal(0);
  });
  it("takes every field of the SDK's ResponseCompactParams: instructions and an empty input after previous_response_id honoured, the cache and tier hints and image context_compression taken (the answer reports it disabled) and not sent upstream; the answer is the SDK's CompactedResponse", async () => {
    const first = await s.c.responses.create({ model: 'sim-chat', input: 'the code word is HERON' });
    const compacted = await s.c.responses.compact({
      model: 'sim-chat',
      previous_response_id: first.id,
      input: [],
      instructions: 'You are a careful assistant.',
      prompt_cache_key: 'k'.repeat(64),
      prompt_cache_retention: '24h',
      prompt_cache_options: { mode: 'explicit', ttl: '30m' },
      service_tier: 'flex',
      image: { context_compression: 'auto' },
    });
    const typed: OpenAI.Responses.CompactedResponse = compacted;
    expect(Object.keys(typed).sort()).to.deep.equal(['created_at', 'id', 'image', 'object', 'output', 'usage']);
    expect(typed.image).to.deep.equal({ context_compression: 'disabled' });
    expect(typed.output.map((i) => i.type)).to.deep.equal(['message', 'compaction']);
    expect(typed.usage).to.include.keys('input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens');
    expectOpenAI('CompactResource', JSON.parse(JSON.stringify(typed)));
    const sent = env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string; content: string }> } & Record<string, unknown>;
    expect(sent.messages[0]).to.deep.equal({ role: 'system', content: 'You are a careful assistant.' });
    expect(JSON.stringify(sent.messages)).to.include('HERON');
    for (const k of ['prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'service_tier', 'image']) expect(sent, k).not.to.have.property(k);
    const plain = await s.c.responses.compact({ model: 'sim-chat', input: 'no image options' });
    expect(plain).not.to.have.property('image');
  });

  it("refuses what OpenAI types otherwise (400 naming the field, in OpenAI's codes) and what it cannot honour (400 unsupported_parameter: image.context_compression enabled, prompt_cache_options.prewarm, prompt), before anything is sent or billed", async () => {
    await usageSettled();
    const billed = await UsageEvent.count({ where: { orgId: s.o.org.id } });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ model: null }, 'model', 'invalid_type'],
      [{ prompt_cache_key: 'k'.repeat(65) }, 'prompt_cache_key', 'string_above_max_length'],
      [{ prompt_cache_retention: '1h' }, 'prompt_cache_retention', 'invalid_value'],
      [{ prompt_cache_options: { ttl: '12h' } }, 'prompt_cache_options.ttl', 'invalid_value'],
      [{ prompt_cache_options: { mode: 'sometimes' } }, 'prompt_cache_options.mode', 'invalid_value'],
      [{ service_tier: 'scale' }, 'service_tier', 'invalid_value'],
      [{ image: { context_compression: 'always' } }, 'image.context_compression', 'invalid_value'],
      [{ image: 'auto' }, 'image', 'invalid_type'],
      [{ instructions: 5 }, 'instructions', 'invalid_type'],
      [{ input: 5 }, 'input', 'invalid_type'],
      [{ input: [] }, 'input', 'invalid_request'],
      [{ image: { context_compression: 'enabled' } }, 'image.context_compression', 'unsupported_parameter'],
      [{ prompt_cache_options: { prewarm: true } }, 'prompt_cache_options.prewarm', 'unsupported_parameter'],
      [{ prompt: { id: 'pmpt_1' } }, 'prompt', 'unsupported_parameter'],
    ];
    for (const [extra, param, code] of cases) {
      const json = { model: 'sim-chat', input: 'compact me', ...extra };
      const r = await call('POST', '/v1/responses/compact', { headers: keyHeader(s.o.key), json });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).to.equal(400);
      expect(r.body.error, JSON.stringify(extra)).to.include({ type: 'invalid_request_error', code, param });
      expectOpenAI('ErrorResponse', r.body);
    }
    const err = await outcome(s.c.responses.compact({ model: 'sim-chat', input: 'x', image: { context_compression: 'enabled' } }));
    expectRefused(err, 400, 'image.context_compression');
    expect(env().sim.log.entries, 'nothing sent').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: s.o.org.id } })).to.equal(billed);
  });

  it("compacts a conversation's items (conversation, as POST /v1/responses takes it)", async () => {
    const conv = await s.c.conversations.create({ items: [{ type: 'message', role: 'user', content: 'the password is OSPREY' }] });
    const body = { model: 'sim-chat', conversation: conv.id } as OpenAI.Responses.ResponseCompactParams;
    const compacted = await s.c.responses.compact(body);
    expect(lastSent()).to.include('OSPREY');
    expect(compacted.output.map((i) => i.type)).to.deep.equal(['message', 'compaction']);
  });
  it("the summary pass answers in text, not in the request's json_schema text.format (compact and server-side compaction; it was asked for a JSON object of the schema); the answer after a server-side compaction keeps the format", async () => {
    const format = { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }, strict: true };
    const bodies = (from: number) => env().sim.log.entries.slice(from).map((e) => e.body as { messages: unknown[]; response_format?: unknown });
    let seen = env().sim.log.entries.length;
    const compacted = await call('POST', '/v1/responses/compact', { headers: keyHeader(s.o.key), json: { model: 'sim-chat', input: 'the code word is IBIS', text: { format } } });
    expect(compacted.status, compacted.text).to.equal(200);
    const [pass] = bodies(seen);
    expect(JSON.stringify(pass.messages)).to.include('CONTEXT CHECKPOINT COMPACTION');
    expect(pass, 'compact: the summary pass').to.not.have.property('response_format');
    seen = env().sim.log.entries.length;
    const r = await call('POST', '/v1/responses', { headers: keyHeader(s.o.key), json: { model: 'sim-chat', input: [{ role: 'user', content: 'the code word is IBIS' }, { type: 'compaction_trigger' }], text: { format } } });
    expect(r.status, r.text).to.equal(200);
    const [serverPass, answer] = bodies(seen);
    expect(JSON.stringify(serverPass.messages)).to.include('CONTEXT CHECKPOINT COMPACTION');
    expect(serverPass, 'server-side: the summary pass').to.not.have.property('response_format');
    expect(answer.response_format, 'the answer keeps the format').to.deep.include({ type: 'json_schema' });
  });
});
