/* eslint-disable @typescript-eslint/no-explicit-any */
import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { ScriptedUpstream, type UpstreamKind } from '../../helpers/scripted-upstream';
import { STREAM_CASES } from '../../helpers/stream-fidelity-cases';
import { expectAnthropic, expectOpenAI, expectResponsesEvent, responsesEventForDocument } from '../../helpers/conformance';
import { seedBedrock } from '../providers/bedrock-setup';
import { keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';

/**
 * A streamed answer is the JSON answer, as a client sees it: the official SDKs' stream helpers
 * (openai 7's ChatCompletionStream and ResponseStream, @anthropic-ai/sdk's MessageStream) accumulate
 * the gateway's stream into the same object the gateway answers without `stream`, field by field
 * (text, refusals, reasoning and signed thinking, tool calls' ids, names and arguments, stop reasons,
 * logprobs, usage), for one answer scripted in an OpenAI-compatible, an Anthropic-native and a Gemini
 * upstream's own JSON and stream (test/helpers/stream-fidelity-cases.ts). What may differ: ids and
 * times made per request, a Gemini call's id (Gemini gives none; the gateway makes one per answer),
 * and the SDKs' own parse fields (`parsed`, `parsed_output`, `parsed_arguments`, `output_parsed`).
 */
const KINDS: UpstreamKind[] = ['openai', 'anthropic', 'gemini'];
const PER_REQUEST = new Set(['id', 'created', 'created_at', 'completed_at', 'parsed', 'parsed_output', 'parsed_arguments', 'output_parsed']);

/** `value` without the fields made per request (an output item's `id` included), the SDKs' parse fields, and undefined. */
function comparable(value: any, geminiCalls: boolean): any {
  if (Array.isArray(value)) return value.map((v) => comparable(v, geminiCalls));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (PER_REQUEST.has(k) || v === undefined) continue;
    if (geminiCalls && k === 'call_id') continue;
    out[k] = comparable(v, geminiCalls);
  }
  // a Gemini call's id (chat tool_calls[].id, messages tool_use id) is the gateway's, per answer
  if (geminiCalls && (value.type === 'function' || value.type === 'tool_use') && typeof value.id === 'string') out.id = 'call';
  return out;
}

/**
 * A chat completion whose messages' empty `annotations` are left out: OpenAI's deltas carry none
 * (its document's ChatCompletionStreamResponseDelta has no `annotations`), so the official SDK's
 * accumulated message has none where the JSON answer has `[]`, as with OpenAI itself.
 */
function withoutEmptyAnnotations<T extends { choices: Array<{ message: object }> }>(completion: T): T {
  for (const c of completion.choices) {
    const m = c.message as { annotations?: unknown[] };
    if (Array.isArray(m.annotations) && m.annotations.length === 0) delete m.annotations;
  }
  return completion;
}

