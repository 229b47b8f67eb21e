import http from 'http';
import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { canonicalToGemini } from '../../../workers/providers/gemini/to-gemini';
import { geminiToCompletion, type GeminiResponse } from '../../../workers/providers/gemini/from-gemini';
import { GeminiToChatStream } from '../../../workers/providers/gemini/stream-to-chat';
import { geminiApi } from '../../../workers/providers/gemini/api';
import { embed } from '../../../workers/providers/gemini/embed';
import { startSimulator } from '../../../scripts/simulator/server';

/** The SDK is an ES module (its types too): loaded with import(), which this CommonJS build keeps. */
type Genai = typeof import('@google/genai', { with: { 'resolution-mode': 'import' } });
type GenerateContentResponse = import('@google/genai', { with: { 'resolution-mode': 'import' } }).GenerateContentResponse;
let genai: Genai;
before(async () => {
  genai = await import('@google/genai');
});

type Captured = { url: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> };

/** A local server that records what the official SDK sends and answers a minimal response. */
async function recorder(answer: unknown): Promise<{ url: string; seen: Captured[]; close(): Promise<void> }> {
  const seen: Captured[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(raw || '{}') as Record<string, unknown> });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../test/fixtures/vendor/gemini', name), 'utf8')) as GeminiResponse;

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('gemini adapter against the official @google/genai SDK', () => {
  it('sends exactly the generateContent body the SDK serialises for the same request', async () => {
    const rec = await recorder({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] });
    try {
      const ai = new genai.GoogleGenAI({ apiKey: 'k-sdk', httpOptions: { baseUrl: rec.url, apiVersion: 'v1beta' } });
      await ai.models.generateContent({
        model: 'gemini-x',
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }, { inlineData: { mimeType: 'image/png', data: PNG } }] },
          { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJl' }] },
          { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { output: 'sunny' } } }] },
        ],
        config: {
          systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] },
          maxOutputTokens: 300,
          temperature: 0.2,
          topP: 0.8,
          topK: 20,
          seed: 7,
          presencePenalty: 0.1,
          frequencyPenalty: 0.2,
          stopSequences: ['END'],
          candidateCount: 2,
          responseLogprobs: true,
          logprobs: 3,
          responseMimeType: 'application/json',
          responseJsonSchema: schema,
          thinkingConfig: { thinkingBudget: 8192, includeThoughts: true },
          tools: [{ functionDeclarations: [{ name: 'weather', description: 'Weather for a city', parametersJsonSchema: schema }] }],
          toolConfig: { functionCallingConfig: { mode: genai.FunctionCallingConfigMode.ANY, allowedFunctionNames: ['weather'] } },
        },
      });
      const ours = canonicalToGemini({
        model: 'ignored',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
          // a call id the gateway minted (call_ and 18 hex: no functionCall.id goes back) carrying the thought signature 'c2lnbmF0dXJl' (base64 of "signature")
          { role: 'assistant', content: null, tool_calls: [{ id: `call_0123456789abcdef01_sig_${Buffer.from('signature').toString('base64url')}`, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: `call_0123456789abcdef01_sig_${Buffer.from('signature').toString('base64url')}`, content: 'sunny' },
        ],
        max_tokens: 300,
        temperature: 0.2,
        top_p: 0.8,
        top_k: 20,
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        stop: ['END'],
        n: 2,
        logprobs: true,
        top_logprobs: 3,
        response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
        reasoning_effort: 'medium',
        tools: [{ type: 'function', function: { name: 'weather', description: 'Weather for a city', parameters: schema } }],
        tool_choice: { type: 'function', function: { name: 'weather' } },
      });
      const sdk = rec.seen[0];
      expect(sdk.url).to.equal('/v1beta/models/gemini-x:generateContent');
      expect(new URL(geminiApi.url(rec.url, 'gemini-x', 'generateContent')).pathname).to.equal(sdk.url);
      expect(sdk.headers['x-goog-api-key']).to.equal('k-sdk');
      expect(ours).to.deep.equal(sdk.body);
    } finally {
      await rec.close();
    }
  });

  it('streams and embeds at the URLs the SDK uses, with the batch body it sends', async () => {
    const rec = await recorder({ embeddings: [{ values: [0.1] }, { values: [0.2] }] });
    try {
      const ai = new genai.GoogleGenAI({ apiKey: 'k-sdk', httpOptions: { baseUrl: rec.url, apiVersion: 'v1beta' } });
      await ai.models.embedContent({ model: 'text-embedding-x', contents: ['alpha', 'beta'], config: { outputDimensionality: 8 } });
      const out = await embed({ baseUrl: rec.url, apiKey: 'k-ours', upstreamModel: 'text-embedding-x', signal: new AbortController().signal, deadline: Date.now() + 10_000 }, { input: ['alpha', 'beta'], encodingFormat: 'float', dimensions: 8 }, 'pub');
      expect(out.response.data).to.deep.equal([{ object: 'embedding', index: 0, embedding: [0.1] }, { object: 'embedding', index: 1, embedding: [0.2] }]);
      const [sdk, ours] = rec.seen.splice(0, 2);
      expect(sdk.url).to.equal('/v1beta/models/text-embedding-x:batchEmbedContents');
      expect(ours.url).to.equal(sdk.url);
      expect(ours.headers['x-goog-api-key']).to.equal('k-ours');
      expect(ours.body).to.deep.equal(sdk.body);
      await ai.models.generateContentStream({ model: 'gemini-x', contents: 'hi' }).then(async (s) => {
        for await (const _ of s) void _;
      }).catch(() => undefined); // the recorder answers JSON, not SSE: only the URL matters here
      const u = new URL(rec.seen[0].url, rec.url);
      const ourUrl = new URL(geminiApi.url(rec.url, 'gemini-x', 'streamGenerateContent'));
      expect(`${u.pathname}${u.search}`).to.equal('/v1beta/models/gemini-x:streamGenerateContent?alt=sse');
      expect(`${ourUrl.pathname}${ourUrl.search}`).to.equal(`${u.pathname}${u.search}`);
    } finally {
      await rec.close();
    }
  });

  it("the simulator's answers are read by the SDK (JSON and SSE), so the end-to-end tests speak the real format", async () => {
    const sim = await startSimulator(0);
    try {
      const ai = new genai.GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: sim.url, apiVersion: 'v1beta' } });
      const r = await ai.models.generateContent({ model: 'sim-gemini-1', contents: 'hello sdk', config: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } });
      expect(r.text).to.include('hello sdk');
      expect(r.usageMetadata?.thoughtsTokenCount).to.be.greaterThan(0);
      let text = '';
      let last: GenerateContentResponse | undefined;
      for await (const c of await ai.models.generateContentStream({ model: 'sim-gemini-1', contents: 'streamed sdk' })) {
        text += c.text ?? '';
        last = c;
      }
      expect(text).to.include('streamed sdk');
      expect(last?.candidates?.[0].finishReason).to.equal('STOP');
      const e = await ai.models.embedContent({ model: 'sim-gemini-embed-1', contents: ['a b', 'c'] });
      expect(e.embeddings).to.have.length(2);
    } finally {
      await sim.close();
    }
  });
});

