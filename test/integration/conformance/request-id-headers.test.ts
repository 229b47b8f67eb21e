import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call } from '../../helpers/http';

/**
 * The spec's `x-service-request-id` is also sent, same value, as `x-request-id` (what the openai SDK
 * reads into `request_id` and `APIError.requestID`) and `request-id` (what @anthropic-ai/sdk reads),
 * on answers and errors alike.
 */
describe('conformance: request ids the official SDKs read', function () {
  this.timeout(30_000);
  let key: string;
  beforeEach(resetSim);
  before(async () => {
    key = (await buildOrg(env().redis)).key;
  });

  it('openai: request_id of an answer and of a stream, and APIError.requestID, equal x-service-request-id', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const { response, request_id } = await openai.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(request_id).to.match(/^req_[0-9a-f]{24}$/);
    expect(request_id).to.equal(response.headers.get('x-service-request-id'));
    const s = await openai.responses.create({ model: 'sim-chat', input: 'hi', stream: true }).withResponse();
    expect(s.request_id).to.equal(s.response.headers.get('x-service-request-id')).and.to.match(/^req_/);
    for await (const _ of s.data); // drain
    const err = await openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.APIError>).requestID).to.equal((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-service-request-id')).and.to.match(/^req_/);
  });

  it('anthropic: request_id of a message and APIError.requestID equal x-service-request-id', async () => {
    const anthropic = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0 });
    const { response, request_id } = await anthropic.messages.create({ model: 'sim-claude', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(request_id).to.match(/^req_/).and.to.equal(response.headers.get('x-service-request-id'));
    const err = await anthropic.messages.create({ model: 'no-such-model', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.APIError>).requestID).to.match(/^req_/).and.to.equal((err as InstanceType<typeof Anthropic.APIError>).headers?.get('x-service-request-id'));
  });

  it('an unknown path and a missing key carry all three, one value', async () => {
    for (const r of [await call('GET', '/v1/nowhere'), await call('POST', '/v1/chat/completions', { json: {} })]) {
      const id = r.headers.get('x-service-request-id');
      expect(id).to.match(/^req_/);
      expect([r.headers.get('x-request-id'), r.headers.get('request-id')]).to.deep.equal([id, id]);
    }
  });
});
