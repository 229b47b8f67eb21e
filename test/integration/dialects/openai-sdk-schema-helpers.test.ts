import { expect } from 'chai';
import { zodFunction, zodResponseFormat, zodResponsesFunction, zodTextFormat } from 'openai/helpers/zod';
import { ResponsesToolRunner, runnerFunction } from 'openai/helpers/responses-tool-runner';
import { z } from 'zod';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { CONSTRUCTS } from '../../helpers/zod-schema-constructs';

const messages = [{ role: 'user' as const, content: 'hello' }];
type Sent = { tools?: unknown[]; response_format?: { json_schema?: { schema?: unknown; strict?: boolean } } };
const sent = () => env().sim.log.entries.map((e) => e.body as Sent);
/** A value as it goes over the wire (the helpers' tools carry functions the SDK does not send). */
const wire = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

/**
 * What the openai SDK's schema helpers (openai 7.60 with zod 4: zodFunction, zodResponseFormat,
 * zodTextFormat, zodResponsesFunction) write for every construct of CONSTRUCTS is served through the
 * gateway's schema checks (shared/json-schema/tool-schemas.ts, strict: the helpers always send `strict:
 * true`), by the SDK's own calls: chat.completions.create, runTools and parse, responses.parse and
 * the Responses tool runner; the schemas reach the upstream as the helper wrote them and the
 * simulator's answer comes back parsed. OpenAI takes them: the helper's transform holds them to
 * OpenAI's Structured Outputs subset (it throws, before any request, on what OpenAI refuses: an
 * optional field that is not nullable, an open object, a tuple, `oneOf`/`allOf` it cannot rewrite).
 */
describe("openai SDK schema helpers (zod 4): every construct they write is served, strict", function () {
  this.timeout(120_000);
  const s = openaiOrg();

  it('chat: zodFunction tools of every construct are served by create and runTools on an OpenAI-compatible and an Anthropic upstream, sent as written', async () => {
    const tools = CONSTRUCTS.map((c) => zodFunction({ name: c.name, parameters: c.schema, function: () => 'done' }));
    for (const model of ['sim-chat', 'sim-claude']) {
      const answer = await s.c.chat.completions.create({ model, messages, tools });
      expect(answer.choices, model).to.have.length(1);
    }
    expect(sent()[0].tools, 'the OpenAI-compatible upstream got them as written').to.deep.equal(wire(tools));
    const runner = s.c.chat.completions.runTools({ model: 'sim-chat', messages, tools });
    expect(await runner.finalContent()).to.be.a('string');
    // runTools sends each as its own function (with `description: ''`), the parameters as the helper wrote them
    const ran = sent().at(-1)!.tools as Array<{ function: { parameters: unknown; strict: boolean } }>;
    expect(ran.map((t) => t.function), 'runTools sent them as written').to.deep.equal(tools.map((t) => ({ name: t.function.name, description: '', parameters: wire(t.function.parameters), strict: true })));
  });

  it('chat: chat.completions.parse with zodResponseFormat of every construct is served and parsed, JSON and streamed', async () => {
    for (const c of CONSTRUCTS) {
      env().sim.knobs.set('*', { replyWords: [JSON.stringify(c.sample)] });
      const format = zodResponseFormat(c.schema, c.name);
      for (const model of ['sim-chat', 'sim-claude']) {
        const answer = await s.c.chat.completions.parse({ model, messages, response_format: format });
        expect(answer.choices[0].message.parsed, `${c.name} ${model}`).to.deep.equal(c.schema.parse(c.sample));
      }
      expect(sent()[0].response_format?.json_schema, `${c.name} sent as written`).to.deep.include({ strict: true, schema: format.json_schema.schema });
      const stream = s.c.chat.completions.stream({ model: 'sim-chat', messages, response_format: format });
      expect((await stream.finalChatCompletion()).choices[0].message.parsed, `${c.name} streamed`).to.deep.equal(c.schema.parse(c.sample));
      env().sim.log.entries.length = 0;
    }
    // named definitions (`schemaDefinitions`): `$ref`s into `definitions` by a name the helper escapes
    const Point = z.object({ x: z.number() });
    const named = zodResponseFormat(z.object({ a: Point, b: Point.nullable() }), 'points', { schemaDefinitions: { 'My Point': Point } });
    expect(JSON.stringify(named.json_schema.schema)).to.include('#/definitions/My%20Point');
    env().sim.knobs.set('*', { replyWords: ['{"a":{"x":1},"b":null}'] });
    const answer = await s.c.chat.completions.parse({ model: 'sim-chat', messages, response_format: named });
    expect(answer.choices[0].message.parsed).to.deep.equal({ a: { x: 1 }, b: null });
  });

  it('responses: responses.parse with zodTextFormat and zodResponsesFunction tools of every construct is served and parsed; the Responses tool runner sends the tools too', async () => {
    const tools = CONSTRUCTS.map((c) => zodResponsesFunction({ name: c.name, parameters: c.schema, function: () => 'done' }));
    for (const c of CONSTRUCTS) {
      env().sim.knobs.set('*', { replyWords: [JSON.stringify(c.sample)] });
      for (const model of ['sim-chat', 'sim-claude']) {
        const r = await s.c.responses.parse({ model, input: 'hello', text: { format: zodTextFormat(c.schema, c.name) }, tools });
        expect(r.output_parsed, `${c.name} ${model}`).to.deep.equal(c.schema.parse(c.sample));
      }
    }
    // the chat upstream is sent each function's parameters as the helper wrote them
    const chatTools = sent()[0].tools as Array<{ function: { name: string; parameters: unknown; strict: boolean } }>;
    for (const t of tools) expect(chatTools.find((x) => x.function.name === t.name)?.function, t.name).to.deep.include({ parameters: wire(t.parameters), strict: true });
    env().sim.knobs.reset();
    const runner = new ResponsesToolRunner({ functions: tools.map((t) => runnerFunction(t)) });
    const final = await runner.run(s.c, { model: 'sim-chat', input: 'hello' });
    expect(final.status).to.equal('completed');
    expect((sent().at(-1)!.tools as unknown[]).length, 'the runner offered every function').to.equal(tools.length);
  });
});