describe('streamed answers equal the JSON answers, through the official SDKs, on every upstream kind', function () {
  this.timeout(30_000);
  const ups = {} as Record<UpstreamKind, ScriptedUpstream>;
  const models = {} as Record<UpstreamKind, string>;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let apiKey: string;
  const tools = [
    { name: 'a', input_schema: { type: 'object' as const, properties: {} } },
    { name: 'b', input_schema: { type: 'object' as const, properties: {} } },
  ];
  beforeEach(resetSim);
  before(async () => {
    apiKey = (await buildOrg(env().redis)).key;
    openai = new OpenAI({ apiKey, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey, baseURL: env().gw.url, maxRetries: 0 });
    for (const kind of KINDS) {
      ups[kind] = await ScriptedUpstream.start(kind);
      models[kind] = await ups[kind].model();
    }
  });
  after(async () => {
    for (const kind of KINDS) await ups[kind].close();
  });

  // an OpenAI-compatible upstream's chunks go on as it sent them (OpenAI's own carry usage: null)
  for (const kind of ['anthropic', 'gemini'] as const) {
    it(`chat chunks from the ${kind} upstream carry usage: null when include_usage is asked (OpenAI's "all other chunks"), and no usage when not`, async () => {
      const text = STREAM_CASES[0].scripts[kind]!;
      ups[kind].otherwise = (req) => (req.body?.stream || req.path.includes(':streamGenerateContent') ? { kind: 'sse', events: text.sse } : { kind: 'json', body: text.json });
      const ask = (extra: Record<string, unknown>) => postSse('/v1/chat/completions', keyHeader(apiKey), { model: models[kind], stream: true, messages: [{ role: 'user', content: 'hi' }], ...extra });
      const withUsage = (await ask({ stream_options: { include_usage: true } })).events.slice(0, -1).map((e) => e.data);
      const json = await openai.chat.completions.create({ model: models[kind], messages: [{ role: 'user', content: 'hi' }] });
      expect(withUsage.at(-1)).to.deep.include({ choices: [], usage: json.usage });
      expect(withUsage.slice(0, -1).map((c) => c.usage)).to.deep.equal(withUsage.slice(0, -1).map(() => null));
      const without = (await ask({})).events.slice(0, -1).map((e) => e.data);
      expect(without.filter((c) => 'usage' in c)).to.deep.equal([]);
      expect(without.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.equal('Hello world');
    });
  }

  for (const c of STREAM_CASES) {
    for (const kind of KINDS) {
      const script = c.scripts[kind];
      if (!script) continue;
      const dialects = c.dialects ?? ['chat', 'messages', 'responses'];
      it(`${c.name}, from the ${kind} upstream (${dialects.join(', ')})`, async () => {
        // Gemini's stream is another method (streamGenerateContent), the others' a `stream: true` body
        ups[kind].otherwise = (req) => (req.body?.stream || req.path.includes(':streamGenerateContent') ? { kind: 'sse', events: script.sse } : { kind: 'json', body: script.json });
        const model = models[kind];
        const same = (json: unknown, streamed: unknown, what: string) => expect(comparable(streamed, kind === 'gemini'), what).to.deep.equal(comparable(json, kind === 'gemini'));

        if (dialects.includes('chat')) {
          const body: any = { model, messages: [{ role: 'user', content: 'hi' }], tools: tools.map((t) => ({ type: 'function', function: { name: t.name, parameters: t.input_schema } })) };
          if (c.logprobs) Object.assign(body, { logprobs: true, top_logprobs: 1 });
          const json: any = await openai.chat.completions.create(body);
          const whole = structuredClone(json);
          const stream = openai.chat.completions.stream({ ...body, stream_options: { include_usage: true } });
          const reasoning: string[] = [];
          stream.on('chunk', (ch: any) => {
            expectOpenAI('CreateChatCompletionStreamResponse', ch);
            if (ch.choices[0]?.delta?.reasoning_content) reasoning.push(ch.choices[0].delta.reasoning_content);
          });
          const streamed: any = await stream.finalChatCompletion();
          // `reasoning_content` is not OpenAI's: ChatCompletionStream keeps a field it does not know as its last delta, so its pieces are joined here
          expect(reasoning.join(''), 'chat reasoning').to.equal(json.choices[0].message.reasoning_content ?? '');
          delete json.choices[0].message.reasoning_content;
          delete streamed.choices[0].message.reasoning_content;
          same(withoutEmptyAnnotations(json), streamed, 'chat completion');
          if (c.logprobs) expect(streamed.choices[0].logprobs.content).to.have.length(2);
          // stored (`store: true`), a streamed completion is the JSON answer, reasoning and signed thinking included (an org of its own: the scripted chunks' id repeats)
          const own = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
          const kept = await own.chat.completions.stream({ ...body, store: true, stream_options: { include_usage: true } }).finalChatCompletion();
          const { metadata, ...stored } = (await own.chat.completions.retrieve(kept.id)) as any;
          expect(metadata).to.deep.equal({});
          same(whole, stored, 'stored streamed completion');
        }
        if (dialects.includes('messages')) {
          const body = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }], tools };
          const stream = anthropic.messages.stream(body);
          stream.on('streamEvent', (e) => expectAnthropic('StreamEvent', e));
          same(await anthropic.messages.create(body), await stream.finalMessage(), 'message');
        }
        if (dialects.includes('responses')) {
          const body: any = { model, input: 'hi', tools: tools.map((t) => ({ type: 'function', name: t.name, parameters: t.input_schema, strict: false })) };
          if (c.logprobs) Object.assign(body, { include: ['message.output_text.logprobs'], top_logprobs: 1 });
          const json = await openai.responses.create(body);
          const stream = openai.responses.stream(body);
          const events: any[] = [];
          stream.on('event', (e) => events.push(e));
          const final = await stream.finalResponse();
          same(json, final, 'response');
          // stored (Responses are by default), the streamed response is retrieved as it was streamed, item ids included (log probabilities when retrieve asks for them too)
          const stored = await openai.responses.retrieve(final.id, c.logprobs ? { include: ['message.output_text.logprobs'] } : {});
          expect(comparable(stored, false), 'stored streamed response').to.deep.equal(comparable(final, false));
          expect(stored.output.map((i) => i.id)).to.deep.equal(final.output.map((i) => i.id));
          for (const e of events) expectResponsesEvent(responsesEventForDocument(e));
          expect(events.map((e) => e.sequence_number), 'sequence numbers').to.deep.equal(events.map((_, i) => i));
        }
      });
    }
  }
});

describe('streamed chat answers equal the JSON answers on the simulated Bedrock upstream', function () {
  this.timeout(30_000);
  let openai: OpenAI;
  beforeEach(resetSim);
  before(async () => {
    openai = new OpenAI({ apiKey: (await buildOrg(env().redis)).key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    await seedBedrock();
  });
  const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } } }];
  for (const model of ['sim-bedrock-claude', 'sim-bedrock-nova']) {
    it(`${model}: a turn of one tool call (content null both ways), and a text answer`, async () => {
      for (const content of ['please use a tool now', 'hello there']) {
        const body = { model, messages: [{ role: 'user' as const, content }], tools };
        const json = await openai.chat.completions.create(body);
        const streamed = await openai.chat.completions.stream({ ...body, stream_options: { include_usage: true } }).finalChatCompletion();
        if (content.includes('tool')) expect(json.choices[0].message).to.include({ content: null }).and.to.have.property('tool_calls').with.length(1);
        // the simulator makes a tool use id per answer
        expect(comparable(streamed, true), content).to.deep.equal(comparable(withoutEmptyAnnotations(json), true));
      }
    });
  }
});