describe('gemini adapter: requests', () => {
  it("function calls Gemini did not write: each model step's first call gets Google's placeholder signature, a signature of Gemini's stays, the simulator accepts it as Gemini 3 does", async () => {
    const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '{}' } });
    const signed = `call_0123456789abcdef01_sig_${Buffer.alloc(256, 7).toString('base64url')}`;
    const body = canonicalToGemini({
      messages: [
        { role: 'user', content: 'earlier turn' },
        { role: 'assistant', content: 'Looking.', tool_calls: [call('call_old', 'lookup')] },
        { role: 'tool', tool_call_id: 'call_old', content: 'old' },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: 'current turn' },
        { role: 'assistant', content: null, tool_calls: [call('call_abc', 'lookup'), call('call_def', 'lookup')] },
        { role: 'tool', tool_call_id: 'call_abc', content: 'a' },
        { role: 'tool', tool_call_id: 'call_def', content: 'd' },
        { role: 'assistant', content: null, tool_calls: [call(signed, 'lookup')] },
        { role: 'tool', tool_call_id: signed, content: 's' },
      ],
    });
    const contents = body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
    expect(contents[1].parts).to.deep.equal([{ text: 'Looking.' }, { functionCall: { id: 'call_old', name: 'lookup', args: {} }, thoughtSignature: 'skip_thought_signature_validator' }]);
    expect(contents[5].parts, 'only the first call of a step (parallel calls)').to.deep.equal([
      { functionCall: { id: 'call_abc', name: 'lookup', args: {} }, thoughtSignature: 'skip_thought_signature_validator' },
      { functionCall: { id: 'call_def', name: 'lookup', args: {} } },
    ]);
    expect(contents[7].parts, "Gemini's own signature, unchanged").to.deep.equal([{ functionCall: { name: 'lookup', args: {} }, thoughtSignature: Buffer.alloc(256, 7).toString('base64') }]);
    const sim = await startSimulator(0);
    try {
      const post = (b: unknown) => fetch(`${sim.url}/v1beta/models/sim-gemini-1:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' }, body: JSON.stringify(b) });
      expect((await post(body)).status).to.equal(200);
      for (const sig of [undefined, Buffer.from('skip_thought_signature_validator').toString('base64')]) {
        const unsigned = structuredClone(contents);
        unsigned[5].parts[0].thoughtSignature = sig;
        const r = await post({ contents: unsigned });
        expect(r.status, String(sig)).to.equal(400);
        expect(((await r.json()) as { error: { message: string } }).error.message).to.match(sig ? /not valid/ : /missing a thought_signature/);
      }
    } finally {
      await sim.close();
    }
  });

  it('a chat of system messages alone becomes the user turn (Gemini needs contents; OpenAI accepts it)', () => {
    const body = canonicalToGemini({ messages: [{ role: 'system', content: 'Say hi.' }] });
    expect(body.contents).to.deep.equal([{ role: 'user', parts: [{ text: 'Say hi.' }] }]);
    expect(body).to.not.have.property('systemInstruction');
  });
});

describe("gemini adapter: recorded responses from Google's cookbook (test/fixtures/vendor/gemini)", () => {
  it('a function call answer becomes tool_calls with a fresh id, finish_reason tool_calls', () => {
    const c = geminiToCompletion(fixture('cookbook-function-call.json'), 'pub') as { choices: Array<{ message: { content: unknown; tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> }; finish_reason: string }> };
    const m = c.choices[0].message;
    expect(m.content).to.equal(null);
    expect(m.tool_calls).to.have.length(1);
    expect(m.tool_calls[0].id).to.match(/^call_[0-9a-f]{18}$/);
    expect(m.tool_calls[0].function).to.deep.equal({ name: 'find_theaters', arguments: JSON.stringify({ movie: 'Barbie', location: 'Mountain View, CA' }) });
    expect(c.choices[0].finish_reason).to.equal('tool_calls');
  });

  it('a text answer after the function response, and the same through the stream translation', () => {
    const r = fixture('cookbook-function-answer.json');
    const c = geminiToCompletion(r, 'pub') as { choices: Array<{ message: { content: string }; finish_reason: string }> };
    expect(c.choices[0].message.content).to.match(/^OK\. I found two theaters/);
    expect(c.choices[0].finish_reason).to.equal('stop');
    const t = new GeminiToChatStream('pub');
    const chunks = t.push(r) as Array<{ choices: Array<{ delta: { content?: string }; finish_reason: string | null }> }>;
    expect(chunks.map((x) => x.choices[0].delta.content ?? '').join('')).to.equal(c.choices[0].message.content);
    expect(chunks.at(-1)!.choices[0].finish_reason).to.equal('stop');
  });

  it('usageMetadata with cached content: promptTokenCount includes the cached tokens, reported as cached_tokens', () => {
    const c = geminiToCompletion(fixture('cookbook-cached-content.json'), 'pub') as { usage: Record<string, unknown> };
    expect(c.usage).to.deep.equal({
      prompt_tokens: 323388,
      completion_tokens: 397,
      total_tokens: 323785,
      prompt_tokens_details: { cached_tokens: 323383 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('thought parts and thoughtsTokenCount (fields as typed by the SDK): reasoning content and reasoning tokens', () => {
    const r: GenerateContentResponse = Object.assign(Object.create(null) as GenerateContentResponse, {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Let me think.', thought: true }, { text: 'Four.' }] }, finishReason: 'MAX_TOKENS' }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, thoughtsTokenCount: 30, totalTokenCount: 42 },
    });
    const c = geminiToCompletion(r as GeminiResponse, 'pub') as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }>; usage: { completion_tokens: number; total_tokens: number; completion_tokens_details: unknown } };
    expect(c.choices[0].message).to.include({ content: 'Four.', reasoning_content: 'Let me think.' });
    expect(c.choices[0].finish_reason).to.equal('length');
    expect(c.usage).to.deep.include({ completion_tokens: 32, total_tokens: 42, completion_tokens_details: { reasoning_tokens: 30 } });
  });
});

describe('gemini adapter: finish reasons (the SDK FinishReason enum)', () => {
  it('an answer withheld by a filter or policy (ESCALATION, IMAGE_RECITATION, MODEL_ARMOR) is content_filter, JSON and streamed', () => {
    for (const reason of [genai.FinishReason.ESCALATION, genai.FinishReason.IMAGE_RECITATION, genai.FinishReason.MODEL_ARMOR, genai.FinishReason.SAFETY]) {
      const r: GeminiResponse = { candidates: [{ content: { parts: [{ text: 'partial' }] }, finishReason: reason }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 } };
      const c = geminiToCompletion(r, 'pub') as { choices: Array<{ finish_reason: string }> };
      expect(c.choices[0].finish_reason, reason).to.equal('content_filter');
      const chunks = new GeminiToChatStream('pub').push(r) as Array<{ choices: Array<{ finish_reason: string | null }> }>;
      expect(chunks.at(-1)!.choices[0].finish_reason, `${reason} streamed`).to.equal('content_filter');
    }
    const stop: GeminiResponse = { candidates: [{ content: { parts: [{ text: 'done' }] }, finishReason: genai.FinishReason.STOP }] };
    expect((geminiToCompletion(stop, 'pub') as { choices: Array<{ finish_reason: string }> }).choices[0].finish_reason).to.equal('stop');
  });
});
