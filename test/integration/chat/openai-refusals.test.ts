import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';
import { usageSettled } from '../../helpers/usage';
import { StoredResponse, UsageEvent } from '../../../shared/db/models';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const fn = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };
const WITHOUT_TOOLS = "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.";
const PARALLEL_WITHOUT_TOOLS = "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.";
const stopTooLong = (n: number) => `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${n} instead.`;

/**
 * What OpenAI's API refuses and the gateway used to send on (or drop): a chat `tool_choice` without
 * `tools` (`none` too), more than 4 `stop` sequences on chat and legacy completions, a Responses
 * `tool_choice` of `required` or a named tool without tools, and a Responses function choice naming
 * none of its tools. Each is OpenAI's 400 with its type, code
 * (the gateway's `invalid_request` where OpenAI's is null), param and words, before any upstream,
 * nothing billed or stored; the bodies next to them still answer.
 */
describe('OpenAI refusals: tool_choice without tools, more than 4 stop sequences', function () {
  this.timeout(30_000);
  const s = openaiOrg();

  async function expectRefusal(r: Reply, code: string, param: string, message: string, what: string): Promise<void> {
    expect(r.status, `${what} ${r.text}`).to.equal(400);
    expect(r.body.error, what).to.deep.equal({ code, message, type: 'invalid_request_error', param });
    expectOpenAI('ErrorResponse', r.body);
  }

  /** The org's usage events and stored responses, once what earlier tests billed has settled. */
  async function kept(): Promise<[number, number]> {
    await usageSettled();
    return [await UsageEvent.count({ where: { orgId: s.o.org.id } }), await StoredResponse.count({ where: { orgId: s.o.org.id } })];
  }

  async function expectNothingSentOrBilled(before: [number, number]): Promise<void> {
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
    expect(await kept(), 'nothing billed or stored').to.deep.equal(before);
  }

  const post = (path: string, json: Record<string, unknown>) => call('POST', path, { headers: keyHeader(s.o.key), json });

  it("chat: a tool_choice without tools (none, auto, required, a function; tools absent or empty) is OpenAI's 400 naming tool_choice, JSON and streamed, on every upstream kind; nothing sent or billed", async () => {
    const before = await kept();
    const bodies: Array<Record<string, unknown>> = [
      { tool_choice: 'none' },
      { tool_choice: 'auto' },
      { tool_choice: 'required' },
      { tool_choice: { type: 'function', function: { name: 'lookup' } } },
    ];
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const extra of bodies) {
        for (const stream of [false, true]) {
          const what = `${model} ${JSON.stringify(extra)} stream ${stream}`;
          await expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, stream, ...extra }), 'invalid_request', 'tool_choice', WITHOUT_TOOLS, what);
        }
      }
    }
    // the official SDK raises its BadRequestError with OpenAI's fields
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, tool_choice: 'none' }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'tool_choice' });
    await expectNothingSentOrBilled(before);
  });

  it("chat: parallel_tool_calls (true or false) without tools is OpenAI's 400 naming parallel_tool_calls; with tools, or null without, it answers", async () => {
    const before = await kept();
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const extra of [{ parallel_tool_calls: false }, { parallel_tool_calls: true }]) {
        const what = `${model} ${JSON.stringify(extra)}`;
        await expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, ...extra }), 'invalid_request', 'parallel_tool_calls', PARALLEL_WITHOUT_TOOLS, what);
      }
    }
    await expectNothingSentOrBilled(before);
    const withTools = await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, tools: [fn], parallel_tool_calls: false });
    expect(withTools.choices[0].finish_reason).to.be.a('string');
    expect((env().sim.log.entries.at(-1)!.body as { parallel_tool_calls?: unknown }).parallel_tool_calls).to.equal(false);
    const nil = await post('/v1/chat/completions', { model: 'sim-chat', messages: msgs, parallel_tool_calls: null });
    expect(nil.status, nil.text).to.equal(200);
  });

  it("chat: an empty tools array, more than 128 tools and an assistant turn's empty tool_calls are OpenAI's 400 empty_array / array_above_max_length naming the field; 128 tools answer", async () => {
    const before = await kept();
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `tool_${i}`, parameters: { type: 'object', properties: {} } } }));
    for (const model of ['sim-chat', 'sim-claude']) {
      await expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, tools: [] }), 'empty_array', 'tools', "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.", `${model} tools []`);
      await expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, tools: [], tool_choice: 'auto', stream: true }), 'empty_array', 'tools', "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.", `${model} tools [] with a choice`);
      await expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, tools: many(129) }), 'array_above_max_length', 'tools', "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 129 instead.", `${model} 129 tools`);
      const turns = [...msgs, { role: 'assistant', content: null, tool_calls: [] }, { role: 'user', content: 'go on' }];
      await expectRefusal(await post('/v1/chat/completions', { model, messages: turns }), 'empty_array', 'messages[1].tool_calls', "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.", `${model} tool_calls []`);
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, tools: [] }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: 'empty_array', param: 'tools' });
    await expectNothingSentOrBilled(before);
    const full = await post('/v1/chat/completions', { model: 'sim-chat', messages: msgs, tools: many(128) });
    expect(full.status, full.text).to.equal(200);
    expect((env().sim.log.entries.at(-1)!.body as { tools: unknown[] }).tools).to.have.length(128);
  });

  it('chat: a tool_choice with its tools, and a null tool_choice without tools, still answer (the choice forwarded as sent)', async () => {
    const none = await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, tools: [fn], tool_choice: 'none' });
    expect(none.choices[0].message.content).to.be.a('string');
    expect((env().sim.log.entries.at(-1)!.body as { tool_choice?: unknown }).tool_choice).to.equal('none');
    const named = await s.c.chat.completions.create({ model: 'sim-claude', messages: msgs, tools: [fn], tool_choice: { type: 'function', function: { name: 'lookup' } } });
    expect(named.choices[0].finish_reason).to.be.a('string');
    const nil = await post('/v1/chat/completions', { model: 'sim-chat', messages: msgs, tool_choice: null });
    expect(nil.status, nil.text).to.equal(200);
  });

  it("chat and legacy completions: 5 stop sequences are OpenAI's 400 array_above_max_length naming stop, JSON and streamed, on every upstream kind; nothing sent or billed", async () => {
    const before = await kept();
    const five = ['a', 'b', 'c', 'd', 'e'];
    for (const model of ['sim-chat', 'sim-claude']) {
      for (const stream of [false, true]) {
        const what = `${model} stream ${stream}`;
        await expectRefusal(await post('/v1/chat/completions', { model, messages: msgs, stream, stop: five }), 'array_above_max_length', 'stop', stopTooLong(5), `chat ${what}`);
        await expectRefusal(await post('/v1/completions', { model, prompt: 'x', stream, stop: [...five, 'f'] }), 'array_above_max_length', 'stop', stopTooLong(6), `completions ${what}`);
      }
    }
    // legacy completions now check stop's type as chat does (it was sent on unchecked)
    const mistyped = await post('/v1/completions', { model: 'sim-chat', prompt: 'x', stop: 5 });
    expect(mistyped.status, mistyped.text).to.equal(400);
    expect(mistyped.body.error).to.include({ code: 'invalid_type', param: 'stop', type: 'invalid_request_error' });
    const err = await outcome(s.c.completions.create({ model: 'sim-chat', prompt: 'x', stop: five }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: 'array_above_max_length', param: 'stop' });
    await expectNothingSentOrBilled(before);
  });

  it('chat and legacy completions: 4 stop sequences (and one string) still answer, sent upstream as they came', async () => {
    const four = ['a', 'b', 'c', 'd'];
    await s.c.chat.completions.create({ model: 'sim-chat', messages: msgs, stop: four });
    expect((env().sim.log.entries.at(-1)!.body as { stop?: unknown }).stop).to.deep.equal(four);
    await s.c.completions.create({ model: 'sim-chat', prompt: 'x', stop: four });
    expect((env().sim.log.entries.at(-1)!.body as { stop?: unknown }).stop).to.deep.equal(four);
    await s.c.completions.create({ model: 'sim-chat', prompt: 'x', stop: 'END' });
    expect((env().sim.log.entries.at(-1)!.body as { stop?: unknown }).stop).to.equal('END');
  });

  it("responses: tool_choice required, or naming a tool, without tools is OpenAI's 400 naming tool_choice (JSON, streamed, background, input_tokens); nothing sent, stored or billed", async () => {
    const before = await kept();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tool_choice: 'required' }, "Tool choice 'required' must be specified with 'tools' parameter."],
      [{ tools: [], tool_choice: 'required' }, "Tool choice 'required' must be specified with 'tools' parameter."],
      [{ tool_choice: { type: 'function', name: 'lookup' } }, "Tool choice 'function' not found in 'tools' parameter."],
      [{ tool_choice: { type: 'apply_patch' } }, "Tool choice 'apply_patch' not found in 'tools' parameter."],
      [{ tool_choice: { type: 'image_generation' } }, "Tool choice 'image_generation' not found in 'tools' parameter."],
    ];
    for (const [extra, message] of cases) {
      for (const mode of [{}, { stream: true }, { background: true }]) {
        const what = `${JSON.stringify(extra)} ${JSON.stringify(mode)}`;
        await expectRefusal(await post('/v1/responses', { model: 'sim-chat', input: 'hello', ...extra, ...mode }), 'invalid_request', 'tool_choice', message, what);
      }
      await expectRefusal(await post('/v1/responses/input_tokens', { model: 'sim-chat', input: 'hello', ...extra }), 'invalid_request', 'tool_choice', message, `input_tokens ${JSON.stringify(extra)}`);
    }
    // {type: 'local_shell'}, not one of OpenAI's tool choices, keeps that refusal (test/integration/dialects/tool-choice)
    const shell = await post('/v1/responses', { model: 'sim-chat', input: 'hello', tool_choice: { type: 'local_shell' } });
    expect([shell.status, shell.body.error.param]).to.deep.equal([400, 'tool_choice']);
    expect(shell.body.error.message).to.include('allowed_tools');
    const err = await outcome(s.c.responses.create({ model: 'sim-chat', input: 'hello', tool_choice: 'required' }));
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: 'invalid_request', param: 'tool_choice' });
    await expectNothingSentOrBilled(before);
  });

  it("responses: a function tool_choice naming none of the tools is OpenAI's 400 naming tool_choice (JSON, streamed, background, input_tokens); nothing sent, stored or billed", async () => {
    const before = await kept();
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }];
    const cases: Array<Record<string, unknown>> = [
      { tools, tool_choice: { type: 'function', name: 'search' } },
      { tools, tool_choice: { type: 'function', name: 'Lookup' } },
      // a custom tool or a namespace is not a function of that name either
      { tools: [{ type: 'custom', name: 'patch' }], tool_choice: { type: 'function', name: 'lookup' } },
      { tools: [{ type: 'namespace', name: 'crm', description: 'd', tools }], tool_choice: { type: 'function', name: 'crm' } },
      { input: [{ type: 'additional_tools', role: 'developer', tools }, { role: 'user', content: 'hello' }], tool_choice: { type: 'function', name: 'search' } },
    ];
    for (const extra of cases) {
      for (const mode of [{}, { stream: true }, { background: true }]) {
        const what = `${JSON.stringify(extra)} ${JSON.stringify(mode)}`;
        await expectRefusal(await post('/v1/responses', { model: 'sim-chat', input: 'hello', ...extra, ...mode }), 'invalid_request', 'tool_choice', "Tool choice 'function' not found in 'tools' parameter.", what);
      }
      await expectRefusal(await post('/v1/responses/input_tokens', { model: 'sim-chat', input: 'hello', ...extra }), 'invalid_request', 'tool_choice', "Tool choice 'function' not found in 'tools' parameter.", `input_tokens ${JSON.stringify(extra)}`);
    }
    await expectNothingSentOrBilled(before);
  });

  it('responses: a function tool_choice naming a declared, namespaced or loaded function still answers, sent as the function it names', async () => {
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }];
    const r = await s.c.responses.create({ model: 'sim-claude', input: 'hello', tools: [...tools, { ...tools[0], name: 'other' }], tool_choice: { type: 'function', name: 'lookup' }, store: false });
    expect(r.status).to.equal('completed');
    expect((env().sim.log.entries.at(-1)!.body as { tool_choice?: unknown }).tool_choice).to.deep.equal({ type: 'tool', name: 'lookup' });
    for (const [extra, what] of [
      [{ tools: [{ type: 'namespace', name: 'crm', description: 'd', tools }], tool_choice: { type: 'function', name: 'lookup' } }, 'a namespace member by its name'],
      [{ tools: [{ type: 'namespace', name: 'crm', description: 'd', tools }], tool_choice: { type: 'function', name: 'crm__lookup' } }, 'a namespace member by its flattened name'],
      [{ input: [{ type: 'additional_tools', role: 'developer', tools }, { role: 'user', content: 'hello' }], tool_choice: { type: 'function', name: 'lookup' } }, 'a loaded tool'],
    ] as const) {
      const a = await post('/v1/responses', { model: 'sim-chat', input: 'hello', store: false, ...extra });
      expect(a.status, `${what} ${a.text}`).to.equal(200);
    }
  });

  it('responses: auto and none without tools answer in text (as OpenAI answers them), and required with tools still answers', async () => {
    for (const tool_choice of ['auto', 'none'] as const) {
      const r = await s.c.responses.create({ model: 'sim-chat', input: 'hello', tool_choice, store: false });
      expect(r.status, tool_choice).to.equal('completed');
      expect(r.output_text, tool_choice).to.be.a('string');
    }
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }];
    const r = await s.c.responses.create({ model: 'sim-chat', input: 'hello', tools, tool_choice: 'required', store: false });
    expect(r.status).to.equal('completed');
    expect((env().sim.log.entries.at(-1)!.body as { tool_choice?: unknown }).tool_choice).to.equal('required');
    // a tool loaded by an input item (Codex's additional_tools) is a tool declared
    const loaded = await post('/v1/responses', { model: 'sim-chat', input: [{ type: 'additional_tools', role: 'developer', tools }, { role: 'user', content: 'hello' }], tool_choice: 'required', store: false });
    expect(loaded.status, loaded.text).to.equal(200);
    expect((env().sim.log.entries.at(-1)!.body as { tool_choice?: unknown }).tool_choice).to.equal('required');
  });
});
