import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { usageSettled } from '../../helpers/usage';
import { UsageEvent } from '../../../shared/db/models';
import { updateKeyControls } from '../../../shared/tenancy/ops';

const ids = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((m) => m.id).sort();

describe('key controls: model listings follow the allowed models; 402 carries OpenAI\'s quota type', () => {
  beforeEach(resetSim);

  it('GET /v1/models (OpenAI and Anthropic SDKs) and the task listings show only the allowed models of a key with a list', async () => {
    const o = await buildOrg(env().redis);
    const everything = await call('GET', '/v1/models', { headers: keyHeader(o.key) });
    expect(ids(everything)).to.include.members(['sim-chat', 'sim-claude', 'sim-embed', 'sim-whisper', 'sim-image']);
    await updateKeyControls(env().redis, o.keyId, { allowedModels: ['sim-chat', 'sim-embed'] });

    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const listed: string[] = [];
    for await (const m of openai.models.list()) listed.push(m.id);
    expect(listed.sort()).to.deep.equal(['sim-chat', 'sim-embed']);
    const anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
    const aListed: string[] = [];
    for await (const m of anthropic.models.list()) aListed.push(m.id);
    expect(aListed.sort()).to.deep.equal(['sim-chat', 'sim-embed']);

    expect((await openai.models.retrieve('sim-chat')).id).to.equal('sim-chat');
    const hidden = await openai.models.retrieve('sim-claude').catch((e: unknown) => e);
    expect(hidden).to.be.instanceOf(OpenAI.NotFoundError);
    expect((hidden as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('model_not_found');

    expect(ids(await call('GET', '/v1/embeddings/models', { headers: keyHeader(o.key) }))).to.deep.equal(['sim-embed']);
    expect(ids(await call('GET', '/v1/images/models', { headers: keyHeader(o.key) }))).to.deep.equal([]);
    expect(ids(await call('GET', '/v1/audio/transcriptions/models', { headers: keyHeader(o.key) }))).to.deep.equal([]);
    expect(ids(await call('GET', '/v1/rerank/models', { headers: keyHeader(o.key) }))).to.deep.equal([]);

    await updateKeyControls(env().redis, o.keyId, { allowedModels: null });
    expect(ids(await call('GET', '/v1/models', { headers: keyHeader(o.key) }))).to.deep.equal(ids(everything));
  });

  it('402 budget_exceeded reaches the OpenAI SDK with type insufficient_quota and code budget_exceeded; nothing billed', async () => {
    const o = await buildOrg(env().redis);
    await updateKeyControls(env().redis, o.keyId, { budgetMicros: 1, budgetPeriod: 'day' });
    const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const err = await openai.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).to.equal(402);
    expect(e.code).to.equal('budget_exceeded');
    expect(e.type).to.equal('insufficient_quota');
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { apiKeyId: o.keyId } })).to.equal(0);
  });
});
