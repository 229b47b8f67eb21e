import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { hitsByUpstream, poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

const TOOL_HISTORY = [
  { role: 'user', content: 'what is the weather?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
];
const WEATHER = { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } };
/**
 * Content parts OpenAI takes and the Gemini and Anthropic adapters refuse: audio input. (A file by id
 * is refused before any deployment on the platform's credential: its account is every organization's,
 * test/integration/dialects/shared-account-ids.test.ts.)
 */
const AUDIO_PART = [{ role: 'user', content: [{ type: 'text', text: 'transcribe' }, { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZF', format: 'wav' } }] }];
/** A document by URL: the Anthropic adapter sends it as a url source; the OpenAI-compatible one (and Gemini, Bedrock) refuses it. */
const URL_FILE = [{ role: 'user', content: [{ type: 'text', text: 'summarize' }, { type: 'file', file: { filename: 'a.pdf', file_data: 'https://example.com/a.pdf' } }] }];
/** The OpenAI deployment as a vendor's API (it fetches image URLs itself): the simulator on loopback would otherwise be a self-hosted server, to which the gateway sends the image's bytes (providers/inline-image-urls). */
const openaiVendor = () => simDeployment('oa', { inline_image_urls: false });
const URL_IMAGE = [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }];

/** Audio priced (docs/catalog.md "Audio tokens"): without it the platform's credential refuses audio before any deployment is drawn. */
const AUDIO_PRICED = { prices: { input_token: 1, output_token: 1, audio_input_token: 4, audio_output_token: 8 } };

const chat = (key: string, model: string, extra: Record<string, unknown> = {}) =>
  call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model, messages: [{ role: 'user', content: 'mixed kinds' }], ...extra } });

/** A pool may mix provider kinds; a kind whose adapter cannot express the request is not drawn for it. */
describe('model pools: deployments of a kind that cannot express the request', () => {
  let o: TestOrg;
  let gm: { name: string; provider: string; upstream: string };
  let bedrock: string;
  const nova = () => ({ name: 'nova', provider: bedrock, upstream: `amazon.nova-pro-${rndId()}` });
  const claude = () => ({ name: 'claude', provider: bedrock, upstream: `anthropic.claude-sonnet-${rndId()}` });
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
    const provider = `gemini-${rndId()}`;
    await upsertProvider({ name: provider, kind: 'gemini', base_url: env().simUrl, api_key: 'gm-test-platform-key' } as never);
    gm = { name: 'gm', provider, upstream: 'sim-gemini-1' };
    bedrock = `bedrock-${rndId()}`;
    await upsertProvider({ name: bedrock, kind: 'bedrock', base_url: env().simUrl, region: 'us-east-1', api_key: 'ABSKsimulatedbedrockkey' } as never);
  });

  /** Twelve requests to the pool: each is served (200) by the deployment named `by`, and `never` took none. */
  async function servedBy(send: () => Promise<{ status: number; text: string; headers: Headers }>, by: string, never: string): Promise<void> {
    const replies = await Promise.all(Array.from({ length: 12 }, send));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.headers.get('x-service-deployment')).to.equal(by);
    }
    expect(hitsByUpstream().get(never) ?? 0).to.equal(0);
  }

  it('serves top_k (messages dialect) from the Claude deployment of a Bedrock pool, never the non-Claude one', async () => {
    const [n, c] = [nova(), claude()];
    const model = await poolModel([n, c]);
    const json = { model, max_tokens: 64, top_k: 5, messages: [{ role: 'user', content: 'mixed kinds' }] };
    await servedBy(() => call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json }), 'claude', n.upstream);
  });

  it('serves reasoning_effort from the Claude deployment of a Bedrock pool (a thinking budget), never the Nova (1) one, which has no form for it', async () => {
    const [n, c] = [nova(), claude()];
    const model = await poolModel([n, c]);
    await servedBy(() => chat(o.key, model, { reasoning_effort: 'low' }), 'claude', n.upstream);
  });

  for (const [what, extra] of [
    ['a tool of a type other than function', { tools: [{ type: 'custom', custom: { name: 'grep' } }] }],
    ['tool_choice none with tool calls in the history', { messages: TOOL_HISTORY, tools: [WEATHER], tool_choice: 'none' }],
    ['an image by https URL', { messages: URL_IMAGE }],
  ] as const) {
    it(`serves ${what} (Bedrock refuses it) from the OpenAI deployment of a mixed pool, every time`, async () => {
      const [oa, n] = [openaiVendor(), nova()];
      const model = await poolModel([oa, n]);
      await servedBy(() => chat(o.key, model, extra), 'oa', n.upstream);
    });
  }

  it('serves a tool of a type other than function (the Anthropic adapter refuses it) from the OpenAI deployment of a mixed pool, every time', async () => {
    const [oa, claudeNative] = [simDeployment('oa'), { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }];
    const model = await poolModel([oa, claudeNative]);
    await servedBy(() => chat(o.key, model, { tools: [{ type: 'custom', custom: { name: 'grep' } }] }), 'oa', claudeNative.upstream);
  });

  it('serves n > 1 and logprobs (the Anthropic adapter refuses them, never drops them) from the OpenAI deployment of a mixed pool; a pool of Claude alone answers 400 naming the field, sending nothing', async () => {
    const [oa, claudeNative] = [simDeployment('oa'), { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }];
    const model = await poolModel([oa, claudeNative]);
    await servedBy(() => chat(o.key, model, { n: 2 }), 'oa', claudeNative.upstream);
    await servedBy(() => chat(o.key, model, { logprobs: true, top_logprobs: 2 }), 'oa', claudeNative.upstream);
    const only = await poolModel([{ name: 'claude', provider: 'simulator-anthropic', upstream: claudeNative.upstream }]);
    for (const [extra, param] of [[{ n: 3 }, 'n'], [{ logprobs: true }, 'logprobs'], [{ logprobs: true, top_logprobs: 1 }, 'logprobs'], [{ logit_bias: { '50256': -100 } }, 'logit_bias']] as const) {
      const r = await chat(o.key, only, extra);
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ code: 'unsupported_parameter', param });
    }
    // top_logprobs without logprobs is OpenAI's own refusal, whatever the pool (docs/api.md)
    const top = await chat(o.key, only, { top_logprobs: 1 });
    expect(top.status, top.text).to.equal(400);
    expect(top.body.error).to.include({ code: 'invalid_request', param: 'top_logprobs' });
    // n: 1 and an empty logit_bias change nothing: served
    expect((await chat(o.key, only, { n: 1, logit_bias: {} })).status).to.equal(200);
    expect(hitsByUpstream().get(claudeNative.upstream) ?? 0, 'only the last request reached Claude').to.equal(1);
  });

  // every reasoning_effort OpenAI documents has an Anthropic form; any other is refused before routing (openai-documented-fields.test.ts)
  it('serves web_search_options, audio and verbosity (the Anthropic adapter refuses them) from the OpenAI deployment of a mixed pool', async () => {
    const [oa, claudeNative] = [simDeployment('oa'), { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` }];
    const model = await poolModel([oa, claudeNative], AUDIO_PRICED);
    await servedBy(() => chat(o.key, model, { web_search_options: {} }), 'oa', claudeNative.upstream);
    await servedBy(() => chat(o.key, model, { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }), 'oa', claudeNative.upstream);
    await servedBy(() => chat(o.key, model, { verbosity: 'low' }), 'oa', claudeNative.upstream);
  });

  it('serves an image by https URL (Gemini refuses it) from the OpenAI deployment of a mixed pool, every time', async () => {
    const oa = openaiVendor();
    const model = await poolModel([oa, gm]);
    await servedBy(() => chat(o.key, model, { messages: URL_IMAGE }), 'oa', gm.upstream);
  });

  it('answers 400 unsupported_parameter when neither the Gemini nor the Bedrock deployment can take an image URL', async () => {
    const model = await poolModel([gm, nova()]);
    const r = await chat(o.key, model, { messages: URL_IMAGE });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('unsupported_parameter');
  });

  it('answers the refusal of top_k when no deployment of the pool is a Claude model', async () => {
    const model = await poolModel([nova()]);
    const r = await chat(o.key, model, { top_k: 5 });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('unsupported_parameter');
    expect(r.body.error.param).to.equal('top_k');
  });

  for (const [what, extra] of [
    ['a tool of a type other than function', { tools: [{ type: 'custom', custom: { name: 'grep' } }] }],
    ['a logit_bias', { logit_bias: { '42': 5 } }],
  ] as const) {
    it(`serves ${what} (Gemini refuses it) from the OpenAI deployment of a mixed pool, every time`, async () => {
      const oa = simDeployment('oa');
      const model = await poolModel([oa, gm]);
      const replies = await Promise.all(Array.from({ length: 12 }, () => chat(o.key, model, extra)));
      for (const r of replies) {
        expect(r.status, r.text).to.equal(200);
        expect(r.headers.get('x-service-deployment')).to.equal('oa');
      }
      expect(hitsByUpstream().get(gm.upstream) ?? 0).to.equal(0);
    });
  }

  /** The Gemini deployment, or an Anthropic-native one (the chat dialect is translated for it). */
  const ADAPTERS = ['Gemini', 'Anthropic'] as const;
  const refusing = (adapter: (typeof ADAPTERS)[number]) => (adapter === 'Gemini' ? gm : { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}` });

  for (const [what, messages] of [['an input_audio part', AUDIO_PART]] as const) {
    for (const adapter of ADAPTERS) {
      it(`serves ${what} (the ${adapter} adapter refuses it) from the OpenAI deployment of a mixed pool, every time`, async () => {
        const other = refusing(adapter);
        const oa = simDeployment('oa');
        const model = await poolModel([oa, other], AUDIO_PRICED);
        await servedBy(() => chat(o.key, model, { messages }), 'oa', other.upstream);
      });
    }
  }

  for (const adapter of ADAPTERS) {
    it(`answers the ${adapter} adapter's own 400 for an input_audio part when the pool has no other deployment`, async () => {
      const only = refusing(adapter);
      const model = await poolModel([only], AUDIO_PRICED);
      const r = await chat(o.key, model, { messages: AUDIO_PART });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error.code).to.equal('invalid_request');
      expect(r.body.error.message).to.equal("Content part type 'input_audio' is not supported on this model.");
      expect(hitsByUpstream().get(only.upstream) ?? 0).to.equal(0);
    });
  }

  it('serves a file part whose file_data is an https URL (the OpenAI adapter refuses it) from the Anthropic deployment of a mixed pool, every time', async () => {
    const [oa, claudeNative] = [simDeployment('oa'), { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}`, inline_image_urls: false }];
    const model = await poolModel([oa, claudeNative]);
    await servedBy(() => chat(o.key, model, { messages: URL_FILE }), 'claude', oa.upstream);
    const sent = env().sim.log.entries[0].body as { messages: Array<{ content: unknown[] }> };
    expect(sent.messages[0].content[1]).to.deep.include({ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } });
  });

  it('serves a document by URL in the messages dialect from the Anthropic deployment of a mixed pool (translated, not bypassed), every time', async () => {
    const [oa, claudeNative] = [simDeployment('oa'), { name: 'claude', provider: 'simulator-anthropic', upstream: `claude-${rndId()}`, inline_image_urls: false }];
    const model = await poolModel([oa, claudeNative]);
    const content = [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }, { type: 'text', text: 'summarise' }];
    const json = { model, max_tokens: 64, messages: [{ role: 'user', content }] };
    await servedBy(() => call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json }), 'claude', oa.upstream);
  });

  it("answers the OpenAI adapter's own 400 for a file_data by URL when the pool has only OpenAI deployments, sending nothing", async () => {
    // OpenAI's API (a server the operator runs refuses it before, url_not_allowed: providers/inline-image-urls)
    const [a, b] = [simDeployment('oa1', { inline_image_urls: false }), simDeployment('oa2', { inline_image_urls: false })];
    const model = await poolModel([a, b]);
    const r = await chat(o.key, model, { messages: URL_FILE });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('unsupported_parameter');
    expect(r.body.error.param).to.equal('messages[0].content[1]');
    expect(env().sim.log.entries, 'nothing sent upstream').to.have.length(0);
  });

  it('skips a fallback whose deployments all refuse the request: the primary’s failure is answered, not a 400', async () => {
    const down = simDeployment('down');
    const fallback = await poolModel([gm]);
    const model = await poolModel([down], { fallbacks: [fallback] });
    env().sim.knobs.set(down.upstream, { status: 503 });
    const r = await chat(o.key, model, { logit_bias: { '42': 5 } });
    expect(r.status, r.text).to.equal(503);
    expect(r.body.error.code).to.equal('upstream_unavailable');
    expect(r.headers.get('x-service-fallback-model')).to.equal(null);
    expect(hitsByUpstream().get(gm.upstream) ?? 0).to.equal(0);
  });

  it('answers the refusal (400 unsupported_parameter) when no deployment of the pool can express the request', async () => {
    const model = await poolModel([gm]);
    const r = await chat(o.key, model, { logit_bias: { '42': 5 } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.code).to.equal('unsupported_parameter');
    expect(r.body.error.param).to.equal('logit_bias');
  });
});
