import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { ScriptedUpstream } from '../../helpers/scripted-upstream';
import { ended, outcome } from '../../helpers/responses-background';

/**
 * An input longer than the model's context window, refused by the upstream, is answered as OpenAI's
 * Responses API answers it: 400 `context_length_exceeded`, `param: "input"`, "Your input exceeds the
 * context window of this model. …" (a background response fails with that code). Codex reads the code
 * (a full context to shorten, not a request to retry or an unknown refusal). Before, it was 400
 * `upstream_invalid_request` with `param: null`, and a failed background response said `server_error`,
 * which Codex retries.
 */
const OPENAI_WORDS = 'Your input exceeds the context window of this model. Please adjust your input and try again.';
const VLLM = "This model's maximum context length is 32768 tokens. However, your request has 40211 input tokens. Please reduce the length of the input messages.";
const CLAUDE = 'prompt is too long: 208310 tokens > 200000 maximum';

type ApiErr = InstanceType<typeof OpenAI.APIError>;
const refusal = (e: unknown) => {
  expect(e).to.be.instanceOf(OpenAI.BadRequestError);
  const err = e as ApiErr;
  return { status: err.status, code: err.code, param: err.param, type: err.type };
};

describe('Responses: an input past the context window is 400 context_length_exceeded, as OpenAI answers it', function () {
  this.timeout(30_000);
  let client: OpenAI;
  let key: string;
  let openai: ScriptedUpstream;
  let claude: ScriptedUpstream;
  let openaiModel: string;
  let claudeModel: string;
  beforeEach(resetSim);
  beforeEach(() => {
    openai.reset();
    claude.reset();
  });
  before(async () => {
    openai = await ScriptedUpstream.start('openai');
    claude = await ScriptedUpstream.start('anthropic');
    openaiModel = await openai.model();
    claudeModel = await claude.model();
    key = (await buildOrg(env().redis)).key;
    client = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await openai.close();
    await claude.close();
  });

  const tooLong = (up: ScriptedUpstream, message: string, code: string | null = null) => {
    up.otherwise = () => ({ kind: 'json', status: 400, body: { error: { message, type: 'invalid_request_error', param: null, code } } });
  };

  it("an OpenAI-compatible upstream's refusal (vLLM's words; OpenAI's code): JSON and streamed, the SDK's BadRequestError names code and param", async () => {
    tooLong(openai, VLLM);
    const json = await outcome(client.responses.create({ model: openaiModel, input: 'a very long input' }));
    expect(refusal(json)).to.deep.equal({ status: 400, code: 'context_length_exceeded', param: 'input', type: 'invalid_request_error' });
    expect((json as ApiErr).message).to.include(OPENAI_WORDS).and.include(VLLM);
    const streamed = await outcome(client.responses.create({ model: openaiModel, input: 'a very long input', stream: true }));
    expect(refusal(streamed)).to.deep.equal({ status: 400, code: 'context_length_exceeded', param: 'input', type: 'invalid_request_error' });

    tooLong(openai, "This model's maximum context length is 128000 tokens.", 'context_length_exceeded');
    expect(refusal(await outcome(client.responses.create({ model: openaiModel, input: 'long' })))).to.include({ code: 'context_length_exceeded', param: 'input' });
    // chat completions answer OpenAI's chat code too, naming its own field
    expect(refusal(await outcome(client.chat.completions.create({ model: openaiModel, messages: [{ role: 'user', content: 'long' }] })))).to.include({ code: 'context_length_exceeded', param: 'messages' });
  });

  it("an Anthropic upstream's 'prompt is too long' is the same answer, its words kept", async () => {
    claude.otherwise = () => ({ kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: CLAUDE } } });
    const err = await outcome(client.responses.create({ model: claudeModel, input: 'a very long input' }));
    expect(refusal(err)).to.deep.equal({ status: 400, code: 'context_length_exceeded', param: 'input', type: 'invalid_request_error' });
    expect((err as ApiErr).message).to.include(OPENAI_WORDS).and.include(CLAUDE);
  });

  it("the messages dialect answers it in Anthropic's words: the upstream's own 'prompt is too long: N tokens > M maximum' (what Claude Code reads), else those words first", async () => {
    const messages = (model: string) => call('POST', '/v1/messages', { headers: Object.assign(keyHeader(key), { 'anthropic-version': '2023-06-01' }), json: { model, max_tokens: 16, messages: [{ role: 'user', content: 'long' }] } });
    claude.otherwise = () => ({ kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: CLAUDE } } });
    const native = await messages(claudeModel);
    expect(native.status, native.text).to.equal(400);
    expect(native.body.error).to.include({ type: 'invalid_request_error', message: CLAUDE });
    tooLong(openai, VLLM);
    const translated = await messages(openaiModel);
    expect(translated.body.error).to.include({ type: 'invalid_request_error', message: `prompt is too long: ${VLLM}` });
  });

  it('a background response fails with context_length_exceeded (not server_error, which clients retry)', async () => {
    tooLong(openai, VLLM);
    const r = await client.responses.create({ model: openaiModel, input: 'a very long input', background: true });
    const done = await ended(client, r.id);
    expect(done.status).to.equal('failed');
    expect(done.error?.code as string).to.equal('context_length_exceeded');
    expect(done.error?.message).to.include(OPENAI_WORDS);
  });

  it('any other upstream refusal stays upstream_invalid_request', async () => {
    tooLong(openai, "Invalid value for 'temperature'.");
    expect(refusal(await outcome(client.responses.create({ model: openaiModel, input: 'hi' })))).to.include({ code: 'upstream_invalid_request' });
  });
  it("an embeddings upstream's refusal in those words stays upstream_invalid_request: no context window, no `messages` field (the classifier is for conversations)", async () => {
    const embedModel = await openai.model({ capabilities: { embeddings: true }, prices: { input_token: 1 } });
    // OpenAI's embeddings wording for an input past the model's limit (invalid_request_error, code null)
    tooLong(openai, "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (9000 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.");
    const r = await call('POST', '/v1/embeddings', { headers: keyHeader(key), json: { model: embedModel, input: 'a long text' } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('upstream_invalid_request');
    expect(r.body.error.param ?? null).to.equal(null);
    expect(r.body.error.message).not.to.include(OPENAI_WORDS);
  });
});
