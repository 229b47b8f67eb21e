import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { expectOpenAI, expectResponsesEvent, responsesEventForDocument, withoutNullUser } from '../../helpers/conformance';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';

/**
 * The fields of openai 7.60.0's ResponseCreateParams the gateway does not act on upstream: the
 * hints it echoes in the Response as OpenAI does, and the fields that would change the answer and
 * that it cannot honour, refused before anything is stored, sent or billed (docs/dialects.md,
 * "Request fields of the SDK").
 */
describe('responses dialect: the SDK request fields the gateway echoes or refuses', () => {
  let o: TestOrg;
  let h: Record<string, string>;
  let client: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    h = keyHeader(o.key);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });

  const hints = {
    prompt_cache_key: 'tenant-42',
    prompt_cache_retention: '24h' as const,
    safety_identifier: 'user-hash-1',
    service_tier: 'flex' as const,
    max_tool_calls: 3,
    top_logprobs: 0,
    text: { verbosity: 'low' as const },
    metadata: { run: 'r1' },
  };

  it("echoes the hints (prompt_cache_key, prompt_cache_retention, safety_identifier, max_tool_calls, top_logprobs, text.verbosity) and the tier served, JSON, streamed and retrieved; none goes upstream", async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'hello hints', ...hints });
    expect(r.status).to.equal('completed');
    const echoed = {
      prompt_cache_key: 'tenant-42',
      prompt_cache_retention: '24h',
      safety_identifier: 'user-hash-1',
      service_tier: 'default',
      max_tool_calls: 3,
      top_logprobs: 0,
      text: { format: { type: 'text' }, verbosity: 'low' },
      metadata: { run: 'r1' },
      prompt: null,
      access_programs: null,
    };
    expect(r).to.deep.include(echoed);
    const got = await client.responses.retrieve(r.id);
    expect(got).to.deep.include(echoed);
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    for (const k of ['prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'service_tier', 'max_tool_calls', 'top_logprobs', 'verbosity', 'text', 'logprobs']) expect(sent, k).not.to.have.property(k);

    const s = await postSse('/v1/responses', h, { model: 'sim-chat', input: 'hello streamed hints', stream: true, ...hints });
    expect(s.status, s.text).to.equal(200);
    for (const type of ['response.created', 'response.in_progress', 'response.completed']) {
      const ev = s.events.find((e) => e.data.type === type)!;
      expect(ev.data.response, type).to.deep.include(echoed);
    }
  });

  it("answers OpenAI's defaults for them when the request has none; the Response conforms to OpenAI's document", async () => {
    const r = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'hello defaults' } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.deep.include({
      prompt_cache_key: null,
      prompt_cache_retention: null,
      safety_identifier: null,
      service_tier: 'default',
      max_tool_calls: null,
      top_logprobs: 0,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      prompt: null,
      access_programs: null,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      truncation: 'disabled',
      metadata: {},
      reasoning: { effort: null, summary: null },
    });
    expectOpenAI('Response', withoutNullUser(r.body));
    // a JSON schema format is echoed as sent, with the default verbosity
    const format = { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: false };
    const j = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'hello json', text: { format } } });
    expect(j.status, j.text).to.equal(200);
    expect(j.body.text).to.deep.equal({ format, verbosity: 'medium' });
    expectOpenAI('Response', withoutNullUser(j.body));
  });

  it('refuses what it cannot honour, 400 unsupported_parameter naming the field, before anything is sent, stored or billed; the SDK raises BadRequestError', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      // a reusable prompt template kept by OpenAI: the gateway cannot resolve it (also without `input`)
      [{ prompt: { id: 'pmpt_123', variables: { city: 'Paris' } } }, 'prompt'],
      [{ prompt: { id: 'pmpt_123', version: '2' }, input: undefined }, 'prompt'],
      [{ moderation: { model: 'omni-moderation-latest', policy: { output: { mode: 'block' } } } }, 'moderation'],
      [{ prompt_cache_options: { prewarm: true } }, 'prompt_cache_options.prewarm'],
      // "Use `enabled` to require compression support": the gateway compresses no image context
      [{ image: { context_compression: 'enabled' } }, 'image.context_compression'],
    ];
    await usageSettled();
    const billed = await UsageEvent.count({ where: { orgId: o.org.id } });
    const stored = await StoredResponse.count({ where: { orgId: o.org.id } });
    for (const [extra, param] of cases) {
      for (const stream of [false, true]) {
        const json = { model: 'sim-chat', input: 'x', stream, ...extra };
        const r = await call('POST', '/v1/responses', { headers: h, json });
        expect(r.status, `${JSON.stringify(json)}: ${r.text}`).to.equal(400);
        expect(r.body.error, JSON.stringify(json)).to.include({ code: 'unsupported_parameter', param, type: 'invalid_request_error' });
      }
      const counted = await call('POST', '/v1/responses/input_tokens', { headers: h, json: { model: 'sim-chat', input: 'x', ...extra } });
      expect(counted.status, `input_tokens ${JSON.stringify(extra)}`).to.equal(400);
      expect(counted.body.error.param).to.equal(param);
    }
    let err: unknown;
    try {
      await client.responses.create({ model: 'sim-chat', input: 'x', prompt: { id: 'pmpt_123' } });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('prompt');
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(billed);
    expect(await StoredResponse.count({ where: { orgId: o.org.id } })).to.equal(stored);
  });

  it('accepts what changes nothing (null prompt and moderation, top_logprobs 0, include values with nothing to include) and refuses values OpenAI refuses (400 naming them)', async () => {
    const ok = await client.responses.create({
      model: 'sim-chat',
      input: 'hello accepted',
      prompt: null,
      moderation: null,
      top_logprobs: 0,
      include: ['reasoning.encrypted_content', 'web_search_call.action.sources', 'message.input_image.image_url'],
      prompt_cache_options: { ttl: '12h', prewarm: false },
      stream_options: null,
      image: { context_compression: 'auto' },
    });
    expect(ok.status).to.equal('completed');
    // the effective image context policy, as OpenAI's Response.Image reports it
    expect(ok.image).to.deep.equal({ context_compression: 'disabled' });
    // OpenAI's codes for them (responses-openai-refusals.test.ts checks the words)
    const bad: Array<[Record<string, unknown>, string, string]> = [
      [{ include: ['message.output_text.everything'] }, 'include[0]', 'invalid_value'],
      [{ service_tier: 'gold' }, 'service_tier', 'invalid_value'],
      [{ top_logprobs: 21 }, 'top_logprobs', 'integer_above_max_value'],
      [{ text: { verbosity: 'chatty' } }, 'text.verbosity', 'invalid_value'],
      [{ prompt_cache_retention: '1h' }, 'prompt_cache_retention', 'invalid_value'],
      [{ max_tool_calls: -1 }, 'max_tool_calls', 'integer_below_min_value'],
      [{ max_output_tokens: 15 }, 'max_output_tokens', 'integer_below_min_value'], // OpenAI's minimum is 16
      [{ tools: [{ type: 'function', name: 'get weather', parameters: {} }] }, 'tools[0].name', 'invalid_value'],
      [{ tools: [{ type: 'function', name: 'x'.repeat(129), parameters: {} }] }, 'tools[0].name', 'string_above_max_length'], // the Responses API's limit is 128
      [{ tools: [{ type: 'function', name: 'f', parameters: 'object' }] }, 'tools[0].parameters', 'invalid_type'],
      [{ image: { context_compression: 'always' } }, 'image.context_compression', 'invalid_value'],
    ];
    for (const [extra, param, code] of bad) {
      const r = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'x', ...extra } });
      expect(r.status, JSON.stringify(extra)).to.equal(400);
      expect(r.body.error, JSON.stringify(extra)).to.include({ code, param });
    }
    expect(env().sim.log.entries).to.have.length(1);
  });

  it("a json_schema text.format needs its name and schema, as OpenAI's TextResponseFormatJsonSchema requires (400 naming them; they went upstream as name 'output' and no schema); the input_tokens count checks them too", async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    // OpenAI's codes and words
    const bad: Array<[Record<string, unknown>, string, string, string]> = [
      [{ type: 'json_schema', schema }, 'text.format.name', 'missing_required_parameter', "Missing required parameter: 'text.format.name'."],
      [{ type: 'json_schema', name: 'answer' }, 'text.format.schema', 'missing_required_parameter', "Missing required parameter: 'text.format.schema'."],
      [{ type: 'json_schema', name: 'an answer', schema }, 'text.format.name', 'invalid_value', "Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."],
      [{ type: 'json_schema', name: 'a'.repeat(65), schema }, 'text.format.name', 'string_above_max_length', "Invalid 'text.format.name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead."],
      [{ type: 'json_schema', name: 'answer', schema: 'object' }, 'text.format.schema', 'invalid_type', "Invalid type for 'text.format.schema': expected an object, but got a string instead."],
      [{ type: 'json_schema', name: 'answer', schema, strict: 'yes' }, 'text.format.strict', 'invalid_type', "Invalid type for 'text.format.strict': expected a boolean, but got a string instead."],
    ];
    await usageSettled();
    const billed = await UsageEvent.count({ where: { orgId: o.org.id } });
    for (const [format, param, code, message] of bad) {
      for (const path of ['/v1/responses', '/v1/responses/input_tokens']) {
        const r = await call('POST', path, { headers: h, json: { model: 'sim-chat', input: 'x', text: { format } } });
        expect(r.status, `${path} ${JSON.stringify(format)}`).to.equal(400);
        expect(r.body.error).to.deep.equal({ code, type: 'invalid_request_error', param, message });
      }
    }
    const err = await client.responses.create({ model: 'sim-chat', input: 'x', text: { format: { type: 'json_schema', schema } } as never }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(env().sim.log.entries).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } })).to.equal(billed);
    // a well-formed one is sent as chat's json_schema response_format under its own name; strict may be null
    const ok = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'x', text: { format: { type: 'json_schema', name: 'answer-1', schema, strict: null, description: 'd' } } } });
    expect(ok.status, ok.text).to.equal(200);
    expect((env().sim.log.entries[0].body as { response_format: { json_schema: { name: string } } }).response_format.json_schema.name).to.equal('answer-1');
  });

  it('answers without input when a conversation or a previous response carries the turn (OpenAI requires neither); with neither, or an empty conversation, 400 naming input', async () => {
    const conv = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'hello from the conversation' }] });
    const r = await client.responses.create({ model: 'sim-chat', conversation: conv.id });
    expect(r.status).to.equal('completed');
    expect(r.output_text).to.include('hello from the conversation');
    expect(r.conversation).to.deep.equal({ id: conv.id });
    const items = await client.conversations.items.list(conv.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'message']);
    expect(await client.responses.inputItems.list(r.id)).to.have.property('data').that.deep.equals([]);

    const streamed = await client.responses.stream({ model: 'sim-chat', previous_response_id: r.id, instructions: 'Go on.' }).finalResponse();
    expect(streamed.status).to.equal('completed');
    const sent = env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string }> };
    expect(sent.messages.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant']);

    const empty = await client.conversations.create({});
    // neither: OpenAI's missing_required_parameter, in its words
    for (const [json, code] of [[{ model: 'sim-chat' }, 'missing_required_parameter'], [{ model: 'sim-chat', conversation: empty.id }, 'invalid_request'], [{ model: 'sim-chat', conversation: empty.id, background: true }, 'invalid_request']] as const) {
      const bad = await call('POST', '/v1/responses', { headers: h, json });
      expect(bad.status, JSON.stringify(json)).to.equal(400);
      expect(bad.body.error, JSON.stringify(json)).to.include({ code, param: 'input' });
      if (code === 'missing_required_parameter') expect(bad.body.error.message).to.equal("Missing required parameter: 'input'.");
    }
    expect(env().sim.log.entries).to.have.length(2);
  });

  it("honours log probabilities (include message.output_text.logprobs, top_logprobs) as OpenAI's output_text logprobs, JSON and streamed; an upstream without them, or hosted web search, refuses them (400 naming the field)", async () => {
    const r = await client.responses.create({ model: 'sim-chat', input: 'probabilities please', include: ['message.output_text.logprobs'], top_logprobs: 2 });
    const sent = env().sim.log.entries[0].body as Record<string, unknown>;
    expect(sent).to.include({ logprobs: true, top_logprobs: 2 });
    const part = (r.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(part.logprobs!.map((t) => t.token).join('')).to.equal(part.text);
    expect(part.logprobs![0]).to.deep.include({ token: part.text.split(' ')[0], logprob: -0.01 });
    expect(part.logprobs![0].bytes).to.deep.equal([...Buffer.from(part.text.split(' ')[0])]);
    expect(part.logprobs!.every((t) => t.top_logprobs.length === 2)).to.equal(true);
    expect(r.top_logprobs).to.equal(2);
    expectOpenAI('Response', withoutNullUser(r));
    // stored; retrieve shows them when its own include asks (responses-retrieve-include.test.ts)
    expect((await client.responses.retrieve(r.id, { include: ['message.output_text.logprobs'] })).output).to.deep.equal(r.output);

    // include alone asks for them too (no alternatives)
    const plain = await client.responses.create({ model: 'sim-chat', input: 'probabilities again', include: ['message.output_text.logprobs'] });
    const plainPart = (plain.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(plainPart.logprobs).to.have.length.above(3);
    expect(plainPart.logprobs!.every((t) => t.top_logprobs.length === 0)).to.equal(true);

    const s = await postSse('/v1/responses', h, { model: 'sim-chat', input: 'streamed probabilities', stream: true, top_logprobs: 1 });
    expect(s.status, s.text).to.equal(200);
    for (const e of s.events) expectResponsesEvent(responsesEventForDocument(e.data));
    const deltas = s.events.filter((e) => e.data.type === 'response.output_text.delta').map((e) => e.data);
    expect(deltas.every((d) => d.logprobs.length === 1 && d.logprobs[0].token === d.delta && d.logprobs[0].top_logprobs.length === 1)).to.equal(true);
    const done = s.events.find((e) => e.data.type === 'response.output_text.done')!.data;
    expect(done.logprobs.map((t: { token: string }) => t.token).join('')).to.equal(done.text);
    const final = s.events.at(-1)!.data.response;
    expect(final.output[0].content[0].logprobs).to.deep.equal(done.logprobs);
    const helper = await client.responses.stream({ model: 'sim-chat', input: 'helper probabilities', include: ['message.output_text.logprobs'] }).finalResponse();
    expect(((helper.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText).logprobs).to.have.length.above(3);

    resetSim();
    const claude = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-claude', input: 'x', include: ['message.output_text.logprobs'] } });
    expect(claude.status, claude.text).to.equal(400);
    expect(claude.body.error).to.include({ code: 'unsupported_parameter', param: 'logprobs' });
    for (const [extra, param] of [[{ include: ['message.output_text.logprobs'] }, 'include'], [{ top_logprobs: 3 }, 'top_logprobs']] as const) {
      const searched = await call('POST', '/v1/responses', { headers: h, json: { model: 'sim-chat', input: 'search for bees', tools: [{ type: 'web_search' }], ...extra } });
      expect(searched.status, searched.text).to.equal(400);
      expect(searched.body.error).to.include({ code: 'unsupported_parameter', param });
    }
    expect(env().sim.log.entries).to.have.length(0);
  });
});
