import { expect } from 'chai';
import fs from 'fs';
import http from 'http';
import path from 'path';
import { chatComplete } from '../../../workers/providers/bedrock/chatComplete';
import { canonicalToConverse } from '../../../workers/providers/bedrock/to-converse';
import { eventFrame, exceptionFrame } from '../../../scripts/simulator/eventstream';
import type { UpstreamCall } from '../../../workers/providers/types';
import { ApiError } from '../../../shared/errors/ApiError';
import { classify } from '../../../workers/routing/failure';
import { controlEndpointOf, isApplicationProfile, profileModel } from '../../../workers/providers/bedrock/inference-profile';

const VENDOR = path.join(__dirname, '../../../../test/fixtures/vendor/bedrock');
const vendored = (f: string) => fs.readFileSync(path.join(VENDOR, f), 'utf8');
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const KEYS = JSON.stringify({ access_key_id: 'AKIDEXAMPLE', secret_access_key: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', session_token: 'sess-token' });

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local endpoint that records the SDK's request and answers with the given bytes. */
async function endpoint(answer: (res: http.ServerResponse) => void): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      answer(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const callTo = (baseUrl: string, apiKey = KEYS): UpstreamCall => ({ baseUrl, apiKey, settings: { region: 'us-west-2' }, upstreamModel: MODEL, signal: new AbortController().signal, deadline: Date.now() + 10_000 });

const jsonAnswer = (text: string) => (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-1' }).end(text);
const streamAnswer = (frames: Uint8Array[]) => (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-2' });
  for (const f of frames) res.write(f);
  res.end();
};
/** A `.chunks.txt` fixture (one union member per line) as event-stream frames. */
const framesOf = (chunks: string) =>
  chunks
    .trim()
    .split('\n')
    .map((line) => {
      const [type, value] = Object.entries(JSON.parse(line) as Record<string, unknown>)[0];
      return eventFrame(type, value);
    });

async function collect(call: UpstreamCall, body: Record<string, unknown>) {
  const chunks: Array<Record<string, any>> = [];
  const out = await chatComplete(call, body, 'pub-model', { emit: (c) => chunks.push(JSON.parse(c)), includeUsage: true });
  return { out, chunks };
}

describe('bedrock upstream: canonical → Converse request', () => {
  it('maps messages, system, images, tool calls and results (ids kept), inference and tool config', () => {
    const req = canonicalToConverse(
      {
        messages: [
          { role: 'system', content: 'Sys.' },
          { role: 'developer', content: [{ type: 'text', text: 'Dev.', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_abc', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
          { role: 'tool', tool_call_id: 'tooluse_abc', content: '22C' },
          { role: 'user', content: 'Thanks' },
        ],
        tools: [{ type: 'function', function: { name: 'weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
        tool_choice: { type: 'function', function: { name: 'weather' } },
        max_completion_tokens: 300,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop: 'END',
        response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' } } },
      },
      MODEL,
    );
    expect(req).to.deep.equal({
      modelId: MODEL,
      system: [{ text: 'Sys.' }, { text: 'Dev.' }, { cachePoint: { type: 'default' } }],
      messages: [
        { role: 'user', content: [{ text: 'Weather?' }, { image: { format: 'png', source: { bytes: Buffer.from('iVBORw0KGgo=', 'base64') } } }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_abc', name: 'weather', input: { city: 'Oslo' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_abc', content: [{ text: '22C' }] } }, { text: 'Thanks' }] },
      ],
      inferenceConfig: { maxTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      additionalModelRequestFields: { top_k: 40 },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
      toolConfig: { tools: [{ toolSpec: { name: 'weather', description: 'Weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }], toolChoice: { tool: { name: 'weather' } } },
      outputConfig: { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'out' } } } },
    });
  });

  it('sends cache points only to Claude models and leaves tools out for tool_choice none', () => {
    const req = canonicalToConverse({ messages: [{ role: 'user', content: [{ type: 'text', text: 'long doc', cache_control: { type: 'ephemeral' } }] }], tools: [{ type: 'function', function: { name: 't' } }], tool_choice: 'none' }, 'amazon.nova-pro-v1:0');
    expect(req).to.deep.equal({ modelId: 'amazon.nova-pro-v1:0', messages: [{ role: 'user', content: [{ text: 'long doc' }] }] });
  });

  it("a temperature above 1 is Claude's most, 1 (its range, as the Anthropic adapter sends it); other models get it as sent", () => {
    const body = { temperature: 1.6, messages: [{ role: 'user', content: 'hi' }] };
    expect(canonicalToConverse(body, 'us.anthropic.claude-sonnet-4-5-20250929-v1:0').inferenceConfig?.temperature).to.equal(1);
    expect(canonicalToConverse({ ...body, temperature: 0.4 }, 'anthropic.claude-3-haiku-20240307-v1:0').inferenceConfig?.temperature).to.equal(0.4);
    expect(canonicalToConverse(body, 'amazon.nova-pro-v1:0').inferenceConfig?.temperature).to.equal(1.6);
  });

  it('a chat of system messages alone becomes the user message (Converse needs one; OpenAI accepts it)', () => {
    const req = canonicalToConverse({ messages: [{ role: 'system', content: 'Say hi.' }] }, 'amazon.nova-pro-v1:0');
    expect(req.messages).to.deep.equal([{ role: 'user', content: [{ text: 'Say hi.' }] }]);
    expect(req).to.not.have.property('system');
  });

  it('refuses what Converse cannot express, naming the field', () => {
    const base = { messages: [{ role: 'user', content: 'x' }] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ logit_bias: { '12': 5 } }, 'logit_bias'],
      [{ presence_penalty: 0.5 }, 'presence_penalty'],
      [{ parallel_tool_calls: false }, 'parallel_tool_calls'],
      [{ response_format: { type: 'json_object' } }, 'response_format'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }, 'messages'],
      [{ top_k: 5 }, 'top_k'],
    ];
    for (const [extra, param] of cases) {
      let err: unknown;
      try {
        canonicalToConverse({ ...base, ...extra }, 'meta.llama3-70b-instruct-v1:0');
      } catch (e) {
        err = e;
      }
      expect(err, param).to.be.instanceOf(ApiError);
      expect(err).to.include({ status: 400, code: 'unsupported_parameter', param });
    }
  });
});

describe('bedrock upstream: the SDK on the wire', () => {
  it('POSTs /model/{id}/converse, SigV4-signed for the region with the session token', async () => {
    const ep = await endpoint(jsonAnswer(vendored('bedrock-tool-call.1.json')));
    try {
      await chatComplete(callTo(ep.url), { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 }, 'pub-model', undefined);
      const [r] = ep.seen;
      expect(r.method).to.equal('POST');
      expect(r.url).to.equal(`/model/${encodeURIComponent(MODEL)}/converse`);
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/);
      expect(r.headers['x-amz-security-token']).to.equal('sess-token');
      expect(JSON.parse(r.body)).to.deep.equal({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 10 } });
    } finally {
      await ep.close();
    }
  });

  it('sends a Bedrock API key as a bearer token, and converse-stream for streams', async () => {
    const ep = await endpoint(streamAnswer(framesOf(vendored('bedrock-tool-call.1.chunks.txt'))));
    try {
      await collect(callTo(ep.url, 'ABSKbedrockapikey123'), { messages: [{ role: 'user', content: 'hi' }] });
      expect(ep.seen[0].url).to.equal(`/model/${encodeURIComponent(MODEL)}/converse-stream`);
      expect(ep.seen[0].headers.authorization).to.equal('Bearer ABSKbedrockapikey123');
      expect(ep.seen[0].headers['x-amz-security-token']).to.equal(undefined);
    } finally {
      await ep.close();
    }
  });
});

describe('bedrock control plane: GetInferenceProfile (an application inference profile\'s model)', () => {
  const PROFILE = 'arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/a1b2c3d4e5f6';
  const profileAnswer = (models: string[]) =>
    jsonAnswer(JSON.stringify({ inferenceProfileName: 'team', inferenceProfileArn: PROFILE, inferenceProfileId: 'a1b2c3d4e5f6', status: 'ACTIVE', type: 'APPLICATION', createdAt: '2025-06-01T10:00:00Z', updatedAt: '2025-06-01T10:00:00Z', models: models.map((modelArn) => ({ modelArn })) }));

  it('knows the ARN of an application inference profile from the ids that name their model', () => {
    expect(isApplicationProfile(PROFILE)).to.equal(true);
    expect(isApplicationProfile('arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:application-inference-profile/abc123')).to.equal(true);
    for (const named of [MODEL, 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-6-v1', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0']) {
      expect(isApplicationProfile(named), named).to.equal(false);
    }
  });

  it("asks the base_url that is not AWS's, else the region's control plane (a runtime endpoint on AWS does not serve it)", () => {
    const at = (baseUrl: string) => controlEndpointOf({ baseUrl, settings: { region: 'eu-west-1' } });
    expect(at('')).to.equal('https://bedrock.eu-west-1.amazonaws.com');
    expect(at('https://bedrock-runtime.eu-west-1.amazonaws.com/')).to.equal('https://bedrock.eu-west-1.amazonaws.com');
    expect(at('https://vpce-0abc-1234.bedrock-runtime.eu-west-1.vpce.amazonaws.com')).to.equal('https://bedrock.eu-west-1.amazonaws.com');
    expect(at('http://127.0.0.1:4010/')).to.equal('http://127.0.0.1:4010');
  });

  it('signs with the session token and takes the one model id of a cross-region listing; refuses to guess between models or take what is no foundation model', async () => {
    const ep = await endpoint(profileAnswer(['us-west-2', 'us-east-1'].map((r) => `arn:aws:bedrock:${r}::foundation-model/anthropic.claude-opus-4-6-v1`)));
    try {
      expect(await profileModel(callTo(ep.url), PROFILE)).to.deep.equal({ model: 'anthropic.claude-opus-4-6-v1' });
      expect(ep.seen[0].method).to.equal('GET');
      expect(ep.seen[0].url).to.equal(`/inference-profiles/${encodeURIComponent(PROFILE)}`);
      expect(ep.seen[0].headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, /);
      expect(ep.seen[0].headers['x-amz-security-token']).to.equal('sess-token');
    } finally {
      await ep.close();
    }
    const two = await endpoint(profileAnswer(['arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-opus-4-6-v1', 'arn:aws:bedrock:us-west-2::foundation-model/amazon.nova-pro-v1:0']));
    const custom = await endpoint(profileAnswer(['arn:aws:bedrock:us-west-2:123456789012:custom-model/abc']));
    try {
      expect(await profileModel(callTo(two.url), PROFILE)).to.deep.equal({ unresolved: 'the profile serves different models (anthropic.claude-opus-4-6-v1, amazon.nova-pro-v1:0), so none is taken' });
      expect((await profileModel(callTo(custom.url), PROFILE)) as { unresolved: string }).to.have.property('unresolved').that.includes('not a foundation model');
    } finally {
      await two.close();
      await custom.close();
    }
  });

  it('an error that echoes the credential is told without it', async () => {
    const key = 'ABSKechoedkey0123456789';
    const ep = await endpoint((res) => res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' }).end(JSON.stringify({ message: `bad token ${key}` })));
    try {
      const answer = (await profileModel(callTo(ep.url, key), PROFILE)) as { unresolved: string };
      expect(answer.unresolved).to.equal('GetInferenceProfile failed (HTTP 400): ValidationException: bad token [credential]');
    } finally {
      await ep.close();
    }
  });
});

describe('bedrock upstream: recorded answers (vercel/ai fixtures) → canonical', () => {
  it('a tool-use answer', async () => {
    const ep = await endpoint(jsonAnswer(vendored('bedrock-tool-call.1.json')));
    try {
      const { response, usage } = await chatComplete(callTo(ep.url), { messages: [{ role: 'user', content: 'ls' }] }, 'pub-model', undefined);
      expect(response).to.deep.include({ id: 'chatcmpl-req-1', object: 'chat.completion', model: 'pub-model' });
      expect((response as any).choices).to.deep.equal([
        { index: 0, logprobs: null, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'tool-use-id', type: 'function', function: { name: 'bash', arguments: '{"command":"ls -l"}' } }] } },
      ]);
      expect((response as any).usage).to.deep.equal({ prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, prompt_tokens_details: { cached_tokens: 0 } });
      expect(usage).to.deep.equal({ inputTokens: 10, outputTokens: 20 });
    } finally {
      await ep.close();
    }
  });

  it('a reasoning answer', async () => {
    const ep = await endpoint(jsonAnswer(vendored('amazon-bedrock-reasoning.json')));
    try {
      const { response } = await chatComplete(callTo(ep.url), { messages: [{ role: 'user', content: 'r?' }] }, 'pub-model', undefined);
      const msg = (response as any).choices[0].message;
      expect(msg.reasoning_content).to.equal('Let me count the r\'s in "strawberry":\n\ns-t-r-a-w-b-e-r-r-y\n\nThere are 3 r\'s.');
      expect(msg.content).to.equal('There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y');
      // the recorded signature is kept: the block goes back to Bedrock as it came (thinking_blocks)
      const rc = JSON.parse(vendored('amazon-bedrock-reasoning.json')).output.message.content[0].reasoningContent.reasoningText;
      expect(msg.thinking_blocks).to.deep.equal([{ type: 'thinking', thinking: rc.text, signature: rc.signature }]);
      expect((response as any).choices[0].finish_reason).to.equal('stop');
      expect((response as any).usage).to.deep.equal({ prompt_tokens: 51, completion_tokens: 78, total_tokens: 129, prompt_tokens_details: { cached_tokens: 0 } });
    } finally {
      await ep.close();
    }
  });

  it('a streamed tool call (usage before messageStop)', async () => {
    const ep = await endpoint(streamAnswer(framesOf(vendored('bedrock-tool-call.1.chunks.txt'))));
    try {
      const { out, chunks } = await collect(callTo(ep.url), { messages: [{ role: 'user', content: 'x' }] });
      expect(chunks.every((c) => c.id === 'chatcmpl-req-2' && c.model === 'pub-model' && c.object === 'chat.completion.chunk')).to.equal(true);
      const calls = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
      expect(calls[0]).to.deep.equal({ index: 0, id: 'tool-use-id', type: 'function', function: { name: 'test-tool', arguments: '' } });
      expect(calls.map((c: any) => c.function.arguments).join('')).to.equal('{"value":"Sparkle Day"}');
      expect(chunks.at(-2)!.choices[0].finish_reason).to.equal('tool_calls');
      expect(chunks.at(-1)).to.deep.include({ choices: [], usage: { prompt_tokens: 125, completion_tokens: 45, total_tokens: 170, prompt_tokens_details: { cached_tokens: 0 } } });
      expect(out.usage).to.deep.equal({ inputTokens: 125, outputTokens: 45 });
    } finally {
      await ep.close();
    }
  });

  it('a streamed reasoning answer', async () => {
    const ep = await endpoint(streamAnswer(framesOf(vendored('bedrock-reasoning.chunks.txt'))));
    try {
      const { chunks } = await collect(callTo(ep.url), { messages: [{ role: 'user', content: 'x' }] });
      // the answer opens with reasoning: content null until its text (opening-chunks.ts)
      expect(chunks[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: null });
      const reasoning = chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? '').join('');
      expect(reasoning).to.equal('Let me count the r\'s in "strawberry":\n\ns-t-r-a-w-b-e-r-r-y\n\nr appears at positions 3, 8, and 9.\n\nSo there are 3 r\'s.');
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).to.equal('There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y');
      // the signature delta: the whole signed block, with the reasoning text streamed before it
      const signature = vendored('bedrock-reasoning.chunks.txt').split('\n').map((l) => (l ? JSON.parse(l) : {})).find((e) => e.contentBlockDelta?.delta?.reasoningContent?.signature).contentBlockDelta.delta.reasoningContent.signature;
      expect(chunks.flatMap((c) => c.choices[0]?.delta?.thinking_blocks ?? [])).to.deep.equal([{ type: 'thinking', thinking: reasoning, signature }]);
      expect(chunks.at(-2)!.choices[0].finish_reason).to.equal('stop');
      expect(chunks.at(-1)!.usage.completion_tokens).to.equal(94);
    } finally {
      await ep.close();
    }
  });

  it('an in-stream modelStreamErrorException (raw recorded bytes) is a 502 upstream_error', async () => {
    const bytes = Buffer.from(vendored('model-stream-error-exception.eventstream.base64.txt').trim(), 'base64');
    const ep = await endpoint(streamAnswer([eventFrame('messageStart', { role: 'assistant' }), bytes]));
    try {
      const chunks: string[] = [];
      let err: unknown;
      await chatComplete(callTo(ep.url), { messages: [{ role: 'user', content: 'x' }] }, 'pub-model', { emit: (c) => chunks.push(c), includeUsage: false }).catch((e) => (err = e));
      expect(err).to.be.instanceOf(ApiError);
      expect(err).to.include({ status: 502, code: 'upstream_error' });
      expect((err as Error).message).to.include('Model Stream Error');
      expect(chunks).to.have.length(0); // the role chunk waits for the first output (opening-chunks.ts)
    } finally {
      await ep.close();
    }
  });

  it('in-stream exceptions keep their meaning: throttling is upstream_rate_limited, validation upstream_invalid_request', async () => {
    for (const [type, status, code] of [['throttlingException', 429, 'upstream_rate_limited'], ['validationException', 400, 'upstream_invalid_request'], ['serviceUnavailableException', 503, 'upstream_unavailable']] as const) {
      const ep = await endpoint(streamAnswer([eventFrame('messageStart', { role: 'assistant' }), exceptionFrame(type, `simulated ${type}`)]));
      try {
        let err: unknown;
        await chatComplete(callTo(ep.url), { messages: [{ role: 'user', content: 'x' }] }, 'pub-model', { emit: () => undefined, includeUsage: false }).catch((e) => (err = e));
        expect(err, type).to.include({ status, code });
      } finally {
        await ep.close();
      }
    }
  });
});

describe('bedrock upstream: an incomplete stream, the first-byte limit, quota refusals', () => {
  const chatBody = { messages: [{ role: 'user', content: 'x' }] };

  it('a converse-stream that ends cleanly before messageStop is a 502 upstream_error, not a complete answer with zero usage', async () => {
    const ep = await endpoint(streamAnswer([eventFrame('messageStart', { role: 'assistant' }), eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Half an ans' } })]));
    try {
      const chunks: Array<Record<string, any>> = [];
      let err: unknown;
      await chatComplete(callTo(ep.url), chatBody, 'pub-model', { emit: (c) => chunks.push(JSON.parse(c)), includeUsage: true }).catch((e) => (err = e));
      expect(err).to.include({ status: 502, code: 'upstream_error', message: 'The upstream stream ended before it finished.' });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).to.equal('Half an ans');
      expect(chunks.some((c) => c.choices[0]?.finish_reason), 'no finish chunk').to.equal(false);
    } finally {
      await ep.close();
    }
  });

  it('no response headers within firstByteTimeoutMs: 503 upstream_unavailable, a retryable timeout for the pool', async () => {
    const ep = await endpoint(() => undefined); // never answers
    try {
      for (const stream of [undefined, { emit: () => undefined, includeUsage: false }]) {
        const t = Date.now();
        let err: unknown;
        await chatComplete({ ...callTo(ep.url), firstByteTimeoutMs: 300 }, chatBody, 'pub-model', stream).catch((e) => (err = e));
        expect(err).to.include({ status: 503, code: 'upstream_unavailable', message: 'The upstream did not answer within 300 ms.' });
        expect(classify(err, new AbortController().signal)).to.include({ retryable: true, verdict: 'down', class: 'timeout' });
        expect(Date.now() - t).to.be.below(5000);
      }
    } finally {
      await ep.close();
    }
  });

  it('the first-byte limit ends at the headers: a stream slower than it after them is read to the end', async () => {
    const ep = await endpoint((res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-3' });
      res.write(eventFrame('messageStart', { role: 'assistant' }));
      setTimeout(() => {
        res.write(eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'slow' } }));
        res.write(eventFrame('messageStop', { stopReason: 'end_turn' }));
        res.end(eventFrame('metadata', { usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 }, metrics: { latencyMs: 1 } }));
      }, 600);
    });
    try {
      const { out, chunks } = await collect({ ...callTo(ep.url), firstByteTimeoutMs: 200 }, chatBody);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).to.equal('slow');
      expect(out.usage).to.deep.equal({ inputTokens: 3, outputTokens: 1 });
    } finally {
      await ep.close();
    }
  });

  it('ServiceQuotaExceededException (HTTP 400, "you can resubmit your request later") is 429 upstream_rate_limited, retryable', async () => {
    const ep = await endpoint((res) =>
      res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ServiceQuotaExceededException:http://internal.amazon.com/coral/com.amazon.bedrock/' }).end(JSON.stringify({ message: 'Your request exceeds the service quota for your account. You can resubmit your request later.' })),
    );
    try {
      let err: unknown;
      await chatComplete(callTo(ep.url), chatBody, 'pub-model', undefined).catch((e) => (err = e));
      expect(err).to.include({ status: 429, code: 'upstream_rate_limited' });
      expect(classify(err, new AbortController().signal).retryable).to.equal(true);
    } finally {
      await ep.close();
    }
  });

  it('a throttled answer tells the pool its status and Retry-After (the deployment cools down as long as AWS asks); a refused request counts it up', async () => {
    const ep = await endpoint((res) =>
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7', 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }).end(JSON.stringify({ message: 'Too many requests, please wait before trying again.' })),
    );
    const refusing = await endpoint((res) =>
      res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }).end(JSON.stringify({ message: 'Malformed input request' })),
    );
    try {
      let err: unknown;
      await chatComplete(callTo(ep.url), chatBody, 'pub-model', undefined).catch((e) => (err = e));
      expect(err).to.include({ status: 429, code: 'upstream_rate_limited' });
      expect(classify(err, new AbortController().signal)).to.include({ retryable: true, verdict: 'down', retryAfterMs: 7000, class: 'status_429' });
      let refused: unknown;
      await chatComplete(callTo(refusing.url), chatBody, 'pub-model', undefined).catch((e) => (refused = e));
      expect(refused).to.include({ status: 400, code: 'upstream_invalid_request' });
      expect(classify(refused, new AbortController().signal)).to.include({ retryable: false, verdict: 'up', class: 'status_400' });
    } finally {
      await ep.close();
      await refusing.close();
    }
  });
});
